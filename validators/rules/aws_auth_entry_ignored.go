package rules

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var awsAuthEntryIgnored = &validators.Rule{
	ID:            "aws-auth-entry-ignored",
	Kinds:         []string{validators.KindAWSAuth},
	DefaultAction: config.ActionWarn,
	Summary:       "EKS drops or ignores an aws-auth entry, a field or a key of one that maps no node role, or all of `mapUsers`/`mapAccounts`",
	Doc: "EKS's authenticator keeps what it can read of aws-auth and drops the rest, logging only into the " +
		"control plane's authenticator log: a mapUsers or mapAccounts value that is not valid YAML or not a " +
		"list (all its entries), an entry that is not a mapping or has no usable rolearn (userarn) or sso, a " +
		"field of the wrong type (left empty), an entry key it does not know (read in any case, so roleARN " +
		"is rolearn, but usernmae is nothing), an entry a later one for the same ARN replaces, and " +
		"userarns that differ only in case (it matches either, at random). The identities those entries " +
		"were written for are not mapped as intended. A warning: the same problems that cost a node role " +
		"its mapping are denied by aws-auth-malformed.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		return readConfigMap(c, o).findings(o, idAWSAuthEntryIgnored), nil
	},
}
