package live_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

// networkFacts are the facts of the cluster's network that the live provider reads from DescribeCluster
// and from the cluster's VPC.
var networkFacts = []facts.Fact{facts.ClusterEndpointAccess, facts.ClusterControlPlaneNetwork, facts.ClusterIPFamily, facts.VPC, facts.NATGateways, facts.VPCEndpoints}

// netWorld holds every network fact, with routes to every kind of target, a group without rules and a
// NAT gateway and an endpoint with next to nothing known of them.
const netWorld = `apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster:
  name: prod-eks
  region: us-east-1
  partition: aws
  accountID: "111122223333"
  version: "1.33"
  authenticationMode: API
  vpcID: vpc-0a1b2c3d
  endpointPublicAccess: false
  endpointPrivateAccess: true
  publicAccessCidrs: [203.0.113.0/24, 198.51.100.0/24]
  clusterSecurityGroupID: sg-0cluster
  securityGroupIDs: [sg-0extra]
  subnetIDs: [subnet-0cp1, subnet-0cp2]
  ipFamily: ipv4
vpc: {enableDnsSupport: true, enableDnsHostnames: false}
subnets:
  - {id: subnet-0cp1, vpcID: vpc-0a1b2c3d, availabilityZone: us-east-1a, mapPublicIpOnLaunch: false, public: false,
     availabilityZoneID: use1-az1, cidrBlock: 10.0.8.0/28, availableIpAddressCount: 9, routeTableID: rtb-0priv,
     routes: [{destination: 0.0.0.0/0, target: nat-0abc, state: active}, {destination: pl-63a5400a, target: vpce-0s3, state: active},
              {destination: 10.1.0.0/16, target: tgw-0hub, state: blackhole}, {destination: 10.2.0.0/16, target: pcx-0peer, state: active},
              {destination: 10.3.0.0/16, target: eni-0fw, state: active}, {destination: 10.4.0.0/16, target: i-0proxy, state: active},
              {destination: "::/0", target: eigw-0v6, state: active}, {destination: 10.5.0.0/16, target: vgw-0vpn}]}
  - {id: subnet-0cp2, vpcID: vpc-0a1b2c3d, availabilityZone: us-east-1b, mapPublicIpOnLaunch: false, public: false,
     availabilityZoneID: use1-az2, cidrBlock: 10.0.8.16/28, availableIpAddressCount: 0, routeTableID: rtb-0iso}
  - {id: subnet-0pub, vpcID: vpc-0a1b2c3d, availabilityZone: us-east-1b, mapPublicIpOnLaunch: true, public: true,
     cidrBlock: 10.0.0.0/24, routeTableID: rtb-0pub, routes: [{destination: 0.0.0.0/0, target: igw-0abc, state: active}],
     tags: {karpenter.sh/discovery: prod-eks}}
securityGroups:
  - id: sg-0cluster
    name: eks-cluster-sg-prod-eks
    vpcID: vpc-0a1b2c3d
    ingress:
      - {protocol: "-1", groupIDs: [sg-0cluster]}
      - {protocol: tcp, fromPort: 443, toPort: 443, groupIDs: [sg-0node], cidrs: [10.0.0.0/16]}
    egress:
      - {protocol: "-1", cidrs: [0.0.0.0/0], ipv6Cidrs: ["::/0"]}
  - {id: sg-0extra, name: extra, vpcID: vpc-0a1b2c3d, ingress: [], egress: [{protocol: "6", fromPort: 443, toPort: 443, prefixListIDs: [pl-63a5400a]}]}
  - {id: sg-0node, name: eks-node, vpcID: vpc-0a1b2c3d, ingress: [{protocol: udp, fromPort: 53, toPort: 53, cidrs: [10.0.0.0/16]}], egress: [],
     tags: {karpenter.sh/discovery: prod-eks}}
natGateways:
  - {id: nat-0abc, state: available, connectivityType: public, publicIps: [203.0.113.10, 203.0.113.11]}
  - {id: nat-0priv, state: available, connectivityType: private}
  - {id: nat-0gone}
vpcEndpoints:
  - {id: vpce-0ecrapi, serviceName: com.amazonaws.us-east-1.ecr.api, type: Interface, state: available,
     privateDnsEnabled: true, securityGroupIDs: [sg-0vpce, sg-0node]}
  - {id: vpce-0s3, serviceName: com.amazonaws.us-east-1.s3, type: Gateway, state: available, routeTableIDs: [rtb-0priv]}
  - {id: vpce-0sts, serviceName: com.amazonaws.us-east-1.sts}
`

