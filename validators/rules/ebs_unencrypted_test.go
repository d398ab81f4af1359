package rules_test

import (
	"strconv"
	"strings"
	"testing"
)

// ebsDefaults sets the account's EBS encryption by default in the prod-eks snapshot.
func ebsDefaults(byDefault bool) factsOpt {
	return section("ebsDefaults", "ebsDefaults:\n  encryptionByDefault: "+strconv.FormatBool(byDefault)+"\n  kmsKeyID: arn:aws:kms:us-east-1:111122223333:alias/aws/ebs\n")
}

// karpenterBottlerocket is the EC2NodeClass of Karpenter's own examples/v1/bottlerocket.yaml
// (karpenter-provider-aws), for prod-eks: its root and data volumes leave encrypted out.
const karpenterBottlerocket = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: bottlerocket
  annotations:
    kubernetes.io/description: "EC2NodeClass for running Bottlerocket nodes"
spec:
  role: "KarpenterNodeRole-prod-eks" # replace with your cluster name
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: "prod-eks" # replace with your cluster name
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: "prod-eks" # replace with your cluster name
  amiSelectorTerms:
    - alias: bottlerocket@latest # Bottlerocket
  blockDeviceMappings:
    - deviceName: /dev/xvda
      ebs:
        volumeType: gp3
        volumeSize: 4Gi
        deleteOnTermination: true
    # Bottlerocket data volume
    - deviceName: /dev/xvdb
      ebs:
        volumeType: gp3
        volumeSize: 20Gi # replace with your required disk size
        deleteOnTermination: true
`

// TestEBSUnencrypted: encrypted: false fires unless the account encrypts every new volume by default,
// and is reported even when that is unknown; a left-out encrypted fires only when the account is known
// not to, and is not evaluated (never passed) when that is unknown. Without mappings, Karpenter's own
// encrypted defaults apply.
func TestEBSUnencrypted(t *testing.T) {
	// mappings is spec with a root volume whose encrypted line is root ("" leaves it out) and an
	// encrypted data volume.
	mappings := func(spec, root string) string {
		return spec + "blockDeviceMappings:\n  - deviceName: /dev/xvda\n    ebs:\n      volumeSize: 100Gi\n" + root +
			"  - deviceName: /dev/xvdb\n    ebs:\n      volumeSize: 20Gi\n      encrypted: true\n"
	}
	const (
		unset    = ""
		clear    = "      encrypted: false\n"
		enc      = "      encrypted: true\n"
		notKnown = "no facts: ebsDefaults"
	)
	// mixed has an explicit encrypted: false and a data volume that leaves encrypted out.
	mixed := func(spec string) string {
		return strings.Replace(mappings(spec, clear), "      volumeSize: 20Gi\n      encrypted: true\n", "      volumeSize: 20Gi\n", 1)
	}
	fromSnapshot := eksSpec + "blockDeviceMappings:\n  - deviceName: /dev/xvdc\n    ebs:\n      snapshotID: snap-0123456789abcdef0\n      volumeSize: 50Gi\n"
	off, on := clusterFacts(ebsDefaults(false)), clusterFacts(ebsDefaults(true))
	testRule(t, "ebs-unencrypted", []ruleCase{
		// Without facts.
		{name: "encrypted", in: nodeClass("enc", mappings(baseSpec, enc))},
		{name: "no-mappings", in: nodeClass("defaults", baseSpec)},
		{name: "false", fires: 1, in: nodeClass("clear", mappings(baseSpec, clear))},
		{name: "unset-not-evaluated", in: nodeClass("unset", mappings(baseSpec, unset)), notEvaluated: notKnown},
		{name: "false-and-unset", fires: 1, in: nodeClass("mixed", mixed(baseSpec)), notEvaluated: notKnown},
		// The account encrypts every new volume: nothing is unencrypted.
		{name: "false-encrypted-by-default", in: nodeClass("clear", mappings(eksSpec, clear)), facts: on},
		{name: "unset-encrypted-by-default", in: nodeClass("unset", mappings(eksSpec, unset)), facts: on},
		{name: "karpenter-bottlerocket-encrypted-by-default", in: karpenterBottlerocket, facts: on},
		// The account does not.
		{name: "false-not-encrypted-by-default", fires: 1, in: nodeClass("clear", mappings(eksSpec, clear)), facts: off},
		{name: "unset-not-encrypted-by-default", fires: 1, in: nodeClass("unset", mappings(eksSpec, unset)), facts: off},
		{name: "false-and-unset-not-encrypted-by-default", fires: 2, in: nodeClass("mixed", mixed(eksSpec)), facts: off},
		{name: "unset-from-snapshot", fires: 1, in: nodeClass("restored", fromSnapshot), facts: off},
		{name: "encrypted-not-encrypted-by-default", in: nodeClass("enc", mappings(eksSpec, enc)), facts: off},
		{name: "no-mappings-not-encrypted-by-default", in: nodeClass("defaults", eksSpec), facts: off},
		{name: "karpenter-bottlerocket-not-encrypted-by-default", fires: 2, in: karpenterBottlerocket, facts: off},
		// A snapshot without ebsDefaults: as without facts.
		{name: "false-ebs-defaults-unknown", fires: 1, in: nodeClass("clear", mappings(eksSpec, clear)), facts: clusterFacts(without("ebsDefaults"))},
		{name: "unset-ebs-defaults-unknown", in: nodeClass("unset", mappings(eksSpec, unset)), facts: clusterFacts(without("ebsDefaults")),
			notEvaluated: "not in the facts snapshot: ebsDefaults"},
		{name: "false-and-unset-ebs-defaults-unknown", fires: 1, in: nodeClass("mixed", mixed(eksSpec)), facts: clusterFacts(without("ebsDefaults")),
			notEvaluated: "not in the facts snapshot: ebsDefaults"},
	})
}
