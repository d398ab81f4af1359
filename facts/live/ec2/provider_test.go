package ec2_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/facts/live/ec2"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const world = `apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster: {name: prod-eks, region: eu-west-1, partition: aws, accountID: "111122223333", vpcID: vpc-0a1b2c3d}
images:
  - {id: ami-0team, name: team-base-2025.11, ownerID: "111122223333", architecture: x86_64, state: available, tags: {team: platform}}
subnets:
  - {id: subnet-0private1, vpcID: vpc-0a1b2c3d, availabilityZone: eu-west-1a, mapPublicIpOnLaunch: false, public: false, tags: {karpenter.sh/discovery: prod-eks}}
  - {id: subnet-0public1, vpcID: vpc-0a1b2c3d, availabilityZone: eu-west-1b, mapPublicIpOnLaunch: true, public: true, tags: {karpenter.sh/discovery: prod-eks}}
securityGroups:
  - {id: sg-0node, name: eks-node, vpcID: vpc-0a1b2c3d, tags: {karpenter.sh/discovery: prod-eks}}
ebsDefaults: {encryptionByDefault: true, kmsKeyID: "arn:aws:kms:eu-west-1:111122223333:alias/aws/ebs"}
vpc: {enableDnsSupport: true, enableDnsHostnames: true}
natGateways: [{id: nat-0abc, state: available, connectivityType: public}]
vpcEndpoints: [{id: vpce-0s3, serviceName: com.amazonaws.eu-west-1.s3, type: Gateway}]
`

var (
	team      = facts.ImageTerm{Name: "team-base-*", Owner: "self"}
	none      = facts.ImageTerm{Name: "nothing-*", Owner: "self"}
	discovery = facts.SelectorTerm{Tags: map[string]string{"karpenter.sh/discovery": "prod-eks"}}
)

// start serves world from the AWS fake and returns an EC2 provider talking to it through the real SDK
// client, its caches tuned by opts.
func start(t *testing.T, opts cache.Options) (*fakeaws.Server, *ec2.Provider) {
	t.Helper()
	srv, clients := livetest.Serve(t, world)
	p := ec2.NewProvider(clients.EC2, awscall.Caller{Budget: 2 * time.Second}, opts)
	t.Cleanup(p.Close)
	return srv, p
}

// TestCachesAreItsOwn: images, subnets, route tables, security groups, the EBS defaults, the VPC's
// attributes, NAT gateways and endpoints, and permission probes are kept in caches of their own, so
// that one kind of answer never evicts another, even when each cache holds a single answer.
func TestCachesAreItsOwn(t *testing.T) {
	srv, p := start(t, cache.Options{MaxEntries: 1})
	ctx := context.Background()
	for round := range 3 {
		if imgs, err := p.Images(ctx, team); err != nil || len(imgs) != 1 || imgs[0].ID != "ami-0team" {
			t.Fatalf("round %d: Images = %+v, %v", round, imgs, err)
		}
		subnets, err := p.Subnets(ctx, discovery)
		if err != nil || len(subnets) != 2 {
			t.Fatalf("round %d: Subnets = %+v, %v", round, subnets, err)
		}
		for _, s := range subnets {
			if s.Public != (s.ID == "subnet-0public1") {
				t.Errorf("round %d: subnet %s public %v; the route tables say otherwise", round, s.ID, s.Public)
			}
		}
		if groups, err := p.SecurityGroups(ctx, discovery); err != nil || len(groups) != 1 {
			t.Fatalf("round %d: SecurityGroups = %+v, %v", round, groups, err)
		}
		if err := p.Known(ctx, facts.Images); err != nil {
			t.Fatalf("round %d: Known(images) = %v", round, err)
		}
		d, err := p.EBSDefaults(ctx)
		if err != nil || !d.EncryptionByDefault || d.KMSKeyID != "arn:aws:kms:eu-west-1:111122223333:alias/aws/ebs" {
			t.Fatalf("round %d: EBSDefaults = %+v, %v", round, d, err)
		}
		if err := p.Known(ctx, facts.EBSDefaults); err != nil {
			t.Fatalf("round %d: Known(ebsDefaults) = %v", round, err)
		}
		if v, err := p.VPC(ctx, "vpc-0a1b2c3d"); err != nil || !*v.EnableDNSSupport || !*v.EnableDNSHostnames {
			t.Fatalf("round %d: VPC = %+v, %v", round, v, err)
		}
		if n, err := p.NATGateways(ctx, "vpc-0a1b2c3d"); err != nil || len(n) != 1 {
			t.Fatalf("round %d: NATGateways = %+v, %v", round, n, err)
		}
		if e, err := p.VPCEndpoints(ctx, "vpc-0a1b2c3d"); err != nil || len(e) != 1 {
			t.Fatalf("round %d: VPCEndpoints = %+v, %v", round, e, err)
		}
	}
	for op, want := range map[string]int{
		"ec2:DescribeImages":            2, // the term, the probe
		"ec2:DescribeSubnets":           1,
		"ec2:DescribeRouteTables":       1, // one VPC
		"ec2:DescribeSecurityGroups":    1,
		"ec2:GetEbsEncryptionByDefault": 1, // Known asks the same question: no probe of its own
		"ec2:GetEbsDefaultKmsKeyId":     1,
		"ec2:DescribeVpcAttribute":      2, // one VPC, two attributes
		"ec2:DescribeNatGateways":       1,
		"ec2:DescribeVpcEndpoints":      1,
	} {
		if n := srv.Calls(op); n != want {
			t.Errorf("%d %s requests in 3 rounds, want %d", n, op, want)
		}
	}
	if err := p.Known(ctx, facts.Roles); err != nil {
		t.Errorf("Known(roles) = %v; not EC2's to say", err)
	}
}

// TestTTLs: a term's images are kept for the TTL, a term that selects none for the negative TTL.
func TestTTLs(t *testing.T) {
	c := livetest.NewClock()
	srv, p := start(t, cache.Options{TTL: 5 * time.Minute, NegativeTTL: 30 * time.Second, Now: c.Now})
	ctx := context.Background()
	ask := func(wantCalls int) {
		t.Helper()
		if imgs, err := p.Images(ctx, team); err != nil || len(imgs) != 1 {
			t.Fatalf("Images(%s) = %v, %v", team, imgs, err)
		}
		if imgs, err := p.Images(ctx, none); err != nil || len(imgs) != 0 {
			t.Fatalf("Images(%s) = %v, %v; want none", none, imgs, err)
		}
		if n := srv.Calls("ec2:DescribeImages"); n != wantCalls {
			t.Errorf("at %s: %d DescribeImages requests, want %d", c.Now().Format(time.TimeOnly), n, wantCalls)
		}
	}
	ask(2)
	c.Add(20 * time.Second)
	ask(2) // both within their TTL
	c.Add(20 * time.Second)
	ask(3) // "no image" expired, the images not
	c.Add(5 * time.Minute)
	ask(5) // both expired
}

// TestUnresolvedTerm: an ssmParameter term is not EC2's to answer; it asks nothing.
func TestUnresolvedTerm(t *testing.T) {
	srv, p := start(t, cache.Options{})
	if imgs, err := p.Images(context.Background(), facts.ImageTerm{SSMParameter: "/aws/service/x"}); err == nil {
		t.Errorf("Images of an ssmParameter term = %v; want an error", imgs)
	}
	if n := srv.Calls("*"); n != 0 {
		t.Errorf("%d requests for an unresolved term", n)
	}
}

// TestEBSDefaultsUnknown: the EBS defaults are one fact from two calls; when either is denied the
// fact is unknown, naming the action to grant, and the answer is not half of one.
func TestEBSDefaultsUnknown(t *testing.T) {
	for _, op := range []string{"ec2:GetEbsEncryptionByDefault", "ec2:GetEbsDefaultKmsKeyId"} {
		t.Run(op, func(t *testing.T) {
			srv, p := start(t, cache.Options{})
			srv.Inject(op, fakeaws.Fault{AccessDenied: true})
			d, err := p.EBSDefaults(context.Background())
			if d != nil || !facts.IsUnknown(err) || !strings.HasPrefix(facts.Reason(err), "AWS denied "+op+" (") {
				t.Errorf("EBSDefaults = %+v, %v; want unknown because AWS denied %s", d, err, op)
			}
			if err := p.Known(context.Background(), facts.EBSDefaults); !facts.IsUnknown(err) {
				t.Errorf("Known(ebsDefaults) = %v; want the same unknown fact", err)
			}
		})
	}
}
