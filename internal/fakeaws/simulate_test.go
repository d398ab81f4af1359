package fakeaws_test

import (
	"context"
	"net/http"
	"os"
	"slices"
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

const (
	controllerARN = "arn:aws:iam::111122223333:role/KarpenterController-prod-eks"
	nodeRoleARN   = "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks"
	cniRoleARN    = "arn:aws:iam::111122223333:role/AmazonEKSVPCCNIRole"
	recordedARN   = "arn:aws:iam::111122223333:role/teams/Recorded"
	ec2Prefix     = "arn:aws:ec2:us-east-1:111122223333:"
)

// simulations is a snapshot whose simulations section answers some questions: one against the
// controller's policy (the snapshot wins), and one for a principal the snapshot names nowhere else.
const simulations = header + `cluster: {name: prod-eks, region: us-east-1, accountID: "111122223333"}
roles:
  - name: KarpenterNodeRole-prod-eks
    arn: ` + nodeRoleARN + `
karpenterController:
  serviceAccount: kube-system/karpenter
  roleArn: ` + controllerARN + `
  source: irsa
vpcCNI: {present: true, credentials: irsa, roleArn: "` + cniRoleARN + `"}
simulations:
  - principal: ` + nodeRoleARN + `
    action: ec2:DescribeInstances
    resource: "*"
    decision: allowed
  - principal: ` + controllerARN + `
    action: iam:PassRole
    resource: ` + nodeRoleARN + `
    context: {iam:PassedToService: [ec2.amazonaws.com]}
    decision: explicitDeny
  - principal: ` + recordedARN + `
    action: ec2:CreateFleet
    resource: ` + ec2Prefix + `fleet/*
    context: {aws:RequestedRegion: [us-east-1]}
    decision: implicitDeny
    missingContextValues: [aws:RequestTag/karpenter.sh/nodepool]
`

// controllerPolicies is Karpenter's controller policy for prod-eks (testdata).
func controllerPolicies(t *testing.T) fakeaws.Policies {
	t.Helper()
	data, err := os.ReadFile("testdata/karpenter-controller.policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := fakeaws.LoadPolicies(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// contextEntries builds context entries: string keys, and aws:TagKeys as a stringList.
func contextEntries(kv map[string][]string) []iamtypes.ContextEntry {
	var out []iamtypes.ContextEntry
	for k, vs := range kv {
		typ := iamtypes.ContextKeyTypeEnumString
		if k == "aws:TagKeys" {
			typ = iamtypes.ContextKeyTypeEnumStringList
		}
		out = append(out, iamtypes.ContextEntry{ContextKeyName: aws.String(k), ContextKeyType: typ, ContextKeyValues: vs})
	}
	sort.Slice(out, func(i, j int) bool { return *out[i].ContextKeyName < *out[j].ContextKeyName })
	return out
}

// requestTagged is Karpenter's context for creating tagged resources of pool "default" in prod-eks.
func requestTagged() map[string][]string {
	return map[string][]string{
		"aws:RequestTag/kubernetes.io/cluster/prod-eks": {"owned"},
		"aws:RequestTag/eks:eks-cluster-name":           {"prod-eks"},
		"aws:RequestTag/karpenter.sh/nodepool":          {"default"},
		"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": {"default"},
		"aws:TagKeys":         {"kubernetes.io/cluster/prod-eks", "eks:eks-cluster-name", "karpenter.sh/nodepool", "karpenter.k8s.aws/ec2nodeclass"},
		"aws:RequestedRegion": {"us-east-1"},
	}
}

type evalResult struct {
	action, resource, decision string
	missing                    []string
}

func results(out *iam.SimulatePrincipalPolicyOutput) []evalResult {
	var rs []evalResult
	for _, r := range out.EvaluationResults {
		rs = append(rs, evalResult{aws.ToString(r.EvalActionName), aws.ToString(r.EvalResourceName), string(r.EvalDecision), r.MissingContextValues})
	}
	return rs
}

func TestSimulatePrincipalPolicy(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, simulations), fakeaws.WithPolicies(controllerPolicies(t)))
	simulate := func(principal string, actions, resources []string, kv map[string][]string) *iam.SimulatePrincipalPolicyOutput {
		t.Helper()
		out, err := c.iam.SimulatePrincipalPolicy(ctx, &iam.SimulatePrincipalPolicyInput{PolicySourceArn: aws.String(principal),
			ActionNames: actions, ResourceArns: resources, ContextEntries: contextEntries(kv)})
		if err != nil {
			t.Fatalf("%s %q on %q: %v", principal, actions, resources, err)
		}
		return out
	}

	// One result per action and resource, actions outer; Karpenter's tags satisfy its policy.
	out := simulate(controllerARN, []string{"ec2:CreateFleet", "ec2:RunInstances"}, []string{ec2Prefix + "fleet/*", ec2Prefix + "instance/*", ec2Prefix + "volume/*"}, requestTagged())
	var want []evalResult
	for _, a := range []string{"ec2:CreateFleet", "ec2:RunInstances"} {
		for _, r := range []string{"fleet/*", "instance/*", "volume/*"} {
			want = append(want, evalResult{a, ec2Prefix + r, "allowed", nil})
		}
	}
	if got := results(out); !slices.EqualFunc(got, want, sameResult) {
		t.Errorf("results\n%v\nwant\n%v", got, want)
	}
	if out.IsTruncated || out.Marker != nil {
		t.Errorf("one page: truncated %v, marker %v", out.IsTruncated, out.Marker)
	}
	r := out.EvaluationResults[0]
	if len(r.MatchedStatements) != 1 || aws.ToString(r.MatchedStatements[0].SourcePolicyId) != "policy-1" ||
		r.MatchedStatements[0].SourcePolicyType != iamtypes.PolicySourceTypeUserManaged ||
		r.MatchedStatements[0].StartPosition == nil || r.MatchedStatements[0].StartPosition.Line < 3 ||
		r.MatchedStatements[0].EndPosition.Line <= r.MatchedStatements[0].StartPosition.Line {
		t.Errorf("matched statements %+v", r.MatchedStatements)
	}
	if len(r.ResourceSpecificResults) != 1 || aws.ToString(r.ResourceSpecificResults[0].EvalResourceName) != ec2Prefix+"fleet/*" ||
		r.ResourceSpecificResults[0].EvalResourceDecision != iamtypes.PolicyEvaluationDecisionTypeAllowed {
		t.Errorf("resource-specific results %+v", r.ResourceSpecificResults)
	}

	// Without resources the answer is for "*", and IAM gives no resource-specific results.
	if r := simulate(controllerARN, []string{"ec2:DescribeImages"}, nil, nil).EvaluationResults[0]; len(r.ResourceSpecificResults) != 0 || aws.ToString(r.EvalResourceName) != "*" {
		t.Errorf("no resources: resource %q, resource-specific results %+v", aws.ToString(r.EvalResourceName), r.ResourceSpecificResults)
	}

	for _, tc := range []struct {
		name      string
		principal string
		actions   []string
		resources []string
		ctx       map[string][]string
		want      []evalResult
	}{
		{"the policy without the tags: missing context values", controllerARN, []string{"ec2:CreateFleet"}, []string{ec2Prefix + "fleet/*"}, map[string][]string{"aws:RequestedRegion": {"us-east-1"}},
			[]evalResult{{"ec2:CreateFleet", ec2Prefix + "fleet/*", "implicitDeny", []string{"aws:RequestTag/eks:eks-cluster-name", "aws:RequestTag/karpenter.sh/nodepool", "aws:RequestTag/kubernetes.io/cluster/prod-eks"}}}},
		{"no resources: *", controllerARN, []string{"ec2:DescribeImages", "iam:ListInstanceProfiles"}, nil, map[string][]string{"aws:RequestedRegion": {"us-east-1"}},
			[]evalResult{{"ec2:DescribeImages", "*", "allowed", nil}, {"iam:ListInstanceProfiles", "*", "implicitDeny", nil}}},
		{"the snapshot's answer wins over the policy", controllerARN, []string{"iam:PassRole"}, []string{nodeRoleARN}, map[string][]string{"IAM:PassedToService": {"ec2.amazonaws.com"}},
			[]evalResult{{"iam:PassRole", nodeRoleARN, "explicitDeny", nil}}},
		{"another context is evaluated", controllerARN, []string{"iam:PassRole"}, []string{nodeRoleARN}, map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com.cn"}},
			[]evalResult{{"iam:PassRole", nodeRoleARN, "allowed", nil}}},
		{"a principal without policies: recorded", nodeRoleARN, []string{"EC2:DescribeInstances"}, []string{"*"}, nil,
			[]evalResult{{"EC2:DescribeInstances", "*", "allowed", nil}}},
		{"a principal without policies: not recorded", nodeRoleARN, []string{"ec2:DescribeNetworkInterfaces"}, nil, nil,
			[]evalResult{{"ec2:DescribeNetworkInterfaces", "*", "implicitDeny", nil}}},
		{"aws-node's role", cniRoleARN, []string{"ec2:AssignPrivateIpAddresses"}, nil, nil,
			[]evalResult{{"ec2:AssignPrivateIpAddresses", "*", "implicitDeny", nil}}},
		{"a principal known from the simulations", recordedARN, []string{"ec2:CreateFleet"}, []string{ec2Prefix + "fleet/*"}, map[string][]string{"aws:RequestedRegion": {"us-east-1"}},
			[]evalResult{{"ec2:CreateFleet", ec2Prefix + "fleet/*", "implicitDeny", []string{"aws:RequestTag/karpenter.sh/nodepool"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := results(simulate(tc.principal, tc.actions, tc.resources, tc.ctx))
			if !slices.EqualFunc(got, tc.want, sameResult) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func sameResult(a, b evalResult) bool {
	return a.action == b.action && a.resource == b.resource && a.decision == b.decision && slices.Equal(a.missing, b.missing)
}

func TestSimulatePrincipalPolicyPages(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, simulations), fakeaws.WithPolicies(controllerPolicies(t)))
	in := &iam.SimulatePrincipalPolicyInput{PolicySourceArn: aws.String(controllerARN),
		ActionNames:    []string{"ec2:CreateFleet", "ec2:RunInstances", "ec2:CreateLaunchTemplate"},
		ResourceArns:   []string{ec2Prefix + "fleet/*", ec2Prefix + "launch-template/*"},
		ContextEntries: contextEntries(requestTagged())}
	all, err := c.iam.SimulatePrincipalPolicy(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want := results(all)
	if len(want) != 6 {
		t.Fatalf("%d results, want 6", len(want))
	}
	for _, size := range []int32{1, 2, 4, 6, 100} {
		var got []evalResult
		pages := 0
		in.MaxItems = aws.Int32(size)
		p := iam.NewSimulatePrincipalPolicyPaginator(c.iam, in)
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("MaxItems %d: %v", size, err)
			}
			if len(out.EvaluationResults) > int(size) || out.IsTruncated != (out.Marker != nil) {
				t.Errorf("MaxItems %d: page of %d, truncated %v, marker %v", size, len(out.EvaluationResults), out.IsTruncated, out.Marker)
			}
			got = append(got, results(out)...)
			pages++
		}
		if !slices.EqualFunc(got, want, sameResult) {
			t.Errorf("MaxItems %d: %v, want %v", size, got, want)
		}
		if wantPages := (6 + int(size) - 1) / int(size); pages != wantPages {
			t.Errorf("MaxItems %d: %d pages, want %d", size, pages, wantPages)
		}
	}
}

func TestSimulatePrincipalPolicyErrors(t *testing.T) {
	ctx := context.Background()
	noSimulations := header + `cluster: {name: prod-eks, accountID: "111122223333"}
roles: [{name: KarpenterNodeRole-prod-eks, arn: "` + nodeRoleARN + `"}]
`
	call := func(principal string, mod func(*iam.SimulatePrincipalPolicyInput)) func(clients) error {
		return func(c clients) error {
			in := &iam.SimulatePrincipalPolicyInput{PolicySourceArn: aws.String(principal), ActionNames: []string{"ec2:DescribeImages"}}
			if mod != nil {
				mod(in)
			}
			_, err := c.iam.SimulatePrincipalPolicy(ctx, in)
			return err
		}
	}
	withContext := func(e ...iamtypes.ContextEntry) func(*iam.SimulatePrincipalPolicyInput) {
		return func(in *iam.SimulatePrincipalPolicyInput) { in.ContextEntries = e }
	}
	for _, tc := range []struct {
		name     string
		snapshot string
		opts     []fakeaws.Option
		call     func(clients) error
		code     string
		status   int
		msg      string
	}{
		{"no simulations and no policies", noSimulations, nil, call(nodeRoleARN, nil), "AccessDenied", 403,
			"is not authorized to perform: iam:SimulatePrincipalPolicy on resource: " + nodeRoleARN + " because"},
		{"unknown role", simulations, nil, call("arn:aws:iam::111122223333:role/Missing", nil), "NoSuchEntity", 404, "The role with name Missing cannot be found."},
		{"unknown role with a path", simulations, nil, call("arn:aws:iam::111122223333:role/a/b/Gone", nil), "NoSuchEntity", 404, "The role with name Gone cannot be found."},
		{"unknown user", noSimulations, []fakeaws.Option{fakeaws.WithPolicies(controllerPolicies(t))}, call("arn:aws:iam::111122223333:user/ci", nil), "NoSuchEntity", 404, "The user with name ci cannot be found."},
		{"role ARN without its path", simulations, nil, call("arn:aws:iam::111122223333:role/Recorded", nil), "NoSuchEntity", 404, "Recorded cannot be found"},
		{"not an ARN", simulations, nil, call("KarpenterNodeRole-prod-eks", nil), "InvalidInput", 400, "ARN KarpenterNodeRole-prod-eks is not valid."},
		{"a string with two values", simulations, nil, call(nodeRoleARN, withContext(iamtypes.ContextEntry{ContextKeyName: aws.String("aws:RequestedRegion"), ContextKeyType: iamtypes.ContextKeyTypeEnumString, ContextKeyValues: []string{"a", "b"}})),
			"InvalidInput", 400, "Context key aws:RequestedRegion of type string takes one value, got 2."},
		{"an unknown type", simulations, nil, call(nodeRoleARN, withContext(iamtypes.ContextEntry{ContextKeyName: aws.String("k"), ContextKeyType: "strings", ContextKeyValues: []string{"a"}})),
			"ValidationError", 400, "Value 'strings' at 'contextEntries.1.member.contextKeyType'"},
		{"a number that is not one", simulations, nil, call(nodeRoleARN, withContext(iamtypes.ContextEntry{ContextKeyName: aws.String("k"), ContextKeyType: iamtypes.ContextKeyTypeEnumNumeric, ContextKeyValues: []string{"ten"}})),
			"InvalidInput", 400, "Context key k of type numeric"},
		{"a policy to simulate", simulations, nil, call(nodeRoleARN, func(in *iam.SimulatePrincipalPolicyInput) { in.PolicyInputList = []string{"{}"} }),
			"InvalidInput", 400, "does not model SimulatePrincipalPolicy's PolicyInputList"},
		{"no actions", simulations, nil, call(nodeRoleARN, func(in *iam.SimulatePrincipalPolicyInput) { in.ActionNames = []string{} }),
			"ValidationError", 400, "Value null at 'actionNames'"},
		{"MaxItems 0", simulations, nil, call(nodeRoleARN, func(in *iam.SimulatePrincipalPolicyInput) { in.MaxItems = aws.Int32(0) }),
			"ValidationError", 400, "at 'maxItems'"},
		{"a marker of another operation", simulations, nil, call(nodeRoleARN, func(in *iam.SimulatePrincipalPolicyInput) {
			in.Marker = aws.String("ZmFrZWF3cy9pYW06TGlzdEluc3RhbmNlUHJvZmlsZXNGb3JSb2xlLzE")
		}),
			"ValidationError", 400, "Invalid Marker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := start(t, snapshot(t, tc.snapshot), tc.opts...)
			err := tc.call(c)
			wantAPIError(t, err, tc.code, tc.status, tc.msg)
			if tc.code == "NoSuchEntity" {
				wantTyped[*iamtypes.NoSuchEntityException](t, err)
			}
		})
	}

	// Policies alone, without a simulations section, let the fake answer.
	_, c := start(t, snapshot(t, noSimulations), fakeaws.WithPolicies(controllerPolicies(t)))
	if err := call(nodeRoleARN, nil)(c); err != nil {
		t.Errorf("policies without simulations: %v", err)
	}
	wantAPIError(t, call("arn:aws:iam::111122223333:role/Missing", nil)(c), "NoSuchEntity", http.StatusNotFound, "Missing")
}
