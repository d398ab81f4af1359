package validators

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// This file holds the subnet and security-group rules; they need EC2 facts.

var subnetSelectorNoMatch = &Rule{
	ID:            "subnet-selector-no-match",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Subnets},
	Summary:       "the subnet selector matches no subnet",
	Doc:           "With no subnet to launch into, the EC2NodeClass never becomes ready and no node launches.",
	Check: func(c *Context, o *objects.Object) []Finding {
		subnets, err := c.selectedSubnets(o)
		if err != nil {
			return c.unknownFact(err)
		}
		if len(subnets) > 0 || len(o.NodeClass.Spec.SubnetSelectorTerms) == 0 {
			return nil
		}
		return []Finding{{
			Field:   "spec.subnetSelectorTerms",
			Line:    o.Fields.Line("spec", "subnetSelectorTerms"),
			Message: fmt.Sprintf("subnetSelectorTerms (%s) match no subnet, so no node can launch", describeSelector(o.NodeClass.Spec.SubnetSelectorTerms)),
			Fix:     c.listInVPC("subnets", "describe-subnets", "tag the cluster's private subnets with the selector's tags (e.g. karpenter.sh/discovery: %s), or correct the terms"),
		}}
	},
}

var securityGroupSelectorNoMatch = &Rule{
	ID:            "security-group-selector-no-match",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.SecurityGroups},
	Summary:       "the security-group selector matches no group",
	Doc:           "With no security group, the EC2NodeClass never becomes ready and no node launches.",
	Check: func(c *Context, o *objects.Object) []Finding {
		groups, err := c.selectedGroups(o)
		if err != nil {
			return c.unknownFact(err)
		}
		if len(groups) > 0 || len(o.NodeClass.Spec.SecurityGroupSelectorTerms) == 0 {
			return nil
		}
		return []Finding{{
			Field:   "spec.securityGroupSelectorTerms",
			Line:    o.Fields.Line("spec", "securityGroupSelectorTerms"),
			Message: fmt.Sprintf("securityGroupSelectorTerms (%s) match no security group, so no node can launch", describeSelector(o.NodeClass.Spec.SecurityGroupSelectorTerms)),
			Fix:     c.listInVPC("security groups", "describe-security-groups", "tag the node security group with the selector's tags (e.g. karpenter.sh/discovery: %s), or correct the terms"),
		}}
	},
}

var selectorVPCMismatch = &Rule{
	ID:            "selector-vpc-mismatch",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Subnets, facts.SecurityGroups, facts.ClusterVPCID},
	Summary:       "a selected subnet or group is outside the cluster's VPC",
	Doc: "Instances in another VPC cannot reach the cluster endpoint, and security groups of another VPC " +
		"cannot be attached at all: launches fail or nodes never join.",
	Check: func(c *Context, o *objects.Object) []Finding {
		cl, err := c.Facts.Cluster(c)
		if err != nil {
			return c.unknownFact(err)
		}
		subnets, err := c.selectedSubnets(o)
		if err != nil {
			return c.unknownFact(err)
		}
		groups, err := c.selectedGroups(o)
		if err != nil {
			return c.unknownFact(err)
		}
		var out []Finding
		var bad []string
		for _, s := range subnets {
			if s.VPCID != cl.VPCID {
				bad = append(bad, fmt.Sprintf("%s (%s)", s.ID, s.VPCID))
			}
		}
		if len(bad) > 0 {
			out = append(out, Finding{Field: "spec.subnetSelectorTerms", Line: o.Fields.Line("spec", "subnetSelectorTerms"),
				Message: fmt.Sprintf("selected subnets are outside cluster %s's VPC %s: %s", cl.Name, cl.VPCID, strings.Join(bad, ", ")),
				Fix:     "narrow the terms to subnets of " + cl.VPCID})
		}
		bad = nil
		for _, g := range groups {
			if g.VPCID != cl.VPCID {
				bad = append(bad, fmt.Sprintf("%s %s (%s)", g.ID, g.Name, g.VPCID))
			}
		}
		if len(bad) > 0 {
			out = append(out, Finding{Field: "spec.securityGroupSelectorTerms", Line: o.Fields.Line("spec", "securityGroupSelectorTerms"),
				Message: fmt.Sprintf("selected security groups are outside cluster %s's VPC %s: %s", cl.Name, cl.VPCID, strings.Join(bad, ", ")),
				Fix:     "narrow the terms to groups of " + cl.VPCID})
		}
		return out
	},
}

