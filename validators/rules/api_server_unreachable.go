package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/network"
)

var apiServerUnreachable = &validators.Rule{
	ID:            "api-server-unreachable",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.ClusterEndpointAccess, facts.Subnets, facts.ClusterIPFamily},
	MayNeed:       []facts.Fact{facts.NATGateways},
	Summary:       "with the private endpoint off, a node subnet has no way to the public endpoint, or its NAT address is not in publicAccessCidrs",
	Doc: "When the cluster's private endpoint is off, nodes reach the API server through its public endpoint, " +
		"which means leaving the VPC. A subnet with no way out (no NAT gateway, no internet gateway with a " +
		"public IP) cannot register nodes, and with a restricted publicAccessCidrs neither can one whose " +
		"NAT gateway's address is not in the list. Turn the private endpoint on, or add the NAT address. An " +
		"internet gateway or a route the guard does not model gives a warning when the CIDRs are restricted.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		if err := network.RequireIPv4(c); err != nil {
			return nil, err
		}
		cl, err := c.Facts.Cluster(c)
		if err != nil {
			return nil, err
		}
		if *cl.EndpointPrivateAccess {
			return nil, nil
		}
		subnets, err := network.SelectedSubnets(c, o)
		if err != nil || len(subnets) == 0 {
			return nil, err
		}
		open := len(cl.PublicAccessCidrs) == 0 || slices.Contains(cl.PublicAccessCidrs, "0.0.0.0/0")
		var nats []facts.NATGateway
		var natErr error
		if !open {
			if nats, natErr = c.Facts.NATGateways(c); natErr != nil && !facts.IsUnknown(natErr) {
				return nil, natErr
			}
		}
		var defects []network.SubnetDefect
		var unknown []string
		for _, s := range subnets {
			e, ok := network.EgressOf(o, s, nats)
			if !ok {
				unknown = append(unknown, s.ID+" (no route table)")
				continue
			}
			switch {
			case e.Kind == network.EgressNone:
				defects = append(defects, network.SubnetDefect{Subnet: s, Sure: true, Detail: network.SubnetName(s) + ": " + e.Describe()})
			case open:
			case e.Kind == network.EgressNAT && natErr != nil:
				unknown = append(unknown, s.ID+" (its NAT gateway's address: "+facts.Reason(natErr)+")")
			case e.Kind == network.EgressNAT && e.NAT != nil:
				if !natAllowed(e.NAT.PublicIPs, cl.PublicAccessCidrs) {
					defects = append(defects, network.SubnetDefect{Subnet: s, Sure: true, Detail: fmt.Sprintf("%s: %s, whose address %s is not in publicAccessCidrs %s", network.SubnetName(s), e.Describe(), strings.Join(e.NAT.PublicIPs, ", "), strings.Join(cl.PublicAccessCidrs, ", "))})
				}
			default:
				defects = append(defects, network.SubnetDefect{Subnet: s, Detail: fmt.Sprintf("%s: %s, and which address it leaves from is not known in advance while publicAccessCidrs is %s", network.SubnetName(s), e.Describe(), strings.Join(cl.PublicAccessCidrs, ", "))})
			}
		}
		field, line := network.SelectorField(o, "subnetSelectorTerms")
		out := network.ZoneFindings(subnets, defects, func(details []string, capped bool, zones []string) validators.Finding {
			msg := fmt.Sprintf("cluster %s has its private endpoint off (public access only), so nodes must leave the VPC to register, and cannot: %s", cl.Name, strings.Join(details, "; "))
			if capped {
				msg = fmt.Sprintf("cluster %s has its private endpoint off (public access only), so nodes must leave the VPC to register, and may not be able to: %s", cl.Name, strings.Join(details, "; "))
			}
			if capped {
				msg += network.CappedNote(zones)
			}
			return validators.Finding{Field: field, Line: line, Message: msg,
				Fix: fmt.Sprintf("`aws eks update-cluster-config --name %s --resources-vpc-config endpointPrivateAccess=true`, or add the NAT gateway's address: `aws eks update-cluster-config --name %s --resources-vpc-config publicAccessCidrs=%s,<nat ip>/32`", cl.Name, cl.Name, strings.Join(cl.PublicAccessCidrs, ","))}
		})
		if len(out) == 0 && len(unknown) > 0 {
			f := facts.Subnets
			if natErr != nil {
				f = facts.NATGateways
			}
			return nil, facts.Unknown(f, "unknown egress of "+strings.Join(unknown, ", "))
		}
		return out, nil
	},
}

// natAllowed reports whether one of a NAT gateway's addresses lies in the allowed CIDRs.
func natAllowed(ips, cidrs []string) bool {
	for _, ip := range ips {
		a, err := netip.ParseAddr(ip)
		if err != nil {
			continue
		}
		for _, cidr := range cidrs {
			if p, err := netip.ParsePrefix(cidr); err == nil && p.Contains(a) {
				return true
			}
		}
	}
	return false
}
