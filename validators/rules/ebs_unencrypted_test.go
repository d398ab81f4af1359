package rules_test

import "testing"

func TestEBSUnencrypted(t *testing.T) {
	bdm := func(enc string) string {
		return baseSpec + "blockDeviceMappings:\n  - deviceName: /dev/xvda\n    ebs:\n      volumeSize: 100Gi\n" + enc +
			"  - deviceName: /dev/xvdb\n    ebs:\n      volumeSize: 20Gi\n      encrypted: true\n"
	}
	testRule(t, "ebs-unencrypted", []ruleCase{
		{name: "encrypted", in: nodeClass("enc", bdm("      encrypted: true\n"))},
		{name: "unset", in: nodeClass("unset", bdm(""))},
		{name: "false", fires: 1, in: nodeClass("clear", bdm("      encrypted: false\n"))},
	})
}
