package iam

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"golang.org/x/sync/errgroup"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// Why rows are shared. The rules ask the simulator one row per launch they judge, and the rows of two
// NodePools (or EC2NodeClasses) differ only in the values of their context: the karpenter.sh/nodepool
// and karpenter.k8s.aws/ec2nodeclass tags. IAM's answer depends on a context value only through the
// conditions that test its key: a string condition compares the value with its patterns, and nothing
// else of the value matters. So two values that every pattern of the principal's policies (identity
// policies and permissions boundary) matches alike, exactly, ignoring case, as a wildcard pattern, get
// the same answer, and the row is asked once with the first value met (its representative): a
// platform of 1,000 NodePools whose policy tests `karpenter.sh/nodepool: "*"` asks one row, not 1,000.
//
// Where that reasoning cannot follow a key, its values are kept as they are: a key tested by a
// condition other than a string comparison (ARN, numeric, date, IP, boolean), a key a policy variable
// names (${aws:RequestTag/team}), a pattern holding a variable. A policy whose condition key holds a
// variable, a principal that is not a role, or policies that cannot be read (no permission, a throttled
// call) share nothing: each row is simulated as written, as before.
//
// What the reading cannot see: service control policies and resource control policies, which the
// simulator applies and no member account can read. A row denied where the organization's policies
// denied it (OrganizationsDecisionDetail) is therefore simulated again exactly as written before its
// denial is believed: a shared row never denies what its own simulation would allow. The other way
// round, an organization policy that allows one NodePool's tag value and denies another's, which the
// account's own policies treat alike, would be seen only on the representative: docs/facts.md says so.

// sharedTTL keeps a shared simulation: its key holds the digest of the policies it was asked under,
// re-read every TTL, so a change of the account's policies asks again at once. What the digest does not
// cover (an organization's policies) is seen at the latest after sharedTTL.
const sharedTTL = time.Hour

// contextTests is what a principal's readable policies test of the request context.
type contextTests struct {
	// digest is the digest of every document read, in order: the simulations shared under these
	// tests are keyed by it.
	digest string
	// patterns are, per context key (lower-case), the patterns string conditions compare its values
	// with.
	patterns map[string][]string
	// kept are the keys (lower-case) whose values are never shared.
	kept map[string]bool
	// none is set when nothing can be shared (see above).
	none bool
}

// policyTests returns what the principal's policies test of the request context: nil when they cannot
// be read (nothing is then shared), an error when the reading failed in a way that may pass (throttled,
// late: the caller simulates the row as written meanwhile). The first reading is waited for; after
// that, an expired reading is refreshed in the background while the last one answers, so that a
// refresh every TTL never makes a review wait, nor an audit ask its shared rows again.
func (p *Provider) policyTests(ctx context.Context, principal string) (*contextTests, error) {
	name, ok := roleName(principal)
	if !ok {
		return nil, nil
	}
	if _, fresh, _ := p.policies.Cached(policiesAction+" "+principal, 0); !fresh {
		if last, ok := p.readings.last(principal); ok {
			p.readings.refresh(principal, func(ctx context.Context) { _, _ = p.readTests(ctx, principal, name) })
			return last, nil
		}
	}
	return p.readTests(ctx, principal, name)
}

// policiesAction is the action a reading of policies is cached and named under.
const policiesAction = "iam:ListRolePolicies"

// readTests reads the principal's policies through the cache, and keeps the answer as the last one.
func (p *Provider) readTests(ctx context.Context, principal, name string) (*contextTests, error) {
	q := awscall.Question{Fact: facts.Simulations, Action: policiesAction, Key: principal}
	return awscall.Lookup(ctx, p.caller, p.policies, q, func(ctx context.Context) (*contextTests, bool, error) {
		docs, exists, err := p.readPolicies(ctx, name)
		var t *contextTests
		switch o := awscall.Classify(err); {
		case err == nil && exists:
			t = testsOf(docs)
		case err == nil, o == awscall.OutcomeDenied, o == awscall.OutcomeNotFound:
			// No such role (the simulator says so for each row), or unreadable for this TTL: rows
			// are simulated as written.
		default:
			return nil, false, err
		}
		p.readings.keep(principal, t)
		return t, false, nil
	})
}

