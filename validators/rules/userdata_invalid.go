package rules

import (
	"errors"
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
)

var userdataInvalid = &validators.Rule{
	ID:            "userdata-invalid",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Summary:       "userData cannot be parsed for its AMI family",
	Doc: "Karpenter merges custom userData with its own: AL2 and AL2023 userData must be a shell script, " +
		"a NodeConfig (AL2023) or a well-formed MIME multi-part document (the closing --BOUNDARY-- may be " +
		"missing once the last part is delimited, as Karpenter's merger and cloud-init accept; a part cut off " +
		"by the end is refused); Bottlerocket userData must be TOML. Broken MIME boundaries, a NodeConfig " +
		"with the wrong apiVersion or kind, or invalid TOML make launches fail or nodes boot unconfigured. " +
		"Bottlerocket reads userData as TOML settings only and runs no script: a shell script (a #! first " +
		"line, or a MIME document with a shell part) is refused there, Karpenter's own " +
		"custom-family-with-alias example included. amiFamily Custom over bottlerocket aliases still boots " +
		"Bottlerocket, which then gets the userData untouched: its userData must be TOML too, or the node " +
		"never joins.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		nc := o.NodeClass
		if nc.Spec.UserData == nil {
			return nil, nil
		}
		fam := ami.BootFamily(nc)
		switch fam {
		case userdata.FamilyAL2, userdata.FamilyAL2023, userdata.FamilyBottlerocket:
		default:
			return nil, nil
		}
		_, err := parseUserData(c, o)
		if err == nil {
			return nil, nil
		}
		var msg string
		switch {
		case ami.Family(nc) == userdata.FamilyCustom:
			// Karpenter passes it through: the instance launches and Bottlerocket cannot read it.
			msg = fmt.Sprintf("amiFamily Custom with only bottlerocket aliases boots Bottlerocket, which gets this userData untouched and never joins the cluster: %v", err)
		case fam == userdata.FamilyBottlerocket:
			// Karpenter decodes it to merge its own settings in, and fails the launch.
			msg = fmt.Sprintf("Karpenter cannot merge its Bottlerocket settings into this userData, so every launch fails: %v", err)
		default:
			msg = fmt.Sprintf("%s userData is invalid: %v", fam, err)
		}
		return []validators.Finding{{
			Field:   "spec.userData",
			Line:    o.Fields.Line("spec", "userData"),
			Message: msg,
			Fix:     userdataFormat(nc, fam, errors.Is(err, userdata.ErrScript)),
		}}, nil
	},
}

// userdataFormat says what userData of that family must look like; where it is a script the family
// runs none of, what runs commands there; for amiFamily Custom over Bottlerocket, what Karpenter then
// leaves to the userData.
func userdataFormat(nc *objects.EC2NodeClass, fam string, script bool) string {
	switch fam {
	case userdata.FamilyBottlerocket:
		fix := "write Bottlerocket settings as TOML tables, e.g. [settings.kubernetes] with max-pods = 110 on the next line"
		if script {
			fix += "; Bottlerocket runs no userData script: run commands from [settings.bootstrap-commands.<name>] or a bootstrap container"
		}
		if ami.Family(nc) == userdata.FamilyCustom {
			fix += "; with amiFamily Custom Karpenter adds nothing: set cluster-name, api-server and cluster-certificate under [settings.kubernetes], " +
				"and the taint under [settings.kubernetes.node-taints]: \"karpenter.sh/unregistered\" = [\":NoExecute\"]"
		}
		return fix
	case userdata.FamilyAL2023:
		return "use a shell script, a NodeConfig (apiVersion: node.eks.aws/v1alpha1, kind: NodeConfig), or MIME multi-part with a boundary that opens every part and closes with --BOUNDARY--"
	}
	return "use a shell script or MIME multi-part with a boundary that opens every part and closes with --BOUNDARY--"
}
