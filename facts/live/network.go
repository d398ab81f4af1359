package live

import (
	"context"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// networkKnown answers Known for the facts of the cluster's VPC by asking them: one question answers
// each whole fact.
func (p *Provider) networkKnown(ctx context.Context, f facts.Fact) error {
	var err error
	switch f {
	case facts.VPC:
		_, err = p.VPC(ctx)
	case facts.NATGateways:
		_, err = p.NATGateways(ctx)
	case facts.VPCEndpoints:
		_, err = p.VPCEndpoints(ctx)
	}
	return err
}

// clusterVPC returns the cluster's VPC (EKS DescribeCluster), whose facts f is one of.
func (p *Provider) clusterVPC(ctx context.Context, f facts.Fact) (string, error) {
	c, err := p.eks.Cluster(ctx)
	if err != nil {
		return "", awscall.Unknown(f, err)
	}
	if c.VPCID == "" {
		return "", facts.Unknown(f, "EKS DescribeCluster gave no VPC for the cluster")
	}
	return c.VPCID, nil
}

// VPC implements facts.Provider with EC2 DescribeVpcAttribute (enableDnsSupport, enableDnsHostnames)
// of the cluster's VPC.
func (p *Provider) VPC(ctx context.Context) (*facts.VPCAttributes, error) {
	vpc, err := p.clusterVPC(ctx, facts.VPC)
	if err != nil {
		return nil, err
	}
	return p.ec2.VPC(ctx, vpc)
}

// NATGateways implements facts.Provider with EC2 DescribeNatGateways of the cluster's VPC.
func (p *Provider) NATGateways(ctx context.Context) ([]facts.NATGateway, error) {
	vpc, err := p.clusterVPC(ctx, facts.NATGateways)
	if err != nil {
		return nil, err
	}
	return p.ec2.NATGateways(ctx, vpc)
}

// VPCEndpoints implements facts.Provider with EC2 DescribeVpcEndpoints of the cluster's VPC.
func (p *Provider) VPCEndpoints(ctx context.Context) ([]facts.VPCEndpoint, error) {
	vpc, err := p.clusterVPC(ctx, facts.VPCEndpoints)
	if err != nil {
		return nil, err
	}
	return p.ec2.VPCEndpoints(ctx, vpc)
}
