package fakeaws_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
)

func TestEKSDescribeCluster(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, production(t))
	out, err := c.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("prod-eks")})
	if err != nil {
		t.Fatal(err)
	}
	cl := out.Cluster
	checks := []struct{ field, got, want string }{
		{"name", aws.ToString(cl.Name), "prod-eks"},
		{"arn", aws.ToString(cl.Arn), "arn:aws:eks:us-east-1:111122223333:cluster/prod-eks"},
		{"version", aws.ToString(cl.Version), "1.33"},
		{"status", string(cl.Status), "ACTIVE"},
		{"vpcId", aws.ToString(cl.ResourcesVpcConfig.VpcId), "vpc-0a1b2c3d"},
		{"authenticationMode", string(cl.AccessConfig.AuthenticationMode), "API_AND_CONFIG_MAP"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("cluster.%s = %q, want %q", ch.field, ch.got, ch.want)
		}
	}

	// Region, partition and account come from the snapshot.
	_, c = start(t, snapshot(t, header+`cluster: {name: gov, region: us-gov-west-1, partition: aws-us-gov, accountID: "444455556666", authenticationMode: API}`))
	out, err = c.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("gov")})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(out.Cluster.Arn); got != "arn:aws-us-gov:eks:us-gov-west-1:444455556666:cluster/gov" {
		t.Errorf("arn %q", got)
	}
	if out.Cluster.Version != nil || out.Cluster.ResourcesVpcConfig != nil {
		t.Errorf("fields absent from the snapshot were sent: version %v, vpc %v", out.Cluster.Version, out.Cluster.ResourcesVpcConfig)
	}
}

func TestEKSDescribeClusterErrors(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, production(t))
	_, err := c.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("other")})
	wantTyped[*ekstypes.ResourceNotFoundException](t, err)
	wantAPIError(t, err, "ResourceNotFoundException", http.StatusNotFound, "No cluster found for name: other.")

	// No cluster section: unknown, so the fake denies access as AWS would to a caller without rights.
	_, c = start(t, snapshot(t, header+"roles: []\n"))
	_, err = c.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("prod-eks")})
	wantTyped[*ekstypes.AccessDeniedException](t, err)
	wantAPIError(t, err, "AccessDeniedException", http.StatusForbidden,
		"is not authorized to perform: eks:DescribeCluster on resource: arn:aws:eks:us-east-1:123456789012:cluster/prod-eks")
}

// entries is a snapshot with access entries of every kind of principal, paths included.
const entries = header + `cluster:
  name: prod-eks
  region: eu-west-1
  accountID: "111122223333"
  authenticationMode: API
accessEntries:
  - principalArn: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks
    type: EC2_LINUX
    username: system:node:{{EC2PrivateDNSName}}
    createdAt: "2025-06-01T10:00:00Z"
  - principalArn: arn:aws:iam::111122223333:role/teams/platform/Node+Role=1,x.y@z-w
    type: STANDARD
    username: platform
    kubernetesGroups: [viewers, editors]
    createdAt: "2025-06-02T10:00:00.5Z"
  - principalArn: arn:aws:iam::111122223333:role/aws-reserved/sso.amazonaws.com/eu-west-1/AWSReservedSSO_Admin_0123
    type: STANDARD
  - principalArn: arn:aws:iam::111122223333:user/ci
    type: STANDARD
    username: ci
  - principalArn: arn:aws:iam::111122223333:role/WindowsNodes
    type: EC2_WINDOWS
  - principalArn: arn:aws:iam::111122223333:role/Fargate
    type: FARGATE_LINUX
  - principalArn: arn:aws:iam::111122223333:role/Hybrid
    type: HYBRID_LINUX
`

func TestEKSAccessEntries(t *testing.T) {
	ctx := context.Background()
	cf := snapshot(t, entries)
	rec, c := startRecorded(t, cf)

	// Every page size gives every entry once, in order.
	var want []string
	for _, e := range *cf.AccessEntries {
		want = append(want, e.PrincipalARN)
	}
	for _, size := range []int32{1, 2, 3, 7, 100} {
		var got []string
		pages := 0
		p := eks.NewListAccessEntriesPaginator(c.eks, &eks.ListAccessEntriesInput{ClusterName: aws.String("prod-eks"), MaxResults: aws.Int32(size)})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("maxResults %d: %v", size, err)
			}
			if len(out.AccessEntries) > int(size) {
				t.Errorf("maxResults %d: page of %d", size, len(out.AccessEntries))
			}
			got = append(got, out.AccessEntries...)
			pages++
		}
		if !slices.Equal(got, want) {
			t.Errorf("maxResults %d: entries %q, want %q", size, got, want)
		}
		if wantPages := (len(want) + int(size) - 1) / int(size); pages != wantPages {
			t.Errorf("maxResults %d: %d pages, want %d", size, pages, wantPages)
		}
	}

	// Each entry describes as the snapshot holds it, whatever its ARN holds (paths, +=,.@-).
	for _, e := range *cf.AccessEntries {
		out, err := c.eks.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String("prod-eks"), PrincipalArn: aws.String(e.PrincipalARN)})
		if err != nil {
			t.Fatalf("%s: %v", e.PrincipalARN, err)
		}
		ae := out.AccessEntry
		if aws.ToString(ae.PrincipalArn) != e.PrincipalARN || aws.ToString(ae.Type) != e.Type || aws.ToString(ae.Username) != e.Username ||
			aws.ToString(ae.ClusterName) != "prod-eks" {
			t.Errorf("%s: got principal %q type %q username %q cluster %q", e.PrincipalARN, aws.ToString(ae.PrincipalArn), aws.ToString(ae.Type), aws.ToString(ae.Username), aws.ToString(ae.ClusterName))
		}
		if !slices.Equal(ae.KubernetesGroups, e.KubernetesGroups) {
			t.Errorf("%s: groups %q, want %q", e.PrincipalARN, ae.KubernetesGroups, e.KubernetesGroups)
		}
		switch {
		case e.CreatedAt.IsZero() && ae.CreatedAt != nil:
			t.Errorf("%s: createdAt %v, want none", e.PrincipalARN, ae.CreatedAt)
		case !e.CreatedAt.IsZero() && (ae.CreatedAt == nil || !ae.CreatedAt.Equal(e.CreatedAt)):
			t.Errorf("%s: createdAt %v, want %v", e.PrincipalARN, ae.CreatedAt, e.CreatedAt)
		}
		if arn := aws.ToString(ae.AccessEntryArn); !strings.HasPrefix(arn, "arn:aws:eks:eu-west-1:111122223333:access-entry/prod-eks/") {
			t.Errorf("%s: accessEntryArn %q", e.PrincipalARN, arn)
		}
	}

	// The SDK percent-encodes the ARN, slashes included, inside one path segment.
	const encoded = "/clusters/prod-eks/access-entries/arn%3Aaws%3Aiam%3A%3A111122223333%3Arole%2Fteams%2Fplatform%2FNode%2BRole%3D1%2Cx.y%40z-w"
	if !slices.Contains(rec.all(), encoded) {
		t.Errorf("no request to %s among %q", encoded, rec.all())
	}
}

