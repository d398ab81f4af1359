package rules_test

import (
	"strings"
	"testing"
)

func TestAMIAliasVersionFormat(t *testing.T) {
	alias := func(a string) string {
		return strings.Replace(baseSpec, "al2023@v20251112", a, 1)
	}
	var cases []ruleCase
	for _, ok := range []string{"al2023@latest", "al2023@v20251112", "al2@v20240807", "bottlerocket@v1.26.1", "bottlerocket@1.26.1", "windows2022@latest"} {
		cases = append(cases, ruleCase{name: "ok-" + strings.ReplaceAll(ok, "@", "-"), in: nodeClass("ok", alias(ok))})
	}
	for _, bad := range []string{"al2023", "al2023@20251112", "al2023@v20251340", "al2023@v2025111", "al2023@v202511120", "al2023@v2025-1112", "al2@V20240807", "bottlerocket@v1.26", "windows2022@v20251112", "ubuntu@latest"} {
		cases = append(cases, ruleCase{name: "bad-" + strings.ReplaceAll(bad, "@", "-"), fires: 1, in: nodeClass("bad", alias(bad))})
	}
	testRule(t, "ami-alias-version-format", cases)
}
