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

var subnetFreeIPsLow = &validators.Rule{
	ID:            "subnet-free-ips-low",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.Subnets, facts.ClusterIPFamily},
	Summary:       "in a zone of the class, the node subnet with the most free addresses has fewer than `subnets.minFreeIPs`",
	Doc: "Karpenter launches into a zone through the subnet with the most free addresses. With the VPC CNI's " +
		"defaults a node takes its primary address and a whole network interface of secondary ones (10 to " +
		"50), so a zone whose best subnet is nearly full soon fails launches with " +
		"InsufficientFreeAddressesInSubnet, and pods stay pending. Add a subnet in that zone to the selector, " +
		"or a secondary CIDR. The count changes by the minute, so this never denies; the threshold is " +
		"subnets.minFreeIPs in the configuration (default 32).",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		if err := network.RequireIPv4(c); err != nil {
			return nil, err
		}
		subnets, err := network.SelectedSubnets(c, o)
		if err != nil || len(subnets) == 0 {
			return nil, err
		}
		best := map[string]int{}
		names := map[string][]string{}
		var unknown []string
		for _, s := range subnets {
			if s.AvailableIPAddressCount == nil {
				unknown = append(unknown, s.ID)
				continue
			}
			if n, ok := best[s.AvailabilityZone]; !ok || *s.AvailableIPAddressCount > n {
				best[s.AvailabilityZone] = *s.AvailableIPAddressCount
			}
			names[s.AvailabilityZone] = append(names[s.AvailabilityZone], fmt.Sprintf("%s: %d free", s.ID, *s.AvailableIPAddressCount))
		}
		limit := c.Config.Subnets.MinFreeIPs
		var low []string
		full := false
		for zone, n := range best {
			if n >= limit || zoneHasUnknownCount(subnets, zone) {
				continue
			}
			full = full || n == 0
			low = append(low, fmt.Sprintf("%s (%s)", zone, strings.Join(names[zone], ", ")))
		}
		if len(low) == 0 {
			if len(unknown) > 0 {
				return nil, facts.Unknown(facts.Subnets, "no availableIpAddressCount for "+strings.Join(unknown, ", "))
			}
			return nil, nil
		}
		sort.Strings(low)
		msg := fmt.Sprintf("the best node subnet of %s has fewer than %d free addresses (subnets.minFreeIPs): a node takes its primary address and a network interface of secondary ones, so launches there soon fail", strings.Join(low, "; "), limit)
		if full {
			msg += "; at 0, launches into the zone fail now with InsufficientFreeAddressesInSubnet"
		}
		field, line := network.SelectorField(o, "subnetSelectorTerms")
		return []validators.Finding{{Field: field, Line: line, Message: msg,
			Fix: "add a subnet in that zone to subnetSelectorTerms (tag it for discovery), or add a secondary CIDR to the VPC and subnets from it"}}, nil
	},
}

// zoneHasUnknownCount reports whether a subnet of zone has an unknown free-address count: the zone's
// best subnet may then be that one.
func zoneHasUnknownCount(subnets []facts.Subnet, zone string) bool {
	for _, s := range subnets {
		if s.AvailabilityZone == zone && s.AvailableIPAddressCount == nil {
			return true
		}
	}
	return false
}
