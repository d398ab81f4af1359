package iam_test

import (
	"context"
	"fmt"
	"strings"
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
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

const controller = "arn:aws:iam::111122223333:role/KarpenterController"

// TestSimulatePages: a row of more questions than one page holds is answered from every page of one
// call, each answer where the row puts its question.
func TestSimulatePages(t *testing.T) {
	var actions, resources []string
	for i := range 11 {
		actions = append(actions, fmt.Sprintf("ec2:Action%02d", i))
	}
	for i := range 10 {
		resources = append(resources, fmt.Sprintf("arn:aws:ec2:eu-west-1:111122223333:instance/i-%02d", i))
	}
	doc := world + fmt.Sprintf(`simulations:
  - {principal: %q, action: %s, resource: %q, decision: allowed}
  - {principal: %q, action: %s, resource: %q, decision: explicitDeny, missingContextValues: [aws:ResourceTag/team]}
`, controller, actions[0], resources[0], controller, actions[10], resources[9])
	srv, clients := livetest.Serve(t, doc)
	p := iam.NewProvider(clients.IAM, awscall.Caller{Budget: 2 * time.Second}, cache.Options{})
	t.Cleanup(p.Close)
	row := facts.SimulationRow{Principal: controller, Actions: actions, Resources: resources}
	sims, err := p.Simulate(context.Background(), row)
	if err != nil || len(sims) != 110 {
		t.Fatalf("Simulate = %d answers, %v; want 110", len(sims), err)
	}
	for i, s := range sims {
		want := facts.DecisionImplicitDeny
		switch i {
		case 0:
			want = facts.DecisionAllowed
		case 109:
			want = facts.DecisionExplicitDeny
		}
		if q := row.Questions()[i]; s.Decision != want || s.Action != q.Action || s.Resource != q.Resource {
			t.Errorf("answer %d = %+v; want %s for %s on %s", i, s, want, q.Action, q.Resource)
		}
	}
	if m := sims[109].MissingContextValues; len(m) != 1 || m[0] != "aws:ResourceTag/team" {
		t.Errorf("missing context values of the last answer: %q", m)
	}
	if n := srv.Calls("iam:SimulatePrincipalPolicy"); n != 2 {
		t.Errorf("%d requests for 110 questions; want 2 (two pages of one call)", n)
	}
}

// stub is an IAM API whose SimulatePrincipalPolicy answers with pages, by Marker, and records the
// inputs; GetRole answers with role.
type stub struct {
	pages  []*awsiam.SimulatePrincipalPolicyOutput
	inputs []*awsiam.SimulatePrincipalPolicyInput
	role   *types.Role
}

func (s *stub) GetRole(context.Context, *awsiam.GetRoleInput, ...func(*awsiam.Options)) (*awsiam.GetRoleOutput, error) {
	if s.role == nil {
		return nil, &smithy.GenericAPIError{Code: "NoSuchEntity"}
	}
	return &awsiam.GetRoleOutput{Role: s.role}, nil
}

func (s *stub) GetInstanceProfile(context.Context, *awsiam.GetInstanceProfileInput, ...func(*awsiam.Options)) (*awsiam.GetInstanceProfileOutput, error) {
	return nil, &smithy.GenericAPIError{Code: "NoSuchEntity"}
}

func (s *stub) SimulatePrincipalPolicy(_ context.Context, in *awsiam.SimulatePrincipalPolicyInput, _ ...func(*awsiam.Options)) (*awsiam.SimulatePrincipalPolicyOutput, error) {
	s.inputs = append(s.inputs, in)
	page := 0
	if m := aws.ToString(in.Marker); m != "" {
		fmt.Sscanf(m, "page-%d", &page)
	}
	out := *s.pages[page]
	if page+1 < len(s.pages) {
		out.IsTruncated, out.Marker = true, aws.String(fmt.Sprintf("page-%d", page+1))
	}
	return &out, nil
}

// The stub's policies cannot be read: every row is simulated as written.
func (s *stub) ListRolePolicies(context.Context, *awsiam.ListRolePoliciesInput, ...func(*awsiam.Options)) (*awsiam.ListRolePoliciesOutput, error) {
	return nil, &smithy.GenericAPIError{Code: "AccessDenied"}
}

func (s *stub) GetRolePolicy(context.Context, *awsiam.GetRolePolicyInput, ...func(*awsiam.Options)) (*awsiam.GetRolePolicyOutput, error) {
	return nil, &smithy.GenericAPIError{Code: "AccessDenied"}
}

func (s *stub) ListAttachedRolePolicies(context.Context, *awsiam.ListAttachedRolePoliciesInput, ...func(*awsiam.Options)) (*awsiam.ListAttachedRolePoliciesOutput, error) {
	return nil, &smithy.GenericAPIError{Code: "AccessDenied"}
}

func (s *stub) GetPolicy(context.Context, *awsiam.GetPolicyInput, ...func(*awsiam.Options)) (*awsiam.GetPolicyOutput, error) {
	return nil, &smithy.GenericAPIError{Code: "AccessDenied"}
}

func (s *stub) GetPolicyVersion(context.Context, *awsiam.GetPolicyVersionInput, ...func(*awsiam.Options)) (*awsiam.GetPolicyVersionOutput, error) {
	return nil, &smithy.GenericAPIError{Code: "AccessDenied"}
}

func result(action, resource string, d types.PolicyEvaluationDecisionType, missing ...string) types.EvaluationResult {
	return types.EvaluationResult{EvalActionName: aws.String(action), EvalResourceName: aws.String(resource), EvalDecision: d, MissingContextValues: missing}
}

// TestSimulateResultShapes: the simulator's answers are read whether it names each resource in a
// result of its own or lists them under ResourceSpecificResults of one result per action; a question
// it gives no result for, or a decision facts does not know, is answered with Decision "". The call
// carries the row as IAM expects it: actions and resources once each, context keys sorted, aws:TagKeys
// as a list.
func TestSimulateResultShapes(t *testing.T) {
	const lt, fleet = "arn:aws:ec2:eu-west-1:111122223333:launch-template/*", "arn:aws:ec2:eu-west-1:111122223333:fleet/*"
	s := &stub{pages: []*awsiam.SimulatePrincipalPolicyOutput{
		{EvaluationResults: []types.EvaluationResult{
			result("EC2:CreateFleet", lt, types.PolicyEvaluationDecisionTypeAllowed),
			result("ec2:createfleet", fleet, types.PolicyEvaluationDecisionTypeImplicitDeny, "ec2:CreateAction"),
		}},
		{EvaluationResults: []types.EvaluationResult{{
			EvalActionName: aws.String("ec2:RunInstances"), EvalResourceName: aws.String("arn:${Partition}:ec2:${Region}:${Account}:launch-template/${LaunchTemplateId}"),
			EvalDecision: types.PolicyEvaluationDecisionTypeExplicitDeny,
			ResourceSpecificResults: []types.ResourceSpecificResult{
				{EvalResourceName: aws.String(lt), EvalResourceDecision: types.PolicyEvaluationDecisionTypeExplicitDeny},
			},
		}, result("ec2:TerminateInstances", lt, "somethingNew")}},
	}}
	p := iam.NewProvider(s, awscall.Caller{Budget: 2 * time.Second}, cache.Options{})
	t.Cleanup(p.Close)
	row := facts.SimulationRow{
		Principal: controller, Actions: []string{"ec2:CreateFleet", "ec2:RunInstances", "ec2:RunInstances", "ec2:TerminateInstances"}, Resources: []string{lt, fleet},
		Context: map[string][]string{"aws:TagKeys": {"b", "a"}, "aws:RequestedRegion": {"eu-west-1"}},
	}
	sims, err := p.Simulate(context.Background(), row)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sim := range sims {
		got = append(got, fmt.Sprintf("%s %s %s %v", sim.Action, sim.Resource, sim.Decision, sim.MissingContextValues))
	}
	want := []string{
		"ec2:CreateFleet " + lt + " allowed []",
		"ec2:CreateFleet " + fleet + " implicitDeny [ec2:CreateAction]",
		"ec2:RunInstances " + lt + " explicitDeny []",
		"ec2:RunInstances " + fleet + "  []", // no result for it
		"ec2:RunInstances " + lt + " explicitDeny []",
		"ec2:RunInstances " + fleet + "  []",
		"ec2:TerminateInstances " + lt + "  []", // a decision facts does not know
		"ec2:TerminateInstances " + fleet + "  []",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("answers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(s.inputs) != 2 || aws.ToString(s.inputs[1].Marker) != "page-1" {
		t.Fatalf("%d calls; want two pages of one call", len(s.inputs))
	}
	in := s.inputs[0]
	if strings.Join(in.ActionNames, " ") != "ec2:CreateFleet ec2:RunInstances ec2:TerminateInstances" || len(in.ResourceArns) != 2 || aws.ToString(in.PolicySourceArn) != controller {
		t.Errorf("call: actions %v, resources %v, principal %s", in.ActionNames, in.ResourceArns, aws.ToString(in.PolicySourceArn))
	}
	var entries []string
	for _, e := range in.ContextEntries {
		entries = append(entries, fmt.Sprintf("%s %s %v", aws.ToString(e.ContextKeyName), e.ContextKeyType, e.ContextKeyValues))
	}
	if got, want := strings.Join(entries, "; "), "aws:RequestedRegion string [eu-west-1]; aws:TagKeys stringList [b a]"; got != want {
		t.Errorf("context entries %q; want %q", got, want)
	}
}

// TestSimulateStaleNoted: an expired row whose refresh fails is served, and the note names the row as a
// reader would write it.
func TestSimulateStaleNoted(t *testing.T) {
	clock := livetest.NewClock()
	doc := world + fmt.Sprintf("simulations:\n  - {principal: %q, action: iam:PassRole, resource: \"*\", context: {iam:PassedToService: [ec2.amazonaws.com]}, decision: allowed}\n", controller)
	srv, clients := livetest.Serve(t, doc)
	p := iam.NewProvider(clients.IAM, awscall.Caller{Budget: 2 * time.Second}, cache.Options{TTL: time.Minute, Now: clock.Now})
	t.Cleanup(p.Close)
	row := facts.SimulationRow{Principal: controller, Actions: []string{"iam:PassRole"}, Resources: []string{"*"}, Context: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}}
	if _, err := p.Simulate(context.Background(), row); err != nil {
		t.Fatal(err)
	}
	clock.Add(2 * time.Minute)
	srv.Inject("iam:SimulatePrincipalPolicy", fakeaws.Fault{Throttle: true})
	notes := &facts.Notes{}
	sims, err := p.Simulate(facts.WithNotes(context.Background(), notes), row)
	if err != nil || len(sims) != 1 || sims[0].Decision != facts.DecisionAllowed {
		t.Fatalf("Simulate with a failing refresh = %+v, %v; want the cached answer", sims, err)
	}
	want := "used a cached answer 2m0s old for iam:SimulatePrincipalPolicy for " + controller + ": iam:PassRole on * with iam:PassedToService=ec2.amazonaws.com: AWS throttled iam:SimulatePrincipalPolicy"
	if got := notes.List(); len(got) != 1 || got[0] != want {
		t.Errorf("notes = %q\nwant    %q", got, want)
	}
}

// TestTrustPolicy: GetRole's URL-encoded trust policy is answered decoded; one that does not decode is
// unknown ("").
func TestTrustPolicy(t *testing.T) {
	for _, tc := range []struct{ sent, want string }{
		{"%7B%22Version%22%3A%222012-10-17%22%7D", `{"Version":"2012-10-17"}`},
		{"%7B%22Version%22%3A%zz", ""},
	} {
		s := &stub{role: &types.Role{RoleName: aws.String("R"), Arn: aws.String("arn:aws:iam::111122223333:role/R"), Path: aws.String("/"), AssumeRolePolicyDocument: aws.String(tc.sent)}}
		p := iam.NewProvider(s, awscall.Caller{}, cache.Options{})
		r, err := p.Role(context.Background(), "R")
		p.Close()
		if err != nil || r == nil || r.AssumeRolePolicyDocument != tc.want {
			t.Errorf("Role with trust policy %q = %+v, %v; want %q", tc.sent, r, err, tc.want)
		}
	}
}

// TestSimulationsProbe: the simulator's permission probe asks about a role that does not exist inside
// the account's roles, once per TTL; without an account it is unknown.
func TestSimulationsProbe(t *testing.T) {
	srv, clients := livetest.Serve(t, world+"simulations: []\n")
	p := iam.NewProvider(clients.IAM, awscall.Caller{Budget: 2 * time.Second}, cache.Options{})
	t.Cleanup(p.Close)
	ctx := context.Background()
	for range 3 {
		if err := p.SimulationsKnown(ctx, "aws", "111122223333"); err != nil {
			t.Fatalf("SimulationsKnown = %v", err)
		}
	}
	if n := srv.Calls("iam:SimulatePrincipalPolicy"); n != 1 {
		t.Errorf("%d probes in 3 questions; want 1", n)
	}
	if got, want := iam.ProbeRoleARN("aws", "111122223333"), "arn:aws:iam::111122223333:role/karpenter-guard-permission-probe"; got != want {
		t.Errorf("ProbeRoleARN = %s, want %s", got, want)
	}
	if err := p.SimulationsKnown(ctx, "aws", ""); !facts.IsUnknown(err) {
		t.Errorf("SimulationsKnown without an account = %v; want unknown", err)
	}
	if err := p.Known(ctx, facts.Simulations); err != nil {
		t.Errorf("Known(simulations) = %v; the probe needs the account (SimulationsKnown)", err)
	}
}
