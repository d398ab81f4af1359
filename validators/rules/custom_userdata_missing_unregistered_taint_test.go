package rules_test

import (
	"strings"
	"testing"
)

func TestCustomUserdataMissingUnregisteredTaint(t *testing.T) {
	custom := strings.Replace(baseSpec, "  - alias: al2023@v20251112\n", "  - id: ami-0123456789abcdef0\n", 1)
	testRule(t, "custom-userdata-missing-unregistered-taint", []ruleCase{
		{name: "not-custom", in: nodeClass("al2023", baseSpec)},
		{name: "registers-taint", in: nodeClass("ok", withUserData(custom, "Custom", "#!/bin/bash\n/opt/join.sh --register-with-taints=karpenter.sh/unregistered=:NoExecute\n"))},
		// A commented-out flag registers nothing: the nodes are deleted after 15 minutes.
		{name: "taint-commented-out", fires: 1, in: nodeClass("commented", withUserData(custom, "Custom", "#!/bin/bash\n# /opt/join.sh --register-with-taints=karpenter.sh/unregistered=:NoExecute\n/opt/join.sh\n"))},
		{name: "no-taint", fires: 1, in: nodeClass("no-taint", withUserData(custom, "Custom", "#!/bin/bash\n/opt/join.sh\n"))},
		{name: "no-userdata", fires: 1, in: nodeClass("empty", "amiFamily: Custom\n"+custom)},
	})
}
