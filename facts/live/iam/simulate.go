package iam

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// actionSimulate is the IAM action of the policy simulator's calls.
const actionSimulate = "iam:SimulatePrincipalPolicy"

// simulated is what the simulator answered for one row: the verdict on each of its questions, in the
// order of the row's Questions, or that IAM has no such principal.
type simulated struct {
	noPrincipal bool
	verdicts    []verdict
}

// verdict is the simulator's answer to one question; a decision of "" is no answer. organization is
// set when it is a denial of the organization's policies (service control policies).
type verdict struct {
	decision     string
	missing      []string
	organization bool
}

// result keys a verdict by what the simulator names it by: the action (lower-case, as IAM compares
// actions) and the resource.
type result struct{ action, resource string }

// Simulate answers every question of row with one iam:SimulatePrincipalPolicy call (its pages
// followed), cached per row (facts.SimulationRow.Key), so that a row is simulated once per TTL however
// often it is asked. A question the simulator gives no result for is answered with Decision "". A
// principal IAM does not know is an unknown fact, kept like a "does not exist" answer.
func (p *Provider) Simulate(ctx context.Context, row facts.SimulationRow) ([]facts.Simulation, error) {
	qs := row.Questions()
	if len(qs) == 0 {
		return []facts.Simulation{}, nil
	}
	sim, err := p.simulateShared(ctx, row, qs)
	if err != nil {
		return nil, err
	}
	if sim.noPrincipal {
		return nil, facts.Unknown(facts.Simulations, fmt.Sprintf("IAM has no %s %s to simulate", principalKind(row.Principal), row.Principal))
	}
	out := make([]facts.Simulation, len(qs))
	for i, q := range qs {
		var v verdict
		if i < len(sim.verdicts) { // always: rows of equal keys have as many questions
			v = sim.verdicts[i]
		}
		out[i] = q.Answer(v.decision, slices.Clone(v.missing))
	}
	return out, nil
}

// simulateShared answers row from the simulation of the row it shares its answers with (sharedRow),
// kept under the digest of the principal's policies, when they can be read; else, or when the
// organization's policies denied the shared row (which the reading cannot see), from the simulation of
// row itself.
func (p *Provider) simulateShared(ctx context.Context, row facts.SimulationRow, qs []facts.SimulationQuestion) (simulated, error) {
	name := func() string { return rowName(row) }
	tests, err := p.policyTests(ctx, row.Principal)
	if errors.Is(err, facts.ErrNotAtHand) {
		return simulated{}, err
	}
	if shared, usable, changed := p.sharedRow(row, tests); usable {
		// Kept under the policies' digest: asked again when they change, not every TTL.
		q := awscall.Question{Fact: facts.Simulations, Action: actionSimulate, Key: "shared " + tests.digest + " " + shared.Digest(), Name: name, TTL: sharedTTL}
		sim, err := awscall.Lookup(ctx, p.caller, p.simulations, q, func(ctx context.Context) (simulated, bool, error) {
			return p.simulate(ctx, shared, qs)
		})
		if err != nil || !changed || !sim.organizationDenied() {
			return sim, err
		}
	}
	q := awscall.Question{Fact: facts.Simulations, Action: actionSimulate, Key: row.Digest(), Name: name}
	return awscall.Lookup(ctx, p.caller, p.simulations, q, func(ctx context.Context) (simulated, bool, error) {
		return p.simulate(ctx, row, qs)
	})
}

// organizationDenied reports whether the organization's policies denied any question of the row.
func (s simulated) organizationDenied() bool {
	return slices.ContainsFunc(s.verdicts, func(v verdict) bool { return v.organization })
}

// simulate asks the simulator about row, whose questions are qs.
func (p *Provider) simulate(ctx context.Context, row facts.SimulationRow, qs []facts.SimulationQuestion) (simulated, bool, error) {
	results := map[result]verdict{}
	pages := iam.NewSimulatePrincipalPolicyPaginator(p.api, &iam.SimulatePrincipalPolicyInput{
		PolicySourceArn: aws.String(row.Principal),
		ActionNames:     distinct(row.Actions),
		ResourceArns:    distinct(row.Resources),
		ContextEntries:  contextEntries(row.Context),
	})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if awscall.Classify(err) == awscall.OutcomeNotFound {
			return simulated{noPrincipal: true}, true, nil
		}
		if err != nil {
			return simulated{}, false, err
		}
		for _, r := range out.EvaluationResults {
			record(results, r)
		}
	}
	verdicts := make([]verdict, len(qs))
	for i, q := range qs {
		verdicts[i] = results[result{strings.ToLower(q.Action), q.Resource}]
	}
	return simulated{verdicts: verdicts}, false, nil
}

