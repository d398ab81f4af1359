package ec2

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// Subnets returns the subnets term selects, with EC2 DescribeSubnets (their zone ids, CIDR blocks and
// free addresses among the rest); each subnet's route table, its routes and whether it is public come
// from the route tables of its VPC (DescribeRouteTables, cached per VPC).
func (p *Provider) Subnets(ctx context.Context, term facts.SelectorTerm) ([]facts.Subnet, error) {
	q := awscall.Question{Fact: facts.Subnets, Action: "ec2:DescribeSubnets", Key: term.String()}
	subnets, err := awscall.Lookup(ctx, p.caller, p.subnets, q, func(ctx context.Context) ([]facts.Subnet, bool, error) {
		var out []facts.Subnet
		pages := ec2.NewDescribeSubnetsPaginator(p.api, &ec2.DescribeSubnetsInput{Filters: subnetFilters(term), MaxResults: aws.Int32(1000)})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, false, err
			}
			for _, s := range page.Subnets {
				sn := facts.Subnet{
					ID: aws.ToString(s.SubnetId), VPCID: aws.ToString(s.VpcId), AvailabilityZone: aws.ToString(s.AvailabilityZone),
					MapPublicIPOnLaunch: aws.ToBool(s.MapPublicIpOnLaunch), Tags: tagMap(s.Tags),
				}
				sn.AvailabilityZoneID, sn.CIDRBlock = aws.ToString(s.AvailabilityZoneId), aws.ToString(s.CidrBlock)
				if n := s.AvailableIpAddressCount; n != nil {
					free := int(*n)
					sn.AvailableIPAddressCount = &free
				}
				out = append(out, sn)
			}
		}
		facts.SortSubnets(out) // in the snapshot provider's order
		return out, len(out) == 0, nil
	})
	if err != nil {
		return nil, err
	}
	// Give each subnet its table on a copy: the cached list is shared.
	out := make([]facts.Subnet, len(subnets))
	byVPC := map[string]routes{}
	for i, s := range subnets {
		tables, ok := byVPC[s.VPCID]
		if !ok {
			if tables, err = p.routeTables(ctx, s.VPCID); err != nil {
				return nil, awscall.Unknown(facts.Subnets, err)
			}
			byVPC[s.VPCID] = tables
		}
		if t := tables.of(s.ID); t != nil {
			s.Public, s.RouteTableID, s.Routes = t.public, t.id, t.routes
		}
		out[i] = s
	}
	return out, nil
}

// routeTable is a route table as the rules read it: its routes but local, and whether one of them
// goes to an internet gateway.
type routeTable struct {
	id     string
	routes []facts.Route // shared by every subnet of the table: never modified
	public bool
}

// routes are a VPC's route tables: the main one, and those explicitly associated with a subnet.
type routes struct {
	main     *routeTable
	explicit map[string]*routeTable // by subnet id
}

// of returns the table of a subnet: the one explicitly associated with it, else the VPC's main table
// (nil when the VPC has none).
func (r routes) of(subnet string) *routeTable {
	if t, ok := r.explicit[subnet]; ok {
		return t
	}
	return r.main
}

// routeTables reads a VPC's route tables once per TTL. A subnet is public when its table has a route
// to an igw- gateway.
func (p *Provider) routeTables(ctx context.Context, vpc string) (routes, error) {
	q := awscall.Question{Fact: facts.Subnets, Action: "ec2:DescribeRouteTables", Key: vpc}
	return awscall.Lookup(ctx, p.caller, p.routes, q, func(ctx context.Context) (routes, bool, error) {
		r := routes{explicit: map[string]*routeTable{}}
		pages := ec2.NewDescribeRouteTablesPaginator(p.api, &ec2.DescribeRouteTablesInput{
			Filters: []ec2types.Filter{filter("vpc-id", vpc)}, MaxResults: aws.Int32(100),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return routes{}, false, err
			}
			for _, rt := range page.RouteTables {
				t := &routeTable{id: aws.ToString(rt.RouteTableId)}
				for _, route := range rt.Routes {
					t.public = t.public || strings.HasPrefix(aws.ToString(route.GatewayId), "igw-")
					if fr, ok := routeOf(route); ok {
						t.routes = append(t.routes, fr)
					}
				}
				for _, a := range rt.Associations {
					if aws.ToBool(a.Main) {
						r.main = t
					}
					if id := aws.ToString(a.SubnetId); id != "" {
						r.explicit[id] = t
					}
				}
			}
		}
		return r, false, nil
	})
}

// routeOf is a route as a snapshot holds it, false for the local route: its destination (an IPv4
// or IPv6 block, or a prefix list), its target (the one id EC2 fills among the route's gateway, NAT
// gateway, transit gateway, peering, network interface, instance and the rarer kinds) and its state.
func routeOf(r ec2types.Route) (facts.Route, bool) {
	target := firstOf(r.GatewayId, r.NatGatewayId, r.TransitGatewayId, r.VpcPeeringConnectionId, r.NetworkInterfaceId, r.InstanceId,
		r.EgressOnlyInternetGatewayId, r.CarrierGatewayId, r.LocalGatewayId, r.CoreNetworkArn, r.OdbNetworkArn)
	if target == "local" {
		return facts.Route{}, false
	}
	if target == "" {
		target = unknownTarget
	}
	return facts.Route{
		Destination: firstOf(r.DestinationCidrBlock, r.DestinationPrefixListId, r.DestinationIpv6CidrBlock),
		Target:      target, State: string(r.State),
	}, true
}

// unknownTarget is the target of a route whose target is none of the kinds EC2 documents: kept, so that
// the rules see a route they do not model (which never denies) rather than none.
const unknownTarget = "unknown"

// firstOf returns the first of ids that is set, or "".
func firstOf(ids ...*string) string {
	for _, id := range ids {
		if v := aws.ToString(id); v != "" {
			return v
		}
	}
	return ""
}
