package facts

import (
	"context"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestWildcard: EC2 filter patterns: * any run (slashes included), ? one character, a backslash
// escapes *, ? and itself (EC2 API reference: `\*amazon\?\\` is the literal `*amazon?\`), and every
// other character is literal.
func TestWildcard(t *testing.T) {
	cases := []struct {
		pattern, value string
		want           bool
	}{
		{"amazon-eks-node-1.33-v20251112", "amazon-eks-node-1.33-v20251112", true},
		{"amazon-eks-node-1.33-v20251112", "amazon-eks-node-1.33-v20251113", false},
		{"Amazon", "amazon", false}, // case-sensitive
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything at all", true},
		{"amazon-eks-node-al2023-*-standard-1.33-*", "amazon-eks-node-al2023-x86_64-standard-1.33-v20251112", true},
		{"amazon-eks-node-al2023-*-standard-1.33-*", "amazon-eks-node-al2023-x86_64-nvidia-1.33-v20251112", false},
		{"amazon-eks-node-1.33-*", "amazon-eks-node-al2023-x86_64-standard-1.33-v1", false},
		{"*-1.33-*", "amazon-eks-node-1.33-v1", true},
		{"team/*", "team/a/b", true}, // unlike path.Match, * crosses /
		{"*/b", "a/x/b", true},
		{"a?c", "abc", true},
		{"a?c", "a/c", true},
		{"a?c", "ac", false},
		{"a?c", "abbc", false},
		{"a?c", "aéc", true}, // ? is one character, not one byte
		{"??", "é", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYc!", false},
		{"*a", "bab", false},
		{"*ab", "aab", true},
		{"Windows[1]*", "Windows[1]-Core", true}, // [ is literal, not a character class
		{"a[bc]", "ab", false},
		{"a[bc]", "a[bc]", true},
		{"a[", "a[", true},
		{"]*", "]x", true},
		{`C:\path\*`, `C:\path*`, true}, // \* is a literal star; \p a backslash and a p
		{`C:\path\*`, `C:\pathx`, false},
		{`C:\path\*`, `C:\path\x`, false},
		{`C:\path*`, `C:\path\x`, true}, // a backslash before another character is literal
		{`C:\path`, `C:\path`, true},
		{`\*amazon\?\\`, `*amazon?\`, true}, // the EC2 API reference example
		{`\*amazon\?\\`, `xamazony\`, false},
		{`\*amazon\?\\`, `*amazon?\\`, false},
		{`a\`, `a\`, true}, // a trailing backslash is literal
		{`a\\*`, `a\bc`, true},
		{`a\\*`, `abc`, false},
		{"*a*a*a*a*a*a*a*b", strings.Repeat("a", 5000), false}, // no exponential backtracking
		{"*a*a*a*a*a*a*a*b", strings.Repeat("a", 5000) + "b", true},
	}
	for _, tc := range cases {
		name := tc.pattern + " ~ " + tc.value
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			if got := Wildcard(tc.pattern, tc.value); got != tc.want {
				t.Errorf("Wildcard(%q, %q) = %v, want %v", tc.pattern, tc.value, got, tc.want)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Wildcard took %v", d)
			}
		})
	}
}

// TestMatchTags: every wanted key must be present; a value "*" means any value, others are patterns.
func TestMatchTags(t *testing.T) {
	tags := map[string]string{"karpenter.sh/discovery": "prod-eks", "Name": "private-a", "empty": ""}
	cases := []struct {
		name string
		want map[string]string
		tags map[string]string
		ok   bool
	}{
		{"no wanted tags", nil, tags, true},
		{"no wanted tags, no tags", map[string]string{}, nil, true},
		{"exact value", map[string]string{"karpenter.sh/discovery": "prod-eks"}, tags, true},
		{"other value", map[string]string{"karpenter.sh/discovery": "staging"}, tags, false},
		{"key case matters", map[string]string{"name": "private-a"}, tags, false},
		{"star: key present", map[string]string{"karpenter.sh/discovery": "*"}, tags, true},
		{"star: key present with an empty value", map[string]string{"empty": "*"}, tags, true},
		{"star: key absent", map[string]string{"kubernetes.io/role/internal-elb": "*"}, tags, false},
		{"star on nil tags", map[string]string{"a": "*"}, nil, false},
		{"empty value matches an empty tag", map[string]string{"empty": ""}, tags, true},
		{"empty value does not match a set tag", map[string]string{"Name": ""}, tags, false},
		{"wildcard value", map[string]string{"Name": "private-*"}, tags, true},
		{"wildcard value no match", map[string]string{"Name": "public-*"}, tags, false},
		{"question mark value", map[string]string{"Name": "private-?"}, tags, true},
		{"all keys ANDed", map[string]string{"karpenter.sh/discovery": "prod-eks", "Name": "public-a"}, tags, false},
		{"all keys ANDed, all match", map[string]string{"karpenter.sh/discovery": "prod-*", "Name": "*"}, tags, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := MatchTags(tc.want, tc.tags); got != tc.ok {
				t.Errorf("MatchTags(%v, %v) = %v, want %v", tc.want, tc.tags, got, tc.ok)
			}
		})
	}
}

// TestImageTermOwners: the owners a term searches (docs/design.md §4).
func TestImageTermOwners(t *testing.T) {
	cases := []struct {
		name string
		term ImageTerm
		want []string // nil: any owner
	}{
		{"name without owner: self and amazon", ImageTerm{Name: "amazon-eks-node-*"}, []string{"self", "amazon"}},
		{"name and tags without owner", ImageTerm{Name: "x", Tags: map[string]string{"a": "b"}}, []string{"self", "amazon"}},
		{"tags without owner: any owner", ImageTerm{Tags: map[string]string{"a": "b"}}, nil},
		{"id without owner: any owner", ImageTerm{ID: "ami-1"}, nil},
		{"owner self", ImageTerm{Name: "x", Owner: "self"}, []string{"self"}},
		{"owner account", ImageTerm{Tags: map[string]string{"a": "b"}, Owner: "602401143452"}, []string{"602401143452"}},
		{"comma-separated owners", ImageTerm{Name: "x", Owner: "self,amazon"}, []string{"self", "amazon"}},
		{"comma-separated owners with spaces", ImageTerm{Name: "x", Owner: " 111122223333 , amazon ,"}, []string{"111122223333", "amazon"}},
		{"an owner of commas only selects no owner", ImageTerm{Name: "x", Owner: " , "}, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.term.Owners()
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Owners() = %#v, want %#v", got, tc.want)
			}
		})
	}
}

const account = "111122223333"

var (
	eksAMI = Image{ID: "ami-eks", Name: "amazon-eks-node-al2023-x86_64-standard-1.33-v20251112", OwnerID: "602401143452",
		OwnerAlias: "amazon", Architecture: "x86_64", State: "available"}
	eksPending = Image{ID: "ami-pending", Name: "amazon-eks-node-al2023-x86_64-standard-1.33-v20251201", OwnerID: "602401143452",
		OwnerAlias: "amazon", Architecture: "x86_64", State: "pending"}
	ownAMI = Image{ID: "ami-own", Name: "amazon-eks-node-al2023-x86_64-standard-1.33-custom", OwnerID: account,
		Architecture: "x86_64", State: "available", Tags: map[string]string{"team": "platform", "golden": "true"}}
	thirdParty = Image{ID: "ami-offseclab", Name: "amazon-eks-node-al2023-x86_64-standard-1.33-offseclab", OwnerID: "999988887777",
		Architecture: "x86_64", State: "available", Tags: map[string]string{"team": "platform"}}
	marketplace = Image{ID: "ami-mp", Name: "vendor-appliance", OwnerID: "679593333241", OwnerAlias: "aws-marketplace",
		Architecture: "arm64", State: "available"}
	deregistered = Image{ID: "ami-gone", Name: "amazon-eks-node-al2023-x86_64-standard-1.33-v20250101", OwnerID: "602401143452",
		OwnerAlias: "amazon", Architecture: "x86_64", State: "deregistered"}
)

// TestMatchImage: fields ANDed; only available images; owners self (the cluster account), amazon and
// aws-marketplace by owner alias, and account ids.
func TestMatchImage(t *testing.T) {
	cases := []struct {
		name    string
		term    ImageTerm
		img     Image
		account string
		want    bool
	}{
		{"name, AWS image", ImageTerm{Name: "amazon-eks-node-al2023-*"}, eksAMI, account, true},
		{"name, own image (self)", ImageTerm{Name: "amazon-eks-node-al2023-*"}, ownAMI, account, true},
		{"name, public image of another account", ImageTerm{Name: "amazon-eks-node-al2023-*"}, thirdParty, account, false},
		{"name, own image with the account unknown", ImageTerm{Name: "amazon-eks-node-al2023-*"}, ownAMI, "", false},
		{"name, pending image", ImageTerm{Name: "amazon-eks-node-al2023-*"}, eksPending, account, false},
		{"name, deregistered image", ImageTerm{Name: "amazon-eks-node-al2023-*"}, deregistered, account, false},
		{"name mismatch", ImageTerm{Name: "bottlerocket-*"}, eksAMI, account, false},
		{"name with owner amazon", ImageTerm{Name: "amazon-eks-*", Owner: "amazon"}, eksAMI, account, true},
		{"name with owner amazon, own image", ImageTerm{Name: "amazon-eks-*", Owner: "amazon"}, ownAMI, account, false},
		{"owner amazon goes by alias, not account", ImageTerm{Name: "*", Owner: "amazon"}, Image{ID: "ami-x", Name: "x", OwnerID: "602401143452", State: "available"}, account, false},
		{"name with owner self", ImageTerm{Name: "amazon-eks-*", Owner: "self"}, ownAMI, account, true},
		{"name with owner self, AWS image", ImageTerm{Name: "amazon-eks-*", Owner: "self"}, eksAMI, account, false},
		{"owner account id", ImageTerm{Name: "*", Owner: "999988887777"}, thirdParty, account, true},
		{"owner EKS account id", ImageTerm{Name: "*", Owner: "602401143452"}, eksAMI, account, true},
		{"owner account id, other account", ImageTerm{Name: "*", Owner: "999988887777"}, ownAMI, account, false},
		{"owner self as the account id", ImageTerm{Name: "*", Owner: account}, ownAMI, account, true},
		{"owner list", ImageTerm{Name: "*", Owner: "self,999988887777"}, thirdParty, account, true},
		{"owner list, neither", ImageTerm{Name: "*", Owner: "self,999988887777"}, eksAMI, account, false},
		{"owner aws-marketplace", ImageTerm{Name: "vendor-*", Owner: "aws-marketplace"}, marketplace, account, true},
		{"name without owner, marketplace image", ImageTerm{Name: "vendor-*"}, marketplace, account, false},
		{"tags without owner: any owner", ImageTerm{Tags: map[string]string{"team": "platform"}}, thirdParty, account, true},
		{"tags without owner, own image", ImageTerm{Tags: map[string]string{"team": "platform"}}, ownAMI, account, true},
		{"tags mismatch", ImageTerm{Tags: map[string]string{"team": "data"}}, ownAMI, account, false},
		{"tag key present", ImageTerm{Tags: map[string]string{"golden": "*"}}, ownAMI, account, true},
		{"tag key absent", ImageTerm{Tags: map[string]string{"golden": "*"}}, thirdParty, account, false},
		{"tags with owner", ImageTerm{Tags: map[string]string{"team": "platform"}, Owner: "self"}, thirdParty, account, false},
		{"name and tags ANDed", ImageTerm{Name: "amazon-eks-*", Tags: map[string]string{"team": "platform"}}, ownAMI, account, true},
		{"name and tags ANDed, tag fails", ImageTerm{Name: "amazon-eks-*", Tags: map[string]string{"team": "data"}}, ownAMI, account, false},
		{"name and tags ANDed, name fails", ImageTerm{Name: "bottlerocket-*", Tags: map[string]string{"team": "platform"}}, ownAMI, account, false},
		{"id", ImageTerm{ID: "ami-offseclab"}, thirdParty, account, true},
		{"id of another image", ImageTerm{ID: "ami-eks"}, thirdParty, account, false},
		{"id, image not available", ImageTerm{ID: "ami-gone"}, deregistered, account, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := MatchImage(tc.term, tc.img, tc.account); got != tc.want {
				t.Errorf("MatchImage(%+v, %s, %q) = %v, want %v", tc.term, tc.img.ID, tc.account, got, tc.want)
			}
		})
	}
	if eksAMI.Owner() != "amazon" || ownAMI.Owner() != account {
		t.Errorf("Image.Owner: %q %q", eksAMI.Owner(), ownAMI.Owner())
	}
}

// TestMatchSubnetAndSecurityGroup: by id, by tags, and for security groups by name.
func TestMatchSubnetAndSecurityGroup(t *testing.T) {
	sn := Subnet{ID: "subnet-0private1", VPCID: "vpc-1", Tags: map[string]string{"karpenter.sh/discovery": "prod-eks", "Name": "private-a"}}
	sg := SecurityGroup{ID: "sg-0node", Name: "eks-node", VPCID: "vpc-1", Tags: map[string]string{"karpenter.sh/discovery": "prod-eks"}}
	cases := []struct {
		name             string
		term             SelectorTerm
		subnet, secGroup bool
	}{
		{"empty term", SelectorTerm{}, true, true},
		{"id", SelectorTerm{ID: "subnet-0private1"}, true, false},
		{"sg id", SelectorTerm{ID: "sg-0node"}, false, true},
		{"id is exact, not a pattern", SelectorTerm{ID: "subnet-*"}, false, false},
		{"discovery tag", SelectorTerm{Tags: map[string]string{"karpenter.sh/discovery": "prod-eks"}}, true, true},
		{"discovery tag of another cluster", SelectorTerm{Tags: map[string]string{"karpenter.sh/discovery": "staging"}}, false, false},
		{"tag key present", SelectorTerm{Tags: map[string]string{"Name": "*"}}, true, false},
		{"tag pattern", SelectorTerm{Tags: map[string]string{"Name": "private-?"}}, true, false},
		// Karpenter selects by the id alone and ignores the rest (docs/design.md §1).
		{"id selects alone, tags ignored", SelectorTerm{ID: "subnet-0private1", Tags: map[string]string{"Name": "public-*"}}, true, false},
		{"sg id selects alone, name ignored", SelectorTerm{ID: "sg-0node", Name: "default"}, false, true},
		{"sg name", SelectorTerm{Name: "eks-node"}, false, true},
		{"sg name pattern", SelectorTerm{Name: "eks-*"}, false, true},
		{"sg name mismatch", SelectorTerm{Name: "default"}, false, false},
		{"sg name and tags ANDed", SelectorTerm{Name: "eks-node", Tags: map[string]string{"karpenter.sh/discovery": "staging"}}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Subnet selector terms have no name field: only terms without one apply to subnets.
			if tc.term.Name == "" {
				if got := MatchSubnet(tc.term, sn); got != tc.subnet {
					t.Errorf("MatchSubnet(%+v) = %v, want %v", tc.term, got, tc.subnet)
				}
			}
			if got := MatchSecurityGroup(tc.term, sg); got != tc.secGroup {
				t.Errorf("MatchSecurityGroup(%+v) = %v, want %v", tc.term, got, tc.secGroup)
			}
		})
	}
}

// networkSnapshot is a snapshot with images, parameters, subnets and security groups.
func networkSnapshot(t *testing.T, withCluster bool) *Snapshot {
	t.Helper()
	doc := lines(hdrAPI, hdrKind)
	if withCluster {
		doc += lines("cluster:", `  accountID: "111122223333"`, `  version: "1.33"`)
	}
	doc += lines(
		"images:",
		"  - {id: ami-eks, name: amazon-eks-node-al2023-x86_64-standard-1.33-v20251112, ownerID: \"602401143452\", ownerAlias: amazon, architecture: x86_64, state: available}",
		"  - {id: ami-eksarm, name: amazon-eks-node-al2023-arm64-standard-1.33-v20251112, ownerID: \"602401143452\", ownerAlias: amazon, architecture: arm64, state: available}",
		"  - {id: ami-own, name: amazon-eks-node-al2023-x86_64-standard-1.33-custom, ownerID: \"111122223333\", architecture: x86_64, state: available, tags: {team: platform}}",
		"  - {id: ami-offseclab, name: amazon-eks-node-al2023-x86_64-standard-1.33-offseclab, ownerID: \"999988887777\", architecture: x86_64, state: available, tags: {team: platform}}",
		"  - {id: ami-pending, name: amazon-eks-node-al2023-x86_64-standard-1.33-v20251201, ownerID: \"602401143452\", ownerAlias: amazon, architecture: x86_64, state: pending}",
		"ssmParameters:",
		"  /aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id: ami-eks",
		"  /aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/recommended/image_id: ami-eksarm",
		"  /custom/pending: ami-pending",
		"  /custom/dangling: ami-deleted",
		"subnets:",
		"  - {id: subnet-a, vpcID: vpc-1, availabilityZone: us-east-1a, tags: {karpenter.sh/discovery: prod, Name: private-a}}",
		"  - {id: subnet-b, vpcID: vpc-1, availabilityZone: us-east-1b, public: true, tags: {karpenter.sh/discovery: prod, Name: public-b}}",
		"  - {id: subnet-c, vpcID: vpc-2, availabilityZone: us-east-1c, tags: {Name: private-c}}",
		"securityGroups:",
		"  - {id: sg-node, name: eks-node, vpcID: vpc-1, tags: {karpenter.sh/discovery: prod}}",
		"  - {id: sg-default, name: default, vpcID: vpc-1}",
	)
	return mustDecode(t, doc)
}

func ids[T any](items []T, id func(T) string) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, id(it))
	}
	sort.Strings(out)
	return out
}

// TestSnapshotSelectors: the snapshot provider selects with the semantics above, self being the
// cluster's account, and resolves ssmParameter terms through ssmParameters.
func TestSnapshotSelectors(t *testing.T) {
	ctx := context.Background()
	s := networkSnapshot(t, true)
	noCluster := networkSnapshot(t, false)
	imageCases := []struct {
		name string
		s    *Snapshot
		term ImageTerm
		want []string
	}{
		{"name without owner: self and amazon, available only", s, ImageTerm{Name: "amazon-eks-node-al2023-x86_64-*"}, []string{"ami-eks", "ami-own"}},
		{"name without owner, no cluster account: amazon only", noCluster, ImageTerm{Name: "amazon-eks-node-al2023-x86_64-*"}, []string{"ami-eks"}},
		{"tags without owner: any account", s, ImageTerm{Tags: map[string]string{"team": "platform"}}, []string{"ami-offseclab", "ami-own"}},
		{"name with owner list", s, ImageTerm{Name: "*", Owner: "999988887777,amazon"}, []string{"ami-eks", "ami-eksarm", "ami-offseclab"}},
		{"id", s, ImageTerm{ID: "ami-offseclab"}, []string{"ami-offseclab"}},
		{"id of a pending image", s, ImageTerm{ID: "ami-pending"}, []string{}},
		{"ssm parameter", s, ImageTerm{SSMParameter: "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/recommended/image_id"}, []string{"ami-eksarm"}},
		{"ssm parameter to a pending image", s, ImageTerm{SSMParameter: "/custom/pending"}, []string{}},
		{"ssm parameter to a missing image", s, ImageTerm{SSMParameter: "/custom/dangling"}, []string{}},
		{"missing ssm parameter", s, ImageTerm{SSMParameter: "/custom/missing"}, []string{}},
		{"ssm parameter overrides the term's other fields", s, ImageTerm{SSMParameter: "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id", Owner: "self"}, []string{"ami-eks"}},
	}
	for _, tc := range imageCases {
		t.Run("images/"+tc.name, func(t *testing.T) {
			got, err := tc.s.Images(ctx, tc.term)
			if err != nil {
				t.Fatal(err)
			}
			if g := ids(got, func(i Image) string { return i.ID }); !reflect.DeepEqual(g, tc.want) {
				t.Errorf("Images(%+v) = %v, want %v", tc.term, g, tc.want)
			}
		})
	}
	subnetCases := []struct {
		name string
		term SelectorTerm
		want []string
	}{
		{"discovery tag", SelectorTerm{Tags: map[string]string{"karpenter.sh/discovery": "prod"}}, []string{"subnet-a", "subnet-b"}},
		{"tag pattern", SelectorTerm{Tags: map[string]string{"Name": "private-*"}}, []string{"subnet-a", "subnet-c"}},
		{"tag key", SelectorTerm{Tags: map[string]string{"Name": "*"}}, []string{"subnet-a", "subnet-b", "subnet-c"}},
		{"id", SelectorTerm{ID: "subnet-c"}, []string{"subnet-c"}},
		{"nothing", SelectorTerm{Tags: map[string]string{"karpenter.sh/discovery": "staging"}}, []string{}},
	}
	for _, tc := range subnetCases {
		t.Run("subnets/"+tc.name, func(t *testing.T) {
			got, err := s.Subnets(ctx, tc.term)
			if err != nil {
				t.Fatal(err)
			}
			if g := ids(got, func(n Subnet) string { return n.ID }); !reflect.DeepEqual(g, tc.want) {
				t.Errorf("Subnets(%+v) = %v, want %v", tc.term, g, tc.want)
			}
		})
	}
	sgCases := []struct {
		name string
		term SelectorTerm
		want []string
	}{
		{"discovery tag", SelectorTerm{Tags: map[string]string{"karpenter.sh/discovery": "prod"}}, []string{"sg-node"}},
		{"name", SelectorTerm{Name: "default"}, []string{"sg-default"}},
		{"name pattern", SelectorTerm{Name: "*"}, []string{"sg-default", "sg-node"}},
		{"id", SelectorTerm{ID: "sg-node"}, []string{"sg-node"}},
		{"name and tag ANDed", SelectorTerm{Name: "default", Tags: map[string]string{"karpenter.sh/discovery": "*"}}, []string{}},
	}
	for _, tc := range sgCases {
		t.Run("securityGroups/"+tc.name, func(t *testing.T) {
			got, err := s.SecurityGroups(ctx, tc.term)
			if err != nil {
				t.Fatal(err)
			}
			if g := ids(got, func(g SecurityGroup) string { return g.ID }); !reflect.DeepEqual(g, tc.want) {
				t.Errorf("SecurityGroups(%+v) = %v, want %v", tc.term, g, tc.want)
			}
		})
	}
	t.Run("ssm parameter term without ssmParameters is unknown", func(t *testing.T) {
		s := mustDecode(t, lines(hdrAPI, hdrKind, "images: []"))
		got, err := s.Images(ctx, ImageTerm{SSMParameter: "/p"})
		wantUnknown(t, "Images", err, SSMParameters, "not in the facts snapshot")
		if got != nil {
			t.Errorf("images %v along with the error", got)
		}
	})
	t.Run("ssm parameter term without images is unknown", func(t *testing.T) {
		s := mustDecode(t, lines(hdrAPI, hdrKind, "ssmParameters: {/p: ami-1}"))
		_, err := s.Images(ctx, ImageTerm{SSMParameter: "/p"})
		wantUnknown(t, "Images", err, Images, "not in the facts snapshot")
	})
}

// TestAliasParameters: the exact SSM parameter paths Karpenter reads for each alias (docs/design.md §4;
// karpenter-provider-aws pkg/providers/amifamily al2023.go, al2.go, bottlerocket.go, windows.go).
func TestAliasParameters(t *testing.T) {
	cases := []struct {
		family, version, k8s string
		want                 map[string]string
	}{
		{"al2023", "latest", "1.33", map[string]string{
			"x86_64": "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id",
			"arm64":  "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/recommended/image_id",
		}},
		{"al2023", "v20251112", "1.33", map[string]string{
			"x86_64": "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.33-v20251112/image_id",
			"arm64":  "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.33-v20251112/image_id",
		}},
		{"al2", "latest", "1.32", map[string]string{
			"x86_64": "/aws/service/eks/optimized-ami/1.32/amazon-linux-2/recommended/image_id",
			"arm64":  "/aws/service/eks/optimized-ami/1.32/amazon-linux-2-arm64/recommended/image_id",
		}},
		{"al2", "v20250116", "1.32", map[string]string{
			"x86_64": "/aws/service/eks/optimized-ami/1.32/amazon-linux-2/amazon-eks-node-1.32-v20250116/image_id",
			"arm64":  "/aws/service/eks/optimized-ami/1.32/amazon-linux-2-arm64/amazon-eks-arm64-node-1.32-v20250116/image_id",
		}},
		{"bottlerocket", "latest", "1.33", map[string]string{
			"x86_64": "/aws/service/bottlerocket/aws-k8s-1.33/x86_64/latest/image_id",
			"arm64":  "/aws/service/bottlerocket/aws-k8s-1.33/arm64/latest/image_id",
		}},
		{"bottlerocket", "v1.20.3", "1.33", map[string]string{
			"x86_64": "/aws/service/bottlerocket/aws-k8s-1.33/x86_64/1.20.3/image_id",
			"arm64":  "/aws/service/bottlerocket/aws-k8s-1.33/arm64/1.20.3/image_id",
		}},
		{"bottlerocket", "1.20.3", "1.33", map[string]string{
			"x86_64": "/aws/service/bottlerocket/aws-k8s-1.33/x86_64/1.20.3/image_id",
			"arm64":  "/aws/service/bottlerocket/aws-k8s-1.33/arm64/1.20.3/image_id",
		}},
		{"windows2022", "latest", "1.33", map[string]string{
			"x86_64": "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.33/image_id",
		}},
		{"windows2019", "latest", "1.31", map[string]string{
			"x86_64": "/aws/service/ami-windows-latest/Windows_Server-2019-English-Core-EKS_Optimized-1.31/image_id",
		}},
		{"windows2025", "latest", "1.35", map[string]string{
			"x86_64": "/aws/service/ami-windows-latest/Windows_Server-2025-English-Core-EKS_Optimized-1.35/image_id",
		}},
		{"custom", "latest", "1.33", nil},
		{"", "latest", "1.33", nil},
	}
	for _, tc := range cases {
		t.Run(tc.family+"@"+tc.version+" on "+tc.k8s, func(t *testing.T) {
			got := AliasParameters(tc.family, tc.version, tc.k8s)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("AliasParameters(%q, %q, %q) =\n%v\nwant\n%v", tc.family, tc.version, tc.k8s, got, tc.want)
			}
		})
	}
}

// FuzzWildcard checks Wildcard against a reference built from the standard library's regexp: the
// pattern translated token by token (* to .*, ? to one character, escapes and everything else quoted).
func FuzzWildcard(f *testing.F) {
	for _, s := range [][2]string{
		{"amazon-eks-node-al2023-*-standard-1.33-*", "amazon-eks-node-al2023-x86_64-standard-1.33-v20251112"},
		{`\*amazon\?\\`, `*amazon?\`}, {"a?c", "aéc"}, {"*a*b", "aaab"}, {`a\`, `a\`}, {"[*]", "[x]"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, value string) {
		if !utf8.ValidString(pattern) || !utf8.ValidString(value) || len(pattern) > 64 {
			return
		}
		var re strings.Builder
		re.WriteString(`(?s)\A`)
		rs := []rune(pattern)
		for i := 0; i < len(rs); i++ {
			switch r := rs[i]; {
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune(`*?\`, rs[i+1]):
				re.WriteString(regexp.QuoteMeta(string(rs[i+1])))
				i++
			case r == '*':
				re.WriteString(".*")
			case r == '?':
				re.WriteString(".")
			default:
				re.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		re.WriteString(`\z`)
		want := regexp.MustCompile(re.String()).MatchString(value)
		if got := Wildcard(pattern, value); got != want {
			t.Errorf("Wildcard(%q, %q) = %v, regexp %s says %v", pattern, value, got, re.String(), want)
		}
	})
}
