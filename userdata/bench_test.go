package userdata

import (
	"strings"
	"testing"
)

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

// BenchmarkParse measures parsing one AL2023 MIME userData with a NodeConfig part, the heaviest
// per-object step of the static catalog: "common" is the corpus's document, which the fast paths
// take; "library" is the same document with CRLF line endings, which they decline, so net/mail,
// mime/multipart and yaml.v3 do the work.
func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		{"common", corpusUserData},
		{"library", strings.ReplaceAll(corpusUserData, "\n", "\r\n")},
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