var subnetPublic = &Rule{
	ID:            "subnet-public",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.Subnets},
	Summary:       "a selected subnet is public and `associatePublicIPAddress` is not set",
	Doc: "A public subnet (a route to an internet gateway) tagged for discovery is a classic cause of " +
		"\"instance up, node never registers\": nodes without a public IP there reach nothing outside the " +
		"VPC (the cluster's public endpoint, ECR, STS) unless VPC endpoints serve them. Select private " +
		"subnets, or set associatePublicIPAddress deliberately.",
	Check: func(c *Context, o *objects.Object) []Finding {
		if o.NodeClass.Spec.AssociatePublicIPAddress != nil {
			return nil
		}
		subnets, err := c.selectedSubnets(o)
		if err != nil {
			return c.unknownFact(err)
		}
		var pub []string
		for _, s := range subnets {
			if !s.Public {
				continue
			}
			ip := "instances get no public IP there (mapPublicIpOnLaunch false), so they reach nothing outside the VPC (the cluster's public endpoint, ECR, STS) unless VPC endpoints serve them"
			if s.MapPublicIPOnLaunch {
				ip = "instances get a public IP there (mapPublicIpOnLaunch true)"
			}
			name := s.Tags["Name"]
			if name != "" {
				name = " " + name
			}
			pub = append(pub, fmt.Sprintf("%s%s (%s) routes to an internet gateway and %s", s.ID, name, s.AvailabilityZone, ip))
		}
		if len(pub) == 0 {
			return nil
		}
		return []Finding{{
			Field:   "spec.subnetSelectorTerms",
			Line:    o.Fields.Line("spec", "subnetSelectorTerms"),
			Message: "the selector picks public subnets: " + strings.Join(pub, "; "),
			Fix:     "remove the discovery tag from the public subnets (or narrow the terms to private ones), or set associatePublicIPAddress deliberately",
		}}
	},
}

// selection is what an EC2NodeClass's subnet or security-group terms select, memoised per object for
// one evaluation: three rules read it. Providers memoise the answers per term.
type selection struct {
	subnets []facts.Subnet
	groups  []facts.SecurityGroup
	err     error
}

// selectedSubnets returns the subnets the class selects (terms ORed, without duplicates).
func (c *Context) selectedSubnets(o *objects.Object) ([]facts.Subnet, error) {
	r, ok := c.subnets.get(o)
	if !ok {
		r.subnets, r.err = selectUnion(c, o.NodeClass.Spec.SubnetSelectorTerms, c.Facts.Subnets, func(s facts.Subnet) string { return s.ID })
		c.subnets.put(o, r)
	}
	return r.subnets, r.err
}

// selectedGroups returns the security groups the class selects (terms ORed, without duplicates).
func (c *Context) selectedGroups(o *objects.Object) ([]facts.SecurityGroup, error) {
	r, ok := c.groups.get(o)
	if !ok {
		r.groups, r.err = selectUnion(c, o.NodeClass.Spec.SecurityGroupSelectorTerms, c.Facts.SecurityGroups, func(g facts.SecurityGroup) string { return g.ID })
		c.groups.put(o, r)
	}
	return r.groups, r.err
}

// selectUnion asks the provider for each term and returns the union of the answers, in order. The
// result may be the provider's own answer: read it, do not modify it.
func selectUnion[T any](c *Context, terms []objects.SelectorTerm, ask func(context.Context, facts.SelectorTerm) ([]T, error), id func(T) string) ([]T, error) {
	if len(terms) == 1 { // the common case: nothing to merge
		t := terms[0]
		return ask(c, facts.SelectorTerm{ID: t.ID, Name: t.Name, Tags: t.Tags})
	}
	seen := map[string]bool{}
	var out []T
	for _, t := range terms {
		got, err := ask(c, facts.SelectorTerm{ID: t.ID, Name: t.Name, Tags: t.Tags})
		if err != nil {
			return nil, err
		}
		for _, x := range got {
			if k := id(x); !seen[k] {
				seen[k] = true
				out = append(out, x)
			}
		}
	}
	return out, nil
}

func describeSelector(terms []objects.SelectorTerm) string {
	var parts []string
	for _, t := range terms {
		var p []string
		if t.ID != "" {
			p = append(p, "id "+t.ID)
		}
		if t.Name != "" {
			p = append(p, "name "+t.Name)
		}
		var ks []string
		for k, v := range t.Tags {
			ks = append(ks, k+"="+v)
		}
		sort.Strings(ks)
		if len(ks) > 0 {
			p = append(p, "tags "+strings.Join(ks, ","))
		}
		parts = append(parts, strings.Join(p, " "))
	}
	return strings.Join(parts, " | ")
}

// listInVPC completes a no-match fix (format with one %s for the cluster's name) with the command that
// lists what exists in the cluster's VPC, when the cluster is known.
func (c *Context) listInVPC(what, call, format string) string {
	cl, err := c.Facts.Cluster(c)
	if err != nil || cl.Name == "" {
		return fmt.Sprintf(format, "<cluster name>")
	}
	fix := fmt.Sprintf(format, cl.Name)
	if cl.VPCID != "" {
		region := ""
		if cl.Region != "" {
			region = " --region " + cl.Region
		}
		fix += fmt.Sprintf("; `aws ec2 %s%s --filters Name=vpc-id,Values=%s` lists the %s of cluster %s's VPC", call, region, cl.VPCID, what, cl.Name)
	}
	return fix
}
