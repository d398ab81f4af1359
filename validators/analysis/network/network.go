package network

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// This file holds a subnet's way out of the VPC (EgressOf), what a set of security groups lets through
// (Permits), the control plane's groups and subnets, and the zone rule that decides whether a defect of
// some subnets stops launches.

// Verdict is a three-valued answer: a rule denies only on no, caps at warn on maybe.
type Verdict int

const (
	VerdictNo Verdict = iota
	VerdictMaybe
	VerdictYes
)

// IPv6NotModelled is the reason the IPv4 network rules give on an IPv6 cluster.
const IPv6NotModelled = "IPv6 clusters are not modelled"

// RequireIPv4 returns an unknown fact when the cluster is IPv6 (or its family is unknown): the
// reachability and egress rules model IPv4 only.
func RequireIPv4(c *validators.Context) error {
	cl, err := c.Facts.Cluster(c)
	if err != nil {
		return err
	}
	if cl.IPFamily == "ipv6" {
		return facts.Unknown(facts.ClusterIPFamily, IPv6NotModelled)
	}
	return nil
}

// Permits tells whether some group of gs has a rule in that direction letting TCP port through from
// (ingress) or to (egress) the peers: a rule naming one of peerGroups, or a CIDR holding every one of
// peerCIDRs. Security groups are stateful and an ENI's groups are a union, so one rule suffices. A
// rule naming a prefix list may or may not hold the peers (maybe), and so may a group whose rules
// were not read.
func Permits(gs []facts.SecurityGroup, egress bool, port int, peerGroups []string, peerCIDRs []netip.Prefix) Verdict {
	out := VerdictNo
	for _, g := range gs {
		if !g.RulesKnown() {
			out = VerdictMaybe
			continue
		}
		rules := g.Ingress
		if egress {
			rules = g.Egress
		}
		for _, r := range rules {
			if !portMatches(r, port) {
				continue
			}
			if slices.ContainsFunc(r.GroupIDs, func(id string) bool { return slices.Contains(peerGroups, id) }) {
				return VerdictYes
			}
			if len(peerCIDRs) > 0 && slices.ContainsFunc(r.CIDRs, func(cidr string) bool { return holdsAll(cidr, peerCIDRs) }) {
				return VerdictYes
			}
			if len(r.PrefixListIDs) > 0 {
				out = VerdictMaybe
			}
		}
	}
	return out
}

// UnlessMissing turns a "no" into "maybe" when some of the groups asked about could not be read.
func UnlessMissing(v Verdict, missing bool) Verdict {
	if v == VerdictNo && missing {
		return VerdictMaybe
	}
	return v
}

// portMatches reports whether a rule's protocol is TCP (or every protocol) and its ports hold port.
func portMatches(r facts.SecurityGroupRule, port int) bool {
	switch strings.ToLower(r.Protocol) {
	case "-1", "all":
		return true
	case "tcp", "6":
	default:
		return false
	}
	if r.FromPort == nil || r.ToPort == nil {
		return true // EC2 gives TCP rules ports; a rule written without them is read as all ports
	}
	return (*r.FromPort <= port && port <= *r.ToPort) || (*r.FromPort == -1 && *r.ToPort == -1)
}

// holdsAll reports whether cidr contains every peer block.
func holdsAll(cidr string, peers []netip.Prefix) bool {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return false
	}
	p = p.Masked()
	for _, peer := range peers {
		if !(p.Bits() <= peer.Bits() && p.Contains(peer.Addr())) {
			return false
		}
	}
	return true
}

// SubnetCIDR returns a subnet's IPv4 block, or false when it is unknown.
func SubnetCIDR(s facts.Subnet) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(s.CIDRBlock)
	if err != nil {
		return netip.Prefix{}, false
	}
	return p.Masked(), true
}

// ControlPlane is the control plane's network: its security groups C and the subnets of its ENIs.
type ControlPlane struct {
	Groups   []facts.SecurityGroup
	GroupIDs []string
	Subnets  []facts.Subnet
	// Missing lists the groups and subnets the facts do not show (a snapshot written without them):
	// what they allow is unknown, so the rules answer "maybe" rather than "no".
	Missing []string
}

