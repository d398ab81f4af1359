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

var securityGroupsBlockAPIServer = &validators.Rule{
	ID:            "security-groups-block-api-server",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.SecurityGroups, facts.Subnets, facts.ClusterControlPlaneNetwork, facts.ClusterIPFamily},
	Summary:       "the node security groups and the cluster's control-plane groups do not let port 443 through from the node subnets",
	Doc: "The kubelet and aws-node reach the API server through the control plane's network interfaces (the " +
		"private endpoint and the `kubernetes` service), which carry the cluster security group and any " +
		"additional control-plane groups. Unless those admit TCP 443 from the node groups (or the node " +
		"subnets) and the node groups let 443 out to the control-plane subnets, instances launch and the " +
		"node stays NotReady (\"KubeletNotReady\"). Select the cluster security group in the class, or add " +
		"the rule. A subnet whose zone has another subnet that works, or a rule naming a prefix list, " +
		"gives a warning only.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		if err := network.RequireIPv4(c); err != nil {
			return nil, err
		}
		groups, err := network.SelectedGroups(c, o)
		if err != nil {
			return nil, err
		}
		subnets, err := network.SelectedSubnets(c, o)
		if err != nil || len(groups) == 0 || len(subnets) == 0 {
			return nil, err // no groups or subnets: the selector rules report it
		}
		cp, err := network.ControlPlaneNetwork(c)
		if err != nil {
			return nil, err
		}
		cl, _ := c.Facts.Cluster(c)
		nodeIDs := network.GroupIDs(groups)
		// Out of the node groups to every control-plane subnet: one answer for the class.
		var cpCIDRs []netip.Prefix
		outNo, outYes := []string{}, 0
		outMaybe := false
		for _, s := range cp.Subnets {
			cidr, ok := network.SubnetCIDR(s)
			if !ok {
				outMaybe = true
				continue
			}
			cpCIDRs = append(cpCIDRs, cidr)
			switch network.UnlessMissing(network.Permits(groups, true, 443, cp.GroupIDs, []netip.Prefix{cidr}), len(cp.Missing) > 0) {
			case network.VerdictNo:
				outNo = append(outNo, s.ID+" "+s.CIDRBlock)
			case network.VerdictYes:
				outYes++
			default:
				outMaybe = true
			}
		}
		outMaybe = outMaybe || (len(cp.Missing) > 0 && outYes == 0)
		outAllNo := len(outNo) > 0 && outYes == 0 && !outMaybe
		var defects []network.SubnetDefect
		var unknown []string
		for _, s := range subnets {
			cidr, ok := network.SubnetCIDR(s)
			if !ok {
				unknown = append(unknown, s.ID)
				continue
			}
			in := network.UnlessMissing(network.Permits(cp.Groups, false, 443, nodeIDs, []netip.Prefix{cidr}), len(cp.Missing) > 0)
			var why []string
			sure := false
			switch in {
			case network.VerdictNo:
				why = append(why, fmt.Sprintf("the control-plane groups %s admit no TCP 443 from the node groups or %s", strings.Join(cp.GroupIDs, ", "), s.CIDRBlock))
				sure = true
			case network.VerdictMaybe:
				why = append(why, fmt.Sprintf("the control-plane groups %s admit TCP 443 from %s only through a prefix list or rules the guard could not read", strings.Join(cp.GroupIDs, ", "), s.CIDRBlock))
			}
			switch {
			case outAllNo:
				why = append(why, fmt.Sprintf("the node groups %s let no TCP 443 out to the control-plane subnets (%s)", strings.Join(nodeIDs, ", "), strings.Join(outNo, ", ")))
				sure = true
			case len(outNo) > 0:
				why = append(why, fmt.Sprintf("the node groups %s let no TCP 443 out to some control-plane subnets (%s)", strings.Join(nodeIDs, ", "), strings.Join(outNo, ", ")))
			case outMaybe && outYes == 0:
				why = append(why, fmt.Sprintf("the node groups %s may not let TCP 443 out to the control-plane subnets (a prefix list, or rules the guard could not read)", strings.Join(nodeIDs, ", ")))
			}
			if len(why) > 0 {
				defects = append(defects, network.SubnetDefect{Subnet: s, Sure: sure, Detail: network.SubnetName(s) + ": " + strings.Join(why, "; ")})
			}
		}
		field, line := network.SelectorField(o, "securityGroupSelectorTerms")
		sg := cl.ClusterSecurityGroupID
		out := network.ZoneFindings(subnets, defects, func(details []string, capped bool, zones []string) validators.Finding {
			msg := "nodes cannot reach the API server on 443, so they launch but never become Ready: "
			if capped {
				msg = "nodes may not reach the API server on 443: "
			}
			msg += strings.Join(details, "; ") + "; the kubelet and aws-node reach the API server through the control plane's network interfaces (private endpoint and the kubernetes service)"
			if capped {
				msg += network.CappedNote(zones)
			}
			return validators.Finding{Field: field, Line: line, Message: msg,
				Fix: fmt.Sprintf("select the cluster security group %s in securityGroupSelectorTerms (`- id: %s`), or `aws ec2 authorize-security-group-ingress --group-id %s --protocol tcp --port 443 --source-group %s`", sg, sg, sg, nodeIDs[0])}
		})
		if len(out) == 0 && len(unknown) > 0 {
			return nil, facts.Unknown(facts.Subnets, "no cidrBlock for "+strings.Join(unknown, ", "))
		}
		return out, nil
	},
}