// readings are the last reading of each principal's policies, and the refreshes running.
type readings struct {
	mu         sync.Mutex
	tests      map[string]*contextTests
	refreshing map[string]bool
	wg         sync.WaitGroup
	base       context.Context
	stop       context.CancelFunc
}

func newReadings() *readings {
	base, stop := context.WithCancel(context.Background())
	return &readings{tests: map[string]*contextTests{}, refreshing: map[string]bool{}, base: base, stop: stop}
}

// last returns the last reading of principal's policies, with false when there was none.
func (r *readings) last(principal string) (*contextTests, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tests[principal]
	return t, ok
}

// keep records a reading.
func (r *readings) keep(principal string, t *contextTests) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.tests) >= maxRepresentatives {
		clear(r.tests)
	}
	r.tests[principal] = t
}

// refresh runs read for principal in the background, unless it is running already or r is closed.
func (r *readings) refresh(principal string, read func(context.Context)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refreshing[principal] || r.base.Err() != nil {
		return
	}
	r.refreshing[principal] = true
	r.wg.Go(func() {
		read(r.base)
		r.mu.Lock()
		delete(r.refreshing, principal)
		r.mu.Unlock()
	})
}

// close stops the refreshes and waits for them.
func (r *readings) close() {
	r.mu.Lock()
	r.stop()
	r.mu.Unlock()
	r.wg.Wait()
}

// readPolicies reads the documents that decide what the role may do: its inline policies, its managed
// policies and its permissions boundary, each prefixed with where it comes from, in a stable order.
// Calls that do not depend on each other go together, so that the reading costs three round trips
// (the role and the two lists, the documents, the managed policies' versions) however many documents.
func (p *Provider) readPolicies(ctx context.Context, name string) (docs []string, exists bool, err error) {
	var (
		boundary        string
		inline, managed []string
	)
	// Every call is made whatever the others answer (no cancelling on the first error), so that the
	// calls a reading costs do not depend on which answers first.
	var g errgroup.Group
	g.Go(func() error {
		// GetRole for the permissions boundary, which Role does not keep.
		out, err := p.api.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
		if err == nil && out.Role != nil && out.Role.PermissionsBoundary != nil {
			boundary = aws.ToString(out.Role.PermissionsBoundary.PermissionsBoundaryArn)
		}
		return err
	})
	g.Go(func() error {
		pages := iam.NewListRolePoliciesPaginator(p.api, &iam.ListRolePoliciesInput{RoleName: aws.String(name)})
		for pages.HasMorePages() {
			out, err := pages.NextPage(ctx)
			if err != nil {
				return err
			}
			inline = append(inline, out.PolicyNames...)
		}
		return nil
	})
	g.Go(func() error {
		pages := iam.NewListAttachedRolePoliciesPaginator(p.api, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(name)})
		for pages.HasMorePages() {
			out, err := pages.NextPage(ctx)
			if err != nil {
				return err
			}
			for _, ap := range out.AttachedPolicies {
				managed = append(managed, aws.ToString(ap.PolicyArn))
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		if awscall.Classify(err) == awscall.OutcomeNotFound {
			return nil, false, nil
		}
		return nil, false, err
	}
	if boundary != "" {
		managed = append(managed, boundary)
	}
	docs = make([]string, len(inline)+len(managed))
	g = errgroup.Group{}
	g.SetLimit(maxPolicyReads)
	for i, pn := range inline {
		g.Go(func() error {
			got, err := p.api.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String(pn)})
			if err != nil {
				return err
			}
			doc, err := url.QueryUnescape(aws.ToString(got.PolicyDocument))
			if err != nil {
				return fmt.Errorf("inline policy %s of role %s does not decode: %w", pn, name, err)
			}
			docs[i] = "inline " + pn + "\n" + doc
			return nil
		})
	}
	for i, a := range managed {
		g.Go(func() error {
			doc, err := p.managedPolicy(ctx, a)
			docs[len(inline)+i] = "managed " + a + "\n" + doc
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, false, err
	}
	return docs, true, nil
}

// maxPolicyReads bounds the documents of one role read at once.
const maxPolicyReads = 4

// managedPolicy returns the default version of a managed policy: GetPolicy for the version's id, then
// its document, kept as long as the cache keeps anything, since a version never changes.
func (p *Provider) managedPolicy(ctx context.Context, policyARN string) (string, error) {
	out, err := p.api.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(policyARN)})
	if err != nil {
		return "", err
	}
	if out.Policy == nil || out.Policy.DefaultVersionId == nil {
		return "", fmt.Errorf("GetPolicy answered without the default version of %s", policyARN)
	}
	version := aws.ToString(out.Policy.DefaultVersionId)
	l, err := p.versions.Get(ctx, policyARN+" "+version, func(ctx context.Context) (cache.Answer[string], error) {
		got, err := p.api.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: aws.String(policyARN), VersionId: aws.String(version)})
		if err != nil {
			return cache.Answer[string]{}, err
		}
		if got.PolicyVersion == nil {
			return cache.Answer[string]{}, fmt.Errorf("GetPolicyVersion answered without the version %s of %s", version, policyARN)
		}
		doc, err := url.QueryUnescape(aws.ToString(got.PolicyVersion.Document))
		if err != nil {
			return cache.Answer[string]{}, fmt.Errorf("version %s of %s does not decode: %w", version, policyARN, err)
		}
		return cache.Answer[string]{Value: doc}, nil
	})
	return l.Value, err
}

