package rules_test

import "strings"

// baseSpec is a clean EC2NodeClass spec; tests add or replace lines.
const baseSpec = `amiSelectorTerms:
  - alias: al2023@v20251112
role: KarpenterNodeRole-prod
subnetSelectorTerms:
  - tags:
      karpenter.sh/discovery: prod
securityGroupSelectorTerms:
  - tags:
      karpenter.sh/discovery: prod
`

// nodeClass renders a v1 EC2NodeClass with the given spec body (unindented YAML).
func nodeClass(name, spec string) string {
	return "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: " + name + "\nspec:\n" + indent(spec, "  ")
}

// nodePool renders a v1 NodePool referencing class, with extra spec lines appended.
func nodePool(name, class, extra string) string {
	return "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: " + name + "\nspec:\n" + indent(`template:
  spec:
    nodeClassRef:
      group: karpenter.k8s.aws
      kind: EC2NodeClass
      name: `+class+`
    requirements:
      - key: karpenter.sh/capacity-type
        operator: In
        values: ["on-demand"]
limits:
  cpu: "100"
`+extra, "  ")
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func docs(ds ...string) string { return strings.Join(ds, "---\n") }

// awsAuth renders kube-system/aws-auth with the given data (unindented YAML).
func awsAuth(data string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aws-auth\n  namespace: kube-system\ndata:\n" + indent(data, "  ")
}

// withUserData adds userData (and amiFamily, when family is set) to a spec.
func withUserData(spec, family, userData string) string {
	if family != "" {
		spec = "amiFamily: " + family + "\n" + spec
	}
	return spec + "userData: |\n" + indent(userData, "  ")
}

// nodeConfigMIME is AL2023 userData configuring the kubelet with a NodeConfig part.
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

// capacityPool is a NodePool whose capacity-type requirement is replaced by req (YAML list items
// under requirements; "" drops the requirement).
func capacityPool(name, req string) string {
	p := nodePool(name, "default", "")
	old := "        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"on-demand\"]\n"
	if !strings.Contains(p, old) {
		panic("nodePool fixture changed")
	}
	if req == "" {
		return strings.Replace(p, old, "        - key: kubernetes.io/arch\n          operator: In\n          values: [\"amd64\"]\n", 1)
	}
	return strings.Replace(p, old, indent(req, "        "), 1)
}

// withSkip adds annotations (unindented YAML) to a manifest's metadata.
func withSkip(doc, ann string) string {
	return strings.Replace(doc, "metadata:\n", "metadata:\n  annotations:\n"+indent(ann, "    "), 1)
}
