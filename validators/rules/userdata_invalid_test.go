package rules_test

import (
	"strings"
	"testing"
)

func TestUserdataInvalid(t *testing.T) {
	brSpec := strings.Replace(baseSpec, "al2023@v20251112", "bottlerocket@v1.26.1", 1)
	testRule(t, "userdata-invalid", []ruleCase{
		{name: "good-mime", in: nodeClass("good", withUserData(baseSpec, "", nodeConfigMIME))},
		{name: "good-toml", in: nodeClass("toml", withUserData(brSpec, "", "[settings.kubernetes]\nmax-pods = 110\n"))},
		{name: "windows-opaque", in: nodeClass("win", withUserData(strings.Replace(baseSpec, "al2023@v20251112", "windows2022@latest", 1), "", "<powershell>\nWrite-Host hi\n</powershell>\n"))},
		{name: "mime-part-cut-off", fires: 1, in: nodeClass("open", withUserData(baseSpec, "", strings.Replace(nodeConfigMIME, "--//--\n", "", 1)))},
		{name: "nodeconfig-wrong-kind", fires: 1, in: nodeClass("kind", withUserData(baseSpec, "", "apiVersion: node.eks.aws/v1alpha1\nkind: KubeletConfiguration\nspec: {}\n"))},
		{name: "bottlerocket-not-toml", fires: 1, in: nodeClass("br", withUserData(brSpec, "", "settings:\n  kubernetes:\n    max-pods: 110\n"))},
	})
}
