package rules

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var awsAuthGroupsMisread = &validators.Rule{
	ID:            "aws-auth-groups-misread",
	Kinds:         []string{validators.KindAWSAuth},
	DefaultAction: config.ActionWarn,
	Summary:       "EKS reads an entry's `groups` other than written: a string, one group holding a list, a misspelt key, an item that is not a string",
	Doc: "A list item indented one space more than the one before it (\"- system:nodes\" one column right " +
		"of \"- system:bootstrappers\") continues that item, so YAML reads the single group " +
		"\"system:bootstrappers - system:nodes\", and EKS grants neither group. groups written as a string (groups: system:masters) " +
		"is a type error: EKS keeps the entry without groups. An item that is not a string (a number, or " +
		"yes, on or y, which YAML 1.1 reads as booleans) becomes an empty group, and a key such as group is " +
		"never read. A warning for entries not written for nodes; for a node role's entry the same mistake " +
		"stops its nodes from joining and aws-auth-malformed denies it.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		return readConfigMap(c, o).findings(o, idAWSAuthGroupsMisread), nil
	},
}
