package network

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// This file holds what the two endpoint rules share: which VPC endpoints serve a subnet without a way
// out of the VPC.

// EndpointService returns the service name of an AWS service's endpoints in the cluster's region.
func EndpointService(cl *facts.Cluster, svc string) string {
	if cl.Partition == "aws-cn" {
		return "cn.com.amazonaws." + cl.Region + "." + svc
	}
	return "com.amazonaws." + cl.Region + "." + svc
}

// EndpointFinder answers whether the VPC's endpoints serve a node subnet, reading each endpoint's
// security groups once.
type EndpointFinder struct {
	c         *validators.Context
	Cluster   *facts.Cluster
	endpoints []facts.VPCEndpoint
	nodeIDs   []string
	groups    map[string][]facts.SecurityGroup
	// Subnets are all the class's node subnets: a zone stops launching only when all of its do.
	Subnets []facts.Subnet
}

// InterfaceFor tells whether an Interface endpoint of svc is usable from subnet cidr: available, with
// private DNS (so the service's usual name resolves to it) and a group admitting 443 from the node
// groups or the subnet. It returns what is wrong when it is not.
func (f *EndpointFinder) InterfaceFor(svc string, cidr netip.Prefix) (Verdict, string, error) {
	name := EndpointService(f.Cluster, svc)
	best, why := VerdictNo, "no "+svc+" interface endpoint ("+name+")"
	for _, e := range f.endpoints {
		if e.ServiceName != name || !strings.EqualFold(e.Type, "Interface") {
			continue
		}
		switch {
		case !strings.EqualFold(e.State, "available"):
			why = fmt.Sprintf("%s endpoint %s is %s", svc, e.ID, e.State)
			continue
		case e.PrivateDNSEnabled == nil || !*e.PrivateDNSEnabled:
			why = fmt.Sprintf("%s endpoint %s has private DNS off, so %s still resolves to the public service", svc, e.ID, svc)
			continue
		}
		var groups []facts.SecurityGroup
		missing := false
		for _, id := range e.SecurityGroupIDs {
			gs, err := f.groupsOf(id)
			if err != nil {
				return VerdictNo, "", err
			}
			missing = missing || len(gs) == 0
			groups = append(groups, gs...)
		}
		switch UnlessMissing(Permits(groups, false, 443, f.nodeIDs, []netip.Prefix{cidr}), missing) {
		case VerdictYes:
			return VerdictYes, "", nil
		case VerdictMaybe:
			best, why = VerdictMaybe, fmt.Sprintf("%s endpoint %s may not admit TCP 443 from the nodes (a prefix list, or rules the guard could not read)", svc, e.ID)
		default:
			if best == VerdictNo {
				why = fmt.Sprintf("%s endpoint %s's groups %s admit no TCP 443 from the node groups or %s", svc, e.ID, strings.Join(e.SecurityGroupIDs, ", "), cidr)
			}
		}
	}
	return best, why, nil
}

// GatewayFor reports whether a Gateway endpoint of svc (available, or of unknown state) is in the
// subnet's route table.
func (f *EndpointFinder) GatewayFor(svc, table string) bool {
	name := EndpointService(f.Cluster, svc)
	return slices.ContainsFunc(f.endpoints, func(e facts.VPCEndpoint) bool {
		return e.ServiceName == name && strings.EqualFold(e.Type, "Gateway") && (e.State == "" || strings.EqualFold(e.State, "available")) && slices.Contains(e.RouteTableIDs, table)
	})
}

func (f *EndpointFinder) groupsOf(id string) ([]facts.SecurityGroup, error) {
	if gs, ok := f.groups[id]; ok {
		return gs, nil
	}
	gs, err := f.c.Facts.SecurityGroups(f.c, facts.SelectorTerm{ID: id})
	if err != nil {
		return nil, err
	}
	f.groups[id] = gs
	return gs, nil
}

