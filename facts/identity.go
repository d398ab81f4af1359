package facts

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"slices"
	"strings"
)

// Where the Karpenter controller's (and aws-node's) credentials come from.
const (
	CredentialsConfig      = "config"      // the GuardConfig names the controller's role
	CredentialsIRSA        = "irsa"        // the ServiceAccount's eks.amazonaws.com/role-arn annotation
	CredentialsPodIdentity = "podIdentity" // an EKS Pod Identity association
	CredentialsNodeRole    = "nodeRole"    // neither: the pod runs with the node's instance profile
)

// ControllerRole is the IAM role Karpenter's controller calls AWS with, and how it gets it.
type ControllerRole struct {
	// ServiceAccount is the controller's ServiceAccount, namespace/name.
	ServiceAccount string `yaml:"serviceAccount" json:"serviceAccount"`
	// RoleARN is the role the controller's calls are made as.
	RoleARN string `yaml:"roleArn" json:"roleArn"`
	// Source is CredentialsConfig, CredentialsIRSA or CredentialsPodIdentity.
	Source string `yaml:"source" json:"source"`
	// SessionPolicy is true when the Pod Identity association carries a session policy: the
	// simulator does not see it, so its allows are upper bounds (its denials stand).
	SessionPolicy *bool `yaml:"sessionPolicy,omitempty" json:"sessionPolicy,omitempty"`
	// TargetRoleARN is the association's cross-account target role, which the controller finally
	// acts as; the simulator cannot follow that chain.
	TargetRoleARN string `yaml:"targetRoleArn,omitempty" json:"targetRoleArn,omitempty"`
}

// CNI is the Amazon VPC CNI (the aws-node DaemonSet's ServiceAccount) as far as node permissions
// go: whether it runs, and which role its calls to EC2 use.
type CNI struct {
	// Present is true when kube-system/aws-node exists (false: another CNI; nil: unknown).
	Present *bool `yaml:"present,omitempty" json:"present,omitempty"`
	// Credentials is CredentialsNodeRole, CredentialsIRSA or CredentialsPodIdentity.
	Credentials string `yaml:"credentials,omitempty" json:"credentials,omitempty"`
	// RoleARN is the role of IRSA or Pod Identity ("" for nodeRole).
	RoleARN string `yaml:"roleArn,omitempty" json:"roleArn,omitempty"`
}

// Decisions of iam:SimulatePrincipalPolicy (EvalDecision, in the snapshot's spelling).
const (
	DecisionAllowed      = "allowed"
	DecisionImplicitDeny = "implicitDeny"
	DecisionExplicitDeny = "explicitDeny"
)

// ContextTagKeys is the one context key the simulations pass as a list (aws:TagKeys, type
// stringList); every other key is a string.
const ContextTagKeys = "aws:TagKeys"

// SimulationQuestion is one question to the IAM policy simulator: may the principal call the action
// on the resource, in that request context. It is the key of a simulations entry.
type SimulationQuestion struct {
	Principal string
	Action    string
	Resource  string
	Context   map[string][]string
}

// Key is the question's canonical form: principal, action (lower-case, as IAM compares actions),
// resource and the context with sorted keys and values. Equal questions have equal keys whatever the
// order they were written in, so a snapshot and the live provider answer the same keys.
func (q SimulationQuestion) Key() string {
	return questionKey(q.Principal, q.Action, q.Resource, contextKey(q.Context))
}

// questionKey joins a question's parts into its key; ctx is contextKey of its context.
func questionKey(principal, action, resource, ctx string) string {
	var b strings.Builder
	b.Grow(len(principal) + len(action) + len(resource) + len(ctx) + 2)
	b.WriteString(principal)
	b.WriteByte('\x00')
	b.WriteString(strings.ToLower(action))
	b.WriteByte('\x00')
	b.WriteString(resource)
	b.WriteString(ctx)
	return b.String()
}

