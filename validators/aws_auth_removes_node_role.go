package validators

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
)

var awsAuthRemovesNodeRole = &Rule{
	ID:            "aws-auth-removes-node-role",
	Kinds:         []string{KindAWSAuth},
	DefaultAction: config.ActionDeny,
	Scope:         ScopeAdmission,
	Needs:         []facts.Fact{facts.ClusterNodeClasses, facts.ClusterAuthenticationMode, facts.AccessEntries},
	Summary:       "an UPDATE or DELETE of aws-auth drops the mapping an existing EC2NodeClass's role depends on",
	Doc: "Editing aws-auth by hand can drop the mapping (or one of the two node groups) of the role " +
		"Karpenter's nodes use; when that mapping is what authorizes the role, new nodes stop joining. The " +
		"webhook refuses such an edit and lists the EC2NodeClasses that would stop joining nodes.",
}
