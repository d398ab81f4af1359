package rules_test

import "testing"

func TestEBSKMSKeyUnusable(t *testing.T) {
	const (
		teamKey    = "alias/karpenter-ebs"
		teamKeyARN = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
		defaultKey = "arn:aws:kms:us-east-1:111122223333:key/0000abcd-12ab-34cd-56ef-1234567890ab"
	)
	key := func(ref, state, spec, arn string) string {
		return listItem("ref: "+ref, "found: true", "arn: "+arn, "keyState: "+state, "keySpec: "+spec, "keyUsage: ENCRYPT_DECRYPT")
	}
	keys := func(items ...string) factsOpt { return section("kmsKeys", list("kmsKeys", items...)) }
	ebsDefault := func(on bool, k string) factsOpt {
		v := "false"
		if on {
			v = "true"
		}
		return section("ebsDefaults", "ebsDefaults:\n  encryptionByDefault: "+v+"\n  kmsKeyID: "+k+"\n")
	}
	mapping := func(extra string) string {
		return eksSpec + "blockDeviceMappings:\n  - deviceName: /dev/xvda\n    ebs:\n      volumeSize: 100Gi\n      encrypted: true\n" + extra
	}
	withKey := mapping("      kmsKeyID: " + teamKey + "\n")
	testRule(t, "ebs-kms-key-unusable", []ruleCase{
		{name: "enabled-key", in: nodeClass("default", withKey), facts: netFacts(keys(key(teamKey, "Enabled", "SYMMETRIC_DEFAULT", teamKeyARN)))},
		{name: "aws-managed-default-key", in: nodeClass("default", eksSpec), facts: netFacts(keys())},
		{name: "disabled-key", fires: 1, in: nodeClass("default", withKey), facts: netFacts(keys(key(teamKey, "Disabled", "SYMMETRIC_DEFAULT", teamKeyARN)))},
		{name: "pending-deletion", fires: 1, in: nodeClass("default", withKey), facts: netFacts(keys(key(teamKey, "PendingDeletion", "SYMMETRIC_DEFAULT", teamKeyARN)))},
		{name: "not-found", fires: 1, in: nodeClass("default", withKey), facts: netFacts(keys(listItem("ref: "+teamKey, "found: false")))},
		{name: "asymmetric", fires: 1, in: nodeClass("default", withKey), facts: netFacts(keys(key(teamKey, "Enabled", "RSA_2048", teamKeyARN)))},
		{name: "other-region", fires: 1, in: nodeClass("default", withKey), facts: netFacts(keys(key(teamKey, "Enabled", "SYMMETRIC_DEFAULT", "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab")))},
		{name: "creating-capped", fires: 1, in: nodeClass("default", withKey), facts: netFacts(keys(key(teamKey, "Creating", "SYMMETRIC_DEFAULT", teamKeyARN)))},
		{name: "default-root-volume-uses-disabled-default-key", fires: 1, in: nodeClass("default", eksSpec), facts: netFacts(ebsDefault(false, defaultKey), keys(key(defaultKey, "Disabled", "SYMMETRIC_DEFAULT", defaultKey)))},
		{name: "omitted-encrypted-by-default", fires: 1, in: nodeClass("default", eksSpec+"blockDeviceMappings:\n  - deviceName: /dev/xvda\n    ebs:\n      volumeSize: 100Gi\n"), facts: netFacts(ebsDefault(true, defaultKey), keys(key(defaultKey, "PendingDeletion", "SYMMETRIC_DEFAULT", defaultKey)))},
		{name: "encrypted-false-encrypted-by-default", fires: 1, in: nodeClass("default", eksSpec+"blockDeviceMappings:\n  - deviceName: /dev/xvda\n    ebs:\n      volumeSize: 100Gi\n      encrypted: false\n"), facts: netFacts(ebsDefault(true, defaultKey), keys(key(defaultKey, "Disabled", "SYMMETRIC_DEFAULT", defaultKey)))},
		{name: "omitted-not-encrypted", in: nodeClass("default", eksSpec+"blockDeviceMappings:\n  - deviceName: /dev/xvda\n    ebs:\n      volumeSize: 100Gi\n"), facts: netFacts(ebsDefault(false, defaultKey), keys(key(defaultKey, "Disabled", "SYMMETRIC_DEFAULT", defaultKey)))},
		{name: "describe-key-refused", in: nodeClass("default", withKey), facts: netFacts(keys(listItem("ref: "+teamKey, "error: AccessDenied"))), notEvaluated: "kms:DescribeKey of alias/karpenter-ebs was refused"},
		{name: "key-not-asked", in: nodeClass("default", withKey), facts: netFacts(keys()), notEvaluated: "no kmsKeys entry for alias/karpenter-ebs"},
		{name: "ebs-defaults-unknown", in: nodeClass("default", eksSpec), facts: netFacts(without("ebsDefaults"), keys()), notEvaluated: "ebsDefaults"},
	})
}
