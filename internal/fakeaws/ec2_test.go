package fakeaws_test

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// network is a snapshot with images of every kind of owner and state, and two VPCs of subnets and groups.
const network = header + `cluster: {name: prod-eks, region: us-east-1, accountID: "111122223333", vpcID: vpc-a}
images:
  - {id: ami-01, name: amazon-eks-node-al2023-x86_64-standard-1.33-v20251112, ownerID: "602401143452", ownerAlias: amazon, architecture: x86_64, state: available, creationDate: "2025-11-12T00:00:00.000Z"}
  - {id: ami-02, name: amazon-eks-node-al2023-arm64-standard-1.33-v20251112, ownerID: "602401143452", ownerAlias: amazon, architecture: arm64, state: available}
  - {id: ami-03, name: amazon-eks-node-al2023-x86_64-standard-1.33-v20250101, ownerID: "602401143452", ownerAlias: amazon, architecture: x86_64, state: available}
  - {id: ami-04, name: amazon-eks-node-al2023-x86_64-standard-1.33-v20251201, ownerID: "602401143452", ownerAlias: amazon, architecture: x86_64, state: pending}
  - {id: ami-05, name: amazon-eks-node-al2023-x86_64-standard-1.33-v20251112, ownerID: "111122223333", architecture: x86_64, state: available, tags: {team: platform, env: prod}}
  - {id: ami-06, name: amazon-eks-node-al2023-x86_64-standard-1.33-v20251112, ownerID: "999999999999", architecture: x86_64, state: available}
  - {id: ami-07, name: bottlerocket-aws-k8s-1.33-x86_64-v1.50.0-abc, ownerID: "092701018921", ownerAlias: amazon, architecture: x86_64, state: available}
  - {id: ami-08, name: marketplace-image, ownerID: "679593333241", ownerAlias: aws-marketplace, architecture: x86_64, state: available}
  - {id: ami-09, name: custom-golden-2025, ownerID: "111122223333", architecture: arm64, state: available, tags: {karpenter.sh/discovery: prod-eks, Name: golden}}
  - {id: ami-10, name: custom-golden-2024, ownerID: "111122223333", architecture: x86_64, state: available, tags: {karpenter.sh/discovery: staging, Name: ""}}
  - {id: ami-11, name: Windows_Server-2022-English-Core-EKS_Optimized-1.33-2025.11.12, ownerID: "801119661308", ownerAlias: amazon, architecture: x86_64, state: available}
  - {id: ami-12, name: custom-golden-broken, ownerID: "111122223333", architecture: x86_64, state: failed, tags: {karpenter.sh/discovery: prod-eks}}
subnets:
  - {id: subnet-a1, vpcID: vpc-a, availabilityZone: us-east-1a, mapPublicIpOnLaunch: false, public: false, tags: {karpenter.sh/discovery: prod-eks, Name: private-a}}
  - {id: subnet-a2, vpcID: vpc-a, availabilityZone: us-east-1b, mapPublicIpOnLaunch: false, public: false, tags: {karpenter.sh/discovery: prod-eks, Name: private-b}}
  - {id: subnet-a3, vpcID: vpc-a, availabilityZone: us-east-1c, mapPublicIpOnLaunch: false, public: false, tags: {karpenter.sh/discovery: prod-eks, Name: private-c}}
  - {id: subnet-a4, vpcID: vpc-a, availabilityZone: us-east-1a, mapPublicIpOnLaunch: true, public: true, tags: {Name: public-a, kubernetes.io/role/elb: "1"}}
  - {id: subnet-a5, vpcID: vpc-a, availabilityZone: us-east-1b, mapPublicIpOnLaunch: true, public: true, tags: {Name: public-b, kubernetes.io/role/elb: "1"}}
  - {id: subnet-a6, vpcID: vpc-a, availabilityZone: us-east-1c, mapPublicIpOnLaunch: false, public: true, tags: {karpenter.sh/discovery: prod-eks, Name: public-c-tagged-by-mistake}}
  - {id: subnet-a7, vpcID: vpc-a, availabilityZone: us-east-1d, mapPublicIpOnLaunch: false, public: false, tags: {Name: db-a}}
  - {id: subnet-a8, vpcID: vpc-a, availabilityZone: us-east-1e, mapPublicIpOnLaunch: false, public: false}
  - {id: subnet-b1, vpcID: vpc-b, availabilityZone: us-east-1a, mapPublicIpOnLaunch: false, public: false, tags: {karpenter.sh/discovery: prod-eks, Name: other-vpc-a}}
  - {id: subnet-b2, vpcID: vpc-b, availabilityZone: us-east-1b, mapPublicIpOnLaunch: true, public: true, tags: {Name: other-vpc-public}}
  - {id: subnet-b3, vpcID: vpc-b, availabilityZone: us-east-1b, mapPublicIpOnLaunch: false, public: false, tags: {Name: other-vpc-b}}
securityGroups:
  - {id: sg-01, name: eks-node, vpcID: vpc-a, tags: {karpenter.sh/discovery: prod-eks}}
  - {id: sg-02, name: eks-cluster-sg-prod-eks-123, vpcID: vpc-a, tags: {aws:eks:cluster-name: prod-eks}}
  - {id: sg-03, name: default, vpcID: vpc-a}
  - {id: sg-04, name: default, vpcID: vpc-b}
  - {id: sg-05, name: eks-node-staging, vpcID: vpc-b, tags: {karpenter.sh/discovery: staging}}
  - {id: sg-06, name: bastion, vpcID: vpc-a, tags: {Name: bastion, karpenter.sh/discovery: ""}}
`

