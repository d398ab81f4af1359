package fakeaws

import "testing"

// FuzzPolicy: any text as an identity policy is refused with an error or evaluated; the evaluation of
// a question never panics and answers one of IAM's three decisions.
func FuzzPolicy(f *testing.F) {
	for _, s := range []string{
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`,
		`{"Statement":{"Effect":"Deny","NotAction":["iam:*"],"NotResource":"arn:aws:iam::*:role/x"}}`,
		`{"Statement":[{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*","Condition":{"StringLike":{"aws:RequestTag/karpenter.sh/nodepool":"*"},"ForAllValues:StringEquals":{"aws:TagKeys":["a","b"]},"Null":{"aws:ResourceTag/x":"true"}}}]}`,
		`{"Statement":[{"Effect":"Allow","Action":"s3:Get?bject","Resource":"arn:aws:s3:::b/${aws:username}"}]}`,
		`{}`, `[`, ``,
	} {
		f.Add(s, "ec2:RunInstances", "arn:aws:ec2:us-east-1:1:instance/*", "aws:RequestTag/karpenter.sh/nodepool", "")
	}
	f.Fuzz(func(t *testing.T, doc, action, resource, key, value string) {
		p, err := parsePolicy("fuzz", "user-managed", doc)
		if err != nil {
			return
		}
		a := evaluate([]*policyDoc{p}, nil, simQuestion{action: action, resource: resource, context: map[string][]string{key: {value}}})
		switch a.decision {
		case "allowed", "implicitDeny", "explicitDeny":
		default:
			t.Fatalf("decision %q", a.decision)
		}
	})
}
