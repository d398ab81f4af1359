package rules

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
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
		if err := requireIPv4(c); err != nil {
			return nil, err
		}
		groups, err := selectedGroups(c, o)
		if err != nil || len(groups) == 0 {
			return nil, err
		}
		cp, err := controlPlaneNetwork(c)
		if err != nil {
			return nil, err
		}
		var cidrs []netip.Prefix
		var blocks []string
		for _, s := range cp.subnets {
			cidr, ok := subnetCIDR(s)
			if !ok {
				return nil, facts.Unknown(facts.Subnets, "no cidrBlock for control-plane subnet "+s.ID)
			}
			cidrs = append(cidrs, cidr)
			blocks = append(blocks, s.CIDRBlock)
		}
		v := unlessMissing(permits(groups, false, 10250, cp.groupIDs, cidrs), len(cp.missing) > 0)
		if v == verdictYes {
			return nil, nil
		}
		nodeIDs := groupIDs(groups)
		msg := fmt.Sprintf("the node groups %s admit no TCP 10250 from the control-plane groups %s or subnets %s", strings.Join(nodeIDs, ", "), strings.Join(cp.groupIDs, ", "), strings.Join(blocks, ", "))
		if v == verdictMaybe {
			msg = fmt.Sprintf("the node groups %s may not admit TCP 10250 from the control plane (only through a prefix list, or rules the guard could not read)", strings.Join(nodeIDs, ", "))
		}
		field, line := selectorField(o, "securityGroupSelectorTerms")
		cl, _ := c.Facts.Cluster(c)
		return []validators.Finding{{Field: field, Line: line,
			Message: msg + ": nodes join, but `kubectl logs`, `kubectl exec`, metrics-server and the control plane's other calls to the kubelet fail",
			Fix:     fmt.Sprintf("`aws ec2 authorize-security-group-ingress --group-id %s --protocol tcp --port 10250 --source-group %s`", nodeIDs[0], cl.ClusterSecurityGroupID),
		}}, nil
	},
}