func filter(name string, values ...string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String(name), Values: values}
}

func imageIDs(out []ec2types.Image) []string {
	var ids []string
	for _, i := range out {
		ids = append(ids, aws.ToString(i.ImageId))
	}
	return ids
}

func TestEC2DescribeImagesFilters(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, network))
	for _, tc := range []struct {
		name string
		in   ec2.DescribeImagesInput
		want []string
	}{
		{"everything", ec2.DescribeImagesInput{}, []string{"ami-01", "ami-02", "ami-03", "ami-04", "ami-05", "ami-06", "ami-07", "ami-08", "ami-09", "ami-10", "ami-11", "ami-12"}},
		{"name, owners self and amazon, available", ec2.DescribeImagesInput{Owners: []string{"self", "amazon"},
			Filters: []ec2types.Filter{filter("name", "amazon-eks-node-al2023-x86_64-standard-1.33-*"), filter("state", "available")}},
			[]string{"ami-01", "ami-03", "ami-05"}},
		{"owner amazon only", ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{filter("name", "amazon-eks-node-al2023-*-standard-1.33-v20251112")}},
			[]string{"ami-01", "ami-02"}},
		{"owner account id", ec2.DescribeImagesInput{Owners: []string{"999999999999"}}, []string{"ami-06"}},
		{"owner aws-marketplace", ec2.DescribeImagesInput{Owners: []string{"aws-marketplace"}}, []string{"ami-08"}},
		{"? wildcard", ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("name", "amazon-eks-node-al2023-?????-standard-1.33-v20251112")}}, []string{"ami-02"}},
		{"values ORed", ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("name", "custom-golden-2024", "marketplace-image")}}, []string{"ami-08", "ami-10"}},
		{"pending and failed excluded by state", ec2.DescribeImagesInput{Owners: []string{"self"}, Filters: []ec2types.Filter{filter("state", "available")}}, []string{"ami-05", "ami-09", "ami-10"}},
		{"state filter", ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("state", "pending", "failed")}}, []string{"ami-04", "ami-12"}},
		{"tag:KEY exact", ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "prod-eks")}}, []string{"ami-09", "ami-12"}},
		{"tag:KEY any value", ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "*")}}, []string{"ami-09", "ami-10", "ami-12"}},
		{"tag:KEY empty value matched by *", ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("tag:Name", "*")}}, []string{"ami-09", "ami-10"}},
		{"tag:KEY wildcard value", ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("tag:team", "plat*")}}, []string{"ami-05"}},
		{"tag-key", ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("tag-key", "env")}}, []string{"ami-05"}},
		{"tags ANDed", ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("tag:team", "platform"), filter("tag:env", "staging")}}, nil},
		{"image-id filter", ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("image-id", "ami-07", "ami-99")}}, []string{"ami-07"}},
		{"image id parameter", ec2.DescribeImagesInput{ImageIds: []string{"ami-11", "ami-02"}}, []string{"ami-02", "ami-11"}},
		{"architecture", ec2.DescribeImagesInput{Owners: []string{"self"}, Filters: []ec2types.Filter{filter("architecture", "arm64")}}, []string{"ami-09"}},
		{"owner-alias filter", ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("owner-alias", "amazon"), filter("name", "bottlerocket-*", "Windows_*")}}, []string{"ami-07", "ami-11"}},
		{"case-sensitive", ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("name", "CUSTOM-*")}}, nil},
		{"escaped wildcard is literal", ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("name", `custom-golden-20\*`)}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.ec2.DescribeImages(ctx, &tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := imageIDs(out.Images); !slices.Equal(got, tc.want) {
				t.Errorf("images %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEC2ImageFields(t *testing.T) {
	_, c := start(t, snapshot(t, network))
	out, err := c.ec2.DescribeImages(context.Background(), &ec2.DescribeImagesInput{ImageIds: []string{"ami-01", "ami-05"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Images) != 2 {
		t.Fatalf("images %q", imageIDs(out.Images))
	}
	a, s := out.Images[0], out.Images[1]
	if aws.ToString(a.Name) != "amazon-eks-node-al2023-x86_64-standard-1.33-v20251112" || aws.ToString(a.OwnerId) != "602401143452" ||
		aws.ToString(a.ImageOwnerAlias) != "amazon" || a.Architecture != ec2types.ArchitectureValuesX8664 || a.State != ec2types.ImageStateAvailable ||
		aws.ToString(a.CreationDate) != "2025-11-12T00:00:00.000Z" || !aws.ToBool(a.Public) {
		t.Errorf("amazon image %+v", a)
	}
	if s.ImageOwnerAlias != nil || aws.ToBool(s.Public) {
		t.Errorf("own image has alias %v, public %v", s.ImageOwnerAlias, s.Public)
	}
	tags := map[string]string{}
	for _, tg := range s.Tags {
		tags[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	if want := map[string]string{"team": "platform", "env": "prod"}; !maps.Equal(tags, want) {
		t.Errorf("tags %v, want %v", tags, want)
	}
}

// TestEC2AgreesWithSnapshotSemantics translates AMI selector terms into EC2 filters the way docs/facts.md
// says a live provider must (name without owner: owners self and amazon; only available images) and
// checks that the fake's EC2 answers what facts.MatchImage answers on the same snapshot.
func TestEC2AgreesWithSnapshotSemantics(t *testing.T) {
	ctx := context.Background()
	cf := snapshot(t, network)
	_, c := start(t, cf)
	terms := []facts.ImageTerm{
		{Name: "amazon-eks-node-al2023-x86_64-standard-1.33-*"},
		{Name: "amazon-eks-node-al2023-*", Owner: "amazon"},
		{Name: "*", Owner: "999999999999"},
		{Name: "custom-golden-*"},
		{Tags: map[string]string{"karpenter.sh/discovery": "prod-eks"}},
		{Tags: map[string]string{"karpenter.sh/discovery": "*"}},
		{Tags: map[string]string{"team": "platform", "env": "prod"}},
		{ID: "ami-04"},
		{ID: "ami-07"},
		{Name: "marketplace-image", Owner: "aws-marketplace"},
		{Name: "amazon-eks-node-al2023-x86_64-standard-1.33-v20251112", Owner: "self,amazon"},
	}
	for _, term := range terms {
		in := &ec2.DescribeImagesInput{Owners: term.Owners(), Filters: []ec2types.Filter{filter("state", "available")}}
		if term.ID != "" {
			in.Filters = append(in.Filters, filter("image-id", term.ID))
		}
		if term.Name != "" {
			in.Filters = append(in.Filters, filter("name", term.Name))
		}
		for _, k := range slices.Sorted(maps.Keys(term.Tags)) {
			in.Filters = append(in.Filters, filter("tag:"+k, term.Tags[k]))
		}
		out, err := c.ec2.DescribeImages(ctx, in)
		if err != nil {
			t.Fatalf("%+v: %v", term, err)
		}
		var want []string
		for _, img := range *cf.Images {
			if facts.MatchImage(term, img, cf.Cluster.AccountID) {
				want = append(want, img.ID)
			}
		}
		if got := imageIDs(out.Images); !slices.Equal(got, want) {
			t.Errorf("term %+v: EC2 answers %q, the snapshot semantics %q", term, got, want)
		}
	}
}

func TestEC2Pagination(t *testing.T) {
	ctx := context.Background()
	cf := snapshot(t, network)
	_, c := start(t, cf)

	var wantImages []string
	for _, i := range *cf.Images {
		wantImages = append(wantImages, i.ID)
	}
	for _, size := range []int32{1, 5, 6, 12, 1000} {
		var got []string
		pages := 0
		p := ec2.NewDescribeImagesPaginator(c.ec2, &ec2.DescribeImagesInput{MaxResults: aws.Int32(size)})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("images MaxResults %d: %v", size, err)
			}
			got = append(got, imageIDs(out.Images)...)
			pages++
		}
		if !slices.Equal(got, wantImages) || pages != (len(wantImages)+int(size)-1)/int(size) {
			t.Errorf("images MaxResults %d: %d pages of %q", size, pages, got)
		}
	}

	// Filters apply before paging: 5 per page of the 6 subnets in vpc-a tagged or not.
	var got []string
	pages := 0
	sp := ec2.NewDescribeSubnetsPaginator(c.ec2, &ec2.DescribeSubnetsInput{MaxResults: aws.Int32(5), Filters: []ec2types.Filter{filter("vpc-id", "vpc-a")}})
	for sp.HasMorePages() {
		out, err := sp.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range out.Subnets {
			got = append(got, aws.ToString(s.SubnetId))
		}
		pages++
	}
	if want := []string{"subnet-a1", "subnet-a2", "subnet-a3", "subnet-a4", "subnet-a5", "subnet-a6", "subnet-a7", "subnet-a8"}; !slices.Equal(got, want) || pages != 2 {
		t.Errorf("subnets: %d pages of %q, want 2 of %q", pages, got, want)
	}

	got, pages = nil, 0
	gp := ec2.NewDescribeSecurityGroupsPaginator(c.ec2, &ec2.DescribeSecurityGroupsInput{MaxResults: aws.Int32(5)})
	for gp.HasMorePages() {
		out, err := gp.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range out.SecurityGroups {
			got = append(got, aws.ToString(g.GroupId))
		}
		pages++
	}
	if want := []string{"sg-01", "sg-02", "sg-03", "sg-04", "sg-05", "sg-06"}; !slices.Equal(got, want) || pages != 2 {
		t.Errorf("security groups: %d pages of %q", pages, got)
	}

	got, pages = nil, 0
	rp := ec2.NewDescribeRouteTablesPaginator(c.ec2, &ec2.DescribeRouteTablesInput{MaxResults: aws.Int32(5)})
	for rp.HasMorePages() {
		out, err := rp.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, rt := range out.RouteTables {
			got = append(got, aws.ToString(rt.RouteTableId))
		}
		pages++
	}
	if len(got) != 4 || pages != 1 { // main and public tables of two VPCs
		t.Errorf("route tables: %d pages of %q", pages, got)
	}
}

func TestEC2DescribeSubnets(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, network))
	for _, tc := range []struct {
		name string
		in   ec2.DescribeSubnetsInput
		want []string
	}{
		{"discovery tag", ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "prod-eks")}}, []string{"subnet-a1", "subnet-a2", "subnet-a3", "subnet-a6", "subnet-b1"}},
		{"discovery tag in the cluster VPC", ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "prod-eks"), filter("vpc-id", "vpc-a")}}, []string{"subnet-a1", "subnet-a2", "subnet-a3", "subnet-a6"}},
		{"Name wildcard", ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("tag:Name", "private-*", "db-?")}}, []string{"subnet-a1", "subnet-a2", "subnet-a3", "subnet-a7"}},
		{"subnet-id filter", ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("subnet-id", "subnet-a4", "subnet-zz")}}, []string{"subnet-a4"}},
		{"subnet id parameter", ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-b2", "subnet-a8"}}, []string{"subnet-a8", "subnet-b2"}},
		{"availability zone", ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("availability-zone", "us-east-1b")}}, []string{"subnet-a2", "subnet-a5", "subnet-b2", "subnet-b3"}},
		{"map-public-ip-on-launch", ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("map-public-ip-on-launch", "true")}}, []string{"subnet-a4", "subnet-a5", "subnet-b2"}},
		{"state and tag-key", ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("state", "available"), filter("tag-key", "kubernetes.io/role/elb")}}, []string{"subnet-a4", "subnet-a5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.ec2.DescribeSubnets(ctx, &tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range out.Subnets {
				got = append(got, aws.ToString(s.SubnetId))
				if s.State != ec2types.SubnetStateAvailable || aws.ToString(s.OwnerId) != "111122223333" || aws.ToString(s.VpcId) == "" || aws.ToString(s.AvailabilityZone) == "" {
					t.Errorf("subnet %+v", s)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("subnets %q, want %q", got, tc.want)
			}
		})
	}
	out, err := c.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-a4"}})
	if err != nil {
		t.Fatal(err)
	}
	s := out.Subnets[0]
	if !aws.ToBool(s.MapPublicIpOnLaunch) || aws.ToString(s.AvailabilityZone) != "us-east-1a" || aws.ToString(s.SubnetArn) != "arn:aws:ec2:us-east-1:111122223333:subnet/subnet-a4" || len(s.Tags) != 2 {
		t.Errorf("subnet-a4 %+v", s)
	}
}

