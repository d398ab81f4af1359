package rules_test

import (
	"fmt"
	"os"
	"strings"
)

// This file holds the network world of prod-eks, for the network and capacity rules: the control
// plane's endpoint, groups and subnets, the subnets' CIDRs, free addresses and routes, the groups'
// rules, the VPC's DNS attributes and NAT gateways. netFacts() is healthy: the private subnets leave
// through NAT gateways, the control plane admits 443 from the node group and the node group admits
// 10250 from the cluster group.

const (
	cpSubnetA  = "subnet-0c0c0c0c0c0c00001"
	cpSubnetB  = "subnet-0c0c0c0c0c0c00002"
	isolatedA  = "subnet-0d0d0d0d0d0d00001"
	isolatedA2 = "subnet-0d0d0d0d0d0d00002"
	natA       = "nat-0aaaa1111bbbb2222"
	natB       = "nat-0aaaa1111bbbb3333"
	igw        = "igw-0abc123"
	vpceSG     = "sg-0e0e0e0e0e0e00001"
)

// netSubnet renders a subnet with its network facts; routes are flow mappings ("" for none).
func netSubnet(id, az, azID, cidr string, free int, table string, mapPublic, public bool, tags string, routes ...string) string {
	b := map[bool]string{true: "true", false: "false"}
	lines := []string{"id: " + id, "vpcID: " + clusterVPC, "availabilityZone: " + az, "mapPublicIpOnLaunch: " + b[mapPublic], "public: " + b[public], "tags: " + tags,
		"availabilityZoneID: " + azID, "cidrBlock: " + cidr, fmt.Sprintf("availableIpAddressCount: %d", free), "routeTableID: " + table}
	if len(routes) > 0 {
		lines = append(lines, "routes: ["+strings.Join(routes, ", ")+"]")
	}
	return listItem(lines...)
}

// route renders one active route.
func route(dest, target string) string {
	return "{destination: " + dest + ", target: " + target + ", state: active}"
}

// defaultNetSubnets are the prod-eks subnets with their network facts.
func defaultNetSubnets() []string {
	return []string{
		netSubnet(privateA, "us-east-1a", "use1-az1", "10.0.32.0/19", 4011, "rtb-0priva", false, false, "{karpenter.sh/discovery: prod-eks, Name: prod-eks-private-us-east-1a}", route("0.0.0.0/0", natA)),
		netSubnet(privateB, "us-east-1b", "use1-az2", "10.0.64.0/19", 3990, "rtb-0privb", false, false, "{karpenter.sh/discovery: prod-eks, Name: prod-eks-private-us-east-1b}", route("0.0.0.0/0", natB)),
		netSubnet(publicA, "us-east-1a", "use1-az1", "10.0.0.0/24", 200, "rtb-0pub", true, true, "{kubernetes.io/role/elb: \"1\", Name: prod-eks-public-us-east-1a}", route("0.0.0.0/0", igw)),
		netSubnet(publicB, "us-east-1b", "use1-az2", "10.0.1.0/24", 200, "rtb-0pub", false, true, "{kubernetes.io/role/elb: \"1\", Name: prod-eks-public-us-east-1b}", route("0.0.0.0/0", igw)),
		netSubnet(cpSubnetA, "us-east-1a", "use1-az1", "10.0.8.0/28", 9, "rtb-0priva", false, false, "{Name: prod-eks-control-plane-a}", route("0.0.0.0/0", natA)),
		netSubnet(cpSubnetB, "us-east-1b", "use1-az2", "10.0.8.16/28", 9, "rtb-0privb", false, false, "{Name: prod-eks-control-plane-b}", route("0.0.0.0/0", natB)),
		subnet(sharedSub, otherVPC, "us-east-1a", false, false, "{karpenter.sh/discovery: prod-eks-legacy, Name: shared-services-a}"),
	}
}

// netGroup renders a security group with its rules (flow mappings).
func netGroup(id, name, vpc, tags string, ingress, egress []string) string {
	return listItem("id: "+id, "name: "+name, "vpcID: "+vpc, "tags: "+tags,
		"ingress: ["+strings.Join(ingress, ", ")+"]", "egress: ["+strings.Join(egress, ", ")+"]")
}

// tcpFrom renders a TCP rule for a port from (or to) groups or CIDRs ("-1" port: every protocol).
func tcpFrom(port int, groups, cidrs string) string {
	r := fmt.Sprintf("{protocol: tcp, fromPort: %d, toPort: %d", port, port)
	if port < 0 {
		r = "{protocol: \"-1\""
	}
	if groups != "" {
		r += ", groupIDs: [" + groups + "]"
	}
	if cidrs != "" {
		r += ", cidrs: [" + cidrs + "]"
	}
	return r + "}"
}

// allOut is the default egress rule: everything to everywhere.
var allOut = []string{tcpFrom(-1, "", "0.0.0.0/0")}