// sameNetwork asks the snapshot provider of cf and a live provider talking to the fake serving cf the
// network questions, and demands the same answers and the same known and unknown facts.
func sameNetwork(t *testing.T, cf *facts.ClusterFacts) {
	t.Helper()
	ctx := context.Background()
	snap := facts.NewSnapshot(cf)
	lp := start(t, cf, livetest.Options{}).Provider
	for _, f := range networkFacts {
		if s, l := snap.Known(ctx, f), lp.Known(ctx, f); (s == nil) != (l == nil) {
			t.Errorf("Known(%s): snapshot %v, live %v", f, s, l)
		}
	}
	same := func(name string, get func(p facts.Provider) (any, error)) {
		t.Helper()
		want, werr := get(snap)
		got, gerr := get(lp)
		if facts.IsUnknown(werr) && facts.IsUnknown(gerr) {
			return
		}
		if werr != nil || gerr != nil {
			t.Errorf("%s: snapshot error %v, live error %v", name, werr, gerr)
			return
		}
		if ws, gs := fmtAny(want), fmtAny(got); ws != gs {
			t.Errorf("%s:\nsnapshot %s\nlive     %s", name, ws, gs)
		}
	}
	same("cluster", func(p facts.Provider) (any, error) {
		c, err := p.Cluster(ctx)
		if c == nil {
			return nil, err
		}
		without := *c
		without.PodIdentityAssociations = nil // DescribeCluster does not say
		return without, err
	})
	same("vpc", func(p facts.Provider) (any, error) { return p.VPC(ctx) })
	same("nat gateways", func(p facts.Provider) (any, error) { return p.NATGateways(ctx) })
	same("vpc endpoints", func(p facts.Provider) (any, error) { return p.VPCEndpoints(ctx) })
	if cf.Subnets != nil {
		for _, s := range *cf.Subnets {
			same("subnet "+s.ID, func(p facts.Provider) (any, error) { return p.Subnets(ctx, facts.SelectorTerm{ID: s.ID}) })
		}
	}
	if cf.SecurityGroups != nil {
		for _, g := range *cf.SecurityGroups {
			same("group "+g.ID, func(p facts.Provider) (any, error) {
				gs, err := p.SecurityGroups(ctx, facts.SelectorTerm{ID: g.ID})
				for _, g := range gs {
					if !g.RulesKnown() {
						return nil, fmt.Errorf("group %s: rules unknown", g.ID)
					}
				}
				return gs, err
			})
		}
	}
}