func TestEC2DescribeSecurityGroups(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, network))
	for _, tc := range []struct {
		name string
		in   ec2.DescribeSecurityGroupsInput
		want []string
	}{
		{"discovery tag", ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "prod-eks")}}, []string{"sg-01"}},
		{"discovery tag present", ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "*")}}, []string{"sg-01", "sg-05", "sg-06"}},
		{"group-name wildcard", ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("group-name", "eks-node*")}}, []string{"sg-01", "sg-05"}},
		{"group-name in a VPC", ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("group-name", "default"), filter("vpc-id", "vpc-b")}}, []string{"sg-04"}},
		{"group-id filter", ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("group-id", "sg-02")}}, []string{"sg-02"}},
		{"group id parameter", ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-06", "sg-03"}}, []string{"sg-03", "sg-06"}},
		{"group name parameter", ec2.DescribeSecurityGroupsInput{GroupNames: []string{"bastion"}}, []string{"sg-06"}},
		{"tag with a colon in its key", ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("tag:aws:eks:cluster-name", "prod-eks")}}, []string{"sg-02"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.ec2.DescribeSecurityGroups(ctx, &tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, g := range out.SecurityGroups {
				got = append(got, aws.ToString(g.GroupId))
				if aws.ToString(g.GroupName) == "" || aws.ToString(g.VpcId) == "" {
					t.Errorf("group %+v", g)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("groups %q, want %q", got, tc.want)
			}
		})
	}
}

