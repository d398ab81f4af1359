package ec2

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// SecurityGroups returns the security groups term selects, with EC2 DescribeSecurityGroups.
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
				out = append(out, facts.SecurityGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName), VPCID: aws.ToString(g.VpcId), Tags: tagMap(g.Tags)})
			}
		}
		facts.SortSecurityGroups(out) // in the snapshot provider's order
		return out, len(out) == 0, nil
	})
}
