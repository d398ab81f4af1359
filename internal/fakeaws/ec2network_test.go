package fakeaws_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

// vpcNetwork is a snapshot with the network facts: the cluster's endpoint and control plane, subnets
// with their tables and routes of every kind of target (and one without, whose table the fake
// derives), groups with rules, the VPC's DNS attributes, NAT gateways and endpoints.
const vpcNetwork = header + `cluster:
  name: prod-eks
  region: us-east-1
  accountID: "111122223333"
  vpcID: vpc-a
  endpointPublicAccess: true
  endpointPrivateAccess: false
  publicAccessCidrs: [203.0.113.0/24]
  clusterSecurityGroupID: sg-0cluster
  securityGroupIDs: [sg-0extra]
  subnetIDs: [subnet-cp1, subnet-cp2]
  ipFamily: ipv4
vpc: {enableDnsSupport: true}
subnets:
  - {id: subnet-priv, vpcID: vpc-a, availabilityZone: us-east-1a, mapPublicIpOnLaunch: false, public: false,
     availabilityZoneID: use1-az1, cidrBlock: 10.0.32.0/19, availableIpAddressCount: 4011, routeTableID: rtb-0priv,
     routes: [{destination: 0.0.0.0/0, target: nat-0abc, state: active}, {destination: pl-63a5400a, target: vpce-0s3, state: active},
              {destination: 10.1.0.0/16, target: tgw-0hub, state: blackhole}, {destination: 10.2.0.0/16, target: pcx-0peer},
              {destination: 10.3.0.0/16, target: eni-0fw}, {destination: 10.4.0.0/16, target: i-0proxy},
              {destination: "::/0", target: eigw-0v6}, {destination: 10.5.0.0/16, target: vgw-0vpn}]}
  - {id: subnet-pub, vpcID: vpc-a, availabilityZone: us-east-1b, mapPublicIpOnLaunch: true, public: true,
     cidrBlock: 10.0.0.0/24, routeTableID: rtb-0pub, routes: [{destination: 0.0.0.0/0, target: igw-0abc, state: active}]}
  - {id: subnet-pub2, vpcID: vpc-a, availabilityZone: us-east-1c, mapPublicIpOnLaunch: true, public: true, routeTableID: rtb-0pub,
     routes: [{destination: 0.0.0.0/0, target: igw-0abc, state: active}]}
  - {id: subnet-iso, vpcID: vpc-a, availabilityZone: us-east-1c, mapPublicIpOnLaunch: false, public: false, routeTableID: rtb-0iso}
  - {id: subnet-old, vpcID: vpc-b, availabilityZone: us-east-1a, mapPublicIpOnLaunch: true, public: true}
securityGroups:
  - id: sg-0node
    name: eks-node
    vpcID: vpc-a
    ingress:
      - {protocol: tcp, fromPort: 10250, toPort: 10250, groupIDs: [sg-0cluster]}
      - {protocol: "-1", groupIDs: [sg-0node]}
    egress:
      - {protocol: "-1", cidrs: [0.0.0.0/0], ipv6Cidrs: ["::/0"]}
      - {protocol: "6", fromPort: 443, toPort: 443, prefixListIDs: [pl-63a5400a]}
  - {id: sg-0none, name: locked, vpcID: vpc-a, ingress: [], egress: []}
  - {id: sg-0old, name: unknown-rules, vpcID: vpc-a}
natGateways:
  - {id: nat-01, state: available, connectivityType: public, publicIps: [203.0.113.10, 203.0.113.11]}
  - {id: nat-02, state: available, connectivityType: private}
  - {id: nat-03, state: deleted}
  - {id: nat-04, state: available, connectivityType: public, publicIps: [203.0.113.14]}
  - {id: nat-05, state: pending, connectivityType: public}
  - {id: nat-06, state: available, connectivityType: public, publicIps: [203.0.113.16]}
  - {id: nat-07}
vpcEndpoints:
  - {id: vpce-0ecrapi, serviceName: com.amazonaws.us-east-1.ecr.api, type: Interface, state: available,
     privateDnsEnabled: true, securityGroupIDs: [sg-0vpce]}
  - {id: vpce-0s3, serviceName: com.amazonaws.us-east-1.s3, type: Gateway, state: available, routeTableIDs: [rtb-0priv, rtb-0iso]}
  - {id: vpce-0sts, serviceName: com.amazonaws.us-east-1.sts, type: Interface, state: pendingAcceptance, privateDnsEnabled: false}
`

