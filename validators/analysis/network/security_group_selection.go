package network

import (
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// groupSelections are the security groups each EC2NodeClass selects, for one evaluation: two rules
// read them.
var groupSelections = &validators.Analysis[*objects.Object, selected[facts.SecurityGroup]]{Name: "security-group selection"}

// SelectedGroups returns the security groups the class selects (terms ORed, without duplicates).
func SelectedGroups(c *validators.Context, o *objects.Object) ([]facts.SecurityGroup, error) {
	r := validators.Memo(c, groupSelections, o, func() selected[facts.SecurityGroup] {
		items, err := selectUnion(c, o.NodeClass.Spec.SecurityGroupSelectorTerms, c.Facts.SecurityGroups, func(g facts.SecurityGroup) string { return g.ID })
		return selected[facts.SecurityGroup]{items, err}
	})
	return r.items, r.err
}
