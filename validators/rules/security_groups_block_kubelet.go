package rules

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/network"
)

var securityGroupsBlockKubelet = &validators.Rule{
	ID:            "security-groups-block-kubelet",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.SecurityGroups, facts.Subnets, facts.ClusterControlPlaneNetwork, facts.ClusterIPFamily},
	Summary:       "the node security groups do not admit the control plane on the kubelet's port 10250",
	Doc: "The control plane calls the kubelet on TCP 10250 for `kubectl logs` and `exec`, port-forwarding " +
		"and metrics-server's scrapes. The node joins without it, but those fail. Admit 10250 from the " +
		"cluster security group in a node group, or select the cluster security group.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		if err := network.RequireIPv4(c); err != nil {
			return nil, err
		}
		groups, err := network.SelectedGroups(c, o)
		if err != nil || len(groups) == 0 {
			return nil, err
		}
		cp, err := network.ControlPlaneNetwork(c)
		if err != nil {
			return nil, err
		}
		var cidrs []netip.Prefix
		var blocks []string
		for _, s := range cp.Subnets {
			cidr, ok := network.SubnetCIDR(s)
			if !ok {
				return nil, facts.Unknown(facts.Subnets, "no cidrBlock for control-plane subnet "+s.ID)
			}
			cidrs = append(cidrs, cidr)
			blocks = append(blocks, s.CIDRBlock)
		}
		v := network.UnlessMissing(network.Permits(groups, false, 10250, cp.GroupIDs, cidrs), len(cp.Missing) > 0)
		if v == network.VerdictYes {
			return nil, nil
		}
		nodeIDs := network.GroupIDs(groups)
		msg := fmt.Sprintf("the node groups %s admit no TCP 10250 from the control-plane groups %s or subnets %s", strings.Join(nodeIDs, ", "), strings.Join(cp.GroupIDs, ", "), strings.Join(blocks, ", "))
		if v == network.VerdictMaybe {
			msg = fmt.Sprintf("the node groups %s may not admit TCP 10250 from the control plane (only through a prefix list, or rules the guard could not read)", strings.Join(nodeIDs, ", "))
		}
		field, line := network.SelectorField(o, "securityGroupSelectorTerms")
		cl, _ := c.Facts.Cluster(c)
		return []validators.Finding{{Field: field, Line: line,
			Message: msg + ": nodes join, but `kubectl logs`, `kubectl exec`, metrics-server and the control plane's other calls to the kubelet fail",
			Fix:     fmt.Sprintf("`aws ec2 authorize-security-group-ingress --group-id %s --protocol tcp --port 10250 --source-group %s`", nodeIDs[0], cl.ClusterSecurityGroupID),
		}}, nil
	},
}