// TestEKSClusterNetwork: DescribeCluster carries the cluster's endpoint, control plane and IP family
// as the snapshot holds them, and leaves out what a snapshot does not know.
func TestEKSClusterNetwork(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, vpcNetwork))
	out, err := c.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("prod-eks")})
	if err != nil {
		t.Fatal(err)
	}
	v := out.Cluster.ResourcesVpcConfig
	if v == nil || !v.EndpointPublicAccess || v.EndpointPrivateAccess || aws.ToString(v.ClusterSecurityGroupId) != "sg-0cluster" || aws.ToString(v.VpcId) != "vpc-a" ||
		!slices.Equal(v.SecurityGroupIds, []string{"sg-0extra"}) || !slices.Equal(v.SubnetIds, []string{"subnet-cp1", "subnet-cp2"}) ||
		!slices.Equal(v.PublicAccessCidrs, []string{"203.0.113.0/24"}) {
		t.Errorf("resourcesVpcConfig %+v", v)
	}
	if k := out.Cluster.KubernetesNetworkConfig; k == nil || k.IpFamily != "ipv4" {
		t.Errorf("kubernetesNetworkConfig %+v", k)
	}

	// A cluster with a VPC and nothing of its network: no endpoint flags, no group, no IP family.
	srv := fakeaws.New(snapshot(t, header+"cluster: {name: prod-eks, region: us-east-1, accountID: \"111122223333\", vpcID: vpc-a}\n"))
	body := get(t, srv.Start(t)+"/clusters/prod-eks")
	var doc struct {
		Cluster struct {
			ResourcesVpcConfig      map[string]json.RawMessage `json:"resourcesVpcConfig"`
			KubernetesNetworkConfig json.RawMessage            `json:"kubernetesNetworkConfig"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range doc.Cluster.ResourcesVpcConfig {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"securityGroupIds", "subnetIds", "vpcId"}; !slices.Equal(keys, want) || doc.Cluster.KubernetesNetworkConfig != nil {
		t.Errorf("resourcesVpcConfig members %q (want %q), kubernetesNetworkConfig %s", keys, want, doc.Cluster.KubernetesNetworkConfig)
	}
}

// get reads url without signing, as the fake lets a demo's curl do.
func get(t *testing.T, url string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
	}
	return raw
}

// TestEC2SubnetNetwork: DescribeSubnets carries the zone id, CIDR block and free addresses the snapshot
// holds, and none of them for a subnet whose snapshot leaves them out.
func TestEC2SubnetNetwork(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, vpcNetwork))
	out, err := c.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-priv", "subnet-old"}})
	if err != nil {
		t.Fatal(err)
	}
	priv, old := out.Subnets[0], out.Subnets[1]
	if aws.ToString(priv.AvailabilityZoneId) != "use1-az1" || aws.ToString(priv.CidrBlock) != "10.0.32.0/19" || aws.ToInt32(priv.AvailableIpAddressCount) != 4011 {
		t.Errorf("subnet-priv %+v", priv)
	}
	if old.AvailabilityZoneId != nil || old.CidrBlock != nil || old.AvailableIpAddressCount != nil {
		t.Errorf("subnet-old has network facts its snapshot does not: %+v", old)
	}
	out, err = c.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("cidr-block", "10.0.*")}})
	if err != nil || len(out.Subnets) != 2 {
		t.Errorf("cidr-block filter: %d subnets, %v; want subnet-priv and subnet-pub", len(out.Subnets), err)
	}
}

// TestEC2RouteTablesFromSnapshot: a table the snapshot names is served with exactly its routes, each
// target in the member of its kind, explicitly associated with every subnet naming it; a subnet without
// a table still gets the derived ones, and every subnet's `public` follows from its table.
func TestEC2RouteTablesFromSnapshot(t *testing.T) {
	ctx := context.Background()
	cf := snapshot(t, vpcNetwork)
	_, c := start(t, cf)
	out, err := c.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{RouteTableIds: []string{"rtb-0priv"}})
	if err != nil || len(out.RouteTables) != 1 {
		t.Fatalf("rtb-0priv: %+v, %v", out, err)
	}
	rt := out.RouteTables[0]
	if len(rt.Associations) != 1 || aws.ToString(rt.Associations[0].SubnetId) != "subnet-priv" || aws.ToBool(rt.Associations[0].Main) || aws.ToString(rt.VpcId) != "vpc-a" {
		t.Errorf("rtb-0priv associations %+v", rt.Associations)
	}
	var got []string
	for _, r := range rt.Routes {
		dest := aws.ToString(r.DestinationCidrBlock) + aws.ToString(r.DestinationPrefixListId) + aws.ToString(r.DestinationIpv6CidrBlock)
		var targets []string
		for kind, id := range map[string]*string{"gateway": r.GatewayId, "nat": r.NatGatewayId, "tgw": r.TransitGatewayId, "pcx": r.VpcPeeringConnectionId,
			"eni": r.NetworkInterfaceId, "instance": r.InstanceId, "eigw": r.EgressOnlyInternetGatewayId} {
			if id != nil {
				targets = append(targets, kind+"="+*id)
			}
		}
		if len(targets) != 1 {
			t.Errorf("route to %s has targets %q; want one", dest, targets)
		}
		got = append(got, dest+" "+strings.Join(targets, ",")+" "+string(r.State))
	}
	want := []string{"gateway=local", "0.0.0.0/0 nat=nat-0abc active", "pl-63a5400a gateway=vpce-0s3 active", "10.1.0.0/16 tgw=tgw-0hub blackhole",
		"10.2.0.0/16 pcx=pcx-0peer ", "10.3.0.0/16 eni=eni-0fw ", "10.4.0.0/16 instance=i-0proxy ", "::/0 eigw=eigw-0v6 ", "10.5.0.0/16 gateway=vgw-0vpn "}
	if len(got) != len(want) || !strings.HasSuffix(got[0], "gateway=local active") {
		t.Fatalf("routes %q", got)
	}
	if !slices.Equal(got[1:], want[1:]) {
		t.Errorf("routes\n%q\nwant\n%q", got[1:], want[1:])
	}

	out, err = c.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{filter("route-table-id", "rtb-0pub")}})
	if err != nil || len(out.RouteTables) != 1 || len(out.RouteTables[0].Associations) != 2 {
		t.Fatalf("rtb-0pub: %+v, %v; want one table associated with both public subnets", out, err)
	}
	for _, s := range *cf.Subnets {
		if got := publicByRouteTables(ctx, t, c, s.ID, s.VPCID); got != s.Public {
			t.Errorf("%s: public %v by its route tables, %v in the snapshot", s.ID, got, s.Public)
		}
	}
}

// TestEC2SecurityGroupRules: IpPermissions and IpPermissionsEgress carry the snapshot's rules; a group
// with no rules and one whose rules are unknown are both sent without any.
func TestEC2SecurityGroupRules(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, vpcNetwork))
	out, err := c.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-0node", "sg-0none", "sg-0old"}})
	if err != nil || len(out.SecurityGroups) != 3 {
		t.Fatalf("groups %+v, %v", out, err)
	}
	node := out.SecurityGroups[0]
	if len(node.IpPermissions) != 2 || len(node.IpPermissionsEgress) != 2 {
		t.Fatalf("sg-0node permissions %+v / %+v", node.IpPermissions, node.IpPermissionsEgress)
	}
	kubelet, self := node.IpPermissions[0], node.IpPermissions[1]
	if aws.ToString(kubelet.IpProtocol) != "tcp" || aws.ToInt32(kubelet.FromPort) != 10250 || aws.ToInt32(kubelet.ToPort) != 10250 ||
		len(kubelet.UserIdGroupPairs) != 1 || aws.ToString(kubelet.UserIdGroupPairs[0].GroupId) != "sg-0cluster" || aws.ToString(kubelet.UserIdGroupPairs[0].UserId) != "111122223333" {
		t.Errorf("kubelet rule %+v", kubelet)
	}
	if aws.ToString(self.IpProtocol) != "-1" || self.FromPort != nil || self.ToPort != nil || aws.ToString(self.UserIdGroupPairs[0].GroupId) != "sg-0node" {
		t.Errorf("all-from-self rule %+v", self)
	}
	all, https := node.IpPermissionsEgress[0], node.IpPermissionsEgress[1]
	if aws.ToString(all.IpProtocol) != "-1" || len(all.IpRanges) != 1 || aws.ToString(all.IpRanges[0].CidrIp) != "0.0.0.0/0" ||
		len(all.Ipv6Ranges) != 1 || aws.ToString(all.Ipv6Ranges[0].CidrIpv6) != "::/0" {
		t.Errorf("egress to everywhere %+v", all)
	}
	if aws.ToString(https.IpProtocol) != "6" || aws.ToInt32(https.FromPort) != 443 || len(https.PrefixListIds) != 1 || aws.ToString(https.PrefixListIds[0].PrefixListId) != "pl-63a5400a" {
		t.Errorf("egress to a prefix list %+v", https)
	}
	for _, g := range out.SecurityGroups[1:] {
		if len(g.IpPermissions) != 0 || len(g.IpPermissionsEgress) != 0 {
			t.Errorf("%s permissions %+v / %+v; want none", aws.ToString(g.GroupId), g.IpPermissions, g.IpPermissionsEgress)
		}
	}
}

// TestEC2DescribeVpcAttribute: the cluster's VPC has the vpc section's attributes, one the section
// leaves out is answered without a value, another VPC the snapshot shows has none, an unknown VPC is
// not found, and without the section the call is denied.
func TestEC2DescribeVpcAttribute(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, vpcNetwork))
	ask := func(c clients, vpc string, attr ec2types.VpcAttributeName) (*ec2.DescribeVpcAttributeOutput, error) {
		return c.ec2.DescribeVpcAttribute(ctx, &ec2.DescribeVpcAttributeInput{VpcId: aws.String(vpc), Attribute: attr})
	}
	out, err := ask(c, "vpc-a", ec2types.VpcAttributeNameEnableDnsSupport)
	if err != nil || out.EnableDnsSupport == nil || !aws.ToBool(out.EnableDnsSupport.Value) || out.EnableDnsHostnames != nil || aws.ToString(out.VpcId) != "vpc-a" {
		t.Errorf("enableDnsSupport of vpc-a: %+v, %v", out, err)
	}
	out, err = ask(c, "vpc-a", ec2types.VpcAttributeNameEnableDnsHostnames)
	if err != nil || out.EnableDnsHostnames != nil || out.EnableDnsSupport != nil {
		t.Errorf("enableDnsHostnames of vpc-a: %+v, %v; want an answer without a value", out, err)
	}
	out, err = ask(c, "vpc-b", ec2types.VpcAttributeNameEnableDnsSupport)
	if err != nil || out.EnableDnsSupport != nil {
		t.Errorf("enableDnsSupport of vpc-b: %+v, %v; want an answer without a value", out, err)
	}
	_, err = ask(c, "vpc-zz", ec2types.VpcAttributeNameEnableDnsSupport)
	wantAPIError(t, err, "InvalidVpcID.NotFound", 400, "The vpc ID 'vpc-zz' does not exist")
	_, err = ask(c, "vpc-a", ec2types.VpcAttributeNameEnableNetworkAddressUsageMetrics)
	wantAPIError(t, err, "InvalidParameterValue", 400, "enableNetworkAddressUsageMetrics")

	_, none := start(t, snapshot(t, header+"cluster: {name: prod-eks, region: us-east-1, accountID: \"111122223333\", vpcID: vpc-a}\n"))
	_, err = ask(none, "vpc-a", ec2types.VpcAttributeNameEnableDnsSupport)
	wantAPIError(t, err, "UnauthorizedOperation", 403, "ec2:DescribeVpcAttribute")
}

// TestEC2DescribeNatGateways: the natGateways section in the cluster's VPC, with EC2's filters, ids and
// pages.
func TestEC2DescribeNatGateways(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, vpcNetwork))
	ids := func(in ec2.DescribeNatGatewaysInput) ([]string, int) {
		t.Helper()
		var got []string
		pages := 0
		for p := ec2.NewDescribeNatGatewaysPaginator(c.ec2, &in); p.HasMorePages(); pages++ {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range out.NatGateways {
				got = append(got, aws.ToString(n.NatGatewayId))
			}
		}
		return got, pages
	}
	if got, pages := ids(ec2.DescribeNatGatewaysInput{Filter: []ec2types.Filter{filter("vpc-id", "vpc-a")}, MaxResults: aws.Int32(5)}); len(got) != 7 || pages != 2 {
		t.Errorf("vpc-a: %d pages of %q; want 7 gateways in 2 pages", pages, got)
	}
	if got, _ := ids(ec2.DescribeNatGatewaysInput{Filter: []ec2types.Filter{filter("vpc-id", "vpc-b")}}); len(got) != 0 {
		t.Errorf("vpc-b: %q; want none", got)
	}
	if got, _ := ids(ec2.DescribeNatGatewaysInput{Filter: []ec2types.Filter{filter("state", "available")}}); !slices.Equal(got, []string{"nat-01", "nat-02", "nat-04", "nat-06"}) {
		t.Errorf("available: %q", got)
	}
	out, err := c.ec2.DescribeNatGateways(ctx, &ec2.DescribeNatGatewaysInput{NatGatewayIds: []string{"nat-01", "nat-07"}})
	if err != nil || len(out.NatGateways) != 2 {
		t.Fatalf("by id: %+v, %v", out, err)
	}
	n, bare := out.NatGateways[0], out.NatGateways[1]
	if n.State != ec2types.NatGatewayStateAvailable || n.ConnectivityType != ec2types.ConnectivityTypePublic || aws.ToString(n.VpcId) != "vpc-a" ||
		len(n.NatGatewayAddresses) != 2 || aws.ToString(n.NatGatewayAddresses[1].PublicIp) != "203.0.113.11" {
		t.Errorf("nat-01 %+v", n)
	}
	if bare.State != "" || bare.ConnectivityType != "" || len(bare.NatGatewayAddresses) != 0 {
		t.Errorf("nat-07 has what its snapshot does not: %+v", bare)
	}
	_, err = c.ec2.DescribeNatGateways(ctx, &ec2.DescribeNatGatewaysInput{NatGatewayIds: []string{"nat-zz"}})
	wantAPIError(t, err, "NatGatewayNotFound", 400, "nat-zz")
	_, err = c.ec2.DescribeNatGateways(ctx, &ec2.DescribeNatGatewaysInput{MaxResults: aws.Int32(2)})
	wantAPIError(t, err, "InvalidParameterValue", 400, "Expecting a value between 5 and 1000")

	_, none := start(t, snapshot(t, header+"cluster: {name: prod-eks, vpcID: vpc-a}\n"))
	_, err = none.ec2.DescribeNatGateways(ctx, &ec2.DescribeNatGatewaysInput{})
	wantAPIError(t, err, "UnauthorizedOperation", 403, "ec2:DescribeNatGateways")
}

// TestEC2DescribeVpcEndpoints: the vpcEndpoints section in the cluster's VPC, every field the snapshot
// holds, with EC2's filters and pages.
func TestEC2DescribeVpcEndpoints(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, vpcNetwork))
	var got []ec2types.VpcEndpoint
	pages := 0
	for p := ec2.NewDescribeVpcEndpointsPaginator(c.ec2, &ec2.DescribeVpcEndpointsInput{Filters: []ec2types.Filter{filter("vpc-id", "vpc-a")}, MaxResults: aws.Int32(2)}); p.HasMorePages(); pages++ {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, out.VpcEndpoints...)
	}
	if len(got) != 3 || pages != 2 {
		t.Fatalf("%d endpoints in %d pages; want 3 in 2", len(got), pages)
	}
	ecr, s3, sts := got[0], got[1], got[2]
	if aws.ToString(ecr.VpcEndpointId) != "vpce-0ecrapi" || aws.ToString(ecr.ServiceName) != "com.amazonaws.us-east-1.ecr.api" || ecr.VpcEndpointType != ec2types.VpcEndpointTypeInterface ||
		string(ecr.State) != "available" || !aws.ToBool(ecr.PrivateDnsEnabled) || len(ecr.Groups) != 1 || aws.ToString(ecr.Groups[0].GroupId) != "sg-0vpce" || aws.ToString(ecr.VpcId) != "vpc-a" {
		t.Errorf("ecr.api endpoint %+v", ecr)
	}
	if s3.VpcEndpointType != ec2types.VpcEndpointTypeGateway || s3.PrivateDnsEnabled != nil || !slices.Equal(s3.RouteTableIds, []string{"rtb-0priv", "rtb-0iso"}) {
		t.Errorf("s3 endpoint %+v", s3)
	}
	if sts.PrivateDnsEnabled == nil || *sts.PrivateDnsEnabled || string(sts.State) != "pendingAcceptance" {
		t.Errorf("sts endpoint %+v", sts)
	}
	out, err := c.ec2.DescribeVpcEndpoints(ctx, &ec2.DescribeVpcEndpointsInput{Filters: []ec2types.Filter{filter("service-name", "*.ecr.*", "*.s3"), filter("vpc-endpoint-type", "Interface")}})
	if err != nil || len(out.VpcEndpoints) != 1 || aws.ToString(out.VpcEndpoints[0].VpcEndpointId) != "vpce-0ecrapi" {
		t.Errorf("filters: %+v, %v; want the ecr.api endpoint", out, err)
	}
	_, err = c.ec2.DescribeVpcEndpoints(ctx, &ec2.DescribeVpcEndpointsInput{VpcEndpointIds: []string{"vpce-zz"}})
	wantAPIError(t, err, "InvalidVpcEndpointId.NotFound", 400, "vpce-zz")

	_, none := start(t, snapshot(t, header+"cluster: {name: prod-eks, vpcID: vpc-a}\n"))
	_, err = none.ec2.DescribeVpcEndpoints(ctx, &ec2.DescribeVpcEndpointsInput{})
	wantAPIError(t, err, "UnauthorizedOperation", 403, "ec2:DescribeVpcEndpoints")
}