// TestNetworkAnswersMatchSnapshot: the network facts of a world, as the snapshot holds them and as the
// live provider reads them through the AWS fake, are the same, down to what each does not know: an
// endpoint flag, the control plane's group or subnets, the IP family, a DNS attribute, a section.
func TestNetworkAnswersMatchSnapshot(t *testing.T) {
	everySection, err := os.ReadFile("../testdata/every-section.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		doc    string
		change func(cf *facts.ClusterFacts)
	}{
		{"every network fact", netWorld, nil},
		{"every section of the snapshot format", string(everySection), nil},
		{"the endpoint's access not known", netWorld, func(cf *facts.ClusterFacts) {
			cf.Cluster.EndpointPublicAccess, cf.Cluster.EndpointPrivateAccess, cf.Cluster.PublicAccessCidrs = nil, nil, nil
		}},
		{"only whether the endpoint is public", netWorld, func(cf *facts.ClusterFacts) { cf.Cluster.EndpointPrivateAccess = nil }},
		{"no cluster security group", netWorld, func(cf *facts.ClusterFacts) { cf.Cluster.ClusterSecurityGroupID = "" }},
		{"no control-plane subnets", netWorld, func(cf *facts.ClusterFacts) { cf.Cluster.SubnetIDs = nil }},
		{"no IP family", netWorld, func(cf *facts.ClusterFacts) { cf.Cluster.IPFamily = "" }},
		{"IPv6", netWorld, func(cf *facts.ClusterFacts) { cf.Cluster.IPFamily = "ipv6" }},
		{"no vpc section", netWorld, func(cf *facts.ClusterFacts) { cf.VPC = nil }},
		{"half the vpc section", netWorld, func(cf *facts.ClusterFacts) { cf.VPC.EnableDNSHostnames = nil }},
		{"no natGateways or vpcEndpoints sections", netWorld, func(cf *facts.ClusterFacts) { cf.NATGateways, cf.VPCEndpoints = nil, nil }},
		{"no NAT gateway and no endpoint", netWorld, func(cf *facts.ClusterFacts) {
			cf.NATGateways, cf.VPCEndpoints = &[]facts.NATGateway{}, &[]facts.VPCEndpoint{}
		}},
		{"a cluster without a VPC", netWorld, func(cf *facts.ClusterFacts) {
			cf.Cluster.VPCID, cf.VPC, cf.NATGateways, cf.VPCEndpoints = "", nil, nil, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cf := decode(t, tc.doc)
			if tc.change != nil {
				tc.change(cf)
			}
			sameNetwork(t, cf)
		})
	}
}

// TestNetworkKnown: the facts of the cluster's network are known exactly when the snapshot of the same
// world knows them, and an unknown one says why: the answer that lacks it, or the call AWS denied.
func TestNetworkKnown(t *testing.T) {
	ctx := context.Background()
	lp := start(t, decode(t, netWorld), livetest.Options{}).Provider
	for _, f := range networkFacts {
		if err := lp.Known(ctx, f); err != nil {
			t.Errorf("Known(%s) = %v; the fake serves it", f, err)
		}
	}
	bare := decode(t, "apiVersion: karpenter-guard.io/v1alpha1\nkind: ClusterFacts\ncluster: {name: c, region: us-east-1, partition: aws, accountID: \"111122223333\", vpcID: vpc-0a1b2c3d}\n")
	lp = start(t, bare, livetest.Options{}).Provider
	for f, reason := range map[facts.Fact]string{
		facts.ClusterEndpointAccess:      "EKS DescribeCluster did not say whether the cluster's endpoint is public and private",
		facts.ClusterControlPlaneNetwork: "EKS DescribeCluster gave no cluster security group or control-plane subnets",
		facts.ClusterIPFamily:            "EKS DescribeCluster gave no IP family",
		facts.VPC:                        "AWS denied ec2:DescribeVpcAttribute (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)",
		facts.NATGateways:                "AWS denied ec2:DescribeNatGateways (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)",
		facts.VPCEndpoints:               "AWS denied ec2:DescribeVpcEndpoints (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)",
	} {
		err := lp.Known(ctx, f)
		var u *facts.UnknownError
		if !errors.As(err, &u) || u.Fact != f || u.Reason != reason {
			t.Errorf("Known(%s) = %v; want unknown because %q", f, err, reason)
		}
	}
	noVPC := *bare.Cluster
	noVPC.VPCID = ""
	lp = start(t, &facts.ClusterFacts{Cluster: &noVPC}, livetest.Options{}).Provider
	for _, f := range []facts.Fact{facts.VPC, facts.NATGateways, facts.VPCEndpoints} {
		if err := lp.Known(ctx, f); facts.Reason(err) != "EKS DescribeCluster gave no VPC for the cluster" {
			t.Errorf("Known(%s) = %v; want unknown for want of the cluster's VPC", f, err)
		}
	}
}

