package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/network"
)

var subnetMissingRegistryEndpoints = &validators.Rule{
	ID:            "subnet-missing-registry-endpoints",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.Subnets, facts.SecurityGroups, facts.ClusterIPFamily},
	MayNeed:       []facts.Fact{facts.VPCEndpoints},
	Summary:       "a node subnet with no way out of the VPC lacks the ECR (api, dkr) interface endpoints or a path to S3",
	Doc: "aws-node, kube-proxy and most add-on images come from ECR, whose image layers are served from S3. " +
		"In a subnet with no NAT gateway and no internet gateway, pulls need usable ecr.api and ecr.dkr " +
		"interface endpoints and an S3 gateway endpoint in the subnet's route table (or an S3 interface " +
		"endpoint). The AMI may have the images cached, so this is a warning.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		isolated, f, err := network.IsolatedSubnets(c, o)
		if err != nil || len(isolated) == 0 {
			return nil, err
		}
		var details []string
		var fixes []string
		for _, s := range isolated {
			cidr, _ := network.SubnetCIDR(s)
			var missing []string
			for _, svc := range []string{"ecr.api", "ecr.dkr"} {
				v, why, err := f.InterfaceFor(svc, cidr)
				if err != nil {
					return nil, err
				}
				if v != network.VerdictYes {
					missing = append(missing, why)
					if fix := f.CreateInterfaceEndpoint(svc, isolated); !slices.Contains(fixes, fix) {
						fixes = append(fixes, fix)
					}
				}
			}
			if !f.GatewayFor("s3", s.RouteTableID) {
				if v, _, err := f.InterfaceFor("s3", cidr); err != nil {
					return nil, err
				} else if v != network.VerdictYes {
					missing = append(missing, fmt.Sprintf("no s3 gateway endpoint in route table %s and no usable s3 interface endpoint", s.RouteTableID))
					if fix := fmt.Sprintf("`aws ec2 create-vpc-endpoint --vpc-id %s --vpc-endpoint-type Gateway --service-name %s --route-table-ids %s`", f.Cluster.VPCID, network.EndpointService(f.Cluster, "s3"), s.RouteTableID); !slices.Contains(fixes, fix) {
						fixes = append(fixes, fix)
					}
				}
			}
			if len(missing) > 0 {
				details = append(details, network.SubnetName(s)+" has no way out of the VPC and "+strings.Join(missing, "; "))
			}
		}
		if len(details) == 0 {
			return nil, nil
		}
		field, line := network.SelectorField(o, "subnetSelectorTerms")
		return []validators.Finding{{Field: field, Line: line,
			Message: "image pulls from ECR may fail (aws-node and kube-proxy images, unless the AMI has them cached): " + strings.Join(details, "; "),
			Fix:     strings.Join(fixes, "; "),
		}}, nil
	},
}