// publicByRouteTables computes whether a subnet is public exactly as a live provider must (docs/design.md
// §5): the route table explicitly associated with the subnet, else the VPC's main table; public when a
// route goes to an internet gateway.
func publicByRouteTables(ctx context.Context, t *testing.T, c clients, subnet, vpc string) bool {
	t.Helper()
	out, err := c.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{filter("association.subnet-id", subnet)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.RouteTables) == 0 {
		out, err = c.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{filter("association.main", "true"), filter("vpc-id", vpc)}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out.RouteTables) != 1 {
		t.Fatalf("subnet %s: %d route tables", subnet, len(out.RouteTables))
	}
	for _, r := range out.RouteTables[0].Routes {
		if strings.HasPrefix(aws.ToString(r.GatewayId), "igw-") {
			return true
		}
	}
	return false
}

func TestEC2RouteTablesGivePublic(t *testing.T) {
	ctx := context.Background()
	for name, cf := range map[string]*facts.ClusterFacts{"production": production(t), "network": snapshot(t, network)} {
		t.Run(name, func(t *testing.T) {
			_, c := start(t, cf)
			for _, s := range *cf.Subnets {
				if got := publicByRouteTables(ctx, t, c, s.ID, s.VPCID); got != s.Public {
					t.Errorf("subnet %s: public %v by its route tables, %v in the snapshot", s.ID, got, s.Public)
				}
			}
		})
	}

	// The derived tables: one main table per VPC (no explicit subnets) and one internet-facing table.
	_, c := start(t, snapshot(t, network))
	out, err := c.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{filter("vpc-id", "vpc-a")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.RouteTables) != 2 {
		t.Fatalf("vpc-a route tables: %d", len(out.RouteTables))
	}
	main, public := out.RouteTables[0], out.RouteTables[1]
	if len(main.Associations) != 1 || !aws.ToBool(main.Associations[0].Main) || main.Associations[0].SubnetId != nil {
		t.Errorf("main table associations %+v", main.Associations)
	}
	var subnets []string
	for _, a := range public.Associations {
		subnets = append(subnets, aws.ToString(a.SubnetId))
		if a.AssociationState == nil || a.AssociationState.State != ec2types.RouteTableAssociationStateCodeAssociated {
			t.Errorf("association %+v", a)
		}
	}
	if want := []string{"subnet-a4", "subnet-a5", "subnet-a6"}; !slices.Equal(subnets, want) {
		t.Errorf("public table subnets %q, want %q", subnets, want)
	}
	for _, tc := range []struct {
		filters []ec2types.Filter
		want    int
	}{
		{[]ec2types.Filter{filter("association.main", "false")}, 2},
		{[]ec2types.Filter{filter("route.gateway-id", "igw-*")}, 2},
		{[]ec2types.Filter{filter("route.nat-gateway-id", "nat-*"), filter("vpc-id", "vpc-b")}, 1},
		{[]ec2types.Filter{filter("route-table-id", aws.ToString(public.RouteTableId))}, 1},
	} {
		out, err := c.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: tc.filters})
		if err != nil || len(out.RouteTables) != tc.want {
			t.Errorf("filters %v: %d tables, %v; want %d", tc.filters, len(out.RouteTables), err, tc.want)
		}
	}
}

