package fakeaws

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

const (
	allowed      = facts.DecisionAllowed
	implicitDeny = facts.DecisionImplicitDeny
	explicitDeny = facts.DecisionExplicitDeny
)

// doc wraps statements in a policy document.
func doc(statements ...string) string {
	return `{"Version":"2012-10-17","Statement":[` + strings.Join(statements, ",") + `]}`
}

// ask evaluates one question against policies (and a boundary, "" for none), as the simulator would.
func ask(t *testing.T, policies []string, boundary, action, resource string, ctx map[string][]string) simAnswer {
	t.Helper()
	var identity []*policyDoc
	for i, d := range policies {
		p, err := parsePolicy("p", policySourceType, d)
		if err != nil {
			t.Fatalf("policy %d: %v", i, err)
		}
		identity = append(identity, p)
	}
	var b *policyDoc
	if boundary != "" {
		var err error
		if b, err = parsePolicy("b", policySourceType, boundary); err != nil {
			t.Fatalf("boundary: %v", err)
		}
	}
	lower := map[string][]string{}
	for k, v := range ctx {
		lower[strings.ToLower(k)] = v
	}
	return evaluate(identity, b, simQuestion{action: action, resource: resource, context: lower})
}

func TestEvaluate(t *testing.T) {
	const (
		bucket = "arn:aws:s3:::Bucket/key"
		subnet = "arn:aws:ec2:us-east-1:111122223333:subnet/subnet-0private1"
	)
	allowAll := `{"Effect":"Allow","Action":"*","Resource":"*"}`
	cond := func(c string) string {
		return `{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*","Condition":` + c + `}`
	}
	v := func(vs ...string) []string { return vs }
	for _, tc := range []struct {
		name             string
		policies         []string
		boundary         string
		action, resource string
		ctx              map[string][]string
		decision         string
		missing          []string
	}{
		// Action and NotAction.
		{name: "no policy", action: "ec2:RunInstances", resource: "*", decision: implicitDeny},
		{name: "exact action", policies: v(doc(`{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*"}`)), action: "ec2:RunInstances", resource: "*", decision: allowed},
		{name: "action list", policies: v(doc(`{"Effect":"Allow","Action":["iam:PassRole","ec2:RunInstances"],"Resource":"*"}`)), action: "ec2:RunInstances", resource: "*", decision: allowed},
		{name: "action case-insensitive", policies: v(doc(`{"Effect":"Allow","Action":"EC2:runinstances","Resource":"*"}`)), action: "ec2:RunInstances", resource: "*", decision: allowed},
		{name: "action star", policies: v(doc(`{"Effect":"Allow","Action":"ec2:Describe*","Resource":"*"}`)), action: "ec2:DescribeImages", resource: "*", decision: allowed},
		{name: "action star no match", policies: v(doc(`{"Effect":"Allow","Action":"ec2:Describe*","Resource":"*"}`)), action: "ec2:RunInstances", resource: "*", decision: implicitDeny},
		{name: "action question mark", policies: v(doc(`{"Effect":"Allow","Action":"ec2:Describe?mages","Resource":"*"}`)), action: "ec2:DescribeImages", resource: "*", decision: allowed},
		{name: "action question mark is one character", policies: v(doc(`{"Effect":"Allow","Action":"ec2:Describe?","Resource":"*"}`)), action: "ec2:DescribeImages", resource: "*", decision: implicitDeny},
		{name: "other service", policies: v(doc(`{"Effect":"Allow","Action":"ec2:*","Resource":"*"}`)), action: "iam:PassRole", resource: "*", decision: implicitDeny},
		{name: "NotAction allows the rest", policies: v(doc(`{"Effect":"Allow","NotAction":"iam:*","Resource":"*"}`)), action: "ec2:RunInstances", resource: "*", decision: allowed},
		{name: "NotAction excludes", policies: v(doc(`{"Effect":"Allow","NotAction":["iam:*"],"Resource":"*"}`)), action: "iam:PassRole", resource: "*", decision: implicitDeny},

		// Resource and NotResource.
		{name: "resource wildcard", policies: v(doc(`{"Effect":"Allow","Action":"*","Resource":"arn:aws:ec2:us-east-1:*:subnet/*"}`)), action: "ec2:RunInstances", resource: subnet, decision: allowed},
		{name: "resource other region", policies: v(doc(`{"Effect":"Allow","Action":"*","Resource":"arn:aws:ec2:us-west-2:*:subnet/*"}`)), action: "ec2:RunInstances", resource: subnet, decision: implicitDeny},
		{name: "resource case-sensitive", policies: v(doc(`{"Effect":"Allow","Action":"*","Resource":"arn:aws:s3:::bucket/*"}`)), action: "s3:GetObject", resource: bucket, decision: implicitDeny},
		{name: "resource pattern vs *", policies: v(doc(`{"Effect":"Allow","Action":"*","Resource":"arn:aws:s3:::Bucket/*"}`)), action: "s3:GetObject", resource: "*", decision: implicitDeny},
		{name: "NotResource", policies: v(doc(`{"Effect":"Allow","Action":"*","NotResource":"arn:aws:s3:::Bucket/*"}`)), action: "ec2:RunInstances", resource: subnet, decision: allowed},
		{name: "NotResource excludes", policies: v(doc(`{"Effect":"Allow","Action":"*","NotResource":"arn:aws:s3:::Bucket/*"}`)), action: "s3:GetObject", resource: bucket, decision: implicitDeny},
		{name: "escaped star is literal", policies: v(doc(`{"Effect":"Allow","Action":"*","Resource":"arn:aws:s3:::Bucket/${*}"}`)), action: "s3:GetObject", resource: bucket, decision: implicitDeny},
		{name: "escaped star matches a star", policies: v(doc(`{"Effect":"Allow","Action":"*","Resource":"arn:aws:s3:::Bucket/${*}"}`)), action: "s3:GetObject", resource: "arn:aws:s3:::Bucket/*", decision: allowed},

		// Effects.
		{name: "explicit deny wins", policies: v(doc(allowAll), doc(`{"Effect":"Deny","Action":"ec2:RunInstances","Resource":"*"}`)), action: "ec2:RunInstances", resource: "*", decision: explicitDeny},
		{name: "deny of another action", policies: v(doc(allowAll, `{"Effect":"Deny","Action":"iam:*","Resource":"*"}`)), action: "ec2:RunInstances", resource: "*", decision: allowed},
		{name: "deny with NotAction", policies: v(doc(allowAll, `{"Effect":"Deny","NotAction":"ec2:Describe*","Resource":"*"}`)), action: "ec2:RunInstances", resource: "*", decision: explicitDeny},
		{name: "deny whose condition holds", policies: v(doc(allowAll, `{"Effect":"Deny","Action":"*","Resource":"*","Condition":{"StringNotEquals":{"aws:RequestedRegion":"us-east-1"}}}`)), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:RequestedRegion": {"eu-west-1"}}, decision: explicitDeny},
		{name: "deny whose condition fails", policies: v(doc(allowAll, `{"Effect":"Deny","Action":"*","Resource":"*","Condition":{"StringNotEquals":{"aws:RequestedRegion":"us-east-1"}}}`)), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:RequestedRegion": {"us-east-1"}}, decision: allowed},

		// String operators, and keys the request lacks.
		{name: "StringEquals", policies: v(doc(cond(`{"StringEquals":{"aws:RequestedRegion":"us-east-1"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:RequestedRegion": {"us-east-1"}}, decision: allowed},
		{name: "StringEquals other value", policies: v(doc(cond(`{"StringEquals":{"aws:RequestedRegion":"us-east-1"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:RequestedRegion": {"eu-west-1"}}, decision: implicitDeny},
		{name: "StringEquals missing key", policies: v(doc(cond(`{"StringEquals":{"aws:RequestedRegion":"us-east-1"}}`))), action: "ec2:RunInstances", resource: "*", decision: implicitDeny, missing: v("aws:RequestedRegion")},
		{name: "StringEquals is case-sensitive", policies: v(doc(cond(`{"StringEquals":{"aws:RequestedRegion":"US-EAST-1"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:RequestedRegion": {"us-east-1"}}, decision: implicitDeny},
		{name: "keys are case-insensitive", policies: v(doc(cond(`{"StringEquals":{"AWS:requestedREGION":"us-east-1"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:RequestedRegion": {"us-east-1"}}, decision: allowed},
		{name: "values are ORed", policies: v(doc(cond(`{"StringEquals":{"iam:PassedToService":["ec2.amazonaws.com","ec2.amazonaws.com.cn"]}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com.cn"}}, decision: allowed},
		{name: "keys are ANDed", policies: v(doc(cond(`{"StringEquals":{"a:one":"1","a:two":"2"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"a:one": {"1"}, "a:two": {"3"}}, decision: implicitDeny},
		{name: "operators are ANDed", policies: v(doc(cond(`{"StringEquals":{"a:one":"1"},"StringLike":{"a:two":"2*"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"a:one": {"1"}, "a:two": {"22"}}, decision: allowed},
		{name: "a failing key hides the missing one", policies: v(doc(cond(`{"StringEquals":{"a:one":"1","a:two":"2"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"a:one": {"9"}}, decision: implicitDeny},
		{name: "missing keys of every operator", policies: v(doc(cond(`{"StringEquals":{"a:one":"1"},"StringLike":{"a:two":"*"}}`))), action: "ec2:RunInstances", resource: "*", decision: implicitDeny, missing: v("a:one", "a:two")},
		{name: "missing keys only when the statement would apply", policies: v(doc(`{"Effect":"Allow","Action":"iam:PassRole","Resource":"*","Condition":{"StringEquals":{"iam:PassedToService":"ec2.amazonaws.com"}}}`)), action: "ec2:RunInstances", resource: "*", decision: implicitDeny},
		{name: "no missing keys when allowed", policies: v(doc(cond(`{"StringEquals":{"a:one":"1"}}`), `{"Effect":"Allow","Action":"*","Resource":"*"}`)), action: "ec2:RunInstances", resource: "*", decision: allowed},
		{name: "StringNotEquals", policies: v(doc(cond(`{"StringNotEquals":{"a:k":"x"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"a:k": {"x"}}, decision: implicitDeny},
		{name: "StringNotEquals on a missing key holds", policies: v(doc(cond(`{"StringNotEquals":{"a:k":"x"}}`))), action: "ec2:RunInstances", resource: "*", decision: allowed},
		{name: "StringEqualsIgnoreCase", policies: v(doc(cond(`{"StringEqualsIgnoreCase":{"a:k":"OWNED"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"a:k": {"owned"}}, decision: allowed},
		{name: "StringNotEqualsIgnoreCase", policies: v(doc(cond(`{"StringNotEqualsIgnoreCase":{"a:k":"OWNED"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"a:k": {"owned"}}, decision: implicitDeny},
		{name: "StringLike", policies: v(doc(cond(`{"StringLike":{"aws:RequestTag/karpenter.sh/nodepool":"*"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:RequestTag/karpenter.sh/nodepool": {"default"}}, decision: allowed},
		{name: "StringLike star takes the empty string", policies: v(doc(cond(`{"StringLike":{"aws:RequestTag/karpenter.sh/nodepool":"*"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:RequestTag/karpenter.sh/nodepool": {""}}, decision: allowed},
		{name: "StringLike question marks", policies: v(doc(cond(`{"StringLike":{"a:k":"team-??"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"a:k": {"team-abc"}}, decision: implicitDeny},
		{name: "StringNotLike", policies: v(doc(cond(`{"StringNotLike":{"a:k":"prod-*"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"a:k": {"prod-eks"}}, decision: implicitDeny},
		{name: "StringEquals escape", policies: v(doc(cond(`{"StringEquals":{"a:k":"a${*}b"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"a:k": {"a*b"}}, decision: allowed},

		// ARN, Bool, Null, numeric, date and IP operators.
		{name: "ArnLike", policies: v(doc(cond(`{"ArnLike":{"aws:SourceArn":"arn:aws:iam::*:role/Karpenter*"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:SourceArn": {"arn:aws:iam::111122223333:role/KarpenterNodeRole"}}, decision: allowed},
		{name: "ArnLike star stays in its part", policies: v(doc(cond(`{"ArnLike":{"aws:SourceArn":"arn:aws:*:role/x"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:SourceArn": {"arn:aws:iam::111122223333:role/x"}}, decision: implicitDeny},
		{name: "ArnEquals takes wildcards too", policies: v(doc(cond(`{"ArnEquals":{"aws:SourceArn":"arn:aws:iam::111122223333:role/*"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:SourceArn": {"arn:aws:iam::111122223333:role/a/b"}}, decision: allowed},
		{name: "ArnLike on a non-ARN", policies: v(doc(cond(`{"ArnLike":{"aws:SourceArn":"*"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:SourceArn": {"not-an-arn"}}, decision: implicitDeny},
		{name: "ArnNotLike", policies: v(doc(cond(`{"ArnNotLike":{"aws:SourceArn":"arn:aws:iam::*:role/Admin"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:SourceArn": {"arn:aws:iam::111122223333:role/Admin"}}, decision: implicitDeny},
		{name: "Bool", policies: v(doc(cond(`{"Bool":{"aws:SecureTransport":true}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:SecureTransport": {"TRUE"}}, decision: allowed},
		{name: "Bool false", policies: v(doc(cond(`{"Bool":{"aws:SecureTransport":"true"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:SecureTransport": {"false"}}, decision: implicitDeny},
		{name: "Null true: absent", policies: v(doc(cond(`{"Null":{"aws:RequestTag/team":"true"}}`))), action: "ec2:RunInstances", resource: "*", decision: allowed},
		{name: "Null true: present", policies: v(doc(cond(`{"Null":{"aws:RequestTag/team":"true"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:RequestTag/team": {"a"}}, decision: implicitDeny},
		{name: "Null false: absent is no missing key", policies: v(doc(cond(`{"Null":{"aws:RequestTag/team":"false"}}`))), action: "ec2:RunInstances", resource: "*", decision: implicitDeny},
		{name: "NumericLessThan", policies: v(doc(cond(`{"NumericLessThan":{"a:n":10}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"a:n": {"9.5"}}, decision: allowed},
		{name: "NumericGreaterThanEquals", policies: v(doc(cond(`{"NumericGreaterThanEquals":{"a:n":"10"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"a:n": {"9"}}, decision: implicitDeny},
		{name: "NumericEquals on a non-number", policies: v(doc(cond(`{"NumericEquals":{"a:n":"1"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"a:n": {"one"}}, decision: implicitDeny},
		{name: "DateLessThan", policies: v(doc(cond(`{"DateLessThan":{"aws:CurrentTime":"2026-01-01T00:00:00Z"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:CurrentTime": {"2025-06-01T12:00:00Z"}}, decision: allowed},
		{name: "DateGreaterThan epoch", policies: v(doc(cond(`{"DateGreaterThan":{"aws:EpochTime":"1767225600"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:EpochTime": {"2025-06-01T12:00:00Z"}}, decision: implicitDeny},
		{name: "IpAddress", policies: v(doc(cond(`{"IpAddress":{"aws:SourceIp":["203.0.113.0/24","2001:db8::/32"]}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:SourceIp": {"203.0.113.10"}}, decision: allowed},
		{name: "NotIpAddress", policies: v(doc(cond(`{"NotIpAddress":{"aws:SourceIp":"203.0.113.10"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:SourceIp": {"203.0.113.10"}}, decision: implicitDeny},

		// IfExists and set qualifiers.
		{name: "IfExists on a missing key", policies: v(doc(cond(`{"StringEqualsIfExists":{"aws:RequestTag/eks:eks-cluster-name":"prod-eks"}}`))), action: "ec2:RunInstances", resource: "*", decision: allowed},
		{name: "IfExists on a present key", policies: v(doc(cond(`{"StringEqualsIfExists":{"aws:RequestTag/eks:eks-cluster-name":"prod-eks"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:RequestTag/eks:eks-cluster-name": {"other"}}, decision: implicitDeny},
		{name: "ForAllValues subset", policies: v(doc(cond(`{"ForAllValues:StringEquals":{"aws:TagKeys":["Name","karpenter.sh/nodeclaim"]}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:TagKeys": {"Name"}}, decision: allowed},
		{name: "ForAllValues extra value", policies: v(doc(cond(`{"ForAllValues:StringEquals":{"aws:TagKeys":["Name","karpenter.sh/nodeclaim"]}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:TagKeys": {"Name", "team"}}, decision: implicitDeny},
		{name: "ForAllValues missing key holds", policies: v(doc(cond(`{"ForAllValues:StringEquals":{"aws:TagKeys":["Name"]}}`))), action: "ec2:RunInstances", resource: "*", decision: allowed},
		{name: "ForAllValues StringLike", policies: v(doc(cond(`{"ForAllValues:StringLike":{"aws:TagKeys":["karpenter.*"]}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:TagKeys": {"karpenter.sh/nodepool", "karpenter.k8s.aws/ec2nodeclass"}}, decision: allowed},
		{name: "ForAnyValue one matches", policies: v(doc(cond(`{"ForAnyValue:StringEquals":{"aws:TagKeys":"team"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:TagKeys": {"Name", "team"}}, decision: allowed},
		{name: "ForAnyValue none matches", policies: v(doc(cond(`{"ForAnyValue:StringEquals":{"aws:TagKeys":"team"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:TagKeys": {"Name"}}, decision: implicitDeny},
		{name: "ForAnyValue missing key", policies: v(doc(cond(`{"ForAnyValue:StringEquals":{"aws:TagKeys":"team"}}`))), action: "ec2:RunInstances", resource: "*", decision: implicitDeny, missing: v("aws:TagKeys")},
		{name: "ForAnyValue negated", policies: v(doc(cond(`{"ForAnyValue:StringNotEquals":{"aws:TagKeys":"Name"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:TagKeys": {"Name", "team"}}, decision: allowed},
		{name: "ForAllValues negated", policies: v(doc(cond(`{"ForAllValues:StringNotLike":{"aws:TagKeys":"aws:*"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:TagKeys": {"Name", "aws:cloudformation:stack"}}, decision: implicitDeny},
		{name: "several values without qualifier: any matches", policies: v(doc(cond(`{"StringEquals":{"aws:TagKeys":"Name"}}`))), action: "ec2:RunInstances", resource: "*", ctx: map[string][]string{"aws:TagKeys": {"team", "Name"}}, decision: allowed},

		// Permissions boundary.
		{name: "boundary allows", policies: v(doc(allowAll)), boundary: doc(`{"Effect":"Allow","Action":"ec2:*","Resource":"*"}`), action: "ec2:RunInstances", resource: "*", decision: allowed},
		{name: "boundary does not allow", policies: v(doc(allowAll)), boundary: doc(`{"Effect":"Allow","Action":"ec2:Describe*","Resource":"*"}`), action: "ec2:RunInstances", resource: "*", decision: implicitDeny},
		{name: "boundary alone allows nothing", boundary: doc(allowAll), action: "ec2:RunInstances", resource: "*", decision: implicitDeny},
		{name: "boundary denies", policies: v(doc(allowAll)), boundary: doc(allowAll, `{"Effect":"Deny","Action":"ec2:RunInstances","Resource":"*"}`), action: "ec2:RunInstances", resource: "*", decision: explicitDeny},
		{name: "boundary missing key", policies: v(doc(allowAll)), boundary: doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"aws:RequestedRegion":"us-east-1"}}}`), action: "ec2:RunInstances", resource: "*", decision: implicitDeny, missing: v("aws:RequestedRegion")},
		{name: "single statement object", policies: v(`{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*"}}`), action: "ec2:RunInstances", resource: "*", decision: allowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ask(t, tc.policies, tc.boundary, tc.action, tc.resource, tc.ctx)
			if got.decision != tc.decision || !slices.Equal(got.missing, tc.missing) {
				t.Errorf("got %s missing %q, want %s missing %q", got.decision, got.missing, tc.decision, tc.missing)
			}
			if (got.decision == implicitDeny) != (len(got.matched) == 0) {
				t.Errorf("%s with %d matched statements", got.decision, len(got.matched))
			}
		})
	}
}

func TestParsePolicyRefuses(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`not json`, "not a policy document"},
		{`{"Version":"2012-10-17","Statement":[]} extra`, "data after the JSON object"},
		{`{"Version":"2012-10-17"}`, "no Statement"},
		{`{"Version":"2012-10-17","Statement":[]}`, "Statement is empty"},
		{`{"Version":"2020-01-01","Statement":[]}`, `Version "2020-01-01"`},
		{`{"Version":"2012-10-17","Statements":[]}`, `unknown field "Statements"`},
		{doc(`{"Effect":"allow","Action":"*","Resource":"*"}`), `Statement[0]: Effect "allow": expected Allow or Deny`},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*"}`, `{"Effect":"Allow","Resource":"*"}`), "Statement[1]: no Action or NotAction"},
		{doc(`{"Effect":"Allow","Action":"*","NotAction":"iam:*","Resource":"*"}`), "both Action and NotAction"},
		{doc(`{"Effect":"Allow","Action":"*"}`), "no Resource or NotResource"},
		{doc(`{"Effect":"Allow","Action":[],"Resource":"*"}`), "Action: expected a string or a non-empty list"},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Principal":"*"}`), "Principal and NotPrincipal belong in resource policies"},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Actions":"*"}`), `unknown field "Actions"`},
		{doc(`"Allow everything"`), `Statement[0]: expected a statement object, got "Allow everything"`},
		{doc(`{"Effect":true,"Action":"*","Resource":"*"}`), "Statement[0]: Effect: unexpected JSON bool"},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":[]}`), "Statement[0]: Condition: unexpected JSON array"},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"arn:aws:s3:::b/${aws:username}/*"}`), "policy variable ${aws:username} is not modelled"},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"aws:PrincipalTag/team":"${aws:PrincipalTag/x}"}}}`), "policy variable ${aws:PrincipalTag/x}"},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEqualz":{"a:k":"v"}}}`), `operator "StringEqualz" is not modelled`},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"BinaryEquals":{"a:k":"QmluYXJ5"}}}`), `operator "BinaryEquals" is not modelled`},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"ForSomeValues:StringEquals":{"a:k":"v"}}}`), `unknown qualifier "ForSomeValues"`},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"NullIfExists":{"a:k":"true"}}}`), "Null takes no qualifier and no IfExists"},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"Null":{"a:k":"yes"}}}`), `value "yes" is not true or false`},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"Bool":{"a:k":"1"}}}`), `value "1" is not true or false`},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"NumericLessThan":{"a:k":"ten"}}}`), "NumericLessThan a:k"},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"IpAddress":{"a:k":"300.1.1.1"}}}`), "not an IP address or CIDR block"},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"a:k":[]}}}`), "no values"},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"a:k":{"x":1}}}}`), "expected strings, numbers or booleans"},
		{doc(`{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{}}}`), "no condition key"},
	} {
		_, err := parsePolicy("p", policySourceType, tc.doc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parsePolicy(%s): %v, want an error containing %q", tc.doc, err, tc.want)
		}
	}
}

func TestStatementPositions(t *testing.T) {
	d := "{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [\n    {\"Effect\": \"Allow\", \"Action\": \"*\", \"Resource\": \"*\"},\n    {\n      \"Effect\": \"Deny\",\n      \"Action\": \"iam:*\",\n      \"Resource\": \"*\"\n    }\n  ]\n}"
	p, err := parsePolicy("p", policySourceType, d)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]position{{{4, 5}, {4, 55}}, {{5, 5}, {9, 5}}}
	for i, st := range p.statements {
		if st.start != want[i][0] || st.end != want[i][1] {
			t.Errorf("statement %d at %v-%v, want %v-%v", i, st.start, st.end, want[i][0], want[i][1])
		}
	}
}

// karpenter returns the principal and the parsed policies of Karpenter's controller policy rendered for
// prod-eks (testdata/karpenter-controller.policies.yaml).
func karpenter(t *testing.T) *principalPolicies {
	t.Helper()
	data, err := os.ReadFile("testdata/karpenter-controller.policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := LoadPolicies(data)
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := p.compile()
	if err != nil {
		t.Fatal(err)
	}
	pp := compiled["arn:aws:iam::111122223333:role/KarpenterController-prod-eks"]
	if pp == nil || len(pp.identity) != 1 || len(pp.identity[0].statements) != 16 {
		t.Fatalf("the controller policy did not load as expected: %+v", pp)
	}
	return pp
}

// Karpenter's tags for a NodeClaim of pool "default" and class "default" in prod-eks, and its instance
// profile tags.
var (
	nodeTags = map[string]string{"kubernetes.io/cluster/prod-eks": "owned", "eks:eks-cluster-name": "prod-eks",
		"karpenter.sh/nodepool": "default", "karpenter.k8s.aws/ec2nodeclass": "default"}
	profileTags = map[string]string{"kubernetes.io/cluster/prod-eks": "owned", "eks:eks-cluster-name": "prod-eks",
		"karpenter.k8s.aws/ec2nodeclass": "default", "topology.kubernetes.io/region": "us-east-1"}
)

// requestTags is the context of a request that creates resources with tags: aws:RequestTag/…,
// aws:TagKeys and aws:RequestedRegion, plus extra entries.
func requestTags(tags map[string]string, extra ...string) map[string][]string {
	ctx := map[string][]string{"aws:RequestedRegion": {"us-east-1"}}
	for k, v := range tags {
		ctx["aws:RequestTag/"+k] = []string{v}
		ctx["aws:TagKeys"] = append(ctx["aws:TagKeys"], k)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		ctx[extra[i]] = append(ctx[extra[i]], extra[i+1])
	}
	return ctx
}

// resourceTags is the context of a request on resources with tags: aws:ResourceTag/… and
// aws:RequestedRegion, plus extra entries.
func resourceTags(tags map[string]string, extra ...string) map[string][]string {
	ctx := map[string][]string{"aws:RequestedRegion": {"us-east-1"}}
	for k, v := range tags {
		ctx["aws:ResourceTag/"+k] = []string{v}
	}
	for i := 0; i+1 < len(extra); i += 2 {
		ctx[extra[i]] = append(ctx[extra[i]], extra[i+1])
	}
	return ctx
}

func without(tags map[string]string, key string) map[string]string {
	out := map[string]string{}
	for k, v := range tags {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func with(tags map[string]string, key, value string) map[string]string {
	out := without(tags, key)
	out[key] = value
	return out
}

// TestKarpenterControllerPolicy: the evaluator, given Karpenter's own controller policy, allows the
// requests Karpenter makes with the tags it sets, and denies them without.
func TestKarpenterControllerPolicy(t *testing.T) {
	pp := karpenter(t)
	const (
		ec2ARN  = "arn:aws:ec2:us-east-1:111122223333:"
		iamARN  = "arn:aws:iam::111122223333:"
		nodeARN = iamARN + "role/KarpenterNodeRole-prod-eks"
	)
	region := map[string][]string{"aws:RequestedRegion": {"us-east-1"}}
	createTags := []string{"aws:RequestTag/eks:eks-cluster-name", "aws:RequestTag/karpenter.sh/nodepool", "aws:RequestTag/kubernetes.io/cluster/prod-eks"}
	for _, tc := range []struct {
		name             string
		action, resource string
		ctx              map[string][]string
		decision         string
		missing          []string
	}{
		{"L1 pass the node role to EC2", "iam:PassRole", nodeARN, map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}, allowed, nil},
		{"L1 pass the node role to EC2 in China", "iam:PassRole", nodeARN, map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com.cn"}}, allowed, nil},
		{"L1 without the service", "iam:PassRole", nodeARN, nil, implicitDeny, []string{"iam:PassedToService"}},
		{"L1 to another service", "iam:PassRole", nodeARN, map[string][]string{"iam:PassedToService": {"lambda.amazonaws.com"}}, implicitDeny, nil},
		{"L1 another role", "iam:PassRole", iamARN + "role/Admin", map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}, implicitDeny, nil},
		{"L2 create a launch template", "ec2:CreateLaunchTemplate", ec2ARN + "launch-template/*", requestTags(nodeTags), allowed, nil},
		{"L2 without the cluster tag", "ec2:CreateLaunchTemplate", ec2ARN + "launch-template/*", requestTags(without(nodeTags, "kubernetes.io/cluster/prod-eks")), implicitDeny, []string{"aws:RequestTag/kubernetes.io/cluster/prod-eks"}},
		{"L2 with the cluster tag shared", "ec2:CreateLaunchTemplate", ec2ARN + "launch-template/*", requestTags(with(nodeTags, "kubernetes.io/cluster/prod-eks", "shared")), implicitDeny, nil},
		{"L3 tag the launch template", "ec2:CreateTags", ec2ARN + "launch-template/*", requestTags(nodeTags, "ec2:CreateAction", "CreateLaunchTemplate"), allowed, nil},
		{"L4 create a fleet", "ec2:CreateFleet", ec2ARN + "fleet/*", requestTags(nodeTags), allowed, nil},
		{"L4 run instances", "ec2:RunInstances", ec2ARN + "instance/*", requestTags(nodeTags), allowed, nil},
		{"L4 spot requests", "ec2:CreateFleet", ec2ARN + "spot-instances-request/*", requestTags(nodeTags), allowed, nil},
		{"L4 volumes in another region", "ec2:CreateFleet", "arn:aws:ec2:eu-west-1:111122223333:volume/*", requestTags(nodeTags), implicitDeny, nil},
		{"L4 without tags", "ec2:CreateFleet", ec2ARN + "fleet/*", region, implicitDeny, createTags},
		{"L4 without the nodepool tag", "ec2:CreateFleet", ec2ARN + "fleet/*", requestTags(without(nodeTags, "karpenter.sh/nodepool")), implicitDeny, []string{"aws:RequestTag/karpenter.sh/nodepool"}},
		{"L5 tag what the fleet creates", "ec2:CreateTags", ec2ARN + "volume/*", requestTags(nodeTags, "ec2:CreateAction", "CreateFleet"), allowed, nil},
		{"L5 tagging outside a creation", "ec2:CreateTags", ec2ARN + "volume/*", requestTags(nodeTags, "ec2:CreateAction", "CreateVolume"), implicitDeny, nil},
		{"L5 without the create action", "ec2:CreateTags", ec2ARN + "network-interface/*", requestTags(nodeTags), implicitDeny, []string{"ec2:CreateAction"}},
		{"L6 launch from Karpenter's template", "ec2:RunInstances", ec2ARN + "launch-template/*", resourceTags(nodeTags), allowed, nil},
		// The statement for tagged creations also covers launch-template/*, with request tags L6 lacks.
		{"L6 from another cluster's template", "ec2:CreateFleet", ec2ARN + "launch-template/*", resourceTags(with(nodeTags, "kubernetes.io/cluster/prod-eks", "")), implicitDeny, createTags},
		{"L7 run in a subnet", "ec2:RunInstances", ec2ARN + "subnet/subnet-0private1", region, allowed, nil},
		{"L7 with a security group", "ec2:CreateFleet", ec2ARN + "security-group/sg-0node", region, allowed, nil},
		{"L7 from an image", "ec2:RunInstances", "arn:aws:ec2:us-east-1::image/ami-0aa11bb22cc33dd44", region, allowed, nil},
		{"L7 a subnet of another region", "ec2:RunInstances", "arn:aws:ec2:us-west-2:111122223333:subnet/subnet-0other", map[string][]string{"aws:RequestedRegion": {"us-west-2"}}, implicitDeny, nil},
		{"L7 a capacity reservation", "ec2:RunInstances", ec2ARN + "capacity-reservation/cr-0123", region, implicitDeny, nil},
		{"L8 describe images", "ec2:DescribeImages", "*", region, allowed, nil},
		{"L8 action case-insensitive", "EC2:describeimages", "*", region, allowed, nil},
		{"L8 in another region", "ec2:DescribeSubnets", "*", map[string][]string{"aws:RequestedRegion": {"eu-west-1"}}, implicitDeny, nil},
		{"L8 without the region", "ec2:DescribeInstanceTypes", "*", nil, implicitDeny, []string{"aws:RequestedRegion"}},
		{"L9 an AWS parameter", "ssm:GetParameter", "arn:aws:ssm:us-east-1::parameter/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id", nil, allowed, nil},
		{"L9 the account's parameter", "ssm:GetParameter", "arn:aws:ssm:us-east-1:111122223333:parameter/my-ami", nil, implicitDeny, nil},
		{"L10 create an instance profile", "iam:CreateInstanceProfile", iamARN + "instance-profile/*", requestTags(profileTags), allowed, nil},
		{"L10 without the region tag", "iam:CreateInstanceProfile", iamARN + "instance-profile/*", requestTags(without(profileTags, "topology.kubernetes.io/region")), implicitDeny, []string{"aws:RequestTag/topology.kubernetes.io/region"}},
		{"L10 read instance profiles", "iam:GetInstanceProfile", iamARN + "instance-profile/*", requestTags(profileTags), allowed, nil},
		{"L10 tag an instance profile", "iam:TagInstanceProfile", iamARN + "instance-profile/*", mergeContexts(requestTags(profileTags), resourceTags(profileTags)), allowed, nil},
		{"L11 add the role", "iam:AddRoleToInstanceProfile", iamARN + "instance-profile/*", resourceTags(profileTags), allowed, nil},
		{"L12 describe the cluster", "eks:DescribeCluster", "arn:aws:eks:us-east-1:111122223333:cluster/prod-eks", nil, allowed, nil},
		{"L12 another cluster", "eks:DescribeCluster", "arn:aws:eks:us-east-1:111122223333:cluster/staging", nil, implicitDeny, nil},
		{"D1 list instance profiles: not in this policy", "iam:ListInstanceProfiles", "*", nil, implicitDeny, nil},
		{"D3 terminate Karpenter's instances", "ec2:TerminateInstances", ec2ARN + "instance/*", resourceTags(nodeTags), allowed, nil},
		{"D5 tag a node", "ec2:CreateTags", ec2ARN + "instance/*", resourceTags(nodeTags, "aws:TagKeys", "eks:eks-cluster-name", "aws:TagKeys", "karpenter.sh/nodeclaim", "aws:TagKeys", "Name"), allowed, nil},
		{"D5 tag a node with another key", "ec2:CreateTags", ec2ARN + "instance/*", resourceTags(nodeTags, "aws:TagKeys", "Name", "aws:TagKeys", "team"), implicitDeny,
			// the creation-tagging statement, which would apply if the request carried its keys
			[]string{"aws:RequestTag/eks:eks-cluster-name", "aws:RequestTag/karpenter.sh/nodepool", "aws:RequestTag/kubernetes.io/cluster/prod-eks", "ec2:CreateAction"}},
		{"D6 read the interruption queue", "sqs:ReceiveMessage", "arn:aws:sqs:us-east-1:111122223333:prod-eks", nil, allowed, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lower := map[string][]string{}
			for k, v := range tc.ctx {
				lower[strings.ToLower(k)] = v
			}
			got := evaluate(pp.identity, pp.boundary, simQuestion{action: tc.action, resource: tc.resource, context: lower})
			if got.decision != tc.decision || !slices.Equal(got.missing, tc.missing) {
				t.Errorf("got %s missing %q, want %s missing %q", got.decision, got.missing, tc.decision, tc.missing)
			}
		})
	}
}

func mergeContexts(a, b map[string][]string) map[string][]string {
	out := map[string][]string{}
	for _, m := range []map[string][]string{a, b} {
		for k, v := range m {
			out[k] = append(out[k], v...)
		}
	}
	return out
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		fold, want bool
	}{
		{"*", "", false, true},
		{"a*b*c", "aXbYc", false, true},
		{"a*b*c", "aXbY", false, false},
		{"a*", "abc", false, true},
		{"*c", "abc", false, true},
		{"a?c", "abc", false, true},
		{"a?c", "ac", false, false},
		{"ä?", "äö", false, true},
		{"ABC", "abc", true, true},
		{"ABC", "abc", false, false},
		{"a${?}", "a?", false, true},
		{"a${?}", "ab", false, false},
		{"${$}{x}", "${x}", false, true},
		{"**x", "x", false, true},
	} {
		if got := globMatch(tc.pattern, tc.s, tc.fold); got != tc.want {
			t.Errorf("globMatch(%q, %q, %v) = %v, want %v", tc.pattern, tc.s, tc.fold, got, tc.want)
		}
	}
}
