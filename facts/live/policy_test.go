package live_test

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts/live"
	"github.com/karpenter-guard/karpenter-guard/facts/live/iam"
)

// TestIAMPolicyGrantsExactlyWhatIsCalled: the live provider reaches AWS only through the client
// interfaces of live.Clients, so their methods are every operation it can call. Each must be granted by
// manifests/iam-policy.json, and the policy must grant nothing else (least privilege).
// sts:GetCallerIdentity needs no grant: IAM cannot deny it.
func TestIAMPolicyGrantsExactlyWhatIsCalled(t *testing.T) {
	data, err := os.ReadFile("../../manifests/iam-policy.json")
	if err != nil {
		t.Fatal(err)
	}
	var policy struct {
		Statement []struct {
			Effect   string
			Action   []string
			Resource any
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&policy); err != nil {
		t.Fatalf("manifests/iam-policy.json: %v", err)
	}
	granted := map[string]bool{}
	for _, s := range policy.Statement {
		if s.Effect != "Allow" {
			t.Errorf("statement with effect %q: the policy only allows", s.Effect)
		}
		for _, a := range s.Action {
			if strings.Contains(a, "*") {
				t.Errorf("action %q: grant operations by name, not by wildcard", a)
			}
			granted[a] = true
		}
	}
	called := map[string]bool{}
	clients := reflect.TypeOf(live.Clients{})
	for i := 0; i < clients.NumField(); i++ {
		f := clients.Field(i)
		service := strings.ToLower(f.Name)
		for j := 0; j < f.Type.NumMethod(); j++ {
			called[service+":"+f.Type.Method(j).Name] = true
		}
	}
	exempt := map[string]bool{"sts:GetCallerIdentity": true}
	for _, op := range sortedSet(called) {
		if !granted[op] && !exempt[op] {
			t.Errorf("the live provider can call %s, which manifests/iam-policy.json does not grant", op)
		}
	}
	for _, op := range sortedSet(granted) {
		if !called[op] {
			t.Errorf("manifests/iam-policy.json grants %s, which the live provider never calls", op)
		}
	}
	if len(called) < 10 {
		t.Errorf("only %d operations found on live.Clients: %v", len(called), sortedSet(called))
	}
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return slices.Clip(out)
}

// TestIAMPolicyScopesIdentityCalls: the calls of the identity facts are granted on exactly the
// resources they touch, the cluster, its Pod Identity associations and the account's roles, and the
// simulator's permission probe asks about a role inside them (else the probe would be refused where
// the real questions are allowed).
func TestIAMPolicyScopesIdentityCalls(t *testing.T) {
	data, err := os.ReadFile("../../manifests/iam-policy.json")
	if err != nil {
		t.Fatal(err)
	}
	var policy struct {
		Statement []struct {
			Action   []string
			Resource any
		}
	}
	if err := json.Unmarshal(data, &policy); err != nil {
		t.Fatalf("manifests/iam-policy.json: %v", err)
	}
	resources := map[string][]string{}
	for _, s := range policy.Statement {
		var rs []string
		switch r := s.Resource.(type) {
		case string:
			rs = []string{r}
		case []any:
			for _, v := range r {
				rs = append(rs, v.(string))
			}
		}
		for _, a := range s.Action {
			resources[a] = append(resources[a], rs...)
		}
	}
	want := map[string]string{
		"eks:ListPodIdentityAssociations":    "arn:${AWS_PARTITION}:eks:${AWS_REGION}:${AWS_ACCOUNT_ID}:cluster/${CLUSTER_NAME}",
		"eks:DescribePodIdentityAssociation": "arn:${AWS_PARTITION}:eks:${AWS_REGION}:${AWS_ACCOUNT_ID}:podidentityassociation/${CLUSTER_NAME}/*",
		"iam:SimulatePrincipalPolicy":        "arn:${AWS_PARTITION}:iam::${AWS_ACCOUNT_ID}:role/*",
	}
	for action, resource := range want {
		if got := resources[action]; len(got) != 1 || got[0] != resource {
			t.Errorf("%s is granted on %q; want exactly %s", action, got, resource)
		}
	}
	filled := strings.NewReplacer("${AWS_PARTITION}", "aws", "${AWS_ACCOUNT_ID}", "111122223333").Replace(want["iam:SimulatePrincipalPolicy"])
	if probe := iam.ProbeRoleARN("aws", "111122223333"); !matchARN(filled, probe) {
		t.Errorf("the simulator's probe asks about %s, outside %s", probe, filled)
	}
}

// matchARN reports whether an ARN matches a policy's resource pattern, as IAM matches it: "*" is any
// run of characters, "/" included.
func matchARN(pattern, arn string) bool {
	return regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(pattern), `\*`, ".*") + "$").MatchString(arn)
}