// record keeps the verdicts of one evaluation result. The simulator answers either one result per
// action and resource, named by EvalResourceName, or one per action with a result per resource in
// ResourceSpecificResults (its top-level EvalResourceName then being the action's ARN template);
// both are read.
func record(results map[result]verdict, r types.EvaluationResult) {
	action := strings.ToLower(aws.ToString(r.EvalActionName))
	org := r.OrganizationsDecisionDetail != nil && !r.OrganizationsDecisionDetail.AllowedByOrganizations
	if len(r.ResourceSpecificResults) == 0 {
		results[result{action, aws.ToString(r.EvalResourceName)}] = verdict{decision: decision(r.EvalDecision), missing: r.MissingContextValues, organization: org}
		return
	}
	for _, rr := range r.ResourceSpecificResults {
		results[result{action, aws.ToString(rr.EvalResourceName)}] = verdict{decision: decision(rr.EvalResourceDecision), missing: rr.MissingContextValues, organization: org}
	}
}

// decision spells an EvalDecision as facts does; "" for one it does not know.
func decision(d types.PolicyEvaluationDecisionType) string {
	switch d {
	case types.PolicyEvaluationDecisionTypeAllowed:
		return facts.DecisionAllowed
	case types.PolicyEvaluationDecisionTypeImplicitDeny:
		return facts.DecisionImplicitDeny
	case types.PolicyEvaluationDecisionTypeExplicitDeny:
		return facts.DecisionExplicitDeny
	}
	return ""
}

// contextEntries turns a row's context into the simulator's entries, keys sorted: aws:TagKeys is a
// list (stringList), every other key a string.
func contextEntries(c map[string][]string) []types.ContextEntry {
	var out []types.ContextEntry
	for _, k := range slices.Sorted(maps.Keys(c)) {
		typ := types.ContextKeyTypeEnumString
		if strings.EqualFold(k, facts.ContextTagKeys) {
			typ = types.ContextKeyTypeEnumStringList
		}
		out = append(out, types.ContextEntry{ContextKeyName: aws.String(k), ContextKeyType: typ, ContextKeyValues: c[k]})
	}
	return out
}

// distinct returns vs without repeats, in their first order.
func distinct(vs []string) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// rowName is how notes name a row: its principal, actions, resources and context.
func rowName(row facts.SimulationRow) string {
	s := fmt.Sprintf("for %s: %s on %s", row.Principal, strings.Join(row.Actions, ", "), strings.Join(row.Resources, ", "))
	if len(row.Context) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(row.Context)) {
			kv = append(kv, fmt.Sprintf("%s=%s", k, strings.Join(row.Context[k], "|")))
		}
		s += " with " + strings.Join(kv, ", ")
	}
	return s
}

// principalKind is the kind of IAM entity an ARN names ("role", "user"), for reasons.
func principalKind(principal string) string {
	if a, err := arn.Parse(principal); err == nil {
		if kind, _, ok := strings.Cut(a.Resource, "/"); ok {
			return kind
		}
	}
	return "principal"
}

// ProbeRoleARN is the ARN of the role the simulator's permission probe asks about, in the account and
// partition given: a name no role has, inside the roles the shipped IAM policy lets the simulator
// read.
func ProbeRoleARN(partition, account string) string {
	return fmt.Sprintf("arn:%s:iam::%s:role/%s", partition, account, probeName)
}

// SimulationsKnown tells whether the policy simulator can be asked, from a permission probe once per
// TTL: a simulation for ProbeRoleARN in the account and partition given, which IAM answers with
// NoSuchEntity when the permission is granted. The account is the caller's to find (the cluster's).
func (p *Provider) SimulationsKnown(ctx context.Context, partition, account string) error {
	if account == "" || partition == "" {
		return facts.Unknown(facts.Simulations, "no account to probe the policy simulator in (the cluster's ARN names none)")
	}
	principal := ProbeRoleARN(partition, account)
	probe := awscall.Probe{Action: actionSimulate, Ask: func(ctx context.Context) error {
		_, err := p.api.SimulatePrincipalPolicy(ctx, &iam.SimulatePrincipalPolicyInput{
			PolicySourceArn: aws.String(principal), ActionNames: []string{"iam:GetRole"},
		})
		return err
	}}
	return probe.Known(ctx, p.caller, p.probeAnswers, facts.Simulations)
}
