package rules

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var awsAuthKeyNotRead = &validators.Rule{
	ID:            "aws-auth-key-not-read",
	Kinds:         []string{validators.KindAWSAuth},
	DefaultAction: config.ActionWarn,
	Summary:       "aws-auth has a data key EKS never reads (`maproles`, `MapRoles`, `mapRole`, …)",
	Doc: "EKS reads exactly three data keys of aws-auth, matched with their case: mapRoles, mapUsers and " +
		"mapAccounts. Whatever is under another key (maproles, MapRoles, mapRole, map_roles) maps nothing, " +
		"and nothing says so. The message names the key it seems meant to be. A warning; when the key holds " +
		"the mapping of a node role that mapRoles does not give, its nodes cannot join and " +
		"aws-auth-malformed denies it.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		return readConfigMap(c, o).findings(o, idAWSAuthKeyNotRead), nil
	},
}
