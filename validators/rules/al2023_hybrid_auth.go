package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
)

var al2023HybridAuth = &validators.Rule{
	ID:            "al2023-hybrid-auth",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.ClusterAuthenticationMode, facts.AccessEntries, facts.AWSAuth, facts.Roles},
	MayNeed:       []facts.Fact{facts.InstanceProfiles},
	Summary:       "AL2023 nodes whose role is covered only by an access entry",
	Doc: "A field report describes AL2023 nodes that never registered with access entries alone and joined " +
		"after the cluster moved to API_AND_CONFIG_MAP with an aws-auth mapping holding both node groups. " +
		"Karpenter's docs say an EC2_LINUX entry suffices, so this is a warning: if AL2023 nodes do not " +
		"register, add the mapping.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		if ami.Family(o.NodeClass) != userdata.FamilyAL2023 {
			return nil, nil
		}
		a, err := authorizationOf(c, o)
		if err != nil || a == nil {
			return nil, err
		}
		if a.awsAuthErr != nil {
			return nil, a.awsAuthErr
		}
		if !a.covered() || a.entry == nil || !a.entryOK || (a.cluster.AuthenticationMode == facts.ModeAPIAndConfigMap && a.mappingOK) {
			return nil, nil
		}
		fix := a.mapRolesFix()
		if a.cluster.AuthenticationMode == facts.ModeAPI {
			// EKS only moves CONFIG_MAP -> API_AND_CONFIG_MAP -> API: aws-auth cannot be enabled again.
			fix = fmt.Sprintf("cluster %s cannot return from mode API to API_AND_CONFIG_MAP (EKS never re-enables aws-auth), so the aws-auth workaround is not available; if AL2023 nodes do not register, inspect the entry: aws eks describe-access-entry --cluster-name %s --region %s --principal-arn %s",
				a.cluster.Name, a.cluster.Name, a.cluster.Region, a.entry.PrincipalARN)
		}
		return []validators.Finding{{
			Field: a.field,
			Line:  o.Fields.Line("spec", strings.TrimPrefix(a.field, "spec.")),
			Message: fmt.Sprintf("AL2023 nodes of role %s are authorized only by an %s access entry (mode %s): teams have seen such nodes never register until aws-auth also mapped the role with system:bootstrappers and system:nodes",
				a.role.Name, a.entry.Type, a.cluster.AuthenticationMode),
			Fix: fix,
		}}, nil
	},
}
