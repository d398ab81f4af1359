// Package capacityreservation is the live provider's capacity-reservation concept: the region's
// active EC2 capacity reservations (the account's own and those shared with it), listed once per TTL
// in a cache of their own, as Karpenter's capacity-reservation provider lists the ones its selector
// terms match.
package capacityreservation

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// API is what the provider calls of EC2: the SDK's client, or anything with its methods.
type API interface {
	DescribeCapacityReservations(context.Context, *ec2.DescribeCapacityReservationsInput, ...func(*ec2.Options)) (*ec2.DescribeCapacityReservationsOutput, error)
}

// pageSize is the most reservations EC2 returns per page.
const pageSize = 1000

// Provider answers facts.CapacityReservations through its own cache. Close it to stop the fetch in
// flight.
type Provider struct {
	api    API
	caller awscall.Caller
	region string
	active *cache.Cache[[]facts.CapacityReservation]
}

// NewProvider returns a provider that asks api, whose region is region, caching its answers as opts
// say. It makes no call.
func NewProvider(api API, region string, caller awscall.Caller, opts cache.Options) *Provider {
	if region == "" {
		region = "region"
	}
	return &Provider{api: api, caller: caller, region: region, active: cache.New[[]facts.CapacityReservation](opts)}
}

// Close stops the fetch in flight and waits for it.
func (p *Provider) Close() { p.active.Close() }

// Active returns the region's active capacity reservations with EC2 DescribeCapacityReservations
// (filter state=active, every page), in the order EC2 lists them. The list is shared between callers:
// they must not modify it.
func (p *Provider) Active(ctx context.Context) ([]facts.CapacityReservation, error) {
	q := awscall.Question{Fact: facts.CapacityReservations, Action: "ec2:DescribeCapacityReservations", Key: p.region}
	return awscall.Lookup(ctx, p.caller, p.active, q, func(ctx context.Context) ([]facts.CapacityReservation, bool, error) {
		in := &ec2.DescribeCapacityReservationsInput{
			Filters:    []ec2types.Filter{{Name: aws.String("state"), Values: []string{string(ec2types.CapacityReservationStateActive)}}},
			MaxResults: aws.Int32(pageSize),
		}
		out := []facts.CapacityReservation{} // known and empty, not unknown
		for pages := ec2.NewDescribeCapacityReservationsPaginator(p.api, in); pages.HasMorePages(); {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, false, err
			}
			for _, r := range page.CapacityReservations {
				out = append(out, reservation(r))
			}
		}
		return out, false, nil
	})
}

// reservation is the fact of one reservation.
func reservation(r ec2types.CapacityReservation) facts.CapacityReservation {
	out := facts.CapacityReservation{
		ID:                    aws.ToString(r.CapacityReservationId),
		InstanceType:          aws.ToString(r.InstanceType),
		AvailabilityZone:      aws.ToString(r.AvailabilityZone),
		OwnerID:               aws.ToString(r.OwnerId),
		InstanceMatchCriteria: string(r.InstanceMatchCriteria),
		ReservationType:       string(r.ReservationType),
		State:                 string(r.State),
	}
	if len(r.Tags) > 0 {
		out.Tags = make(map[string]string, len(r.Tags))
		for _, t := range r.Tags {
			out.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
	}
	return out
}

// Known tells whether the reservations can be had by asking for them: one question answers the whole
// fact, so no probe could be cheaper. It returns nil for any other fact: those are not this provider's.
func (p *Provider) Known(ctx context.Context, f facts.Fact) error {
	if f != facts.CapacityReservations {
		return nil
	}
	_, err := p.Active(ctx)
	return err
}
