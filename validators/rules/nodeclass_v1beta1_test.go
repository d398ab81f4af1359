package rules_test

import (
	"strings"
	"testing"
)

const v1beta1NodeClass = `# converted by hand later
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2023   # the family picks the AMI in v1beta1
  role: "KarpenterNodeRole-prod"
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: prod
  securityGroupSelectorTerms:
    - tags: {karpenter.sh/discovery: prod}
`

func TestNodeclassV1beta1(t *testing.T) {
	testRule(t, "nodeclass-v1beta1", []ruleCase{
		{name: "v1", in: nodeClass("v1", baseSpec)},
		{name: "v1beta1-al2023", fires: 2, in: v1beta1NodeClass},
		{name: "v1beta1-bottlerocket-with-terms", fires: 1, in: strings.Replace(v1beta1NodeClass, "  amiFamily: AL2023   # the family picks the AMI in v1beta1\n", "  amiFamily: Bottlerocket\n  amiSelectorTerms:\n    - id: ami-0123456789abcdef0\n", 1)},
		{name: "ubuntu", fires: 2, in: strings.Replace(v1beta1NodeClass, "AL2023", "Ubuntu", 1)},
		// The suggested pins are releases ami-alias-version-format accepts: semantic for Bottlerocket,
		// none for Windows (latest only).
		{name: "v1beta1-bottlerocket", fires: 2, in: strings.Replace(v1beta1NodeClass, "AL2023   # the family picks the AMI in v1beta1", "Bottlerocket", 1)},
		{name: "v1beta1-windows2022", fires: 2, in: strings.Replace(v1beta1NodeClass, "AL2023   # the family picks the AMI in v1beta1", "Windows2022", 1)},
		{name: "v1-without-family-or-terms", fires: 1, in: nodeClass("bare", strings.Replace(baseSpec, "amiSelectorTerms:\n  - alias: al2023@v20251112\n", "", 1))},
		{name: "custom-without-terms", fires: 1, in: nodeClass("custom", "amiFamily: Custom\n"+strings.Replace(baseSpec, "amiSelectorTerms:\n  - alias: al2023@v20251112\n", "", 1))},
	})
}
