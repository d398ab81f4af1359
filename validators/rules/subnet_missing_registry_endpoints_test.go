package rules_test

import "testing"

func TestSubnetMissingRegistryEndpoints(t *testing.T) {
	testRule(t, "subnet-missing-registry-endpoints", []ruleCase{
		{name: "subnets-with-nat", in: nodeClass("default", eksSpec), facts: netFacts()},
		{name: "isolated-with-ecr-and-s3", in: nodeClass("default", eksSpec), facts: netFacts(isolatedWorld(usableEndpoints("ec2", "ecr.api", "ecr.dkr", "s3")...)...)},
		{name: "isolated-without-ecr", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(isolatedWorld(usableEndpoints("ec2", "s3")...)...)},
		{name: "isolated-without-s3-gateway", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(isolatedWorld(usableEndpoints("ec2", "ecr.api", "ecr.dkr")...)...)},
		{name: "endpoints-unknown", in: nodeClass("default", eksSpec), facts: netFacts(append(isolatedWorld(), without("vpcEndpoints"))...), notEvaluated: "not in the facts snapshot: vpcEndpoints"},
	})
}
