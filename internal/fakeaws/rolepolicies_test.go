package fakeaws_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
)

// TestRolePoliciesReadable: the policies the simulator evaluates are the ones a role's policy reading
// returns, the boundary GetRole names included; a role whose answers are the snapshot's table cannot
// have its policies read (no documents would give that table), a known role without policies has none,
// and an unknown role is NoSuchEntity, as IAM answers.
func TestRolePoliciesReadable(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, full(t), withNodePolicies())

	got, err := c.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("KarpenterNodeRole-prod-eks")})
	if err != nil {
		t.Fatal(err)
	}
	if b := got.Role.PermissionsBoundary; b == nil || aws.ToString(b.PermissionsBoundaryArn) != nodeBoundary {
		t.Errorf("GetRole's permissions boundary %+v, want %s", b, nodeBoundary)
	}
	v, err := c.iam.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: aws.String(nodeBoundary), VersionId: aws.String("v1")})
	if err != nil {
		t.Fatal(err)
	}
	if doc, _ := url.QueryUnescape(aws.ToString(v.PolicyVersion.Document)); doc != nodeBoundaryPolicy {
		t.Errorf("boundary document %q", doc)
	}

	// The controller's answers are the snapshot's table.
	_, err = c.iam.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: aws.String("KarpenterController-prod-eks")})
	wantAPIError(t, err, "AccessDenied", 403, "is not authorized to perform: iam:ListRolePolicies")

	_, err = c.iam.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: aws.String("Nobody")})
	wantAPIError(t, err, "NoSuchEntity", 404, "The role with name Nobody cannot be found.")

	_, c = start(t, full(t))
	out, err := c.iam.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: aws.String("KarpenterNodeRole-prod-eks")})
	if err != nil || len(out.PolicyNames) != 0 {
		t.Errorf("a role without policies: %v, %v; want none", out, err)
	}
	if r, err := c.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("KarpenterNodeRole-prod-eks")}); err != nil || r.Role.PermissionsBoundary != nil {
		t.Errorf("a role without a boundary: %v", err)
	}
}
