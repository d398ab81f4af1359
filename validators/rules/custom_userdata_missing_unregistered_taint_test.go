package rules_test

import (
	"strings"
	"testing"
)

// karpenterCustomFamily is the userData of Karpenter's own examples/v1/custom-family.yaml and
// custom-family-with-alias.yaml: a script that leaves the taint out, its last part open at the end.
const karpenterCustomFamily = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash
echo "Running my custom set-up"

# Have the kubelet label the node
/etc/eks/bootstrap.sh my-cluster --kubelet-extra-args='--node-labels=foo=bar'

--BOUNDARY
`

func TestCustomUserdataMissingUnregisteredTaint(t *testing.T) {
	custom := strings.Replace(baseSpec, "  - alias: al2023@v20251112\n", "  - id: ami-0123456789abcdef0\n", 1)
	customBR := strings.Replace(baseSpec, "al2023@v20251112", "bottlerocket@v1.26.1", 1)
	const (
		flag = "--register-with-taints=karpenter.sh/unregistered:NoExecute"
		br   = "[settings.kubernetes]\ncluster-name = \"prod\"\napi-server = \"https://example.eks.amazonaws.com\"\n"
		nc   = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n"
	)
	mime := func(contentType, body string) string {
		return "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: " + contentType + "\n\n" + body + "--//--\n"
	}
	testRule(t, "custom-userdata-missing-unregistered-taint", []ruleCase{
		{name: "not-custom", in: nodeClass("al2023", baseSpec)},
		{name: "registers-taint", in: nodeClass("ok", withUserData(custom, "Custom", "#!/bin/bash\n/opt/join.sh --register-with-taints=karpenter.sh/unregistered=:NoExecute\n"))},
		{name: "kubelet-extra-args-single-quoted", in: nodeClass("extra-args", withUserData(custom, "Custom", "#!/bin/bash\n/etc/eks/bootstrap.sh prod --kubelet-extra-args '--node-labels=a=b "+flag+"'\n"))},
		{name: "kubelet-extra-args-variable", in: nodeClass("variable", withUserData(custom, "Custom", "#!/bin/bash\nexport KUBELET_EXTRA_ARGS=\""+flag+"\"\n/etc/eks/bootstrap.sh prod\n"))},
		{name: "nodeconfig-flags", in: nodeClass("nc-flags", withUserData(custom, "Custom", mime("application/node.eks.aws", nc+"    flags:\n      - "+flag+"\n")))},
		{name: "nodeconfig-register-with-taints", in: nodeClass("nc-config", withUserData(custom, "Custom", mime("application/node.eks.aws", nc+"    config:\n      registerWithTaints:\n        - key: karpenter.sh/unregistered\n          effect: NoExecute\n")))},
		{name: "nodeconfig-heredoc", in: nodeClass("nc-heredoc", withUserData(custom, "Custom", "#!/bin/bash\ncat <<'EOF' >/etc/eks/nodeadm.d/taint.yaml\n"+nc+"    flags: [\""+flag+"\"]\nEOF\n"))},
		{name: "bottlerocket-node-taints", in: nodeClass("br-taints", withUserData(customBR, "Custom", br+"[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\":NoExecute\"]\n"))},
		// Built at run time: only running it would tell, so nothing is said.
		{name: "taint-list-from-variable", in: nodeClass("dynamic", withUserData(custom, "Custom", "#!/bin/bash\nTAINTS=$(cat /etc/node-taints)\n/usr/bin/kubelet --register-with-taints=\"$TAINTS\"\n"))},
		// A commented-out flag registers nothing: the nodes are deleted after 15 minutes.
		{name: "taint-commented-out", fires: 1, in: nodeClass("commented", withUserData(custom, "Custom", "#!/bin/bash\n# /opt/join.sh --register-with-taints=karpenter.sh/unregistered=:NoExecute\n/opt/join.sh\n"))},
		{name: "taint-after-escaped-quote-in-comment", fires: 1, in: nodeClass("escaped", withUserData(custom, "Custom", "#!/bin/bash\necho it\\'s up # "+flag+"\n/opt/join.sh\n"))},
		{name: "taint-in-block-comment-heredoc", fires: 1, in: nodeClass("block-comment", withUserData(custom, "Custom", "#!/bin/bash\n: <<'DISABLED'\n/etc/eks/bootstrap.sh prod --kubelet-extra-args '"+flag+"'\nDISABLED\n/etc/eks/bootstrap.sh prod\n"))},
		{name: "nodeconfig-taint-commented-out", fires: 1, in: nodeClass("nc-commented", withUserData(custom, "Custom", mime("application/node.eks.aws", nc+"    flags:\n      - --node-labels=a=b\n      # - "+flag+"\n")))},
		{name: "taint-with-other-effect", fires: 1, in: nodeClass("no-schedule", withUserData(custom, "Custom", "#!/bin/bash\n/usr/bin/kubelet --register-with-taints=karpenter.sh/unregistered:NoSchedule,dedicated=gpu:NoExecute\n"))},
		{name: "nodeconfig-taint-with-other-effect", fires: 1, in: nodeClass("nc-no-schedule", withUserData(custom, "Custom", mime("application/node.eks.aws", nc+"    config:\n      registerWithTaints:\n        - {key: karpenter.sh/unregistered, effect: PreferNoSchedule}\n        - {key: dedicated, effect: NoExecute}\n")))},
		{name: "bottlerocket-taint-as-label", fires: 1, in: nodeClass("br-label", withUserData(customBR, "Custom", br+"[settings.kubernetes.node-labels]\n\"karpenter.sh/unregistered\" = \"NoExecute\"\n"))},
		{name: "bottlerocket-no-taint", fires: 1, in: nodeClass("br-none", withUserData(customBR, "Custom", br))},
		// Karpenter's examples/v1/custom-family.yaml leaves bootstrapping, and so the taint, to the user.
		{name: "karpenter-custom-family-example", fires: 1, in: nodeClass("custom-family", withUserData(strings.Replace(custom, "  - id: ami-0123456789abcdef0\n", "  - id: ami-123\n  - id: ami-456\n", 1), "Custom", karpenterCustomFamily))},
		// Its custom-family-with-alias.yaml boots Bottlerocket, which runs no script: userdata-invalid says so.
		{name: "karpenter-custom-family-with-alias-example", in: nodeClass("custom-family-alias", withUserData(strings.Replace(baseSpec, "al2023@v20251112", "bottlerocket@latest", 1), "Custom", karpenterCustomFamily))},
		{name: "no-taint", fires: 1, in: nodeClass("no-taint", withUserData(custom, "Custom", "#!/bin/bash\n/opt/join.sh\n"))},
		{name: "no-userdata", fires: 1, in: nodeClass("empty", "amiFamily: Custom\n"+custom)},
	})
}
