package live

import (
	"context"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// notReadLive is the reason for the network and capacity facts this provider does not ask AWS for
// yet: rules that need them are reported as not evaluated, never passed.
const notReadLive = "the live provider does not read this fact yet"

// networkKnown answers Known for the network and capacity facts.
func (p *Provider) networkKnown(_ context.Context, f facts.Fact) error {
	return facts.Unknown(f, notReadLive)
}

// VPC implements facts.Provider.
func (p *Provider) VPC(context.Context) (*facts.VPCAttributes, error) {
	return nil, facts.Unknown(facts.VPC, notReadLive)
}

// NATGateways implements facts.Provider.
func (p *Provider) NATGateways(context.Context) ([]facts.NATGateway, error) {
	return nil, facts.Unknown(facts.NATGateways, notReadLive)
}

// VPCEndpoints implements facts.Provider.
func (p *Provider) VPCEndpoints(context.Context) ([]facts.VPCEndpoint, error) {
	return nil, facts.Unknown(facts.VPCEndpoints, notReadLive)
}
