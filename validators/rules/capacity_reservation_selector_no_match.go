package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/network"
)

var capacityReservationSelectorNoMatch = &validators.Rule{
	ID:            "capacity-reservation-selector-no-match",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	// Asked only of a class with terms: a class without them uses no reservation.
	MayNeed: []facts.Fact{facts.CapacityReservations, facts.Subnets},
	Summary: "`capacityReservationSelectorTerms` match no active capacity reservation, or only reservations in zones without a node subnet",
	Doc: "Karpenter (from v1.3 with the ReservedCapacity feature gate, on by default from v1.6) launches " +
		"reserved capacity only into the active reservations its terms select, in zones where the class has " +
		"a subnet. When they select none, it reports CapacityReservationsReady with an empty status and " +
		"never launches reserved capacity: NodePools that require karpenter.sh/capacity-type reserved " +
		"cannot launch at all (nodepool-requirements-unsatisfiable reports them). Fix the terms.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		terms := o.NodeClass.Spec.CapacityReservationSelectorTerms
		if len(terms) == 0 {
			return nil, nil
		}
		matched, err := matchedReservations(c, o)
		if err != nil {
			return nil, err
		}
		subnets, err := network.SelectedSubnets(c, o)
		if err != nil {
			return nil, err
		}
		zones := map[string]bool{}
		for _, s := range subnets {
			zones[s.AvailabilityZone] = true
		}
		var elsewhere []string
		for _, r := range matched {
			if zones[r.AvailabilityZone] {
				return nil, nil
			}
			elsewhere = append(elsewhere, fmt.Sprintf("%s (%s, %s)", r.ID, r.InstanceType, r.AvailabilityZone))
		}
		field, line := network.SelectorField(o, "capacityReservationSelectorTerms")
		msg := "capacityReservationSelectorTerms match no active capacity reservation, so Karpenter never launches reserved capacity from this class"
		if len(elsewhere) > 0 {
			var zs []string
			for z := range zones {
				zs = append(zs, z)
			}
			sort.Strings(zs)
			msg = fmt.Sprintf("capacityReservationSelectorTerms match only reservations in zones where the class has no subnet (%s; the class's subnets are in %s), so Karpenter never launches into them", strings.Join(elsewhere, ", "), strings.Join(zs, ", "))
		}
		return []validators.Finding{{Field: field, Line: line,
			Message: msg + "; NodePools that require karpenter.sh/capacity-type reserved cannot launch",
			Fix:     "fix the terms against `aws ec2 describe-capacity-reservations --filters Name=state,Values=active`, or select a subnet in the reservations' zone",
		}}, nil
	},
}

// matchedReservations returns the active reservations the class's terms select, as Karpenter queries
// them: an id term asks for that reservation; a term of tags, ownerID and instanceMatchCriteria
// filters by all of them; every query asks for state active. Terms are ORed.
func matchedReservations(c *validators.Context, o *objects.Object) ([]facts.CapacityReservation, error) {
	all, err := c.Facts.CapacityReservations(c)
	if err != nil {
		return nil, err
	}
	var out []facts.CapacityReservation
	for _, r := range all {
		if !strings.EqualFold(r.State, "active") && r.State != "" {
			continue
		}
		for _, t := range o.NodeClass.Spec.CapacityReservationSelectorTerms {
			if reservationMatches(t, r) {
				out = append(out, r)
				break
			}
		}
	}
	return out, nil
}

func reservationMatches(t objects.CapacityReservationSelectorTerm, r facts.CapacityReservation) bool {
	if t.ID != "" {
		return t.ID == r.ID
	}
	if t.OwnerID != "" && t.OwnerID != r.OwnerID {
		return false
	}
	if t.InstanceMatchCriteria != "" && t.InstanceMatchCriteria != r.InstanceMatchCriteria {
		return false
	}
	for k, v := range t.Tags {
		got, ok := r.Tags[k]
		if !ok || (v != "*" && got != v) {
			return false
		}
	}
	return true
}