func TestEKSAccessEntryErrors(t *testing.T) {
	ctx := context.Background()
	configMap := header + `cluster: {name: prod-eks, accountID: "111122223333", authenticationMode: CONFIG_MAP}
accessEntries: []
`
	unknownEntries := header + `cluster: {name: prod-eks, accountID: "111122223333", authenticationMode: API}` + "\n"
	list := func(c clients, cluster string) error {
		_, err := c.eks.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: aws.String(cluster)})
		return err
	}
	describe := func(c clients, cluster string) error {
		_, err := c.eks.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String(cluster), PrincipalArn: aws.String("arn:aws:iam::111122223333:role/Missing")})
		return err
	}
	for _, tc := range []struct {
		name, snapshot, cluster string
		call                    func(clients, string) error
		code                    string
		status                  int
		msg                     string
	}{
		{"missing entry", entries, "prod-eks", describe, "ResourceNotFoundException", 404, "principalArn could not be found"},
		{"list, unknown cluster", entries, "other", list, "ResourceNotFoundException", 404, "No cluster found for name: other."},
		{"describe, unknown cluster", entries, "other", describe, "ResourceNotFoundException", 404, "No cluster found for name: other."},
		{"list in CONFIG_MAP mode", configMap, "prod-eks", list, "InvalidRequestException", 400, "authentication mode must be set to one of [API, API_AND_CONFIG_MAP]"},
		{"describe in CONFIG_MAP mode", configMap, "prod-eks", describe, "InvalidRequestException", 400, "authentication mode"},
		{"list, entries unknown", unknownEntries, "prod-eks", list, "AccessDeniedException", 403, "eks:ListAccessEntries on resource: arn:aws:eks:us-east-1:111122223333:cluster/prod-eks"},
		{"describe, entries unknown", unknownEntries, "prod-eks", describe, "AccessDeniedException", 403,
			"eks:DescribeAccessEntry on resource: arn:aws:eks:us-east-1:111122223333:access-entry/prod-eks/role/111122223333/Missing/*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := start(t, snapshot(t, tc.snapshot))
			err := tc.call(c, tc.cluster)
			wantAPIError(t, err, tc.code, tc.status, tc.msg)
			switch tc.code {
			case "ResourceNotFoundException":
				wantTyped[*ekstypes.ResourceNotFoundException](t, err)
			case "InvalidRequestException":
				wantTyped[*ekstypes.InvalidRequestException](t, err)
			case "AccessDeniedException":
				wantTyped[*ekstypes.AccessDeniedException](t, err)
			}
		})
	}

	// Pagination parameters are validated as EKS does.
	_, c := start(t, snapshot(t, entries))
	_, err := c.eks.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: aws.String("prod-eks"), MaxResults: aws.Int32(101)})
	wantTyped[*ekstypes.InvalidParameterException](t, err)
	_, err = c.eks.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: aws.String("prod-eks"), NextToken: aws.String("garbage")})
	wantTyped[*ekstypes.InvalidParameterException](t, err)
}

func TestEKSEntryTimesRoundTrip(t *testing.T) {
	// createdAt travels as epoch seconds with a fraction, as EKS sends it.
	cf := snapshot(t, entries)
	_, c := start(t, cf)
	e := (*cf.AccessEntries)[1]
	out, err := c.eks.DescribeAccessEntry(context.Background(), &eks.DescribeAccessEntryInput{ClusterName: aws.String("prod-eks"), PrincipalArn: aws.String(e.PrincipalARN)})
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2025, 6, 2, 10, 0, 0, 500e6, time.UTC); !out.AccessEntry.CreatedAt.Equal(want) {
		t.Errorf("createdAt %v, want %v", out.AccessEntry.CreatedAt, want)
	}
}
