package rules

import (
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var customUserdataMissingUnregisteredTaint = &validators.Rule{
	ID:            "custom-userdata-missing-unregistered-taint",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Summary:       "`amiFamily: Custom` userData never registers `karpenter.sh/unregistered:NoExecute`",
	Doc: "With amiFamily Custom, Karpenter passes userData through untouched, so it must register the node " +
		"with the taint karpenter.sh/unregistered:NoExecute, which Karpenter removes once it has initialised " +
		"the node. Without it the NodeClaim never registers and Karpenter deletes the instance after 15 " +
		"minutes, over and over.",
	Check: func(_ *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		nc := o.NodeClass
		if nc.Spec.AMIFamily != userdata.FamilyCustom {
			return nil, nil
		}
		text := ""
		if nc.Spec.UserData != nil {
			text = *nc.Spec.UserData
		}
		if userdata.RegistersUnregisteredTaint(text) {
			return nil, nil
		}
		msg := "amiFamily Custom userData never registers the taint karpenter.sh/unregistered:NoExecute, so NodeClaims never register and are deleted after 15 minutes"
		if strings.TrimSpace(text) == "" {
			msg = "amiFamily Custom has no userData: Karpenter generates none for Custom, so the node never joins or registers its taint"
		}
		return []validators.Finding{{
			Field:   "spec.userData",
			Line:    o.Fields.Line("spec", "userData"),
			Message: msg,
			Fix:     "register the node with the taint: kubelet --register-with-taints=karpenter.sh/unregistered=:NoExecute (or registerWithTaints in the kubelet configuration / NodeConfig)",
		}}, nil
	},
}
