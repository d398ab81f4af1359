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

// Subnets returns the subnets term selects, with EC2 DescribeSubnets; whether each is public comes
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
				out = append(out, facts.Subnet{
					ID: aws.ToString(s.SubnetId), VPCID: aws.ToString(s.VpcId), AvailabilityZone: aws.ToString(s.AvailabilityZone),
					MapPublicIPOnLaunch: aws.ToBool(s.MapPublicIpOnLaunch), Tags: tagMap(s.Tags),
				})
			}
		}
		facts.SortSubnets(out) // in the snapshot provider's order
		return out, len(out) == 0, nil
	})
	if err != nil {
		return nil, err
	}
	// Mark public subnets on a copy: the cached list is shared.
	out := make([]facts.Subnet, len(subnets))
	byVPC := map[string]routes{}
	for i, s := range subnets {
		public, ok := byVPC[s.VPCID]
		if !ok {
			if public, err = p.publicSubnets(ctx, s.VPCID); err != nil {
				return nil, awscall.Unknown(facts.Subnets, err)
			}
			byVPC[s.VPCID] = public
		}
		s.Public = public.isPublic(s.ID)
		out[i] = s
	}
	return out, nil
}

// routes is what a VPC's route tables say about reaching the internet.
type routes struct {
	mainPublic bool            // the main table routes to an internet gateway
	explicit   map[string]bool // subnet id → its explicitly associated table routes to one
}

func (r routes) isPublic(subnet string) bool {
	if pub, ok := r.explicit[subnet]; ok {
		return pub
	}
	return r.mainPublic
}

// publicSubnets reads a VPC's route tables once per TTL: a subnet is public when its table (the one
// explicitly associated with it, else the VPC's main table) has a route to an igw- gateway.
func (p *Provider) publicSubnets(ctx context.Context, vpc string) (routes, error) {
	q := awscall.Question{Fact: facts.Subnets, Action: "ec2:DescribeRouteTables", Key: vpc}
	return awscall.Lookup(ctx, p.caller, p.routes, q, func(ctx context.Context) (routes, bool, error) {
		r := routes{explicit: map[string]bool{}}
		pages := ec2.NewDescribeRouteTablesPaginator(p.api, &ec2.DescribeRouteTablesInput{
			Filters: []ec2types.Filter{filter("vpc-id", vpc)}, MaxResults: aws.Int32(100),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return routes{}, false, err
			}
			for _, rt := range page.RouteTables {
				igw := false
				for _, route := range rt.Routes {
					igw = igw || strings.HasPrefix(aws.ToString(route.GatewayId), "igw-")
				}
				for _, a := range rt.Associations {
					if aws.ToBool(a.Main) {
						r.mainPublic = igw
					}
					if id := aws.ToString(a.SubnetId); id != "" {
						r.explicit[id] = igw
					}
				}
			}
		}
		return r, false, nil
	})
}
