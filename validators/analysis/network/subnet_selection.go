package network

import (
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// subnetSelections are the subnets each EC2NodeClass selects, for one evaluation: three rules read
// them.
var subnetSelections = &validators.Analysis[*objects.Object, selected[facts.Subnet]]{Name: "subnet selection"}

// SelectedSubnets returns the subnets the class selects (terms ORed, without duplicates).
func SelectedSubnets(c *validators.Context, o *objects.Object) ([]facts.Subnet, error) {
	r := validators.Memo(c, subnetSelections, o, func() selected[facts.Subnet] {
		items, err := selectUnion(c, o.NodeClass.Spec.SubnetSelectorTerms, c.Facts.Subnets, func(s facts.Subnet) string { return s.ID })
		return selected[facts.Subnet]{items, err}
	})
	return r.items, r.err
}
