package live

import (
	"context"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// capacityKnown answers Known for the KMS keys, service quotas, capacity reservations and instance
// types.
func (p *Provider) capacityKnown(_ context.Context, f facts.Fact) error {
	return facts.Unknown(f, notReadLive)
}

// KMSKey implements facts.Provider.
func (p *Provider) KMSKey(context.Context, string) (*facts.KMSKey, error) {
	return nil, facts.Unknown(facts.KMSKeys, notReadLive)
}

// ServiceQuota implements facts.Provider.
func (p *Provider) ServiceQuota(context.Context, string) (int, error) {
	return 0, facts.Unknown(facts.ServiceQuotas, notReadLive)
}

// CapacityReservations implements facts.Provider.
func (p *Provider) CapacityReservations(context.Context) ([]facts.CapacityReservation, error) {
	return nil, facts.Unknown(facts.CapacityReservations, notReadLive)
}

// InstanceTypes implements facts.Provider.
func (p *Provider) InstanceTypes(context.Context) ([]facts.InstanceType, error) {
	return nil, facts.Unknown(facts.InstanceTypes, notReadLive)
}
