package rules_test

import "testing"

func TestIMDSv1Enabled(t *testing.T) {
	testRule(t, "imds-v1-enabled", []ruleCase{
		{name: "default", in: nodeClass("default", baseSpec)},
		{name: "required", in: nodeClass("required", baseSpec+"metadataOptions:\n  httpTokens: required\n")},
		{name: "optional", fires: 1, in: nodeClass("optional", baseSpec+"metadataOptions:\n  httpEndpoint: enabled\n  httpTokens: optional\n")},
	})
}
