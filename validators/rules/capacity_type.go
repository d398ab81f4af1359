package rules

import "github.com/karpenter-guard/karpenter-guard/objects"

// This file holds what capacity types a NodePool allows.

// allowsSpot reports whether the capacity-type requirement admits spot, and its index. Without the
// requirement Karpenter launches on-demand only.
func allowsSpot(reqs []objects.Requirement) (int, bool) {
	for i, r := range reqs {
		if r.Key != "karpenter.sh/capacity-type" {
			continue
		}
		has := false
		for _, v := range r.Values {
			has = has || v == "spot"
		}
		switch r.Operator {
		case "In":
			return i, has
		case "NotIn":
			return i, !has
		case "Exists":
			return i, true
		}
	}
	return 0, false
}
