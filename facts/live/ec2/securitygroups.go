package ec2

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// SecurityGroups returns the security groups term selects, with EC2 DescribeSecurityGroups, each with
// its rules (IpPermissions, IpPermissionsEgress): EC2 always answers them, so they are known, even
// when there are none.
func (p *Provider) SecurityGroups(ctx context.Context, term facts.SelectorTerm) ([]facts.SecurityGroup, error) {
	q := awscall.Question{Fact: facts.SecurityGroups, Action: "ec2:DescribeSecurityGroups", Key: term.String()}
	return awscall.Lookup(ctx, p.caller, p.groups, q, func(ctx context.Context) ([]facts.SecurityGroup, bool, error) {
		var out []facts.SecurityGroup
		pages := ec2.NewDescribeSecurityGroupsPaginator(p.api, &ec2.DescribeSecurityGroupsInput{Filters: groupFilters(term), MaxResults: aws.Int32(1000)})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, false, err
			}
			for _, g := range page.SecurityGroups {
				out = append(out, facts.SecurityGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName), VPCID: aws.ToString(g.VpcId), Tags: tagMap(g.Tags),
					SecurityGroupRules: facts.SecurityGroupRules{Ingress: groupRules(g.IpPermissions), Egress: groupRules(g.IpPermissionsEgress)}})
			}
		}
		facts.SortSecurityGroups(out) // in the snapshot provider's order
		return out, len(out) == 0, nil
	})
}

// groupRules are a group's permissions in one direction, never nil: a group read from EC2 has known
// rules (facts.SecurityGroup.RulesKnown). Ports are as EC2 gives them (none for protocol -1).
func groupRules(perms []ec2types.IpPermission) []facts.SecurityGroupRule {
	out := make([]facts.SecurityGroupRule, 0, len(perms))
	for _, p := range perms {
		r := facts.SecurityGroupRule{Protocol: aws.ToString(p.IpProtocol), FromPort: port(p.FromPort), ToPort: port(p.ToPort)}
		for _, g := range p.UserIdGroupPairs {
			r.GroupIDs = append(r.GroupIDs, aws.ToString(g.GroupId))
		}
		for _, c := range p.IpRanges {
			r.CIDRs = append(r.CIDRs, aws.ToString(c.CidrIp))
		}
		for _, c := range p.Ipv6Ranges {
			r.IPv6CIDRs = append(r.IPv6CIDRs, aws.ToString(c.CidrIpv6))
		}
		for _, pl := range p.PrefixListIds {
			r.PrefixListIDs = append(r.PrefixListIDs, aws.ToString(pl.PrefixListId))
		}
		out = append(out, r)
	}
	return out
}

func port(p *int32) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}