// ControlPlaneNetwork reads the control plane's groups and subnets by id; those the facts do not show
// are listed in missing.
func ControlPlaneNetwork(c *validators.Context) (*ControlPlane, error) {
	r := validators.Memo(c, controlPlanes, struct{}{}, func() controlPlaneResult {
		cp, err := readControlPlane(c)
		return controlPlaneResult{cp, err}
	})
	return r.cp, r.err
}

// controlPlanes is the control plane's network, read once per evaluation: two rules and every class
// ask it.
var controlPlanes = &validators.Analysis[struct{}, controlPlaneResult]{Name: "control-plane network"}

type controlPlaneResult struct {
	cp  *ControlPlane
	err error
}

// readControlPlane is controlPlaneNetwork without the memo.
func readControlPlane(c *validators.Context) (*ControlPlane, error) {
	cl, err := c.Facts.Cluster(c)
	if err != nil {
		return nil, err
	}
	if err := c.Facts.Known(c, facts.ClusterControlPlaneNetwork); err != nil {
		return nil, err
	}
	cp := &ControlPlane{}
	ids := append([]string{cl.ClusterSecurityGroupID}, cl.SecurityGroupIDs...)
	for _, id := range ids {
		if id == "" || slices.Contains(cp.GroupIDs, id) {
			continue
		}
		cp.GroupIDs = append(cp.GroupIDs, id)
		gs, err := c.Facts.SecurityGroups(c, facts.SelectorTerm{ID: id})
		if err != nil {
			return nil, err
		}
		if len(gs) == 0 {
			cp.Missing = append(cp.Missing, id)
		}
		cp.Groups = append(cp.Groups, gs...)
	}
	for _, id := range cl.SubnetIDs {
		ss, err := c.Facts.Subnets(c, facts.SelectorTerm{ID: id})
		if err != nil {
			return nil, err
		}
		if len(ss) == 0 {
			cp.Missing = append(cp.Missing, id)
		}
		cp.Subnets = append(cp.Subnets, ss...)
	}
	return cp, nil
}

// EgressKind is how a subnet's nodes leave the VPC (IPv4).
type EgressKind int

const (
	EgressUnknown EgressKind = iota // a route the rules do not model: never a reason to deny
	EgressNAT                       // a default route to a public NAT gateway
	EgressIGW                       // a default route to an internet gateway, and a public IPv4
	EgressNone                      // no way out: only local and gateway-endpoint routes
)

// Egress is a subnet's way out, with what it goes through.
type Egress struct {
	Kind EgressKind
	// Via is the default route's target ("" without one).
	Via string
	// NAT is the NAT gateway of egressNAT.
	NAT *facts.NATGateway
}

// Describe says the egress in words, for messages.
func (e Egress) Describe() string {
	switch e.Kind {
	case EgressNAT:
		return "its default route goes to NAT gateway " + e.Via
	case EgressIGW:
		return "its default route goes to internet gateway " + e.Via + " and instances get a public IPv4"
	case EgressNone:
		if e.Via != "" {
			return "its default route goes to internet gateway " + e.Via + " but instances get no public IPv4, and no other route leaves the VPC"
		}
		return "it has no default route (0.0.0.0/0), so nothing leaves the VPC"
	}
	if e.Via != "" {
		return "its default route goes to " + e.Via
	}
	return "its routes lead somewhere the guard does not model"
}

// publicIPv4 reports whether a node launched into s gets a public IPv4: the class's
// associatePublicIPAddress when set, else the subnet's mapPublicIpOnLaunch.
func publicIPv4(o *objects.Object, s facts.Subnet) bool {
	if v := o.NodeClass.Spec.AssociatePublicIPAddress; v != nil {
		return *v
	}
	return s.MapPublicIPOnLaunch
}

