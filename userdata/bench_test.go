package userdata

import "testing"

// corpusUserData is the MIME userData the benchmark corpus's EC2NodeClasses carry: a NodeConfig part
// and a shell part, the shape AL2023 users write.
const corpusUserData = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    config:
      shutdownGracePeriod: 30s
--//
Content-Type: text/x-shellscript

#!/bin/bash
echo "vm.max_map_count=262144" >> /etc/sysctl.conf
--//--
`

// BenchmarkParse measures parsing one AL2023 MIME userData with a NodeConfig part: the heaviest
// per-object step of the static catalog.
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(FamilyAL2023, corpusUserData); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseMIME(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		parseMIME(corpusUserData)
	}
}

func BenchmarkCheckNodeConfig(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		checkNodeConfig("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      shutdownGracePeriod: 30s\n")
	}
}
