package userdata

import (
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
)

// BenchmarkParse measures parsing one AL2023 MIME userData with a NodeConfig part, the heaviest
// per-object step of the static catalog, with net/mail, mime/multipart and yaml.v3: "common" is the
// corpus's document, "crlf" the same with CRLF line endings.
func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		{"common", corpus.UserData},
		{"crlf", strings.ReplaceAll(corpus.UserData, "\n", "\r\n")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(FamilyAL2023, bc.text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRegisters measures reading the registration taint from parsed amiFamily Custom userData,
// which custom-userdata-missing-unregistered-taint does for every Custom EC2NodeClass on every
// evaluation (the Parser remembers parses, not readings): "script" is a MIME shell part run through
// the bash parser, "nodeconfig" a NodeConfig part decoded as nodeadm does, "bottlerocket" TOML
// settings.
func BenchmarkRegisters(b *testing.B) {
	const flag = "--register-with-taints=karpenter.sh/unregistered:NoExecute"
	for _, bc := range []struct{ name, text string }{
		{"script", "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n" +
			"#!/bin/bash\nset -euo pipefail\n# Join the cluster; Karpenter initialises the node once it removes the taint.\n" +
			"B64_CLUSTER_CA=LS0tLS1CRUdJTi\nAPI_SERVER_URL=https://ABCDEF.gr7.us-west-2.eks.amazonaws.com\n" +
			"/etc/eks/bootstrap.sh prod --b64-cluster-ca $B64_CLUSTER_CA --apiserver-endpoint $API_SERVER_URL \\\n" +
			"  --kubelet-extra-args '--node-labels=team=ml,karpenter.sh/nodepool=gpu " + flag + "'\n--B--\n"},
		{"nodeconfig", strings.Replace(corpus.UserData, "      shutdownGracePeriod: 30s\n", "      shutdownGracePeriod: 30s\n      registerWithTaints:\n        - {key: karpenter.sh/unregistered, effect: NoExecute}\n", 1)},
		{"bottlerocket", "[settings.kubernetes]\ncluster-name = \"prod\"\napi-server = \"https://ABCDEF.gr7.us-west-2.eks.amazonaws.com\"\n\n[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\":NoExecute\"]\n"},
	} {
		ud, err := Parse(FamilyCustom, bc.text)
		if err != nil {
			b.Fatal(err)
		}
		if r := ud.Registers(UnregisteredTaintKey, UnregisteredTaintEffect); r.Verdict != Registered {
			b.Fatalf("%s: %+v, want registered", bc.name, r)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ud.Registers(UnregisteredTaintKey, UnregisteredTaintEffect)
			}
		})
	}
}
