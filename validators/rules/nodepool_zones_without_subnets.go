package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/scheduling"
)

var nodepoolZonesWithoutSubnets = &validators.Rule{
	ID:            "nodepool-zones-without-subnets",
	Kinds:         []string{validators.KindNodePool, validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	// The facts are asked only for a pool to judge: an EC2NodeClass outside an update has none.
	MayNeed: []facts.Fact{facts.Subnets, facts.ClusterNodePools},
	Summary: "the zones a NodePool admits share none with the zones of its EC2NodeClass's subnets",
	Doc: "Karpenter launches a NodePool's nodes only into zones where its EC2NodeClass has a subnet. A pool " +
		"that requires other zones (topology.kubernetes.io/zone, or topology.k8s.aws/zone-id, in its " +
		"requirements or template labels) never launches; Karpenter reports it only once pods are pending. " +
		"On an EC2NodeClass update the webhook judges the NodePools that use the class, and refuses the change for those it breaks.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		return judgePools(c, o, zonesFinding)
	},
}

// zonesFinding judges one pool's zones against its class's subnets.
func zonesFinding(c *validators.Context, o *objects.Object, j poolJudgement) ([]validators.Finding, error) {
	zones, _, err := classZones(c, j.class)
	if err != nil || len(zones) == 0 {
		return nil, err // no subnet at all: subnet-selector-no-match reports it
	}
	if len(scheduling.AdmittedZones(j.reqs, scheduling.Env{Zones: zones})) > 0 {
		return nil, nil
	}
	var names []string
	for _, z := range zones {
		n := z.Name
		if z.ID != "" {
			n += " (" + z.ID + ")"
		}
		names = append(names, n)
	}
	msg := fmt.Sprintf("the pool admits only %s, but EC2NodeClass %s has subnets only in %s, so Karpenter can launch no node for it (\"no instance type met the scheduling requirements\" once pods are pending)",
		requirementsOn(j.reqs, scheduling.LabelZone, scheduling.LabelZoneID), j.class.Name, strings.Join(names, ", "))
	return []validators.Finding{poolFinding(o, j, msg, fmt.Sprintf("allow a zone of the class (%s) in the pool's zone requirement, or select subnets in the zones it requires", strings.Join(names, ", ")))}, nil
}
