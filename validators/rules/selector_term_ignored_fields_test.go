package rules_test

import (
	"strings"
	"testing"
)

func TestSelectorTermIgnoredFields(t *testing.T) {
	testRule(t, "selector-term-ignored-fields", []ruleCase{
		{name: "clean", in: nodeClass("clean", baseSpec)},
		{name: "id-alone", in: nodeClass("id", strings.Replace(baseSpec, "subnetSelectorTerms:\n  - tags:\n      karpenter.sh/discovery: prod\n", "subnetSelectorTerms:\n  - id: subnet-0abc\n  - tags: {karpenter.sh/discovery: prod}\n", 1))},
		{name: "subnet-id-and-tags", fires: 1, in: nodeClass("subnet", strings.Replace(baseSpec, "  - tags:\n      karpenter.sh/discovery: prod\nsecurityGroupSelectorTerms", "  - id: subnet-0abc\n    tags:\n      karpenter.sh/discovery: prod\nsecurityGroupSelectorTerms", 1))},
		{name: "sg-id-and-name", fires: 1, in: nodeClass("sg", baseSpec+"  - id: sg-0abc\n    name: eks-node\n")},
		{name: "ami-ssm-and-owner", fires: 1, in: nodeClass("ami", strings.Replace(baseSpec, "  - alias: al2023@v20251112\n", "  - ssmParameter: /platform/ami/latest\n    owner: self\n", 1)+"amiFamily: AL2023\n")},
	})
}
