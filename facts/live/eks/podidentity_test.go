package eks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/eks"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

// podIdentityWorld has as many associations as count says (the fake makes up workloads/workload-N
// for those beyond the controller's), the controller's in kube-system/karpenter with a session policy
// and a cross-account target, and aws-node's, which does not count.
func podIdentityWorld(count int) string {
	return strings.Replace(world, "  vpcID: vpc-0a1b2c3d\n", fmt.Sprintf("  vpcID: vpc-0a1b2c3d\n  podIdentityAssociations: %d\n", count), 1) + `
karpenterController:
  serviceAccount: kube-system/karpenter
  roleArn: arn:aws:iam::111122223333:role/KarpenterController
  source: podIdentity
  sessionPolicy: true
  targetRoleArn: arn:aws:iam::444455556666:role/KarpenterTarget
vpcCNI: {present: true, credentials: podIdentity, roleArn: "arn:aws:iam::111122223333:role/AmazonEKSVPCCNIRole"}
`
}

// TestPodIdentityAssociations: the count follows every page of the list and leaves aws-node's
// association out; it is asked once per TTL.
func TestPodIdentityAssociations(t *testing.T) {
	srv, p := start(t, podIdentityWorld(150), "prod-eks", cache.Options{})
	ctx := context.Background()
	for range 3 {
		if n, err := p.PodIdentityAssociations(ctx); n != 150 || err != nil {
			t.Fatalf("PodIdentityAssociations = %d, %v; want 150", n, err)
		}
	}
	if n := srv.Calls("eks:ListPodIdentityAssociations"); n != 2 {
		t.Errorf("%d ListPodIdentityAssociations requests for 151 associations, asked 3 times; want 2 (two pages, once)", n)
	}
	if err := p.Known(ctx, facts.ClusterPodIdentityAssociations); err != nil {
		t.Errorf("Known(cluster.podIdentityAssociations) = %v", err)
	}
}

// TestPodIdentity: one ServiceAccount's association (the list filtered to it, then its description),
// nil for one without; each kind of answer is cached.
func TestPodIdentity(t *testing.T) {
	srv, p := start(t, podIdentityWorld(3), "prod-eks", cache.Options{MaxEntries: 1})
	ctx := context.Background()
	for round := range 2 {
		got, err := p.PodIdentity(ctx, facts.KarpenterController, "kube-system", "karpenter")
		want := eks.PodIdentity{RoleARN: "arn:aws:iam::111122223333:role/KarpenterController", TargetRoleARN: "arn:aws:iam::444455556666:role/KarpenterTarget"}
		if err != nil || got == nil || got.RoleARN != want.RoleARN || got.TargetRoleARN != want.TargetRoleARN || got.Policy == "" {
			t.Fatalf("round %d: PodIdentity(kube-system/karpenter) = %+v, %v; want %+v with a session policy", round, got, err, want)
		}
	}
	if l, d := srv.Calls("eks:ListPodIdentityAssociations"), srv.Calls("eks:DescribePodIdentityAssociation"); l != 1 || d != 1 {
		t.Errorf("%d list and %d describe requests for one ServiceAccount asked twice; want 1 and 1", l, d)
	}
	if got, err := p.PodIdentity(ctx, facts.VPCCNI, "kube-system", "aws-node"); err != nil || got == nil || got.RoleARN != "arn:aws:iam::111122223333:role/AmazonEKSVPCCNIRole" || got.Policy != "" || got.TargetRoleARN != "" {
		t.Errorf("PodIdentity(kube-system/aws-node) = %+v, %v", got, err)
	}
	for _, sa := range [][2]string{{"kube-system", "other"}, {"workloads", "karpenter"}} {
		if got, err := p.PodIdentity(ctx, facts.KarpenterController, sa[0], sa[1]); got != nil || err != nil {
			t.Errorf("PodIdentity(%s/%s) = %+v, %v; want none", sa[0], sa[1], got, err)
		}
	}
}

// TestPodIdentityUnknown: a refused list or description is the unknown fact asked for, naming the
// action; a cluster EKS does not know says so.
func TestPodIdentityUnknown(t *testing.T) {
	ctx := context.Background()
	for _, op := range []string{"eks:ListPodIdentityAssociations", "eks:DescribePodIdentityAssociation"} {
		srv, p := start(t, podIdentityWorld(3), "prod-eks", cache.Options{})
		srv.Inject(op, fakeaws.Fault{AccessDenied: true})
		want := "AWS denied " + op + " (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"
		_, err := p.PodIdentity(ctx, facts.VPCCNI, "kube-system", "aws-node")
		var u *facts.UnknownError
		if !errors.As(err, &u) || u.Fact != facts.VPCCNI || u.Reason != want {
			t.Errorf("PodIdentity with %s denied = %v; want the unknown fact vpcCNI because %q", op, err, want)
		}
	}
	srv, p := start(t, podIdentityWorld(3), "prod-eks", cache.Options{})
	srv.Inject("eks:ListPodIdentityAssociations", fakeaws.Fault{AccessDenied: true})
	if _, err := p.PodIdentityAssociations(ctx); !strings.HasPrefix(facts.Reason(err), "AWS denied eks:ListPodIdentityAssociations") || p.Known(ctx, facts.ClusterPodIdentityAssociations) == nil {
		t.Errorf("PodIdentityAssociations denied = %v; want unknown, and Known failing", err)
	}
	_, p = start(t, podIdentityWorld(3), "prod-ekss", cache.Options{})
	if _, err := p.PodIdentityAssociations(ctx); facts.Reason(err) != `EKS cluster "prod-ekss" not found in eu-west-1 (check --cluster-name and --region)` {
		t.Errorf("PodIdentityAssociations of an unknown cluster = %v", err)
	}
}

// TestNoAssociationSeenWithinNegativeTTL: a ServiceAccount without an association is asked again
// after the negative TTL, so that an association made a minute ago counts.
func TestNoAssociationSeenWithinNegativeTTL(t *testing.T) {
	c := livetest.NewClock()
	srv, p := start(t, podIdentityWorld(3), "prod-eks", cache.Options{TTL: 5 * time.Minute, NegativeTTL: 30 * time.Second, Now: c.Now})
	ctx := context.Background()
	for i, wait := range []time.Duration{0, 20 * time.Second, 20 * time.Second} {
		c.Add(wait)
		if got, err := p.PodIdentity(ctx, facts.KarpenterController, "karpenter", "karpenter"); got != nil || err != nil {
			t.Fatalf("PodIdentity = %+v, %v; want none", got, err)
		}
		if n, want := srv.Calls("eks:ListPodIdentityAssociations"), []int{1, 1, 2}[i]; n != want {
			t.Errorf("after question %d: %d list requests, want %d", i, n, want)
		}
	}
}