// versionOptions are the options of the cache of managed policies' versions: as long as a day, since
// a version never changes; the size bounds it.
func versionOptions(opts cache.Options) cache.Options {
	opts.TTL = 24 * time.Hour
	opts.MaxEntries = 1_000
	return opts
}

// roleName returns the name of the role an ARN names (its path left out), with false for any other
// principal.
func roleName(principal string) (string, bool) {
	a, err := arn.Parse(principal)
	if err != nil || a.Service != "iam" {
		return "", false
	}
	rest, ok := strings.CutPrefix(a.Resource, "role/")
	if !ok || rest == "" {
		return "", false
	}
	return rest[strings.LastIndex(rest, "/")+1:], true
}

// variableRE finds a policy variable: ${key} or ${key, 'default'}.
var variableRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// testsOf reads what the documents test of the request context. A document that is not a policy IAM
// would store shares nothing.
func testsOf(docs []string) *contextTests {
	h := sha256.New()
	t := &contextTests{patterns: map[string][]string{}, kept: map[string]bool{}}
	for _, d := range docs {
		h.Write([]byte(d))
		h.Write([]byte{0})
		_, doc, _ := strings.Cut(d, "\n")
		if err := t.read(doc); err != nil {
			t.none = true
		}
	}
	t.digest = hex.EncodeToString(h.Sum(nil))
	return t
}

// read adds one document's conditions and variables.
func (t *contextTests) read(doc string) error {
	for _, m := range variableRE.FindAllStringSubmatch(doc, -1) {
		name, _, _ := strings.Cut(m[1], ",")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "*" && name != "?" && name != "$" {
			t.kept[name] = true
		}
	}
	var top struct{ Statement json.RawMessage }
	if err := json.Unmarshal([]byte(doc), &top); err != nil {
		return err
	}
	var statements []struct {
		Condition map[string]map[string]json.RawMessage
	}
	raw := []byte(strings.TrimSpace(string(top.Statement)))
	if len(raw) > 0 && raw[0] == '{' {
		raw = append(append([]byte{'['}, raw...), ']')
	}
	if err := json.Unmarshal(raw, &statements); err != nil {
		return err
	}
	for _, st := range statements {
		for op, keys := range st.Condition {
			kind := operatorKind(op)
			for key, values := range keys {
				k := strings.ToLower(key)
				if strings.Contains(k, "${") {
					return errors.New("a condition key holds a policy variable")
				}
				switch kind {
				case "null":
				case "string":
					ps, err := patterns(values)
					if err != nil {
						return err
					}
					for _, p := range ps {
						if strings.Contains(p, "${") {
							t.kept[k] = true
						}
					}
					t.patterns[k] = append(t.patterns[k], ps...)
				default:
					t.kept[k] = true
				}
			}
		}
	}
	return nil
}

