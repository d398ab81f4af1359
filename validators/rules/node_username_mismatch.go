package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var nodeUsernameMismatch = &validators.Rule{
	ID:            "node-username-mismatch",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.ClusterAuthenticationMode, facts.Roles},
	MayNeed:       []facts.Fact{facts.AccessEntries, facts.AWSAuth, facts.InstanceProfiles},
	Summary:       "the mapping that authorizes the node role gives a username other than system:node:<the node's name>",
	Doc: "The Node authorizer accepts a kubelet only as system:node:<its node name>. Nodes are named after " +
		"their private DNS name, so the mapping that authorizes the node role (its access entry where the " +
		"cluster's mode reads entries and one exists, else its aws-auth mapping) must give the username " +
		"system:node:{{EC2PrivateDNSName}}; when nodeadm names them after their instance ID (the NodeConfig " +
		"feature gate InstanceIdNodeName on AL2023), system:node:{{SessionName}}, which an access entry of " +
		"type EC2 gives. Otherwise instances launch and the kubelet authenticates, but it may not create " +
		"its Node: the node never appears, and the kubelet logs that node \"<username's name>\" is not " +
		"allowed to modify node \"<its name>\". An access " +
		"entry without a recorded username counts with the one EKS gives its type. The fix is the mapping " +
		"with the right username, the access entry of the right type, or removing the feature gate.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		a, err := authorizationOf(c, o)
		if err != nil || a == nil {
			return nil, err
		}
		entry, mapping := a.inEffect()
		var msg, fix string
		switch {
		case entry != nil:
			if !a.entryOK {
				return nil, nil // node-role-access-entry-type
			}
			user := entryUsername(entry)
			if a.naming.accepts(user) {
				return nil, nil
			}
			msg = fmt.Sprintf("the %s access entry of node role %s in cluster %s gives the username %s, but this class's nodes are %s, so their kubelet must authenticate as %s; the Node authorizer refuses any other name and the nodes never register",
				entry.Type, a.role.ARN, a.cluster.Name, user, a.naming.describe(), a.naming.username())
			fix = a.recreateEntry()
		case mapping != nil:
			if a.naming.accepts(mapping.Username) {
				return nil, nil
			}
			as := fmt.Sprintf("%q", mapping.Username)
			if cause := awsAuthCause(a.awsAuthData, a.role.PathlessARN()); cause != "" {
				as += " (" + cause + ")"
			}
			msg = fmt.Sprintf("aws-auth maps node role %s with username %s, but this class's nodes are %s, so their kubelet must authenticate as %s; the Node authorizer refuses any other name and the nodes never register",
				a.role.PathlessARN(), as, a.naming.describe(), a.naming.username())
			fix = "replace the role's aws-auth mapRoles entry with:\n" + a.mapRolesEntry()
			if a.naming == namingInstanceID && a.cluster.HonoursAccessEntries() {
				fix += "\nor give the role an access entry (it wins over aws-auth): " + a.createEntry()
			}
		default:
			if a.awsAuthErr != nil {
				return nil, a.awsAuthErr // only aws-auth could tell which mapping is in effect
			}
			return nil, nil // nothing maps the role: node-role-not-authorized
		}
		if a.naming == namingInstanceID {
			fix += "\nor name nodes after their private DNS name: remove " + instanceIDGate + " from the NodeConfig featureGates in spec.userData"
		}
		return []validators.Finding{{
			Field:   a.field,
			Line:    o.Fields.Line("spec", strings.TrimPrefix(a.field, "spec.")),
			Message: msg,
			Fix:     fix,
		}}, nil
	},
}

// entryUsername is the username an access entry gives: the one DescribeAccessEntry returned, else the
// one EKS gives entries of its type (it refuses custom usernames starting with system:, so node entries
// carry these).
func entryUsername(e *facts.AccessEntry) string {
	switch {
	case e.Username != "":
		return e.Username
	case e.Type == entryEC2:
		return namingInstanceID.username()
	}
	return namingPrivateDNS.username()
}
