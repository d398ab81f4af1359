package validators_test

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