// operatorKind is "string" for the string comparisons (StringEquals, StringNotLike, …, with their
// ForAnyValue:, ForAllValues: and IfExists forms), "null" for Null, "other" for the rest.
func operatorKind(op string) string {
	o := strings.ToLower(op)
	o = strings.TrimPrefix(strings.TrimPrefix(o, "foranyvalue:"), "forallvalues:")
	o = strings.TrimSuffix(o, "ifexists")
	switch o {
	case "stringequals", "stringnotequals", "stringequalsignorecase", "stringnotequalsignorecase", "stringlike", "stringnotlike":
		return "string"
	case "null":
		return "null"
	}
	return "other"
}

// patterns reads a condition's values: a string, a list of strings, or a number or boolean, which IAM
// compares as its text.
func patterns(raw json.RawMessage) ([]string, error) {
	var list []any
	if err := json.Unmarshal(raw, &list); err != nil {
		var one any
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, err
		}
		list = []any{one}
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case float64, bool:
			out = append(out, fmt.Sprint(v))
		default:
			return nil, fmt.Errorf("condition value %v is not a string", v)
		}
	}
	return out, nil
}

// signature is how the patterns of key k see value v: for each pattern, whether v equals it exactly,
// ignoring case, and whether it matches it as a wildcard pattern, with and without case. Values of
// equal signatures pass and fail every string condition on k alike.
func (t *contextTests) signature(k, v string) string {
	ps := t.patterns[k]
	b := make([]byte, len(ps))
	for i, p := range ps {
		var bits byte
		if v == p {
			bits |= 1
		}
		if strings.EqualFold(v, p) {
			bits |= 2
		}
		if wildcardMatch(p, v) {
			bits |= 4
		}
		if wildcardMatch(strings.ToLower(p), strings.ToLower(v)) {
			bits |= 8
		}
		b[i] = 'a' + bits
	}
	return string(b)
}

// wildcardMatch reports whether s matches pattern, where * is any run of characters and ? any one,
// as IAM's StringLike reads them.
func wildcardMatch(pattern, s string) bool {
	p, str := []rune(pattern), []rune(s)
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(str) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == str[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi, mark = star+1, mark+1
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// representatives remember, per principal, policies, key and signature, the first value met: the value
// every other value of that signature is asked as. It is bounded: past maxRepresentatives it starts
// again, which costs only new simulations.
type representatives struct {
	mu     sync.Mutex
	values map[string]string
}

// maxRepresentatives bounds the values remembered.
const maxRepresentatives = 50_000

func newRepresentatives() *representatives { return &representatives{values: map[string]string{}} }

// of returns the representative of v under key (principal, digest, context key and signature).
func (r *representatives) of(key, v string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rep, ok := r.values[key]; ok {
		return rep
	}
	if len(r.values) >= maxRepresentatives {
		clear(r.values)
	}
	r.values[key] = v
	return v
}

// sharedRow returns the row the simulator is asked instead of row under tests: each context value that
// the policies do not tell apart from an earlier one replaced by that one, and whether anything was
// replaced. The questions keep their order: only context values change. Without tests to share by
// (usable false), it returns row.
func (p *Provider) sharedRow(row facts.SimulationRow, t *contextTests) (shared facts.SimulationRow, usable, changed bool) {
	if t == nil || t.none {
		return row, false, false
	}
	ctx := make(map[string][]string, len(row.Context))
	for k, vs := range row.Context {
		lk := strings.ToLower(k)
		if t.kept[lk] {
			ctx[k] = vs
			continue
		}
		out := make([]string, 0, len(vs))
		for _, v := range vs {
			rep := p.shared.of(row.Principal+"\x00"+t.digest+"\x00"+lk+"\x00"+t.signature(lk, v), v)
			if rep != v {
				changed = true
			}
			if !slices.Contains(out, rep) {
				out = append(out, rep)
			}
		}
		if len(out) != len(vs) {
			changed = true
		}
		ctx[k] = out
	}
	if !changed {
		return row, true, false
	}
	return facts.SimulationRow{Principal: row.Principal, Actions: row.Actions, Resources: row.Resources, Context: ctx}.Keyed(), true, true
}