// contextKey is the canonical form of a request context. IAM condition keys are case-insensitive:
// they are sorted and written lower-case, keys that differ only in case merged; values are sorted.
func contextKey(ctx map[string][]string) string {
	if len(ctx) == 0 {
		return ""
	}
	byKey := make(map[string][]string, len(ctx))
	for k, vs := range ctx {
		lk := strings.ToLower(k)
		byKey[lk] = append(byKey[lk], vs...)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteByte('\x00')
		b.WriteString(k)
		vs := slices.Clone(byKey[k])
		slices.Sort(vs)
		for _, v := range slices.Compact(vs) {
			b.WriteByte('\x01')
			b.WriteString(v)
		}
	}
	return b.String()
}

// Simulation is the simulator's answer to one question.
type Simulation struct {
	Principal string              `yaml:"principal" json:"principal"`
	Action    string              `yaml:"action" json:"action"`
	Resource  string              `yaml:"resource" json:"resource"`
	Context   map[string][]string `yaml:"context,omitempty" json:"context,omitempty"`
	// Decision is DecisionAllowed, DecisionImplicitDeny or DecisionExplicitDeny; "" in an answer
	// means the provider does not know it (a snapshot without that entry).
	Decision string `yaml:"decision" json:"decision"`
	// MissingContextValues are the condition keys the policies needed and the question did not
	// carry: a denial with any is not certain.
	MissingContextValues []string `yaml:"missingContextValues,omitempty" json:"missingContextValues,omitempty"`
}

// Question returns the question the simulation answers.
func (s Simulation) Question() SimulationQuestion {
	return SimulationQuestion{Principal: s.Principal, Action: s.Action, Resource: s.Resource, Context: s.Context}
}

// Answer returns the simulation of question q with decision d.
func (q SimulationQuestion) Answer(d string, missing []string) Simulation {
	return Simulation{Principal: q.Principal, Action: q.Action, Resource: q.Resource, Context: q.Context, Decision: d, MissingContextValues: missing}
}

// Denied reports whether the answer is a denial (implicit or explicit).
func (s Simulation) Denied() bool {
	return s.Decision == DecisionImplicitDeny || s.Decision == DecisionExplicitDeny
}

// SimulationRow is one call to the simulator: every action on every resource, in one context. Its
// questions are the cross product, actions first.
type SimulationRow struct {
	Principal string
	Actions   []string
	Resources []string
	Context   map[string][]string
	// digest is the row's Digest once Keyed has computed it, "" before.
	digest string
}

// Keyed returns the row carrying its digest, so that Digest answers without hashing and providers
// remember their answers by it: for rows that are kept and asked again, as the controller's rows of an
// unchanged EC2NodeClass are. Change none of the keyed row's fields, nor what its slices and map hold:
// the digest it carries would no longer be its own.
func (r SimulationRow) Keyed() SimulationRow {
	r.digest = r.Digest()
	return r
}

// Questions returns the row's questions, for each action each resource.
func (r SimulationRow) Questions() []SimulationQuestion {
	out := make([]SimulationQuestion, 0, len(r.Actions)*len(r.Resources))
	for _, a := range r.Actions {
		for _, res := range r.Resources {
			out = append(out, SimulationQuestion{Principal: r.Principal, Action: a, Resource: res, Context: r.Context})
		}
	}
	return out
}

// Digest is a short digest of Key (SHA-256, hex): what a cache of many rows keeps, since a row's key
// holds every question's context and runs to kilobytes. It hashes the questions' keys as it makes
// them, and the context's canonical form once for the whole row. A keyed row returns the digest it
// carries.
func (r SimulationRow) Digest() string {
	if r.digest != "" {
		return r.digest
	}
	h := sha256.New()
	r.eachKey(func(k string) {
		_, _ = io.WriteString(h, k)
		_, _ = h.Write([]byte{'\n'})
	})
	return hex.EncodeToString(h.Sum(nil))
}

// Key is the row's canonical form: the keys of its questions, one per line.
func (r SimulationRow) Key() string {
	var b strings.Builder
	r.eachKey(func(k string) {
		b.WriteString(k)
		b.WriteByte('\n')
	})
	return b.String()
}

// eachKey calls f with the key of each question of the row, in the order of Questions.
func (r SimulationRow) eachKey(f func(string)) {
	ctx := contextKey(r.Context)
	for _, a := range r.Actions {
		for _, res := range r.Resources {
			f(questionKey(r.Principal, a, res, ctx))
		}
	}
}
