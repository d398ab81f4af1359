package rules

import (
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var userdataInvalid = &validators.Rule{
	ID:            "userdata-invalid",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Summary:       "userData cannot be parsed for its AMI family",
	Doc: "Karpenter merges custom userData with its own: AL2 and AL2023 userData must be a shell script, " +
		"a NodeConfig (AL2023) or a well-formed MIME multi-part document; Bottlerocket userData must be TOML. " +
		"Broken MIME boundaries, a NodeConfig with the wrong apiVersion or kind, or invalid TOML make " +
		"launches fail or nodes boot unconfigured. amiFamily Custom over bottlerocket aliases still boots " +
		"Bottlerocket: its userData must be TOML too, since a shell script there never runs and the node never joins.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		nc := o.NodeClass
		if nc.Spec.UserData == nil {
			return nil, nil
		}
		fam := bootFamily(nc)
		switch fam {
		case userdata.FamilyAL2, userdata.FamilyAL2023, userdata.FamilyBottlerocket:
		default:
			return nil, nil
		}
		if _, err := parseUserData(c, o); err != nil {
			msg := fmt.Sprintf("%s userData is invalid: %v", fam, err)
			if family(nc) == userdata.FamilyCustom {
				msg = fmt.Sprintf("amiFamily Custom with only bottlerocket aliases boots Bottlerocket, whose agent reads userData as TOML settings, not a script: %v", err)
			}
			return []validators.Finding{{
				Field:   "spec.userData",
				Line:    o.Fields.Line("spec", "userData"),
				Message: msg,
				Fix:     userdataFormat(fam),
			}}, nil
		}
		return nil, nil
	},
}

// userdataFormat says what userData of that family must look like.
func userdataFormat(fam string) string {
	switch fam {
	case userdata.FamilyBottlerocket:
		return "write Bottlerocket settings as TOML tables, e.g. [settings.kubernetes] with max-pods = 110 on the next line"
	case userdata.FamilyAL2023:
		return "use a shell script, a NodeConfig (apiVersion: node.eks.aws/v1alpha1, kind: NodeConfig), or MIME multi-part with a boundary that opens every part and closes with --BOUNDARY--"
	}
	return "use a shell script or MIME multi-part with a boundary that opens every part and closes with --BOUNDARY--"
}
