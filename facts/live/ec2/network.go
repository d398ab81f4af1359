package ec2

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// The facts of a VPC as a whole: its DNS attributes, NAT gateways and endpoints. Each is one fact
// answered by one question per VPC (the cluster's), cached for the TTL (an empty list for the negative
// TTL); Known asks that question, since no probe could be cheaper.

// VPC returns vpc's DNS attributes, with EC2 DescribeVpcAttribute asked for enableDnsSupport, then for
// enableDnsHostnames. When either call fails, or answers without its value, the fact is unknown with
// that call's reason.
func (p *Provider) VPC(ctx context.Context, vpc string) (*facts.VPCAttributes, error) {
	q := awscall.Question{Fact: facts.VPC, Action: "ec2:DescribeVpcAttribute", Key: vpc}
	return awscall.Lookup(ctx, p.caller, p.vpcs, q, func(ctx context.Context) (*facts.VPCAttributes, bool, error) {
		support, err := p.vpcAttribute(ctx, vpc, ec2types.VpcAttributeNameEnableDnsSupport)
		if err != nil {
			return nil, false, err
		}
		hostnames, err := p.vpcAttribute(ctx, vpc, ec2types.VpcAttributeNameEnableDnsHostnames)
		if err != nil {
			return nil, false, err
		}
		return &facts.VPCAttributes{EnableDNSSupport: support, EnableDNSHostnames: hostnames}, false, nil
	})
}

// vpcAttribute asks one boolean attribute of vpc.
func (p *Provider) vpcAttribute(ctx context.Context, vpc string, name ec2types.VpcAttributeName) (*bool, error) {
	out, err := p.api.DescribeVpcAttribute(ctx, &ec2.DescribeVpcAttributeInput{VpcId: aws.String(vpc), Attribute: name})
	if err != nil {
		return nil, err // worded by Lookup, with the question's action (the two calls share it)
	}
	v := out.EnableDnsSupport
	if name == ec2types.VpcAttributeNameEnableDnsHostnames {
		v = out.EnableDnsHostnames
	}
	if v == nil || v.Value == nil {
		return nil, awscall.NewCallError("ec2:DescribeVpcAttribute", fmt.Errorf("the answer does not give %s of %s", name, vpc), p.caller.Budget)
	}
	return aws.Bool(*v.Value), nil
}

// NATGateways returns the NAT gateways of vpc, in every state EC2 lists, with EC2 DescribeNatGateways
// (filter vpc-id).
func (p *Provider) NATGateways(ctx context.Context, vpc string) ([]facts.NATGateway, error) {
	q := awscall.Question{Fact: facts.NATGateways, Action: "ec2:DescribeNatGateways", Key: vpc}
	return awscall.Lookup(ctx, p.caller, p.nats, q, func(ctx context.Context) ([]facts.NATGateway, bool, error) {
		var out []facts.NATGateway
		pages := ec2.NewDescribeNatGatewaysPaginator(p.api, &ec2.DescribeNatGatewaysInput{
			Filter: []ec2types.Filter{filter("vpc-id", vpc)}, MaxResults: aws.Int32(1000),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, false, err
			}
			for _, n := range page.NatGateways {
				g := facts.NATGateway{ID: aws.ToString(n.NatGatewayId), State: string(n.State), ConnectivityType: string(n.ConnectivityType)}
				for _, a := range n.NatGatewayAddresses {
					if ip := aws.ToString(a.PublicIp); ip != "" {
						g.PublicIPs = append(g.PublicIPs, ip)
					}
				}
				out = append(out, g)
			}
		}
		return out, len(out) == 0, nil
	})
}

// VPCEndpoints returns the endpoints of vpc, in every state EC2 lists, with EC2 DescribeVpcEndpoints
// (filter vpc-id).
func (p *Provider) VPCEndpoints(ctx context.Context, vpc string) ([]facts.VPCEndpoint, error) {
	q := awscall.Question{Fact: facts.VPCEndpoints, Action: "ec2:DescribeVpcEndpoints", Key: vpc}
	return awscall.Lookup(ctx, p.caller, p.endpoints, q, func(ctx context.Context) ([]facts.VPCEndpoint, bool, error) {
		var out []facts.VPCEndpoint
		pages := ec2.NewDescribeVpcEndpointsPaginator(p.api, &ec2.DescribeVpcEndpointsInput{
			Filters: []ec2types.Filter{filter("vpc-id", vpc)}, MaxResults: aws.Int32(1000),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, false, err
			}
			for _, e := range page.VpcEndpoints {
				ve := facts.VPCEndpoint{
					ID: aws.ToString(e.VpcEndpointId), ServiceName: aws.ToString(e.ServiceName), Type: string(e.VpcEndpointType),
					State: string(e.State), PrivateDNSEnabled: e.PrivateDnsEnabled, RouteTableIDs: nilIfEmpty(e.RouteTableIds),
				}
				for _, g := range e.Groups {
					ve.SecurityGroupIDs = append(ve.SecurityGroupIDs, aws.ToString(g.GroupId))
				}
				out = append(out, ve)
			}
		}
		return out, len(out) == 0, nil
	})
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
