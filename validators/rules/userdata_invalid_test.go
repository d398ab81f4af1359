package rules_test

import (
	"strings"
	"testing"
)

func TestUserdataInvalid(t *testing.T) {
	brSpec := strings.Replace(baseSpec, "al2023@v20251112", "bottlerocket@v1.26.1", 1)
	customBR := "amiFamily: Custom\n" + strings.Replace(baseSpec, "al2023@v20251112", "bottlerocket@latest", 1)
	testRule(t, "userdata-invalid", []ruleCase{
		{name: "good-mime", in: nodeClass("good", withUserData(baseSpec, "", nodeConfigMIME))},
		// Karpenter's own examples/v1/al2023-custom-userdata.yaml: its last part is delimited, and the
		// closing --//-- is missing, which Karpenter's merger accepts.
		{name: "mime-without-closing-boundary", in: nodeClass("open-end", withUserData(baseSpec, "", strings.Replace(nodeConfigMIME, "--//--\n", "--//\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash\necho \"Hello, AL2023!\"\n--//\n", 1)))},
		{name: "good-toml", in: nodeClass("toml", withUserData(brSpec, "", "[settings.kubernetes]\nmax-pods = 110\n"))},
		{name: "windows-opaque", in: nodeClass("win", withUserData(strings.Replace(baseSpec, "al2023@v20251112", "windows2022@latest", 1), "", "<powershell>\nWrite-Host hi\n</powershell>\n"))},
		{name: "mime-part-cut-off", fires: 1, in: nodeClass("open", withUserData(baseSpec, "", strings.Replace(nodeConfigMIME, "--//--\n", "", 1)))},
		{name: "nodeconfig-wrong-kind", fires: 1, in: nodeClass("kind", withUserData(baseSpec, "", "apiVersion: node.eks.aws/v1alpha1\nkind: KubeletConfiguration\nspec: {}\n"))},
		{name: "bottlerocket-not-toml", fires: 1, in: nodeClass("br", withUserData(brSpec, "", "settings:\n  kubernetes:\n    max-pods: 110\n"))},
		{name: "bottlerocket-shell-script", fires: 1, in: nodeClass("br-script", withUserData(brSpec, "", "#!/bin/bash\n/etc/eks/bootstrap.sh prod --kubelet-extra-args '--max-pods=110'\n"))},
		{name: "bottlerocket-mime-without-script", fires: 1, in: nodeClass("br-mime", withUserData(brSpec, "", "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: application/toml\n\n[settings.kubernetes]\nmax-pods = 110\n--B--\n"))},
		// Karpenter's own examples/v1/custom-family-with-alias.yaml: a shell script for Bottlerocket.
		{name: "custom-over-bottlerocket-alias-script", fires: 1, in: nodeClass("custom-family", withUserData(customBR, "", karpenterCustomFamily))},
		{name: "custom-over-bottlerocket-alias-toml", in: nodeClass("custom-toml", withUserData(customBR, "", "[settings.kubernetes]\nmax-pods = 110\n"))},
		// An image Karpenter does not name: its boot agent is unknown, so nothing is said.
		{name: "custom-over-image-id-script", in: nodeClass("custom-id", withUserData(strings.Replace(customBR, "alias: bottlerocket@latest", "id: ami-0123456789abcdef0", 1), "", "#!/bin/bash\necho hi\n"))},
	})
}