// EgressOf classifies subnet s for the class's nodes, from the routes of its table (blackhole routes
// ignored). nats are the VPC's NAT gateways, nil when unknown: a NAT route then is egressNAT without
// its gateway. It returns false when the subnet's routes are unknown.
func EgressOf(o *objects.Object, s facts.Subnet, nats []facts.NATGateway) (Egress, bool) {
	if s.RouteTableID == "" {
		return Egress{}, false
	}
	var def *facts.Route
	onlyEndpoints := true
	for i, r := range s.Routes {
		if strings.EqualFold(r.State, facts.RouteBlackhole) {
			continue
		}
		switch {
		case r.Destination == "0.0.0.0/0":
			def = &s.Routes[i]
		case strings.HasPrefix(r.Destination, "pl-") && strings.HasPrefix(r.Target, "vpce-"):
		default:
			onlyEndpoints = false
		}
	}
	if def == nil {
		if onlyEndpoints {
			return Egress{Kind: EgressNone}, true
		}
		return Egress{Kind: EgressUnknown}, true
	}
	e := Egress{Via: def.Target}
	switch {
	case strings.HasPrefix(def.Target, "nat-"):
		if nats == nil {
			e.Kind = EgressNAT
			return e, true
		}
		for i, n := range nats {
			if n.ID == def.Target {
				if strings.EqualFold(n.ConnectivityType, "public") || n.ConnectivityType == "" {
					e.Kind, e.NAT = EgressNAT, &nats[i]
				}
				return e, true // a private NAT gateway: unknown
			}
		}
		return e, true
	case strings.HasPrefix(def.Target, "igw-"):
		switch {
		case publicIPv4(o, s):
			e.Kind = EgressIGW
		case onlyEndpoints:
			e.Kind = EgressNone
		}
	}
	return e, true
}

// SubnetDefect is what a rule found in one node subnet: at the rule's action (sure), or capped at warn.
type SubnetDefect struct {
	Subnet facts.Subnet
	Sure   bool
	Detail string
}

// ZoneFindings applies the zone rule: Karpenter launches into a zone through the subnet with the most
// free addresses, so a defect stops launches in a zone only when every node subnet of that zone has it
// surely. Defects of zones where another subnet is fine, or that are not sure, are capped at warn.
// It returns one finding for the zones at the rule's action and one for the capped ones, each built by
// mk from the defects' details.
func ZoneFindings(subnets []facts.Subnet, defects []SubnetDefect, mk func(details []string, capped bool, zones []string) validators.Finding) []validators.Finding {
	if len(defects) == 0 {
		return nil
	}
	byZone := map[string]int{}
	for _, s := range subnets {
		byZone[s.AvailabilityZone]++
	}
	sureInZone := map[string]int{}
	for _, d := range defects {
		if d.Sure {
			sureInZone[d.Subnet.AvailabilityZone]++
		}
	}
	var sure, capped []SubnetDefect
	for _, d := range defects {
		if d.Sure && sureInZone[d.Subnet.AvailabilityZone] == byZone[d.Subnet.AvailabilityZone] {
			sure = append(sure, d)
		} else {
			capped = append(capped, d)
		}
	}
	var out []validators.Finding
	for _, group := range []struct {
		ds     []SubnetDefect
		capped bool
	}{{sure, false}, {capped, true}} {
		if len(group.ds) == 0 {
			continue
		}
		var details, zones []string
		for _, d := range group.ds {
			details = append(details, d.Detail)
			if !slices.Contains(zones, d.Subnet.AvailabilityZone) {
				zones = append(zones, d.Subnet.AvailabilityZone)
			}
		}
		sort.Strings(zones)
		f := mk(details, group.capped, zones)
		if group.capped {
			f.AtMost = config.ActionWarn
		}
		out = append(out, f)
	}
	return out
}

// CappedNote says why a finding is capped at warn under the zone rule.
func CappedNote(zones []string) string {
	return fmt.Sprintf(" (a warning, not a denial: in %s another subnet of the zone works, or the guard's evidence is incomplete, so launches may still succeed)", strings.Join(zones, ", "))
}

// SubnetName names a subnet for messages: its id, with its Name tag and zone.
func SubnetName(s facts.Subnet) string {
	name := s.ID
	if n := s.Tags["Name"]; n != "" {
		name += " " + n
	}
	return name + " (" + s.AvailabilityZone + ")"
}

// GroupIDs returns the ids of gs.
func GroupIDs(gs []facts.SecurityGroup) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.ID
	}
	return out
}

// SelectorField returns the path and line of a class's selector field, for findings.
func SelectorField(o *objects.Object, field string) (string, int) {
	return "spec." + field, o.Fields.Line("spec", field)
}
