package fakeaws

import (
	"net/http"
	"slices"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// The network calls of EC2: DescribeVpcAttribute from the snapshot's vpc section (the cluster's VPC),
// DescribeNatGateways from natGateways and DescribeVpcEndpoints from vpcEndpoints (all in the cluster's
// VPC), and the wire shapes of routes and security-group permissions that DescribeRouteTables and
// DescribeSecurityGroups answer with. An absent section is denied, as everywhere in the fake; a value
// the snapshot leaves out is left out of the answer, so that a live provider knows exactly what the
// snapshot knows.

// natGatewaysOp and vpcEndpointsOp describe the operations' parameters for ec2Params: the filters the
// fake can answer from the snapshot, and MaxResults' range.
var (
	natGatewaysOp = ec2Op{idParam: "NatGatewayId", idPrefix: "nat-", minResults: 5, maxResults: 1000,
		filters: []string{"nat-gateway-id", "state", "subnet-id", "tag-key", "tag-value", "vpc-id"}}
	vpcEndpointsOp = ec2Op{idParam: "VpcEndpointId", idPrefix: "vpce-", minResults: 1, maxResults: 1000,
		filters: []string{"ip-address-type", "service-name", "tag-key", "tag-value", "vpc-endpoint-id", "vpc-endpoint-state", "vpc-endpoint-type", "vpc-id"}}
)

type ec2Route struct {
	DestinationCidrBlock        string `xml:"destinationCidrBlock,omitempty"`
	DestinationIPv6CidrBlock    string `xml:"destinationIpv6CidrBlock,omitempty"`
	DestinationPrefixListID     string `xml:"destinationPrefixListId,omitempty"`
	GatewayID                   string `xml:"gatewayId,omitempty"`
	NatGatewayID                string `xml:"natGatewayId,omitempty"`
	TransitGatewayID            string `xml:"transitGatewayId,omitempty"`
	VpcPeeringConnectionID      string `xml:"vpcPeeringConnectionId,omitempty"`
	NetworkInterfaceID          string `xml:"networkInterfaceId,omitempty"`
	InstanceID                  string `xml:"instanceId,omitempty"`
	EgressOnlyInternetGatewayID string `xml:"egressOnlyInternetGatewayId,omitempty"`
	CarrierGatewayID            string `xml:"carrierGatewayId,omitempty"`
	LocalGatewayID              string `xml:"localGatewayId,omitempty"`
	CoreNetworkArn              string `xml:"coreNetworkArn,omitempty"`
	State                       string `xml:"state,omitempty"`
	Origin                      string `xml:"origin"`
}

// ec2RouteOf writes a route as EC2 does: its destination in the member of its kind (a prefix list, an
// IPv6 or IPv4 block) and its target in the member its id's prefix names; internet, virtual private and
// gateway-endpoint gateways (igw-, vgw-, vpce-) and "local" are all GatewayId. A route without a state
// is sent without one.
func ec2RouteOf(r facts.Route) ec2Route {
	out := ec2Route{State: r.State, Origin: "CreateRoute"}
	switch {
	case strings.HasPrefix(r.Destination, "pl-"):
		out.DestinationPrefixListID = r.Destination
	case strings.Contains(r.Destination, ":"):
		out.DestinationIPv6CidrBlock = r.Destination
	default:
		out.DestinationCidrBlock = r.Destination
	}
	switch t := r.Target; {
	case strings.HasPrefix(t, "nat-"):
		out.NatGatewayID = t
	case strings.HasPrefix(t, "tgw-"):
		out.TransitGatewayID = t
	case strings.HasPrefix(t, "pcx-"):
		out.VpcPeeringConnectionID = t
	case strings.HasPrefix(t, "eni-"):
		out.NetworkInterfaceID = t
	case strings.HasPrefix(t, "i-"):
		out.InstanceID = t
	case strings.HasPrefix(t, "eigw-"):
		out.EgressOnlyInternetGatewayID = t
	case strings.HasPrefix(t, "cagw-"):
		out.CarrierGatewayID = t
	case strings.HasPrefix(t, "lgw-"):
		out.LocalGatewayID = t
	case strings.HasPrefix(t, "arn:"):
		out.CoreNetworkArn = t
	default:
		out.GatewayID = t
		if t == "local" {
			out.Origin = "CreateRouteTable"
		}
	}
	return out
}

type ec2IPPermission struct {
	IPProtocol    string                 `xml:"ipProtocol"`
	FromPort      *int                   `xml:"fromPort,omitempty"`
	ToPort        *int                   `xml:"toPort,omitempty"`
	Groups        items[ec2GroupPair]    `xml:"groups"`
	IPRanges      items[ec2IPRange]      `xml:"ipRanges"`
	IPv6Ranges    items[ec2IPv6Range]    `xml:"ipv6Ranges"`
	PrefixListIDs items[ec2PrefixListID] `xml:"prefixListIds"`
}

type ec2GroupPair struct {
	UserID  string `xml:"userId"`
	GroupID string `xml:"groupId"`
}

type ec2IPRange struct {
	CidrIP string `xml:"cidrIp"`
}

type ec2IPv6Range struct {
	CidrIPv6 string `xml:"cidrIpv6"`
}

type ec2PrefixListID struct {
	PrefixListID string `xml:"prefixListId"`
}

// ipPermissions writes a group's rules in one direction as EC2's IpPermissions. A group whose rules the
// snapshot does not know is sent without any: EC2 has no way to say "unknown".
func ipPermissions(rules []facts.SecurityGroupRule, account string) items[ec2IPPermission] {
	var out items[ec2IPPermission]
	for _, r := range rules {
		p := ec2IPPermission{IPProtocol: r.Protocol, FromPort: r.FromPort, ToPort: r.ToPort}
		for _, g := range r.GroupIDs {
			p.Groups.Item = append(p.Groups.Item, ec2GroupPair{UserID: account, GroupID: g})
		}
		for _, c := range r.CIDRs {
			p.IPRanges.Item = append(p.IPRanges.Item, ec2IPRange{CidrIP: c})
		}
		for _, c := range r.IPv6CIDRs {
			p.IPv6Ranges.Item = append(p.IPv6Ranges.Item, ec2IPv6Range{CidrIPv6: c})
		}
		for _, pl := range r.PrefixListIDs {
			p.PrefixListIDs.Item = append(p.PrefixListIDs.Item, ec2PrefixListID{PrefixListID: pl})
		}
		out.Item = append(out.Item, p)
	}
	return out
}

// ec2Boolean is EC2's AttributeBooleanValue.
type ec2Boolean struct {
	Value bool `xml:"value"`
}

// clusterVPC is the VPC the vpc, natGateways and vpcEndpoints sections describe ("" when the snapshot
// does not know it).
func (wd *world) clusterVPC() string {
	if c := wd.cf.Cluster; c != nil {
		return c.VPCID
	}
	return ""
}

// vpcExists reports whether the snapshot shows VPC id: the cluster's, or one of a subnet or group.
func (wd *world) vpcExists(id string) bool {
	if id == wd.clusterVPC() {
		return true
	}
	if wd.cf.Subnets != nil && slices.ContainsFunc(*wd.cf.Subnets, func(s facts.Subnet) bool { return s.VPCID == id }) {
		return true
	}
	return wd.cf.SecurityGroups != nil && slices.ContainsFunc(*wd.cf.SecurityGroups, func(g facts.SecurityGroup) bool { return g.VPCID == id })
}

// vpcAttribute answers DescribeVpcAttribute for enableDnsSupport and enableDnsHostnames. The cluster's
// VPC has the vpc section's values; an attribute the section leaves out, and every attribute of another
// VPC, is answered without a value.
func (ec2API) vpcAttribute(w http.ResponseWriter, r *request, wd *world) error {
	vpc, attr := r.Form.Get("VpcId"), r.Form.Get("Attribute")
	switch {
	case vpc == "":
		return badRequest("MissingParameter", "The request must contain the parameter vpcId")
	case attr == "":
		return badRequest("MissingParameter", "The request must contain the parameter attribute")
	case attr != "enableDnsSupport" && attr != "enableDnsHostnames":
		return badRequest("InvalidParameterValue", "Value (%s) for parameter attribute is invalid: fakeaws serves enableDnsSupport and enableDnsHostnames", attr)
	case !strings.HasPrefix(vpc, "vpc-"):
		return badRequest("InvalidVpcID.Malformed", "Invalid id: %q", vpc)
	}
	v := wd.cf.VPC
	if v == nil {
		return denied(r, wd)
	}
	if !wd.vpcExists(vpc) {
		return badRequest("InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", vpc)
	}
	out := struct {
		RequestID          string      `xml:"requestId"`
		VpcID              string      `xml:"vpcId"`
		EnableDNSSupport   *ec2Boolean `xml:"enableDnsSupport,omitempty"`
		EnableDNSHostnames *ec2Boolean `xml:"enableDnsHostnames,omitempty"`
	}{RequestID: r.id, VpcID: vpc}
	if vpc == wd.clusterVPC() {
		switch {
		case attr == "enableDnsSupport" && v.EnableDNSSupport != nil:
			out.EnableDNSSupport = &ec2Boolean{*v.EnableDNSSupport}
		case attr == "enableDnsHostnames" && v.EnableDNSHostnames != nil:
			out.EnableDNSHostnames = &ec2Boolean{*v.EnableDNSHostnames}
		}
	}
	return writeEC2(w, r, out)
}

type ec2NatGateway struct {
	NatGatewayID         string               `xml:"natGatewayId"`
	VpcID                string               `xml:"vpcId,omitempty"`
	State                string               `xml:"state,omitempty"`
	ConnectivityType     string               `xml:"connectivityType,omitempty"`
	NatGatewayAddressSet items[ec2NatAddress] `xml:"natGatewayAddressSet"`
}

type ec2NatAddress struct {
	PublicIP  string `xml:"publicIp"`
	IsPrimary bool   `xml:"isPrimary"`
}

// natGateways answers DescribeNatGateways from the natGateways section, every gateway in the cluster's
// VPC.
func (ec2API) natGateways(w http.ResponseWriter, r *request, wd *world, p *ec2Request) error {
	if wd.cf.NATGateways == nil {
		return denied(r, wd)
	}
	all := *wd.cf.NATGateways
	for _, id := range p.ids {
		if !slices.ContainsFunc(all, func(n facts.NATGateway) bool { return n.ID == id }) {
			return badRequest("NatGatewayNotFound", "The Nat Gateway %s was not found", id)
		}
	}
	vpc := wd.clusterVPC()
	var out []ec2NatGateway
	for _, n := range all {
		if len(p.ids) > 0 && !slices.Contains(p.ids, n.ID) {
			continue
		}
		ok := p.matches(func(name string) []string {
			switch name {
			case "nat-gateway-id":
				return []string{n.ID}
			case "state":
				return nonEmpty(n.State)
			case "vpc-id":
				return nonEmpty(vpc)
			}
			return tagFilter(name, nil) // the section holds no subnets or tags
		})
		if !ok {
			continue
		}
		g := ec2NatGateway{NatGatewayID: n.ID, VpcID: vpc, State: n.State, ConnectivityType: n.ConnectivityType}
		for i, ip := range n.PublicIPs {
			g.NatGatewayAddressSet.Item = append(g.NatGatewayAddressSet.Item, ec2NatAddress{PublicIP: ip, IsPrimary: i == 0})
		}
		out = append(out, g)
	}
	got, next := page("ec2:"+r.op, out, p.offset, p.size)
	return writeEC2(w, r, struct {
		RequestID     string               `xml:"requestId"`
		NatGatewaySet items[ec2NatGateway] `xml:"natGatewaySet"`
		NextToken     string               `xml:"nextToken,omitempty"`
	}{RequestID: r.id, NatGatewaySet: items[ec2NatGateway]{got}, NextToken: next})
}

type ec2VpcEndpoint struct {
	VpcEndpointID     string                `xml:"vpcEndpointId"`
	VpcEndpointType   string                `xml:"vpcEndpointType,omitempty"`
	VpcID             string                `xml:"vpcId,omitempty"`
	ServiceName       string                `xml:"serviceName"`
	State             string                `xml:"state,omitempty"`
	RouteTableIDSet   items[string]         `xml:"routeTableIdSet"`
	GroupSet          items[ec2GroupOfVPCE] `xml:"groupSet"`
	PrivateDNSEnabled *bool                 `xml:"privateDnsEnabled,omitempty"`
	OwnerID           string                `xml:"ownerId"`
}

type ec2GroupOfVPCE struct {
	GroupID string `xml:"groupId"`
}

// vpcEndpoints answers DescribeVpcEndpoints from the vpcEndpoints section, every endpoint in the
// cluster's VPC.
func (ec2API) vpcEndpoints(w http.ResponseWriter, r *request, wd *world, p *ec2Request) error {
	if wd.cf.VPCEndpoints == nil {
		return denied(r, wd)
	}
	all := *wd.cf.VPCEndpoints
	for _, id := range p.ids {
		if !slices.ContainsFunc(all, func(e facts.VPCEndpoint) bool { return e.ID == id }) {
			return badRequest("InvalidVpcEndpointId.NotFound", "The Vpc Endpoint Id '%s' does not exist", id)
		}
	}
	vpc := wd.clusterVPC()
	var out []ec2VpcEndpoint
	for _, e := range all {
		if len(p.ids) > 0 && !slices.Contains(p.ids, e.ID) {
			continue
		}
		ok := p.matches(func(name string) []string {
			switch name {
			case "service-name":
				return []string{e.ServiceName}
			case "vpc-endpoint-id":
				return []string{e.ID}
			case "vpc-endpoint-state":
				return nonEmpty(e.State)
			case "vpc-endpoint-type":
				return nonEmpty(e.Type)
			case "vpc-id":
				return nonEmpty(vpc)
			case "ip-address-type":
				return []string{"ipv4"}
			}
			return tagFilter(name, nil) // the section holds no tags
		})
		if !ok {
			continue
		}
		ve := ec2VpcEndpoint{VpcEndpointID: e.ID, VpcEndpointType: e.Type, VpcID: vpc, ServiceName: e.ServiceName, State: e.State,
			RouteTableIDSet: items[string]{e.RouteTableIDs}, PrivateDNSEnabled: e.PrivateDNSEnabled, OwnerID: wd.account}
		for _, g := range e.SecurityGroupIDs {
			ve.GroupSet.Item = append(ve.GroupSet.Item, ec2GroupOfVPCE{GroupID: g})
		}
		out = append(out, ve)
	}
	got, next := page("ec2:"+r.op, out, p.offset, p.size)
	return writeEC2(w, r, struct {
		RequestID      string                `xml:"requestId"`
		VpcEndpointSet items[ec2VpcEndpoint] `xml:"vpcEndpointSet"`
		NextToken      string                `xml:"nextToken,omitempty"`
	}{RequestID: r.id, VpcEndpointSet: items[ec2VpcEndpoint]{got}, NextToken: next})
}
