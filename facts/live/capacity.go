package live

import (
	"context"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// capacityKnown answers Known for the KMS keys, service quotas, capacity reservations and instance
// types: the two lookups from a permission probe (whether DescribeKey and GetServiceQuota are
// granted), the two lists by asking for them.
func (p *Provider) capacityKnown(ctx context.Context, f facts.Fact) error {
	switch f {
	case facts.KMSKeys:
		return p.kms.Known(ctx, f)
	case facts.ServiceQuotas:
		return p.serviceQuotas.Known(ctx, f)
	case facts.CapacityReservations:
		return p.capacityReservations.Known(ctx, f)
	case facts.InstanceTypes:
		return p.instanceTypes.Known(ctx, f)
	}
	return nil
}

// KMSKey implements facts.Provider with KMS DescribeKey of the reference as written: NotFoundException
// is Found false, AccessDeniedException (the key policy refuses the guard) is Error
// facts.KMSAccessDenied.
func (p *Provider) KMSKey(ctx context.Context, ref string) (*facts.KMSKey, error) {
	return p.kms.Key(ctx, ref)
}

// ServiceQuota implements facts.Provider with Service Quotas GetServiceQuota (the applied value; a
// quota without one is unknown).
func (p *Provider) ServiceQuota(ctx context.Context, code string) (int, error) {
	return p.serviceQuotas.Quota(ctx, code)
}

// CapacityReservations implements facts.Provider with EC2 DescribeCapacityReservations (state active),
// in the clients' region.
func (p *Provider) CapacityReservations(ctx context.Context) ([]facts.CapacityReservation, error) {
	return p.capacityReservations.Active(ctx)
}

// InstanceTypes implements facts.Provider with EC2 DescribeInstanceTypes and
// DescribeInstanceTypeOfferings, in the clients' region, refreshed in the background once had.
func (p *Provider) InstanceTypes(ctx context.Context) ([]facts.InstanceType, error) {
	return p.instanceTypes.InstanceTypes(ctx)
}
