package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var privateEndpointDNSDisabled = &validators.Rule{
	ID:            "private-endpoint-dns-disabled",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.ClusterEndpointAccess, facts.VPC},
	Summary:       "the cluster's private endpoint is on but the VPC's DNS support or DNS hostnames is off",
	Doc: "EKS serves the private endpoint through a private hosted zone that the VPC only uses with both " +
		"enableDnsSupport and enableDnsHostnames. Without them nodes resolve the endpoint to its public " +
		"addresses: with public access on they need a way out and an allowed CIDR, with it off they cannot " +
		"reach the API server at all. Turn both attributes on.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		cl, err := c.Facts.Cluster(c)
		if err != nil {
			return nil, err
		}
		if !*cl.EndpointPrivateAccess {
			return nil, nil
		}
		vpc, err := c.Facts.VPC(c)
		if err != nil {
			return nil, err
		}
		var off []string
		var fix []string
		if !*vpc.EnableDNSSupport {
			off = append(off, "enableDnsSupport")
			fix = append(fix, fmt.Sprintf("`aws ec2 modify-vpc-attribute --vpc-id %s --enable-dns-support '{\"Value\":true}'`", cl.VPCID))
		}
		if !*vpc.EnableDNSHostnames {
			off = append(off, "enableDnsHostnames")
			fix = append(fix, fmt.Sprintf("`aws ec2 modify-vpc-attribute --vpc-id %s --enable-dns-hostnames '{\"Value\":true}'`", cl.VPCID))
		}
		if len(off) == 0 {
			return nil, nil
		}
		then := "public access is off, so nodes cannot reach the API server unless a resolver of your own answers for the endpoint"
		if *cl.EndpointPublicAccess {
			then = "nodes then reach the public endpoint, which needs a way out of the VPC and an address inside publicAccessCidrs"
		}
		return []validators.Finding{{Field: "spec", Line: o.Fields.Line("spec"),
			Message: fmt.Sprintf("cluster %s has its private endpoint on but VPC %s has %s off, so EKS's private hosted zone is not used and nodes resolve the endpoint publicly; %s", cl.Name, cl.VPCID, strings.Join(off, " and "), then),
			Fix:     strings.Join(fix, " and "),
		}}, nil
	},
}