// IsolatedSubnets returns the class's node subnets with no way out of the VPC, and what the endpoint
// rules need to judge them (the finder also holds every node subnet, for the zone rule). With none
// isolated it returns an unknown fact when some subnet's routes or CIDR are unknown (it might be
// isolated), else nothing.
func IsolatedSubnets(c *validators.Context, o *objects.Object) ([]facts.Subnet, *EndpointFinder, error) {
	r := validators.Memo(c, isolations, o, func() isolation {
		isolated, f, err := findIsolated(c, o)
		return isolation{isolated, f, err}
	})
	return r.isolated, r.finder, r.err
}

// isolations are the isolated subnets of each class, for one evaluation: both endpoint rules read them.
var isolations = &validators.Analysis[*objects.Object, isolation]{Name: "isolated subnets"}

type isolation struct {
	isolated []facts.Subnet
	finder   *EndpointFinder
	err      error
}

// findIsolated is isolatedSubnets without the memo.
func findIsolated(c *validators.Context, o *objects.Object) ([]facts.Subnet, *EndpointFinder, error) {
	if err := RequireIPv4(c); err != nil {
		return nil, nil, err
	}
	subnets, err := SelectedSubnets(c, o)
	if err != nil || len(subnets) == 0 {
		return nil, nil, err
	}
	var isolated []facts.Subnet
	var unknown []string
	for _, s := range subnets {
		e, ok := EgressOf(o, s, nil)
		if _, cidrOK := SubnetCIDR(s); !ok || !cidrOK {
			unknown = append(unknown, s.ID)
			continue
		}
		if e.Kind == EgressNone {
			isolated = append(isolated, s)
		}
	}
	if len(isolated) == 0 {
		if len(unknown) > 0 {
			return nil, nil, facts.Unknown(facts.Subnets, "unknown routes or CIDR of "+strings.Join(unknown, ", "))
		}
		return nil, nil, nil
	}
	cl, err := c.Facts.Cluster(c)
	if err != nil {
		return nil, nil, err
	}
	eps, err := c.Facts.VPCEndpoints(c)
	if err != nil {
		return nil, nil, err
	}
	groups, err := SelectedGroups(c, o)
	if err != nil {
		return nil, nil, err
	}
	return isolated, &EndpointFinder{c: c, Cluster: cl, endpoints: eps, nodeIDs: GroupIDs(groups), groups: map[string][]facts.SecurityGroup{}, Subnets: subnets}, nil
}

// CreateInterfaceEndpoint is the command that creates an interface endpoint of svc for the isolated
// subnets: one subnet per zone (an interface endpoint takes at most one per zone), and the groups of an
// endpoint the VPC already has that admits 443 from all of them, when there is one.
func (f *EndpointFinder) CreateInterfaceEndpoint(svc string, isolated []facts.Subnet) string {
	var ids []string
	var cidrs []netip.Prefix
	zones := map[string]bool{}
	for _, s := range isolated {
		if cidr, ok := SubnetCIDR(s); ok {
			cidrs = append(cidrs, cidr)
		}
		if !zones[s.AvailabilityZone] {
			zones[s.AvailabilityZone] = true
			ids = append(ids, s.ID)
		}
	}
	groups := "<a group admitting 443 from the nodes>"
	for _, e := range f.endpoints {
		if !strings.EqualFold(e.Type, "Interface") || len(e.SecurityGroupIDs) == 0 {
			continue
		}
		var gs []facts.SecurityGroup
		for _, id := range e.SecurityGroupIDs {
			g, err := f.groupsOf(id)
			if err != nil {
				break
			}
			gs = append(gs, g...)
		}
		if Permits(gs, false, 443, f.nodeIDs, cidrs) == VerdictYes {
			groups = strings.Join(e.SecurityGroupIDs, " ")
			break
		}
	}
	return fmt.Sprintf("`aws ec2 create-vpc-endpoint --vpc-id %s --vpc-endpoint-type Interface --service-name %s --subnet-ids %s --security-group-ids %s --private-dns-enabled`",
		f.Cluster.VPCID, EndpointService(f.Cluster, svc), strings.Join(ids, " "), groups)
}
