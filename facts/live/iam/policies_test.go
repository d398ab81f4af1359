package iam_test

import (
	"context"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"
	smithy "github.com/aws/smithy-go"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/facts/live/iam"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

const poolKey = "aws:RequestTag/karpenter.sh/nodepool"

// orgStub is an IAM whose controller role has one inline policy, doc, and whose simulator answers by
// the NodePool tag of the context: what deny names is denied by the organization's policies (which no
// policy reading shows), the rest allowed.
type orgStub struct {
	stub
	doc       string
	deny      string
	simulated []string // the NodePool tag of each simulation asked
}

func (s *orgStub) GetRole(context.Context, *awsiam.GetRoleInput, ...func(*awsiam.Options)) (*awsiam.GetRoleOutput, error) {
	return &awsiam.GetRoleOutput{Role: &types.Role{RoleName: aws.String("KarpenterController"), Arn: aws.String(controller)}}, nil
}

func (s *orgStub) ListRolePolicies(context.Context, *awsiam.ListRolePoliciesInput, ...func(*awsiam.Options)) (*awsiam.ListRolePoliciesOutput, error) {
	return &awsiam.ListRolePoliciesOutput{PolicyNames: []string{"launch"}}, nil
}

func (s *orgStub) GetRolePolicy(context.Context, *awsiam.GetRolePolicyInput, ...func(*awsiam.Options)) (*awsiam.GetRolePolicyOutput, error) {
	return &awsiam.GetRolePolicyOutput{PolicyName: aws.String("launch"), PolicyDocument: aws.String(url.QueryEscape(s.doc))}, nil
}

func (s *orgStub) ListAttachedRolePolicies(context.Context, *awsiam.ListAttachedRolePoliciesInput, ...func(*awsiam.Options)) (*awsiam.ListAttachedRolePoliciesOutput, error) {
	return &awsiam.ListAttachedRolePoliciesOutput{}, nil
}

func (s *orgStub) SimulatePrincipalPolicy(_ context.Context, in *awsiam.SimulatePrincipalPolicyInput, _ ...func(*awsiam.Options)) (*awsiam.SimulatePrincipalPolicyOutput, error) {
	pool := ""
	for _, e := range in.ContextEntries {
		if aws.ToString(e.ContextKeyName) == poolKey {
			pool = e.ContextKeyValues[0]
		}
	}
	s.simulated = append(s.simulated, pool)
	r := types.EvaluationResult{EvalActionName: aws.String("ec2:CreateFleet"), EvalResourceName: aws.String("*"), EvalDecision: types.PolicyEvaluationDecisionTypeAllowed,
		OrganizationsDecisionDetail: &types.OrganizationsDecisionDetail{AllowedByOrganizations: true}}
	if pool == s.deny {
		r.EvalDecision = types.PolicyEvaluationDecisionTypeImplicitDeny
		r.OrganizationsDecisionDetail.AllowedByOrganizations = false
	}
	return &awsiam.SimulatePrincipalPolicyOutput{EvaluationResults: []types.EvaluationResult{r}}, nil
}

// launch is the controller's launch row for a NodePool.
func launch(pool string) facts.SimulationRow {
	return facts.SimulationRow{Principal: controller, Actions: []string{"ec2:CreateFleet"}, Resources: []string{"*"},
		Context: map[string][]string{poolKey: {pool}, "aws:RequestedRegion": {"eu-west-1"}}}
}

// decisions simulates the launch rows of the pools, in order, and returns their decisions.
func decisions(t *testing.T, p *iam.Provider, pools ...string) []string {
	t.Helper()
	var out []string
	for _, pool := range pools {
		sims, err := p.Simulate(context.Background(), launch(pool))
		if err != nil {
			t.Fatalf("Simulate(%s): %v", pool, err)
		}
		out = append(out, sims[0].Decision)
	}
	return out
}

const anyPool = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:CreateFleet","Resource":"*","Condition":{"StringLike":{"aws:RequestTag/karpenter.sh/nodepool":"*"}}}]}`

// TestSharedRowsNeverDenyForTheOrganization: pools that the account's policies treat alike share one
// simulation; a shared answer that the organization's policies denied is asked again for the pool as
// written before it is believed, so that a pool the simulator allows is never reported denied.
func TestSharedRowsNeverDenyForTheOrganization(t *testing.T) {
	s := &orgStub{doc: anyPool, deny: "blocked"}
	p := iam.NewProvider(s, awscall.Caller{Budget: 2 * time.Second}, cache.Options{})
	t.Cleanup(p.Close)
	got := decisions(t, p, "blocked", "team-a", "team-b", "team-c")
	want := []string{facts.DecisionImplicitDeny, facts.DecisionAllowed, facts.DecisionAllowed, facts.DecisionAllowed}
	if !slices.Equal(got, want) {
		t.Errorf("decisions %v, want %v", got, want)
	}
	// blocked once; team-a shared blocked's answer, which the organization denied: asked as written,
	// then shared by team-b and team-c, which met the same shared answer and were asked as written too.
	if want := []string{"blocked", "team-a", "team-b", "team-c"}; !slices.Equal(s.simulated, want) {
		t.Errorf("simulated %v, want %v", s.simulated, want)
	}

	s = &orgStub{doc: anyPool, deny: "nobody"}
	p = iam.NewProvider(s, awscall.Caller{Budget: 2 * time.Second}, cache.Options{})
	t.Cleanup(p.Close)
	decisions(t, p, "team-a", "team-b", "team-c")
	if want := []string{"team-a"}; !slices.Equal(s.simulated, want) {
		t.Errorf("simulated %v, want %v: pools the policy treats alike share one simulation", s.simulated, want)
	}
}

// TestSharingFollowsThePolicies: what the policies compare a key with decides which values share a
// simulation; keys the reasoning cannot follow keep their values, and unreadable policies share nothing.
func TestSharingFollowsThePolicies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		doc   string
		pools []string
		want  []string // the pools simulated
	}{
		{"no condition on the key", `{"Statement":{"Effect":"Allow","Action":"*","Resource":"*"}}`, []string{"a", "b", "c"}, []string{"a"}},
		{"a pattern that tells names apart", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringLike":{"aws:RequestTag/karpenter.sh/nodepool":["team-a-*"]}}}]}`,
			[]string{"team-a-1", "team-b-1", "team-a-2", "team-b-2", "TEAM-A-3"}, []string{"team-a-1", "team-b-1", "TEAM-A-3"}},
		{"equality ignoring case", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"ForAnyValue:StringEqualsIgnoreCase":{"AWS:RequestTag/karpenter.sh/nodepool":"Prod"}}}]}`,
			[]string{"prod", "PROD", "dev", "test"}, []string{"prod", "dev"}},
		{"the key in a policy variable", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"arn:aws:ec2:*:*:fleet/${aws:RequestTag/karpenter.sh/nodepool}"}]}`,
			[]string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{"a pattern holding a variable", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"aws:RequestTag/karpenter.sh/nodepool":"${aws:PrincipalTag/team}"}}}]}`,
			[]string{"a", "b"}, []string{"a", "b"}},
		{"a key compared as an ARN", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"ArnLike":{"aws:RequestTag/karpenter.sh/nodepool":"arn:*"}}}]}`,
			[]string{"a", "b"}, []string{"a", "b"}},
		{"a condition key holding a variable", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"aws:ResourceTag/${aws:PrincipalTag/k}":"x"}}}]}`,
			[]string{"a", "b"}, []string{"a", "b"}},
		{"not a policy", `{"Statement": 7}`, []string{"a", "b"}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &orgStub{doc: tc.doc, deny: "-"}
			p := iam.NewProvider(s, awscall.Caller{Budget: 2 * time.Second}, cache.Options{})
			t.Cleanup(p.Close)
			decisions(t, p, tc.pools...)
			if !slices.Equal(s.simulated, tc.want) {
				t.Errorf("simulated %v, want %v", s.simulated, tc.want)
			}
		})
	}
}

// deniedReading is an orgStub whose policies cannot be read.
type deniedReading struct{ orgStub }

func (s *deniedReading) ListRolePolicies(context.Context, *awsiam.ListRolePoliciesInput, ...func(*awsiam.Options)) (*awsiam.ListRolePoliciesOutput, error) {
	return nil, &smithy.GenericAPIError{Code: "AccessDenied", Message: "not authorized to perform: iam:ListRolePolicies"}
}

// TestUnreadablePoliciesShareNothing: without the permission to read the role's policies every row is
// simulated as written, and answered.
func TestUnreadablePoliciesShareNothing(t *testing.T) {
	s := &deniedReading{orgStub{doc: anyPool, deny: "-"}}
	p := iam.NewProvider(s, awscall.Caller{Budget: 2 * time.Second}, cache.Options{})
	t.Cleanup(p.Close)
	if got := decisions(t, p, "a", "b", "a"); !slices.Equal(got, []string{facts.DecisionAllowed, facts.DecisionAllowed, facts.DecisionAllowed}) {
		t.Errorf("decisions %v", got)
	}
	if want := []string{"a", "b"}; !slices.Equal(s.simulated, want) {
		t.Errorf("simulated %v, want %v", s.simulated, want)
	}
}

// countingStub is an orgStub that counts the readings of its role's policies.
type countingStub struct {
	orgStub
	mu       sync.Mutex
	readings int
}

func (s *countingStub) ListRolePolicies(ctx context.Context, in *awsiam.ListRolePoliciesInput, opts ...func(*awsiam.Options)) (*awsiam.ListRolePoliciesOutput, error) {
	s.mu.Lock()
	s.readings++
	s.mu.Unlock()
	return s.orgStub.ListRolePolicies(ctx, in, opts...)
}

func (s *countingStub) GetRolePolicy(ctx context.Context, in *awsiam.GetRolePolicyInput, opts ...func(*awsiam.Options)) (*awsiam.GetRolePolicyOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.orgStub.GetRolePolicy(ctx, in, opts...)
}

func (s *countingStub) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readings
}

// TestSharedAnswersFollowThePolicies: a shared answer is kept past the cache's TTL while the role's
// policies stay the same (they are read again, in the background, without asking the simulator), and
// asked again once they change.
func TestSharedAnswersFollowThePolicies(t *testing.T) {
	clock := livetest.NewClock()
	s := &countingStub{orgStub: orgStub{doc: anyPool, deny: "-"}}
	p := iam.NewProvider(s, awscall.Caller{Budget: 2 * time.Second}, cache.Options{TTL: 5 * time.Minute, Now: clock.Now})
	t.Cleanup(p.Close)
	// refreshed asks about pool a until the policies have been read n times: each question starts a
	// reading when none runs.
	refreshed := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); s.count() < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d readings of the policies, want %d", s.count(), n)
			}
			decisions(t, p, "a")
		}
	}
	decisions(t, p, "a", "b")
	clock.Add(10 * time.Minute)
	decisions(t, p, "a", "b") // the last reading answers while the policies are read again
	refreshed(2)
	decisions(t, p, "c")
	if want := []string{"a"}; !slices.Equal(s.simulated, want) {
		t.Fatalf("simulated %v, want %v: the policies did not change", s.simulated, want)
	}

	s.mu.Lock()
	s.doc = `{"Statement":[{"Effect":"Allow","Action":"ec2:*","Resource":"*"}]}`
	s.mu.Unlock()
	clock.Add(10 * time.Minute)
	// The first questions may meet the last reading; once the policies are read again, pool a's row
	// is asked under the new ones.
	for deadline := time.Now().Add(10 * time.Second); len(s.simulated) < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("simulated %v after the policies changed: never asked again", s.simulated)
		}
		decisions(t, p, "a")
	}
	decisions(t, p, "a", "b")
	if want := []string{"a", "a"}; !slices.Equal(s.simulated, want) {
		t.Errorf("simulated %v, want %v: the policies changed", s.simulated, want)
	}
}