// TestNetworkLiveKnowsMore: for a snapshot older than routes and rules, the fake serves the route
// tables it derives and groups without permissions, since EC2 cannot answer "unknown": the live
// provider then knows a table, routes and (empty) rules the snapshot does not, and agrees on the rest.
func TestNetworkLiveKnowsMore(t *testing.T) {
	ctx := context.Background()
	cf := decode(t, `apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster: {name: prod-eks, region: us-east-1, partition: aws, accountID: "111122223333", vpcID: vpc-0a1b2c3d}
subnets:
  - {id: subnet-0private1, vpcID: vpc-0a1b2c3d, availabilityZone: us-east-1a, mapPublicIpOnLaunch: false, public: false}
  - {id: subnet-0public1, vpcID: vpc-0a1b2c3d, availabilityZone: us-east-1b, mapPublicIpOnLaunch: true, public: true}
securityGroups:
  - {id: sg-0node, name: eks-node, vpcID: vpc-0a1b2c3d}
`)
	snap := facts.NewSnapshot(cf)
	lp := start(t, cf, livetest.Options{}).Provider
	all := facts.SelectorTerm{Tags: map[string]string{}}
	for _, s := range *cf.Subnets {
		live, err := lp.Subnets(ctx, facts.SelectorTerm{ID: s.ID})
		if err != nil || len(live) != 1 {
			t.Fatalf("subnet %s: %v, %v", s.ID, live, err)
		}
		l := live[0]
		if s.RouteTableID != "" || l.RouteTableID == "" || len(l.Routes) != 1 || l.Routes[0].Destination != "0.0.0.0/0" || l.Public != s.Public {
			t.Errorf("subnet %s: snapshot %+v, live %+v; want a derived table and default route, and the same public flag", s.ID, s, l)
		}
		if strings.HasPrefix(l.Routes[0].Target, "igw-") != s.Public {
			t.Errorf("subnet %s: default route to %s, public %v", s.ID, l.Routes[0].Target, s.Public)
		}
		l.RouteTableID, l.Routes = "", nil
		if fmtAny(l) != fmtAny(s) {
			t.Errorf("subnet %s but its routes: snapshot %s, live %s", s.ID, fmtAny(s), fmtAny(l))
		}
	}
	sg, _ := snap.SecurityGroups(ctx, all)
	lg, err := lp.SecurityGroups(ctx, facts.SelectorTerm{ID: "sg-0node"})
	if err != nil || len(lg) != 1 || len(sg) != 1 {
		t.Fatalf("groups: snapshot %v, live %v, %v", sg, lg, err)
	}
	if sg[0].RulesKnown() || !lg[0].RulesKnown() || len(lg[0].Ingress)+len(lg[0].Egress) != 0 {
		t.Errorf("sg-0node: snapshot rules known %v, live %+v; want unknown, then known and empty", sg[0].RulesKnown(), lg[0].SecurityGroupRules)
	}
}

