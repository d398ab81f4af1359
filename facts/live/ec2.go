package live

import (
	"context"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// Images implements facts.Provider with EC2 DescribeImages: the term's fields become filters (name,
// image-id, tag:KEY or tag-key for "*", state=available) and its owners the Owner parameter, which
// gives EC2 the semantics facts.MatchImage gives a snapshot. An ssmParameter term is resolved first.
func (p *Provider) Images(ctx context.Context, t facts.ImageTerm) ([]facts.Image, error) {
	t, ok, err := facts.ResolveImageTerm(ctx, p, t)
	if err != nil || !ok {
		return nil, err
	}
	owners := t.Owners()
	if owners != nil && len(owners) == 0 {
		return nil, nil // an owner of commas only: no owner, no image
	}
	return lookup(ctx, p, facts.Images, "ec2:DescribeImages", t.String(), func(ctx context.Context) ([]facts.Image, bool, error) {
		var out []facts.Image
		pages := ec2.NewDescribeImagesPaginator(p.opts.Clients.EC2, &ec2.DescribeImagesInput{
			Filters: imageFilters(t), Owners: owners, IncludeDeprecated: aws.Bool(true), MaxResults: aws.Int32(1000),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, false, err
			}
			for _, img := range page.Images {
				out = append(out, facts.Image{
					ID: aws.ToString(img.ImageId), Name: aws.ToString(img.Name), OwnerID: aws.ToString(img.OwnerId),
					OwnerAlias: aws.ToString(img.ImageOwnerAlias), Architecture: string(img.Architecture),
					State: string(img.State), CreationDate: aws.ToString(img.CreationDate), Tags: tagMap(img.Tags),
				})
			}
		}
		return out, len(out) == 0, nil
	})
}

// Subnets implements facts.Provider with EC2 DescribeSubnets; whether each is public comes from the
// route tables of its VPC (DescribeRouteTables).
func (p *Provider) Subnets(ctx context.Context, t facts.SelectorTerm) ([]facts.Subnet, error) {
	subnets, err := lookup(ctx, p, facts.Subnets, "ec2:DescribeSubnets", t.String(), func(ctx context.Context) ([]facts.Subnet, bool, error) {
		var out []facts.Subnet
		pages := ec2.NewDescribeSubnetsPaginator(p.opts.Clients.EC2, &ec2.DescribeSubnetsInput{Filters: subnetFilters(t), MaxResults: aws.Int32(1000)})
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
				return nil, unknown(facts.Subnets, err)
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
	return lookup(ctx, p, facts.Subnets, "ec2:DescribeRouteTables", vpc, func(ctx context.Context) (routes, bool, error) {
		r := routes{explicit: map[string]bool{}}
		pages := ec2.NewDescribeRouteTablesPaginator(p.opts.Clients.EC2, &ec2.DescribeRouteTablesInput{
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

// SecurityGroups implements facts.Provider with EC2 DescribeSecurityGroups.
func (p *Provider) SecurityGroups(ctx context.Context, t facts.SelectorTerm) ([]facts.SecurityGroup, error) {
	return lookup(ctx, p, facts.SecurityGroups, "ec2:DescribeSecurityGroups", t.String(), func(ctx context.Context) ([]facts.SecurityGroup, bool, error) {
		var out []facts.SecurityGroup
		pages := ec2.NewDescribeSecurityGroupsPaginator(p.opts.Clients.EC2, &ec2.DescribeSecurityGroupsInput{Filters: groupFilters(t), MaxResults: aws.Int32(1000)})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, false, err
			}
			for _, g := range page.SecurityGroups {
				out = append(out, facts.SecurityGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName), VPCID: aws.ToString(g.VpcId), Tags: tagMap(g.Tags)})
			}
		}
		return out, len(out) == 0, nil
	})
}

func filter(name string, values ...string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String(name), Values: values}
}

// imageFilters are the EC2 filters of an AMI term (its owners go in the Owner parameter): built in the
// fetch, so that a cached answer costs nothing.
func imageFilters(t facts.ImageTerm) []ec2types.Filter {
	filters := []ec2types.Filter{filter("state", "available")}
	if t.ID != "" {
		filters = append(filters, filter("image-id", t.ID))
	}
	if t.Name != "" {
		filters = append(filters, filter("name", t.Name))
	}
	return append(filters, tagFilters(t.Tags)...)
}

// subnetFilters are the EC2 filters of a subnet term: an id selects alone, as in Karpenter.
func subnetFilters(t facts.SelectorTerm) []ec2types.Filter {
	if t.ID != "" {
		return []ec2types.Filter{filter("subnet-id", t.ID)}
	}
	return tagFilters(t.Tags)
}

// groupFilters are the EC2 filters of a security-group term: an id selects alone.
func groupFilters(t facts.SelectorTerm) []ec2types.Filter {
	if t.ID != "" {
		return []ec2types.Filter{filter("group-id", t.ID)}
	}
	var filters []ec2types.Filter
	if t.Name != "" {
		filters = append(filters, filter("group-name", t.Name))
	}
	return append(filters, tagFilters(t.Tags)...)
}

// tagFilters turns selector tags into EC2 filters: tag:KEY=pattern, or tag-key=KEY for "*" (any value).
func tagFilters(tags map[string]string) []ec2types.Filter {
	var out []ec2types.Filter
	for _, k := range sortedKeys(tags) {
		if tags[k] == "*" {
			out = append(out, filter("tag-key", k))
		} else {
			out = append(out, filter("tag:"+k, tags[k]))
		}
	}
	return out
}

func tagMap(tags []ec2types.Tag) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
