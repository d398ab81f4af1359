// Package corpus generates realistic manifest sets for benchmarks: EC2NodeClasses and NodePools in the
// shapes teams write, about one in five carrying a problem the rules find.
package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// NodeClass returns one EC2NodeClass document; i varies names and, every fifth, adds problems.
func NodeClass(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: class-%d
  annotations:
    team: platform-%d
spec:
  amiSelectorTerms:
`, i, i%7)
	if i%5 == 0 {
		b.WriteString("    - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n")
	} else {
		b.WriteString("    - alias: al2023@v20251112\n")
	}
	fmt.Fprintf(&b, `  role: KarpenterNodeRole-team-%d
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: prod-eks
        tier: private
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: prod-eks
  metadataOptions:
    httpEndpoint: enabled
    httpTokens: required
  blockDeviceMappings:
    - deviceName: /dev/xvda
      rootVolume: true
      ebs:
        volumeSize: 100Gi
        volumeType: gp3
        encrypted: true
  kubelet:
    maxPods: 110
  userData: |
    MIME-Version: 1.0
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
`, i%13)
	return b.String()
}

// NodePool returns one NodePool document referencing class-i.
func NodePool(i int) string {
	limits := "  limits:\n    cpu: \"1000\"\n    memory: 1000Gi\n"
	if i%5 == 0 {
		limits = ""
	}
	return fmt.Sprintf(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: pool-%d
spec:
  template:
    metadata:
      labels:
        team: platform-%d
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: class-%d
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64", "arm64"]
      expireAfter: 720h
%s  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
`, i, i%7, i, limits)
}

// Write writes n objects (half EC2NodeClasses, half NodePools) into dir, perFile documents per file.
func Write(dir string, n, perFile int) error {
	var docs []string
	for i := 0; i < n/2; i++ {
		docs = append(docs, NodeClass(i), NodePool(i))
	}
	for f := 0; f*perFile < len(docs); f++ {
		end := min((f+1)*perFile, len(docs))
		p := filepath.Join(dir, fmt.Sprintf("manifests-%04d.yaml", f))
		if err := os.WriteFile(p, []byte(strings.Join(docs[f*perFile:end], "---\n")), 0o644); err != nil {
			return fmt.Errorf("write corpus: %w", err)
		}
	}
	return nil
}
