package live_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts/live"
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
