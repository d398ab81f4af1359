package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var nodeRoleAccessEntryType = &validators.Rule{
	ID:            "node-role-access-entry-type",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.ClusterAuthenticationMode, facts.AccessEntries, facts.Roles},
	MayNeed:       []facts.Fact{facts.InstanceProfiles},
	Summary:       "the node role's access entry is of a type that does not let the class's nodes join",
	Doc: "A STANDARD access entry cannot carry system: groups, so it never lets nodes join " +
		"(karpenter-provider-aws issue 7558); an EC2_WINDOWS entry does not serve Linux nodes, and type EC2 " +
		"(EKS Auto Mode's) gives the username system:node:{{SessionName}}, which fits only nodes nodeadm " +
		"names after their instance ID (the NodeConfig feature gate InstanceIdNodeName). EC2_LINUX serves " +
		"every family (Windows nodes then lack eks:kube-proxy-windows, a warning of its own). In mode " +
		"API_AND_CONFIG_MAP the entry also wins over an aws-auth mapping of the same role, so instances " +
		"launch and never become nodes. Delete the entry and create it again with type EC2_LINUX " +
		"(EC2_WINDOWS for Windows families, EC2 with instance-ID node names).",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		a, err := authorizationOf(c, o)
		if err != nil || a == nil {
			return nil, err
		}
		if a.entry == nil || a.entryOK || !a.cluster.HonoursAccessEntries() {
			return nil, nil
		}
		msg := fmt.Sprintf("the access entry for node role %s in cluster %s has type %s, which cannot let this class's nodes join; they need type %s",
			a.role.ARN, a.cluster.Name, a.entry.Type, a.wantType())
		if a.cluster.AuthenticationMode == facts.ModeAPIAndConfigMap && a.mappingOK {
			msg += " (its aws-auth mapping does not count: the entry wins)"
		}
		return []validators.Finding{{
			Field:   a.field,
			Line:    o.Fields.Line("spec", strings.TrimPrefix(a.field, "spec.")),
			Message: msg,
			Fix:     a.recreateEntry(),
		}}, nil
	},
}
