package rules_test

import (
	"net/url"
	"testing"
)

func TestNodeRoleTrustPolicy(t *testing.T) {
	trust := func(statements string) string {
		return `{"Version":"2012-10-17","Statement":` + statements + `}`
	}
	allowEC2 := `{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}`
	cnRole := listItem("name: "+nodeRole, "path: /", "arn: arn:aws-cn:iam::111122223333:role/"+nodeRole,
		`assumeRolePolicyDocument: '`+trust(`[{"Effect":"Allow","Principal":{"Service":"eks.amazonaws.com"},"Action":"sts:AssumeRole"}]`)+`'`)
	profileSpec := withRole("instanceProfile: " + nodeProfile + "\n")
	testRule(t, "node-role-trust-policy", []ruleCase{
		// EC2 may assume the role, in every way the policy grammar writes it.
		{name: "ec2-service", in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(ec2Trust))},
		{name: "statement-object", in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(allowEC2)))},
		{name: "lists", in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(
			`[{"Effect":"Allow","Principal":{"Service":["eks.amazonaws.com","ec2.amazonaws.com"]},"Action":["sts:TagSession","sts:AssumeRole"]}]`)))},
		{name: "china-principal", in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(
			`[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com.cn"},"Action":"sts:AssumeRole"}]`)))},
		{name: "any-principal", in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(`[{"Effect":"Allow","Principal":"*","Action":"sts:AssumeRole"}]`)))},
		{name: "any-aws-principal", in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(`[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]`)))},
		{name: "sts-wildcard", in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(`[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:*"}]`)))},
		{name: "any-action", in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(`[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"*"}]`)))},
		{name: "action-case", in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(`[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"STS:assumerole"}]`)))},
		{name: "conditional-deny", in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(
			`[` + allowEC2 + `,{"Effect":"Deny","Principal":"*","Action":"sts:AssumeRole","Condition":{"StringNotEquals":{"aws:SourceAccount":"111122223333"}}}]`)))},
		{name: "empty-condition", in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(
			`[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole","Condition":{}}]`)))},
		{name: "url-encoded", in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(url.QueryEscape(ec2Trust)))},
		{name: "profile-role-trusted", in: nodeClass("profile", profileSpec), facts: clusterFacts(withTrust(ec2Trust))},
		// EC2 may not.
		{name: "other-service", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(
			`[{"Effect":"Allow","Principal":{"Service":"eks.amazonaws.com"},"Action":"sts:AssumeRole"}]`)))},
		{name: "account-principal", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(
			`[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":"sts:AssumeRole"}]`)))},
		{name: "other-action", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(
			`[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRoleWithWebIdentity"}]`)))},
		{name: "no-statement", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(`[]`)))},
		{name: "deny-wins", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(
			`[` + allowEC2 + `,{"Sid":"NoInstances","Effect":"Deny","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:*"}]`)))},
		{name: "profile-role-untrusted", fires: 1, in: nodeClass("profile", profileSpec), facts: clusterFacts(withTrust(trust(`[]`)))},
		{name: "china-partition", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(roles(cnRole))},
		// Capped at warn: what is not evaluated might let EC2 in.
		{name: "only-conditional-allow", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(
			`[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole","Condition":{"StringEquals":{"aws:SourceAccount":"111122223333"}}}]`)))},
		{name: "not-principal", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(
			`[{"Effect":"Allow","NotPrincipal":{"AWS":"arn:aws:iam::444455556666:root"},"Action":"sts:AssumeRole"}]`)))},
		{name: "not-action", fires: 1, in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(trust(
			`[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"NotAction":"sts:TagSession"}]`)))},
		// Other rules report these.
		{name: "role-missing", in: nodeClass("typo", withRole("role: KarpenterNodeRole-prod\n")), facts: clusterFacts(withTrust(ec2Trust))},
		// Unknown: not evaluated, never passed.
		{name: "trust-policy-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(), notEvaluated: "no trust policy (assumeRolePolicyDocument) of role KarpenterNodeRole-prod-eks"},
		{name: "trust-policy-unreadable", in: nodeClass("default", eksSpec), facts: clusterFacts(withTrust(`{"Statement":`)), notEvaluated: "cannot be read"},
		{name: "roles-unknown", in: nodeClass("default", eksSpec), facts: clusterFacts(without("roles")), notEvaluated: "not in the facts snapshot: roles"},
		{name: "profiles-unknown", in: nodeClass("profile", profileSpec), facts: clusterFacts(withTrust(ec2Trust), without("instanceProfiles")), notEvaluated: "instanceProfiles"},
		{name: "no-facts", in: nodeClass("default", eksSpec), notEvaluated: "no facts: roles"},
	})
}
