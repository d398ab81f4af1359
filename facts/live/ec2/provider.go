// Package ec2 is the live provider's EC2 concept: the images, subnets (with their route tables and
// routes) and security groups (with their rules) that selector terms select, the account's EBS
// encryption by default, and a VPC's DNS attributes, NAT gateways and endpoints, each kind of answer
// in a cache of its own, and the permission probes that tell whether they can be asked at all.
//
// A selector term becomes EC2 filters with the semantics facts.MatchImage and its peers give a
// snapshot, so that the live and the snapshot providers give the same answers for the same world.
package ec2

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// API is what the provider calls of EC2: the SDK's client, or anything with its methods.
type API interface {
	DescribeImages(context.Context, *ec2.DescribeImagesInput, ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error)
	DescribeSubnets(context.Context, *ec2.DescribeSubnetsInput, ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error)
	DescribeRouteTables(context.Context, *ec2.DescribeRouteTablesInput, ...func(*ec2.Options)) (*ec2.DescribeRouteTablesOutput, error)
	DescribeSecurityGroups(context.Context, *ec2.DescribeSecurityGroupsInput, ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error)
	GetEbsEncryptionByDefault(context.Context, *ec2.GetEbsEncryptionByDefaultInput, ...func(*ec2.Options)) (*ec2.GetEbsEncryptionByDefaultOutput, error)
	GetEbsDefaultKmsKeyId(context.Context, *ec2.GetEbsDefaultKmsKeyIdInput, ...func(*ec2.Options)) (*ec2.GetEbsDefaultKmsKeyIdOutput, error)
	DescribeVpcAttribute(context.Context, *ec2.DescribeVpcAttributeInput, ...func(*ec2.Options)) (*ec2.DescribeVpcAttributeOutput, error)
	DescribeNatGateways(context.Context, *ec2.DescribeNatGatewaysInput, ...func(*ec2.Options)) (*ec2.DescribeNatGatewaysOutput, error)
	DescribeVpcEndpoints(context.Context, *ec2.DescribeVpcEndpointsInput, ...func(*ec2.Options)) (*ec2.DescribeVpcEndpointsOutput, error)
}

// Provider answers facts.Images, facts.Subnets, facts.SecurityGroups, facts.EBSDefaults, and, for a
// VPC the caller names, facts.VPC, facts.NATGateways and facts.VPCEndpoints through its own caches.
// Close it to stop the fetches in flight.
type Provider struct {
	api    API
	caller awscall.Caller

	images  *cache.Cache[[]facts.Image]
	subnets *cache.Cache[[]facts.Subnet]
	routes  *cache.Cache[routes] // per VPC
	groups  *cache.Cache[[]facts.SecurityGroup]
	ebs     *cache.Cache[*facts.EBSEncryption]

	vpcs      *cache.Cache[*facts.VPCAttributes] // per VPC
	nats      *cache.Cache[[]facts.NATGateway]   // per VPC
	endpoints *cache.Cache[[]facts.VPCEndpoint]  // per VPC

	probes       map[facts.Fact]awscall.Probe
	probeAnswers *cache.Cache[bool]
}

// NewProvider returns a provider that asks api, caching its answers as opts say. It makes no call.
func NewProvider(api API, caller awscall.Caller, opts cache.Options) *Provider {
	return &Provider{
		api: api, caller: caller,
		images:  cache.New[[]facts.Image](opts),
		subnets: cache.New[[]facts.Subnet](opts),
		routes:  cache.New[routes](opts),
		groups:  cache.New[[]facts.SecurityGroup](opts),
		ebs:     cache.New[*facts.EBSEncryption](opts),

		vpcs:      cache.New[*facts.VPCAttributes](opts),
		nats:      cache.New[[]facts.NATGateway](opts),
		endpoints: cache.New[[]facts.VPCEndpoint](opts),

		probes:       newProbes(api),
		probeAnswers: cache.New[bool](opts),
	}
}

// Close stops the fetches in flight and waits for them.
func (p *Provider) Close() {
	p.images.Close()
	p.subnets.Close()
	p.routes.Close()
	p.groups.Close()
	p.ebs.Close()
	p.vpcs.Close()
	p.nats.Close()
	p.endpoints.Close()
	p.probeAnswers.Close()
}

// Known tells whether images, subnets and security groups can be had, from a permission probe
// (awscall.Probe) once per TTL, and the EBS defaults by asking them: one question answers the whole
// fact, so no probe could be cheaper. It returns nil for any other fact: those are not this
// provider's, or, for a VPC's facts, need the VPC the caller names (VPC, NATGateways, VPCEndpoints
// answer them).
func (p *Provider) Known(ctx context.Context, f facts.Fact) error {
	if f == facts.EBSDefaults {
		_, err := p.EBSDefaults(ctx)
		return err
	}
	probe, ok := p.probes[f]
	if !ok {
		return nil
	}
	return probe.Known(ctx, p.caller, p.probeAnswers, f)
}

// newProbes returns the probes of the EC2 facts: questions about ids that do not exist. Subnets need
// both the subnets and their route tables.
func newProbes(api API) map[facts.Fact]awscall.Probe {
	none := func(name, value string) []ec2types.Filter { return []ec2types.Filter{filter(name, value)} }
	return map[facts.Fact]awscall.Probe{
		facts.Images: {Action: "ec2:DescribeImages", Ask: func(ctx context.Context) error {
			_, err := api.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"self"}, Filters: none("image-id", "ami-00000000000000000")})
			return err
		}},
		facts.Subnets: {Action: "ec2:DescribeSubnets", Ask: func(ctx context.Context) error {
			if _, err := api.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: none("subnet-id", "subnet-00000000000000000")}); err != nil {
				return err
			}
			_, err := api.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: none("route-table-id", "rtb-00000000000000000")})
			if err != nil {
				return &awscall.CallError{Action: "ec2:DescribeRouteTables", Outcome: awscall.Classify(err), Err: err}
			}
			return nil
		}},
		facts.SecurityGroups: {Action: "ec2:DescribeSecurityGroups", Ask: func(ctx context.Context) error {
			_, err := api.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: none("group-id", "sg-00000000000000000")})
			return err
		}},
	}
}
