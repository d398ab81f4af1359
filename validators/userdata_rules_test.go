package validators_test

import (
	"strings"
	"testing"
)

func withUserData(spec, family, userData string) string {
	if family != "" {
		spec = "amiFamily: " + family + "\n" + spec
	}
	return spec + "userData: |\n" + indent(userData, "  ")
}

const mimeBootstrap = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash
# /etc/eks/bootstrap.sh is mentioned in a comment only
/etc/eks/bootstrap.sh prod --kubelet-extra-args '--max-pods=110'

--BOUNDARY--
`

const nodeConfigMIME = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    config:
      maxPods: 110
--//--
`

func TestUserdataBootstrapOnAL2023(t *testing.T) {
	testRule(t, "userdata-bootstrap-on-al2023", []ruleCase{
		{name: "no-userdata", in: nodeClass("plain", baseSpec)},
		{name: "nodeconfig", in: nodeClass("nodeconfig", withUserData(baseSpec, "", nodeConfigMIME))},
		{name: "al2-may-bootstrap", in: nodeClass("al2", withUserData(strings.Replace(baseSpec, "al2023@v20251112", "al2@v20240807", 1), "", "#!/bin/bash\n/etc/eks/bootstrap.sh prod\n"))},
		{name: "mime-bootstrap", fires: 1, in: nodeClass("mime", withUserData(baseSpec, "", mimeBootstrap))},
		{name: "script-nodeadm-init", fires: 1, in: nodeClass("nodeadm", withUserData(baseSpec, "AL2023", "#!/bin/bash\nset -e\nnodeadm init --config-source file:///etc/eks/nodeconfig.yaml\n"))},
	})
}

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

func TestCustomUserdataMissingUnregisteredTaint(t *testing.T) {
	custom := strings.Replace(baseSpec, "  - alias: al2023@v20251112\n", "  - id: ami-0123456789abcdef0\n", 1)
	testRule(t, "custom-userdata-missing-unregistered-taint", []ruleCase{
		{name: "not-custom", in: nodeClass("al2023", baseSpec)},
		{name: "registers-taint", in: nodeClass("ok", withUserData(custom, "Custom", "#!/bin/bash\n/opt/join.sh --register-with-taints=karpenter.sh/unregistered=:NoExecute\n"))},
		{name: "no-taint", fires: 1, in: nodeClass("no-taint", withUserData(custom, "Custom", "#!/bin/bash\n/opt/join.sh\n"))},
		{name: "no-userdata", fires: 1, in: nodeClass("empty", "amiFamily: Custom\n"+custom)},
	})
}
