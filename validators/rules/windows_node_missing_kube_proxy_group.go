package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
)

var windowsNodeMissingKubeProxyGroup = &validators.Rule{
	ID:            "windows-node-missing-kube-proxy-group",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.ClusterAuthenticationMode, facts.Roles},
	MayNeed:       []facts.Fact{facts.AccessEntries, facts.AWSAuth, facts.InstanceProfiles},
	Summary:       "Windows nodes join without the group eks:kube-proxy-windows",
	Doc: "EKS requires Windows nodes' identity to carry the group eks:kube-proxy-windows for DNS resolution " +
		"in Windows pods: an EC2_WINDOWS access entry gives it, an EC2_LINUX entry does not, and an aws-auth " +
		"mapping must list it next to system:bootstrappers and system:nodes. Without it the nodes join and " +
		"become Ready, but Windows pods cannot resolve names. Re-create the access entry as EC2_WINDOWS, or " +
		"add the group to the role's aws-auth mapping.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		if !userdata.IsWindows(ami.Family(o.NodeClass)) {
			return nil, nil
		}
		a, err := authorizationOf(c, o)
		if err != nil || a == nil {
			return nil, err
		}
		entry, mapping := a.inEffect()
		var msg, fix string
		switch {
		case entry != nil:
			if entry.Type != facts.EntryEC2Linux {
				return nil, nil // EC2_WINDOWS carries the group; other types are node-role-access-entry-type's
			}
			msg = fmt.Sprintf("the access entry of Windows node role %s in cluster %s has type EC2_LINUX, which lets nodes join without the group %s that EC2_WINDOWS gives, so DNS resolution in Windows pods fails",
				a.role.ARN, a.cluster.Name, kubeProxyWindowsGroup)
			fix = a.recreateEntry()
		case mapping != nil:
			if !a.mappingOK || slices.Contains(mapping.Groups, kubeProxyWindowsGroup) {
				return nil, nil // a mapping that does not let nodes join is node-role-not-authorized's
			}
			msg = fmt.Sprintf("aws-auth maps Windows node role %s without the group %s: nodes join, but DNS resolution in Windows pods fails",
				a.role.PathlessARN(), kubeProxyWindowsGroup)
			fix = "replace the role's aws-auth mapRoles entry with:\n" + a.mapRolesEntry()
		default:
			if a.awsAuthErr != nil {
				return nil, a.awsAuthErr
			}
			return nil, nil
		}
		return []validators.Finding{{
			Field:   a.field,
			Line:    o.Fields.Line("spec", strings.TrimPrefix(a.field, "spec.")),
			Message: msg,
			Fix:     fix,
		}}, nil
	},
}

// kubeProxyWindowsGroup is the group EKS requires of Windows nodes for DNS in Windows pods.
const kubeProxyWindowsGroup = "eks:kube-proxy-windows"