func TestEC2Errors(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, network))
	_, none := start(t, snapshot(t, header+`cluster: {name: prod-eks, accountID: "111122223333"}`+"\n"))
	for _, tc := range []struct {
		name   string
		call   func() error
		code   string
		status int
		msg    string
	}{
		{"unknown filter", func() error {
			_, err := c.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("owner", "amazon")}})
			return err
		}, "InvalidParameterValue", 400, "The filter 'owner' is invalid"},
		{"missing image id", func() error {
			_, err := c.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{"ami-01", "ami-99"}})
			return err
		}, "InvalidAMIID.NotFound", 400, "The image id '[ami-99]' does not exist"},
		{"malformed image id", func() error {
			_, err := c.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{"amazon-eks-node"}})
			return err
		}, "InvalidAMIID.Malformed", 400, "Invalid id"},
		{"missing subnet id", func() error {
			_, err := c.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-zz"}})
			return err
		}, "InvalidSubnetID.NotFound", 400, "The subnet ID 'subnet-zz' does not exist"},
		{"missing group id", func() error {
			_, err := c.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-zz"}})
			return err
		}, "InvalidGroup.NotFound", 400, "The security group 'sg-zz' does not exist"},
		{"missing group name", func() error {
			_, err := c.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupNames: []string{"nope"}})
			return err
		}, "InvalidGroup.NotFound", 400, "The security group 'nope' does not exist"},
		{"missing route table id", func() error {
			_, err := c.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{RouteTableIds: []string{"rtb-zz"}})
			return err
		}, "InvalidRouteTableID.NotFound", 400, "The routeTable ID 'rtb-zz' does not exist"},
		{"MaxResults below the range", func() error {
			_, err := c.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{MaxResults: aws.Int32(4)})
			return err
		}, "InvalidParameterValue", 400, "maxResults"},
		{"MaxResults with ids", func() error {
			_, err := c.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-01"}, MaxResults: aws.Int32(5)})
			return err
		}, "InvalidParameterCombination", 400, "groupIds cannot be used with the parameter maxResults"},
		{"foreign NextToken", func() error {
			_, err := c.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{NextToken: aws.String("bm90LWEtdG9rZW4")})
			return err
		}, "InvalidParameterValue", 400, "nextToken"},
		{"dry run", func() error {
			_, err := c.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{DryRun: aws.Bool(true)})
			return err
		}, "DryRunOperation", http.StatusPreconditionFailed, "DryRun flag is set"},
		{"unsupported action", func() error {
			_, err := c.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
			return err
		}, "InvalidAction", 400, "The action DescribeInstances is not valid for this web service."},
		{"images unknown", func() error {
			_, err := none.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{})
			return err
		}, "UnauthorizedOperation", 403, "You are not authorized to perform this operation. User: arn:aws:sts::111122223333:assumed-role/karpenter-guard/fakeaws is not authorized to perform: ec2:DescribeImages because no identity-based policy allows the ec2:DescribeImages action"},
		{"subnets unknown", func() error {
			_, err := none.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
			return err
		}, "UnauthorizedOperation", 403, "ec2:DescribeSubnets"},
		{"route tables unknown with the subnets", func() error {
			_, err := none.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{})
			return err
		}, "UnauthorizedOperation", 403, "ec2:DescribeRouteTables"},
		{"security groups unknown", func() error {
			_, err := none.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
			return err
		}, "UnauthorizedOperation", 403, "ec2:DescribeSecurityGroups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantAPIError(t, tc.call(), tc.code, tc.status, tc.msg)
		})
	}
}

