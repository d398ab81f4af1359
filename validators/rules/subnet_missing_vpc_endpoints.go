package rules

import (
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/network"
)

var subnetMissingVPCEndpoints = &validators.Rule{
	ID:            "subnet-missing-vpc-endpoints",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Subnets, facts.SecurityGroups, facts.ClusterIPFamily},
	MayNeed:       []facts.Fact{facts.VPCEndpoints, facts.VPCCNI},
	Summary:       "a node subnet with no way out of the VPC lacks a usable EC2, STS or EKS Auth interface endpoint that joining needs",
	Doc: "In a subnet with no NAT gateway and no internet gateway, every AWS call a node makes while joining " +
		"must go through an interface endpoint: EC2 (nodeadm on AL2023 reads the instance with " +
		"DescribeInstances; aws-node's ipamd calls EC2 to set up networking), STS (aws-node with IRSA) and EKS " +
		"Auth (aws-node with Pod Identity). The endpoint must be available, have private DNS on and admit 443 " +
		"from the nodes. Without it nodeadm or aws-node waits and the node never becomes Ready.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		isolated, f, err := network.IsolatedSubnets(c, o)
		if err != nil || len(isolated) == 0 {
			return nil, err
		}
		services, cniErr := joinServices(c, o)
		if len(services) == 0 {
			return nil, cniErr
		}
		var defects []network.SubnetDefect
		fixFor := ""
		for _, s := range isolated {
			cidr, _ := network.SubnetCIDR(s)
			var missing []string
			sure := false
			for _, svc := range services {
				v, why, err := f.InterfaceFor(svc.name, cidr)
				if err != nil {
					return nil, err
				}
				if v != network.VerdictYes {
					missing = append(missing, why+" ("+svc.why+")")
					if fixFor == "" {
						fixFor = svc.name
					}
					sure = sure || v == network.VerdictNo
				}
			}
			if len(missing) > 0 {
				defects = append(defects, network.SubnetDefect{Subnet: s, Sure: sure, Detail: network.SubnetName(s) + " has no way out of the VPC and " + strings.Join(missing, "; ")})
			}
		}
		field, line := network.SelectorField(o, "subnetSelectorTerms")
		out := network.ZoneFindings(f.Subnets, defects, func(details []string, capped bool, zones []string) validators.Finding {
			msg := "nodes cannot make the AWS calls joining needs, so they launch but never become Ready: " + strings.Join(details, "; ")
			if capped {
				msg = "nodes may not be able to make the AWS calls joining needs: " + strings.Join(details, "; ")
				msg += network.CappedNote(zones)
			}
			return validators.Finding{Field: field, Line: line, Message: msg,
				Fix: f.CreateInterfaceEndpoint(fixFor, isolated)}
		})
		if len(out) == 0 && cniErr != nil {
			return nil, cniErr
		}
		return out, nil
	},
}

// joinService is an AWS service a node calls while joining, and why.
type joinService struct{ name, why string }

// joinServices returns the services the class's nodes call while joining: EC2 when nodeadm names
// them after their private DNS name (AL2023) or aws-node runs; STS or EKS Auth for aws-node's
// credentials. The error is set when aws-node's presence or credentials are unknown (the services
// returned are then those known to be needed).
func joinServices(c *validators.Context, o *objects.Object) ([]joinService, error) {
	var out []joinService
	if ami.BootFamily(o.NodeClass) == userdata.FamilyAL2023 && nodeNamingOf(c, o) == namingPrivateDNS {
		out = append(out, joinService{"ec2", "nodeadm calls ec2:DescribeInstances to name the node"})
	}
	cni, err := c.Facts.VPCCNI(c)
	if err != nil {
		return out, err
	}
	if cni.Present == nil {
		return out, facts.Unknown(facts.VPCCNI, "whether aws-node runs is unknown")
	}
	if *cni.Present {
		if len(out) == 0 {
			out = append(out, joinService{"ec2", "aws-node's ipamd calls the EC2 API to set up pod networking"})
		}
		switch cni.Credentials {
		case facts.CredentialsIRSA:
			out = append(out, joinService{"sts", "aws-node assumes its IRSA role through STS"})
		case facts.CredentialsPodIdentity:
			out = append(out, joinService{"eks-auth", "aws-node gets its Pod Identity credentials from EKS Auth"})
		}
	}
	return out, nil
}
