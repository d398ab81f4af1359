package fakeaws_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

// podIdentity is a cluster with 3 associations besides aws-node's: the controller's (with a session
// policy and a cross-account target role) and two others, and aws-node's own.
const podIdentity = header + `cluster: {name: prod-eks, region: eu-west-1, accountID: "111122223333", podIdentityAssociations: 3}
karpenterController:
  serviceAccount: karpenter/karpenter-sa
  roleArn: arn:aws:iam::111122223333:role/KarpenterController-prod-eks
  source: podIdentity
  sessionPolicy: true
  targetRoleArn: arn:aws:iam::444455556666:role/KarpenterTarget
vpcCNI: {present: true, credentials: podIdentity, roleArn: "arn:aws:iam::111122223333:role/AmazonEKSVPCCNIRole"}
`

// listAll lists every association of a filter, page by page.
func listAll(t *testing.T, c clients, in *eks.ListPodIdentityAssociationsInput) []ekstypes.PodIdentityAssociationSummary {
	t.Helper()
	var all []ekstypes.PodIdentityAssociationSummary
	p := eks.NewListPodIdentityAssociationsPaginator(c.eks, in)
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("list %+v: %v", in, err)
		}
		if in.MaxResults != nil && len(out.Associations) > int(*in.MaxResults) {
			t.Errorf("maxResults %d: page of %d", *in.MaxResults, len(out.Associations))
		}
		all = append(all, out.Associations...)
	}
	return all
}

func serviceAccounts(as []ekstypes.PodIdentityAssociationSummary) []string {
	var out []string
	for _, a := range as {
		out = append(out, aws.ToString(a.Namespace)+"/"+aws.ToString(a.ServiceAccount))
	}
	return out
}

func TestPodIdentityAssociations(t *testing.T) {
	ctx := context.Background()
	rec, c := startRecorded(t, snapshot(t, podIdentity))
	want := []string{"karpenter/karpenter-sa", "kube-system/aws-node", "workloads/workload-1", "workloads/workload-2"}
	for _, size := range []int32{1, 2, 3, 100} {
		got := listAll(t, c, &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String("prod-eks"), MaxResults: aws.Int32(size)})
		if !slices.Equal(serviceAccounts(got), want) {
			t.Errorf("maxResults %d: %q, want %q", size, serviceAccounts(got), want)
		}
	}
	// Every association but aws-node's: the snapshot's count.
	all := listAll(t, c, &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String("prod-eks")})
	others := slices.DeleteFunc(slices.Clone(all), func(a ekstypes.PodIdentityAssociationSummary) bool {
		return aws.ToString(a.Namespace) == "kube-system" && aws.ToString(a.ServiceAccount) == "aws-node"
	})
	if len(others) != 3 {
		t.Errorf("%d associations but aws-node's, want the snapshot's 3", len(others))
	}
	for _, a := range all {
		if aws.ToString(a.ClusterName) != "prod-eks" || !strings.HasPrefix(aws.ToString(a.AssociationId), "a-") ||
			aws.ToString(a.AssociationArn) != "arn:aws:eks:eu-west-1:111122223333:podidentityassociation/prod-eks/"+aws.ToString(a.AssociationId) {
			t.Errorf("summary %+v", a)
		}
	}

	// The filters, as the live provider asks for the controller's and aws-node's.
	got := listAll(t, c, &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String("prod-eks"), Namespace: aws.String("karpenter"), ServiceAccount: aws.String("karpenter-sa")})
	if len(got) != 1 {
		t.Fatalf("the controller's association: %+v", got)
	}
	if n := len(listAll(t, c, &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String("prod-eks"), Namespace: aws.String("workloads")})); n != 2 {
		t.Errorf("namespace filter: %d associations, want 2", n)
	}
	if n := len(listAll(t, c, &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String("prod-eks"), ServiceAccount: aws.String("nobody")})); n != 0 {
		t.Errorf("a service account without one: %d associations", n)
	}
	if !slices.ContainsFunc(rec.all(), func(u string) bool {
		return u == "/clusters/prod-eks/pod-identity-associations?namespace=karpenter&serviceAccount=karpenter-sa"
	}) {
		t.Errorf("no filtered request among %q", rec.all())
	}

	// The controller's association as the snapshot describes it.
	out, err := c.eks.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{ClusterName: aws.String("prod-eks"), AssociationId: got[0].AssociationId})
	if err != nil {
		t.Fatal(err)
	}
	a := out.Association
	checks := []struct{ field, got, want string }{
		{"clusterName", aws.ToString(a.ClusterName), "prod-eks"},
		{"namespace", aws.ToString(a.Namespace), "karpenter"},
		{"serviceAccount", aws.ToString(a.ServiceAccount), "karpenter-sa"},
		{"roleArn", aws.ToString(a.RoleArn), "arn:aws:iam::111122223333:role/KarpenterController-prod-eks"},
		{"targetRoleArn", aws.ToString(a.TargetRoleArn), "arn:aws:iam::444455556666:role/KarpenterTarget"},
		{"associationArn", aws.ToString(a.AssociationArn), aws.ToString(got[0].AssociationArn)},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("association.%s = %q, want %q", ch.field, ch.got, ch.want)
		}
	}
	if aws.ToString(a.Policy) == "" || aws.ToString(a.ExternalId) == "" || a.DisableSessionTags == nil || *a.DisableSessionTags || a.Tags == nil {
		t.Errorf("policy %v, externalId %v, disableSessionTags %v, tags %v", a.Policy, a.ExternalId, a.DisableSessionTags, a.Tags)
	}

	// aws-node's: its role, no session policy, no target role.
	id := fakeaws.AssociationID("prod-eks", "kube-system", "aws-node")
	out, err = c.eks.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{ClusterName: aws.String("prod-eks"), AssociationId: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	if a := out.Association; aws.ToString(a.RoleArn) != "arn:aws:iam::111122223333:role/AmazonEKSVPCCNIRole" || a.Policy != nil || a.TargetRoleArn != nil || a.ExternalId != nil {
		t.Errorf("aws-node's association %+v", a)
	}
}

func TestPodIdentityFromTheSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name, snapshot string
		want           []string
	}{
		{"only the count", header + `cluster: {name: prod-eks, accountID: "111122223333", podIdentityAssociations: 2}`,
			[]string{"workloads/workload-1", "workloads/workload-2"}},
		{"none", header + `cluster: {name: prod-eks, accountID: "111122223333", podIdentityAssociations: 0}`, nil},
		{"the controller with IRSA is no association", header + `cluster: {name: prod-eks, accountID: "111122223333", podIdentityAssociations: 1}
karpenterController: {roleArn: "arn:aws:iam::111122223333:role/K", source: irsa}`, []string{"workloads/workload-1"}},
		{"the controller's default service account, without a count", header + `cluster: {name: prod-eks, accountID: "111122223333"}
karpenterController: {roleArn: "arn:aws:iam::111122223333:role/K", source: podIdentity}`, []string{"kube-system/karpenter"}},
		{"aws-node alone", header + `cluster: {name: prod-eks, accountID: "111122223333"}
vpcCNI: {present: true, credentials: podIdentity, roleArn: "arn:aws:iam::111122223333:role/CNI"}`, []string{"kube-system/aws-node"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := start(t, snapshot(t, tc.snapshot))
			out, err := c.eks.ListPodIdentityAssociations(context.Background(), &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String("prod-eks")})
			if err != nil {
				t.Fatal(err)
			}
			if got := serviceAccounts(out.Associations); !slices.Equal(got, tc.want) || out.Associations == nil {
				t.Errorf("associations %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPodIdentityErrors(t *testing.T) {
	ctx := context.Background()
	unknown := header + `cluster: {name: prod-eks, accountID: "111122223333"}
karpenterController: {roleArn: "arn:aws:iam::111122223333:role/K", source: irsa}
vpcCNI: {present: true, credentials: nodeRole}
`
	list := func(cluster string, mod func(*eks.ListPodIdentityAssociationsInput)) func(clients) error {
		return func(c clients) error {
			in := &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String(cluster)}
			if mod != nil {
				mod(in)
			}
			_, err := c.eks.ListPodIdentityAssociations(ctx, in)
			return err
		}
	}
	describe := func(cluster, id string) func(clients) error {
		return func(c clients) error {
			_, err := c.eks.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{ClusterName: aws.String(cluster), AssociationId: aws.String(id)})
			return err
		}
	}
	for _, tc := range []struct {
		name, snapshot string
		call           func(clients) error
		code           string
		status         int
		msg            string
	}{
		{"list, unknown", unknown, list("prod-eks", nil), "AccessDeniedException", http.StatusForbidden,
			"eks:ListPodIdentityAssociations on resource: arn:aws:eks:us-east-1:111122223333:cluster/prod-eks"},
		{"describe, unknown", unknown, describe("prod-eks", "a-0123456789abcdef0"), "AccessDeniedException", http.StatusForbidden,
			"eks:DescribePodIdentityAssociation on resource: arn:aws:eks:us-east-1:111122223333:podidentityassociation/prod-eks/a-0123456789abcdef0"},
		{"no such association", podIdentity, describe("prod-eks", "a-0123456789abcdef0"), "ResourceNotFoundException", http.StatusNotFound, "a-0123456789abcdef0"},
		{"list, another cluster", podIdentity, list("other", nil), "ResourceNotFoundException", http.StatusNotFound, "No cluster found for name: other."},
		{"describe, another cluster", podIdentity, describe("other", fakeaws.AssociationID("prod-eks", "kube-system", "aws-node")), "ResourceNotFoundException", http.StatusNotFound, "No cluster found for name: other."},
		{"maxResults over 100", podIdentity, list("prod-eks", func(in *eks.ListPodIdentityAssociationsInput) { in.MaxResults = aws.Int32(101) }), "InvalidParameterException", http.StatusBadRequest, "maxResults"},
		{"a token of another operation", podIdentity, list("prod-eks", func(in *eks.ListPodIdentityAssociationsInput) {
			in.NextToken = aws.String("ZmFrZWF3cy9la3M6TGlzdEFjY2Vzc0VudHJpZXMvMQ") // fakeaws/eks:ListAccessEntries/1
		}), "InvalidParameterException", http.StatusBadRequest, "nextToken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := start(t, snapshot(t, tc.snapshot))
			err := tc.call(c)
			wantAPIError(t, err, tc.code, tc.status, tc.msg)
			switch tc.code {
			case "AccessDeniedException":
				wantTyped[*ekstypes.AccessDeniedException](t, err)
			case "ResourceNotFoundException":
				wantTyped[*ekstypes.ResourceNotFoundException](t, err)
			case "InvalidParameterException":
				wantTyped[*ekstypes.InvalidParameterException](t, err)
			}
		})
	}
}