// TestEC2EBSDefaults: GetEbsEncryptionByDefault and GetEbsDefaultKmsKeyId answer the snapshot's
// ebsDefaults through the real SDK client; without the section both are denied, as to a caller
// without the permission.
func TestEC2EBSDefaults(t *testing.T) {
	ctx := context.Background()
	const cluster = `cluster: {name: prod-eks, region: us-east-1, accountID: "111122223333"}` + "\n"
	for _, tc := range []struct {
		name    string
		section string
		enabled bool
		key     *string
	}{
		{"on, with a customer key", "ebsDefaults: {encryptionByDefault: true, kmsKeyID: \"arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab\"}\n",
			true, aws.String("arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab")},
		{"off, AWS's key", "ebsDefaults: {encryptionByDefault: false, kmsKeyID: \"arn:aws:kms:us-east-1:111122223333:alias/aws/ebs\"}\n",
			false, aws.String("arn:aws:kms:us-east-1:111122223333:alias/aws/ebs")},
		{"off, no key in the snapshot", "ebsDefaults: {encryptionByDefault: false}\n", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := start(t, snapshot(t, header+cluster+tc.section))
			enc, err := c.ec2.GetEbsEncryptionByDefault(ctx, &ec2.GetEbsEncryptionByDefaultInput{})
			if err != nil {
				t.Fatal(err)
			}
			if enc.EbsEncryptionByDefault == nil || *enc.EbsEncryptionByDefault != tc.enabled {
				t.Errorf("EbsEncryptionByDefault = %v, want %v", aws.ToBool(enc.EbsEncryptionByDefault), tc.enabled)
			}
			key, err := c.ec2.GetEbsDefaultKmsKeyId(ctx, &ec2.GetEbsDefaultKmsKeyIdInput{})
			if err != nil {
				t.Fatal(err)
			}
			if aws.ToString(key.KmsKeyId) != aws.ToString(tc.key) || (key.KmsKeyId == nil) != (tc.key == nil) {
				t.Errorf("KmsKeyId = %v, want %v", key.KmsKeyId, tc.key)
			}
			for _, op := range []string{"ec2:GetEbsEncryptionByDefault", "ec2:GetEbsDefaultKmsKeyId"} {
				if n := srv.Calls(op); n != 1 {
					t.Errorf("%s counted %d times, want 1", op, n)
				}
			}
		})
	}
	_, none := start(t, snapshot(t, header+cluster))
	for _, tc := range []struct {
		name   string
		call   func(clients) error
		code   string
		status int
		msg    string
	}{
		{"encryption unknown", func(c clients) error {
			_, err := c.ec2.GetEbsEncryptionByDefault(ctx, &ec2.GetEbsEncryptionByDefaultInput{})
			return err
		}, "UnauthorizedOperation", http.StatusForbidden, "not authorized to perform: ec2:GetEbsEncryptionByDefault because no identity-based policy allows"},
		{"key unknown", func(c clients) error {
			_, err := c.ec2.GetEbsDefaultKmsKeyId(ctx, &ec2.GetEbsDefaultKmsKeyIdInput{})
			return err
		}, "UnauthorizedOperation", http.StatusForbidden, "not authorized to perform: ec2:GetEbsDefaultKmsKeyId because"},
		{"dry run", func(c clients) error {
			_, err := c.ec2.GetEbsEncryptionByDefault(ctx, &ec2.GetEbsEncryptionByDefaultInput{DryRun: aws.Bool(true)})
			return err
		}, "DryRunOperation", http.StatusPreconditionFailed, "DryRun flag is set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantAPIError(t, tc.call(none), tc.code, tc.status, tc.msg)
		})
	}
}