// TestNetworkCalls: each fact of the cluster's VPC is one question per TTL (the DNS attributes two
// calls), asked again neither by Known nor by a second review.
func TestNetworkCalls(t *testing.T) {
	ctx := context.Background()
	env := start(t, decode(t, netWorld), livetest.Options{})
	for range 2 {
		for _, f := range networkFacts {
			if err := env.Provider.Known(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := env.Provider.VPC(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := env.Provider.NATGateways(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := env.Provider.VPCEndpoints(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for op, want := range map[string]int{"eks:DescribeCluster": 1, "ec2:DescribeVpcAttribute": 2, "ec2:DescribeNatGateways": 1, "ec2:DescribeVpcEndpoints": 1} {
		if n := env.Fake.Calls(op); n != want {
			t.Errorf("%s: %d calls, want %d", op, n, want)
		}
	}
}

// TestNetworkPages: the NAT gateways, endpoints and route tables of a VPC that EC2 answers in several
// pages are all read.
func TestNetworkPages(t *testing.T) {
	ctx := context.Background()
	cf := decode(t, netWorld)
	nats := make([]facts.NATGateway, 1001)
	endpoints := make([]facts.VPCEndpoint, 1001)
	for i := range nats {
		nats[i] = facts.NATGateway{ID: fmt.Sprintf("nat-%04d", i), State: "available", ConnectivityType: "public"}
		endpoints[i] = facts.VPCEndpoint{ID: fmt.Sprintf("vpce-%04d", i), ServiceName: "com.amazonaws.us-east-1.s3", Type: "Gateway"}
	}
	cf.NATGateways, cf.VPCEndpoints = &nats, &endpoints
	subnets := make([]facts.Subnet, 101) // a table each: DescribeRouteTables answers 100 at most
	for i := range subnets {
		subnets[i] = facts.Subnet{ID: fmt.Sprintf("subnet-%04d", i), VPCID: "vpc-0a1b2c3d", AvailabilityZone: "us-east-1a",
			Tags: map[string]string{"team": "a"}, SubnetNetwork: facts.SubnetNetwork{RouteTableID: fmt.Sprintf("rtb-%04d", i),
				Routes: []facts.Route{{Destination: "0.0.0.0/0", Target: fmt.Sprintf("nat-%04d", i), State: facts.RouteActive}}}}
	}
	cf.Subnets = &subnets
	env := start(t, cf, livetest.Options{})
	if got, err := env.Provider.NATGateways(ctx); err != nil || len(got) != len(nats) || got[1000].ID != "nat-1000" {
		t.Errorf("NATGateways: %d, %v; want %d", len(got), err, len(nats))
	}
	if got, err := env.Provider.VPCEndpoints(ctx); err != nil || len(got) != len(endpoints) || got[1000].ID != "vpce-1000" {
		t.Errorf("VPCEndpoints: %d, %v; want %d", len(got), err, len(endpoints))
	}
	got, err := env.Provider.Subnets(ctx, facts.SelectorTerm{Tags: map[string]string{"team": "a"}})
	if err != nil || len(got) != len(subnets) {
		t.Fatalf("Subnets: %d, %v", len(got), err)
	}
	for _, s := range got {
		if want := "rtb-" + strings.TrimPrefix(s.ID, "subnet-"); s.RouteTableID != want || len(s.Routes) != 1 {
			t.Errorf("%s: table %q with %d routes, want %s", s.ID, s.RouteTableID, len(s.Routes), want)
		}
	}
	for op, want := range map[string]int{"ec2:DescribeNatGateways": 2, "ec2:DescribeVpcEndpoints": 2, "ec2:DescribeRouteTables": 2} {
		if n := env.Fake.Calls(op); n != want {
			t.Errorf("%s: %d pages, want %d", op, n, want)
		}
	}
}

// TestNetworkFaults: every way the network calls fail ends in the unknown fact, with the reason, within
// the budget.
func TestNetworkFaults(t *testing.T) {
	const budget = 300 * time.Millisecond
	askVPC := func(ctx context.Context, p facts.Provider) error { _, err := p.VPC(ctx); return err }
	askNATs := func(ctx context.Context, p facts.Provider) error { _, err := p.NATGateways(ctx); return err }
	askEndpoints := func(ctx context.Context, p facts.Provider) error { _, err := p.VPCEndpoints(ctx); return err }
	known := func(f facts.Fact) func(context.Context, facts.Provider) error {
		return func(ctx context.Context, p facts.Provider) error { return p.Known(ctx, f) }
	}
	const grant = " (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"
	for _, tc := range []struct {
		name   string
		op     string
		fault  fakeaws.Fault
		ask    func(context.Context, facts.Provider) error
		fact   facts.Fact
		reason string
	}{
		{"DNS support denied", "ec2:DescribeVpcAttribute", fakeaws.Fault{AccessDenied: true}, askVPC, facts.VPC, "AWS denied ec2:DescribeVpcAttribute" + grant},
		{"DNS hostnames denied", "ec2:DescribeVpcAttribute", fakeaws.Fault{AccessDenied: true, After: 1}, askVPC, facts.VPC, "AWS denied ec2:DescribeVpcAttribute" + grant},
		{"DNS attributes throttled", "ec2:DescribeVpcAttribute", fakeaws.Fault{Throttle: true}, known(facts.VPC), facts.VPC, "AWS throttled ec2:DescribeVpcAttribute"},
		{"DNS attributes hang", "ec2:DescribeVpcAttribute", fakeaws.Fault{Hang: true}, askVPC, facts.VPC, "no answer from AWS within the 300ms budget (ec2:DescribeVpcAttribute)"},
		{"NAT gateways denied", "ec2:DescribeNatGateways", fakeaws.Fault{AccessDenied: true}, known(facts.NATGateways), facts.NATGateways, "AWS denied ec2:DescribeNatGateways" + grant},
		{"NAT gateways throttled", "ec2:DescribeNatGateways", fakeaws.Fault{Throttle: true}, askNATs, facts.NATGateways, "AWS throttled ec2:DescribeNatGateways"},
		{"NAT gateways' second page fails", "ec2:DescribeNatGateways", fakeaws.Fault{Status: 500, After: 1}, askNATs, facts.NATGateways, "ec2:DescribeNatGateways failed (InternalError: "},
		{"NAT gateways malformed", "ec2:DescribeNatGateways", fakeaws.Fault{Malformed: true}, askNATs, facts.NATGateways, "ec2:DescribeNatGateways failed ("},
		{"endpoints denied", "ec2:DescribeVpcEndpoints", fakeaws.Fault{AccessDenied: true}, askEndpoints, facts.VPCEndpoints, "AWS denied ec2:DescribeVpcEndpoints" + grant},
		{"endpoints throttled", "ec2:DescribeVpcEndpoints", fakeaws.Fault{Throttle: true}, known(facts.VPCEndpoints), facts.VPCEndpoints, "AWS throttled ec2:DescribeVpcEndpoints"},
		{"endpoints not available", "ec2:DescribeVpcEndpoints", fakeaws.Fault{Unavailable: true}, askEndpoints, facts.VPCEndpoints,
			"EC2 DescribeVpcEndpoints is not available at this endpoint (HTTP 404 from 127.0.0.1:"},
		{"the cluster denied", "eks:DescribeCluster", fakeaws.Fault{AccessDenied: true}, askNATs, facts.NATGateways, "AWS denied eks:DescribeCluster" + grant},
		{"the cluster denied, its endpoint", "eks:DescribeCluster", fakeaws.Fault{AccessDenied: true}, known(facts.ClusterEndpointAccess), facts.ClusterEndpointAccess,
			"AWS denied eks:DescribeCluster" + grant},
		{"the cluster malformed", "eks:DescribeCluster", fakeaws.Fault{Malformed: true}, known(facts.ClusterIPFamily), facts.ClusterIPFamily, "eks:DescribeCluster failed ("},
		{"route tables throttled", "ec2:DescribeRouteTables", fakeaws.Fault{Throttle: true}, askSubnets, facts.Subnets, "AWS throttled ec2:DescribeRouteTables"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cf := decode(t, netWorld)
			if tc.fault.After > 0 && tc.op == "ec2:DescribeNatGateways" {
				nats := make([]facts.NATGateway, 1001) // two pages
				for i := range nats {
					nats[i] = facts.NATGateway{ID: fmt.Sprintf("nat-%04d", i)}
				}
				cf.NATGateways = &nats
			}
			env := start(t, cf, livetest.Options{Budget: budget, Attempts: 3})
			env.Fake.Inject(tc.op, tc.fault)
			ctx, cancel := context.WithTimeout(context.Background(), budget)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- tc.ask(ctx, env.Provider) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * budget):
				t.Fatalf("no answer 20 budgets after the call")
			}
			var u *facts.UnknownError
			if !errors.As(err, &u) || u.Fact != tc.fact || !strings.HasPrefix(u.Reason, tc.reason) {
				t.Fatalf("error = %v; want the unknown fact %s because %q", err, tc.fact, tc.reason)
			}
		})
	}
}