// defaultNetGroups are the prod-eks groups with their rules: the cluster group (EKS's "all from self"
// and 443 from the node group) and the node group (all from itself, 10250 and 443 from the cluster
// group).
func defaultNetGroups(nodeIngress ...string) []string {
	if nodeIngress == nil {
		nodeIngress = []string{tcpFrom(-1, nodeSG, ""), tcpFrom(10250, clusterSG, ""), tcpFrom(443, clusterSG, "")}
	}
	return []string{
		netGroup(clusterSG, "eks-cluster-sg-prod-eks-1234567890", clusterVPC, "{aws:eks:cluster-name: prod-eks, kubernetes.io/cluster/prod-eks: owned}",
			[]string{tcpFrom(-1, clusterSG, ""), tcpFrom(443, nodeSG, "")}, allOut),
		netGroup(nodeSG, "prod-eks-node", clusterVPC, "{karpenter.sh/discovery: prod-eks}", nodeIngress, allOut),
		netGroup(legacySG, "legacy-nodes", otherVPC, "{karpenter.sh/discovery: prod-eks-legacy}", nil, allOut),
		netGroup(vpceSG, "prod-eks-endpoints", clusterVPC, "{Name: prod-eks-endpoints}", []string{tcpFrom(443, "", "10.0.0.0/16")}, allOut),
	}
}

// netFacts is the prod-eks snapshot with its network facts (healthy), then opts.
func netFacts(opts ...factsOpt) string {
	base := []factsOpt{
		clusterField("endpointPublicAccess", "true"), clusterField("endpointPrivateAccess", "true"),
		clusterField("publicAccessCidrs", "[0.0.0.0/0]"), clusterField("clusterSecurityGroupID", clusterSG),
		clusterField("subnetIDs", "["+cpSubnetA+", "+cpSubnetB+"]"), clusterField("ipFamily", "ipv4"),
		podIdentity("0"), // aws-node's credentials are known only with the count of associations
		subnets(defaultNetSubnets()...),
		groups(defaultNetGroups()...),
		section("vpc", "vpc: {enableDnsSupport: true, enableDnsHostnames: true}\n"),
		section("natGateways", list("natGateways",
			listItem("id: "+natA, "state: available", "connectivityType: public", "publicIps: [203.0.113.10]"),
			listItem("id: "+natB, "state: available", "connectivityType: public", "publicIps: [203.0.113.11]"))),
		section("vpcEndpoints", "vpcEndpoints: []\n"),
		section("vpcCNI", cni("true", "nodeRole")),
	}
	return clusterFacts(append(base, opts...)...)
}

func groups(items ...string) factsOpt {
	return section("securityGroups", list("securityGroups", items...))
}

// privateEndpointOff makes the cluster's endpoint public only, admitting cidrs.
func privateEndpointOff(cidrs string) factsOpt {
	return func(w *world) {
		w.cluster["endpointPrivateAccess"] = "false"
		w.cluster["publicAccessCidrs"] = "[" + cidrs + "]"
	}
}

// isolatedSubnets replaces the private subnets by subnets without a way out (only an S3 gateway route),
// two in us-east-1a.
func isolatedWorld(endpoints ...string) []factsOpt {
	subs := []string{
		netSubnet(isolatedA, "us-east-1a", "use1-az1", "10.0.96.0/20", 4000, "rtb-0iso", false, false, "{karpenter.sh/discovery: prod-eks, Name: prod-eks-isolated-us-east-1a}", route("pl-63a5400a", "vpce-0s3")),
		netSubnet(isolatedA2, "us-east-1a", "use1-az1", "10.0.112.0/20", 4000, "rtb-0iso", false, false, "{karpenter.sh/discovery: prod-eks, Name: prod-eks-isolated-us-east-1a-2}", route("pl-63a5400a", "vpce-0s3")),
		netSubnet(cpSubnetA, "us-east-1a", "use1-az1", "10.0.8.0/28", 9, "rtb-0iso", false, false, "{Name: prod-eks-control-plane-a}"),
		netSubnet(cpSubnetB, "us-east-1b", "use1-az2", "10.0.8.16/28", 9, "rtb-0iso", false, false, "{Name: prod-eks-control-plane-b}"),
	}
	return []factsOpt{subnets(subs...), section("vpcEndpoints", list("vpcEndpoints", endpoints...))}
}

// endpoint renders a VPC endpoint of prod-eks's region.
func endpoint(id, svc, typ, state string, privateDNS bool, groups, tables string) string {
	return listItem("id: "+id, "serviceName: com.amazonaws.us-east-1."+svc, "type: "+typ, "state: "+state,
		fmt.Sprintf("privateDnsEnabled: %v", privateDNS), "securityGroupIDs: ["+groups+"]", "routeTableIDs: ["+tables+"]")
}

// usableEndpoints are the interface endpoints an isolated AL2023 node needs to join and pull, and the S3
// gateway.
func usableEndpoints(svcs ...string) []string {
	var out []string
	for i, svc := range svcs {
		if svc == "s3" {
			out = append(out, endpoint("vpce-0s3", "s3", "Gateway", "available", false, "", "rtb-0iso"))
			continue
		}
		out = append(out, endpoint(fmt.Sprintf("vpce-0%02d", i), svc, "Interface", "available", true, vpceSG, ""))
	}
	return out
}

// poolWith is a NodePool of class whose requirements are on-demand capacity and reqs (YAML list
// items, unindented).
func poolWith(name, class, reqs string) string {
	p := nodePool(name, class, "")
	old := "        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"on-demand\"]\n"
	return strings.Replace(p, old, old+indent(reqs, "        "), 1)
}

// realInstanceTypes is the instanceTypes section of the scheduling package's fixture: three dozen real
// DescribeInstanceTypes answers with their us-east-1 offerings.
func realInstanceTypes() factsOpt {
	data, err := os.ReadFile("../scheduling/testdata/instance-types.yaml")
	if err != nil {
		panic(err)
	}
	text := string(data)
	i := strings.Index(text, "instanceTypes:")
	if i < 0 {
		panic("no instanceTypes in the scheduling fixture")
	}
	return section("instanceTypes", text[i:])
}
