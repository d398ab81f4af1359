package rules

import (
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var ebsUnencrypted = &validators.Rule{
	ID:            "ebs-unencrypted",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Summary:       "a `blockDeviceMappings[].ebs.encrypted` is false",
	Doc: "A block device mapping with encrypted: false creates unencrypted EBS volumes (unless the account " +
		"enforces EBS encryption by default), holding container images, logs and emptyDir data at rest in " +
		"clear. Karpenter's own default mappings are encrypted.",
	Check: func(_ *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		var out []validators.Finding
		for i, b := range o.NodeClass.Spec.BlockDeviceMappings {
			if b.EBS == nil || b.EBS.Encrypted == nil || *b.EBS.Encrypted {
				continue
			}
			dev := b.DeviceName
			if dev == "" {
				dev = fmt.Sprintf("mapping %d", i)
			}
			out = append(out, validators.Finding{
				Field:   objects.Path("spec", "blockDeviceMappings", i, "ebs", "encrypted"),
				Line:    o.Fields.Line("spec", "blockDeviceMappings", i, "ebs", "encrypted"),
				Message: fmt.Sprintf("EBS volume %s is created unencrypted", dev),
				Fix:     "encrypted: true",
			})
		}
		return out, nil
	},
}
