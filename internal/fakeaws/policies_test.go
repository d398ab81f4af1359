package fakeaws_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

func TestLoadPolicies(t *testing.T) {
	const file = `principals:
  arn:aws:iam::111122223333:role/KarpenterController-prod-eks:
    policies:
      - '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:*","Resource":"*"}]}'
      - Version: "2012-10-17"
        Statement:
          - Effect: Deny
            Action: [iam:PassRole]
            Resource: "*"
            Condition: {Bool: {aws:ViaAWSService: true}}
    permissionsBoundary: '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}'
  arn:aws:iam::111122223333:user/ci:
    policies: []
`
	p, err := fakeaws.LoadPolicies([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	kc := p["arn:aws:iam::111122223333:role/KarpenterController-prod-eks"]
	if len(kc.Policies) != 2 || !strings.Contains(kc.PermissionsBoundary, `"Action":"*"`) {
		t.Fatalf("controller: %+v", kc)
	}
	// A document written as YAML comes back as JSON.
	var d struct{ Statement []map[string]any }
	if err := json.Unmarshal([]byte(kc.Policies[1]), &d); err != nil || len(d.Statement) != 1 || d.Statement[0]["Effect"] != "Deny" {
		t.Errorf("YAML document as JSON: %s (%v)", kc.Policies[1], err)
	}
	if ci, ok := p["arn:aws:iam::111122223333:user/ci"]; !ok || len(ci.Policies) != 0 {
		t.Errorf("a principal without policies: %+v, %v", ci, ok)
	}
	fakeaws.New(nil, fakeaws.WithPolicies(p)) // loaded policies never panic
}

func TestLoadPoliciesErrors(t *testing.T) {
	const role = "arn:aws:iam::111122223333:role/R"
	for _, tc := range []struct{ file, want string }{
		{"", "empty policies file"},
		{"other: 1\n", `field other not found`},
		{"principals:\n", "expected a principals mapping"},
		{"principals:\n  " + role + ":\n    polices: []\n", "line 3: field polices not found"},
		{"principals:\n  " + role + ":\n    policies:\n      - '{\"Version\":'\n", "line 4: principal " + role + ": policies[0]: not a policy document"},
		{"principals:\n  " + role + ":\n    policies:\n      - '{\"Statement\":[{\"Effect\":\"Allow\",\"Action\":\"*\",\"Resource\":\"*\"}]}'\n      - '{\"Statement\":[{\"Effect\":\"Permit\",\"Action\":\"*\",\"Resource\":\"*\"}]}'\n",
			"line 5: principal " + role + `: policies[1]: Statement[0]: Effect "Permit": expected Allow or Deny`},
		{"principals:\n  " + role + ":\n    policies:\n      - 42\n", "policies[0]: expected a policy document"},
		{"principals:\n  " + role + ":\n    permissionsBoundary: '{\"Statement\":[{\"Effect\":\"Allow\",\"Action\":\"*\"}]}'\n", "line 3: principal " + role + ": permissionsBoundary: Statement[0]: no Resource or NotResource"},
		{"principals:\n  KarpenterController:\n    policies: []\n", `principal "KarpenterController": not the ARN of an IAM role or user`},
		{"principals: [\n", "policies file: yaml:"},
	} {
		_, err := fakeaws.LoadPolicies([]byte(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadPolicies(%q): %v, want an error containing %q", tc.file, err, tc.want)
		}
	}
}

func TestWithPoliciesPanicsOnABadDocument(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(error).Error(), "principal arn:aws:iam::111122223333:role/R: policies[0]: not a policy document") {
			t.Errorf("recovered %v, want the principal and the problem", r)
		}
	}()
	fakeaws.New(nil, fakeaws.WithPolicies(fakeaws.Policies{"arn:aws:iam::111122223333:role/R": {Policies: []string{"{"}}}))
}
