package trustpolicy

import (
	"strings"
	"testing"
)

// FuzzReadTrust: any text as a trust policy either fails with an error that says it is not a policy
// document (or which statement is malformed), or gives a verdict; it never panics, and the policy the
// fix writes is read as letting EC2 assume the role.
func FuzzReadTrust(f *testing.F) {
	for _, s := range []string{
		EC2Policy("aws"),
		`{"Statement":{"Effect":"Allow","Principal":"*","Action":["sts:*"]}}`,
		`{"Statement":[{"Effect":"Deny","Principal":{"Service":["ec2.amazonaws.com"]},"Action":"*"}]}`,
		`{"Statement":[{"Effect":"Allow","NotPrincipal":{"AWS":"arn:aws:iam::1:root"},"Action":"sts:AssumeRole"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole","Condition":{"StringEquals":{"aws:SourceAccount":"1"}}}]}`,
		`%7B%22Statement%22%3A%5B%5D%7D`, `[]`, `{"Statement":[{"Principal":7}]}`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		v, err := readTrust(doc)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "the trust policy is not a policy document") && !strings.HasPrefix(msg, "statement ") {
				t.Fatalf("error without what is wrong: %v", err)
			}
			return
		}
		if doc == EC2Policy("aws") && (!v.Allowed || v.Denied != "" || v.Conditional || v.Negated) {
			t.Fatalf("the policy the fix writes is not read as letting EC2 assume the role: %+v", v)
		}
	})
}
