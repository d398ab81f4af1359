package rules

import "github.com/karpenter-guard/karpenter-guard/objects"

// This file holds what capacity types a NodePool allows.

// capacityTypeKey is the well-known label of a node's capacity type (spot, on-demand, reserved).
const capacityTypeKey = "karpenter.sh/capacity-type"

// allowsSpot reports whether the pool's requirements admit spot, and the index of the first
// capacity-type requirement (-1 when there is none). Without one the pool allows every capacity type,
// and Karpenter then prefers spot (karpenter-provider-aws issue 5015: an absent key reads as Exists);
// several requirements on the key must all admit spot; DoesNotExist admits nothing.
func allowsSpot(reqs []objects.Requirement) (int, bool) {
	first, spot := -1, true
	for i, r := range reqs {
		if r.Key != capacityTypeKey {
			continue
		}
		if first < 0 {
			first = i
		}
		has := false
		for _, v := range r.Values {
			has = has || v == "spot"
		}
		switch r.Operator {
		case "In":
			spot = spot && has
		case "NotIn":
			spot = spot && !has
		case "Exists":
		default: // DoesNotExist, and Gt/Lt, which no capacity type satisfies
			spot = false
		}
	}
	return first, spot
}
