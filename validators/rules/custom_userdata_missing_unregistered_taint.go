package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
)

var customUserdataMissingUnregisteredTaint = &validators.Rule{
	ID:            "custom-userdata-missing-unregistered-taint",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Summary:       "`amiFamily: Custom` userData never registers `karpenter.sh/unregistered:NoExecute`",
	Doc: "With amiFamily Custom, Karpenter passes userData through untouched, so it must register the node " +
		"with the taint karpenter.sh/unregistered:NoExecute, which Karpenter removes once it has initialised " +
		"the node. Without it Karpenter (v1.3 and later) registers the node anyway, logging \"missing taint " +
		"prevents registration-related race conditions\" and emitting an event: pods can land on the node " +
		"before Karpenter has applied the NodePool's labels and taints (v1.0 to v1.2 refused to register such " +
		"nodes and deleted them after 15 minutes). The userData is read as the node reads it, never searched for words: shell " +
		"scripts are parsed (comments, and here-documents fed to `:`, do not count; --register-with-taints in any " +
		"command's arguments, assignment or here-document written to a file does), NodeConfig parts as nodeadm " +
		"decodes them (spec.kubelet.flags, spec.kubelet.config.registerWithTaints), cloud-config as YAML, " +
		"Bottlerocket settings as TOML (settings.kubernetes.node-taints). The effect must be NoExecute. When " +
		"the taint list is built at run time ($TAINTS, $(…)) or the taint is named where only running the " +
		"userData would tell, the rule says nothing rather than guess.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		nc := o.NodeClass
		if nc.Spec.AMIFamily != userdata.FamilyCustom {
			return nil, nil
		}
		text := ""
		if nc.Spec.UserData != nil {
			text = *nc.Spec.UserData
		}
		// The catalog's parser remembers readings by text, as it does parses: reading a script means
		// parsing it as bash.
		reg, err := validators.Shared(c, userDataParser).Registers(ami.BootFamily(nc), text, userdata.UnregisteredTaintKey, userdata.UnregisteredTaintEffect)
		if err != nil {
			return nil, nil // a Bottlerocket image that cannot read it at all: userdata-invalid reports it
		}
		if reg.Verdict != userdata.NotRegistered {
			return nil, nil // registered, or only running the userData would tell
		}
		fix := "register the node with the taint: kubelet --register-with-taints=karpenter.sh/unregistered=:NoExecute (or registerWithTaints in the kubelet configuration / NodeConfig)"
		if ami.BootFamily(nc) == userdata.FamilyBottlerocket {
			fix = "register the node with the taint in its Bottlerocket settings:\n  [settings.kubernetes.node-taints]\n  \"karpenter.sh/unregistered\" = [\":NoExecute\"]"
		}
		var msg string
		switch {
		case strings.TrimSpace(text) == "":
			msg = "amiFamily Custom has no userData: Karpenter generates none for Custom, so the node never joins or registers its taint"
		case len(reg.OtherEffects) > 0:
			msg = fmt.Sprintf("amiFamily Custom userData registers karpenter.sh/unregistered with %s, not NoExecute (%s): Karpenter removes only karpenter.sh/unregistered:NoExecute once it has initialised the node, so this taint stays and pods that do not tolerate it never schedule there",
				effects(reg.OtherEffects), reg.Where)
		case strings.Contains(text, userdata.UnregisteredTaintKey):
			msg = "amiFamily Custom userData names karpenter.sh/unregistered only where the node does not read it as a taint (a comment, a here-document fed to `:`, a label): " + missingTaintConsequence
		default:
			msg = "amiFamily Custom userData never registers the taint karpenter.sh/unregistered:NoExecute: " + missingTaintConsequence
		}
		return []validators.Finding{{
			Field:   "spec.userData",
			Line:    o.Fields.Line("spec", "userData"),
			Message: msg,
			Fix:     fix,
		}}, nil
	},
}

// effects names taint effects for a message: "effect NoSchedule", "effects NoSchedule and
// PreferNoSchedule", "no effect".
func effects(es []string) string {
	names := make([]string, 0, len(es))
	none := false
	for _, e := range es {
		if e == "" {
			none = true
			continue
		}
		names = append(names, e)
	}
	var s string
	switch len(names) {
	case 0:
		return "no effect"
	case 1:
		s = "effect " + names[0]
	default:
		s = "effects " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	if none {
		s += ", or none"
	}
	return s
}

// missingTaintConsequence is what a node registered without karpenter.sh/unregistered:NoExecute meets
// (Karpenter core's registration, v1.3 and later).
const missingTaintConsequence = "Karpenter registers the node anyway but reports \"missing taint prevents registration-related race conditions\", and pods can land on it before Karpenter has applied the NodePool's labels and taints (Karpenter v1.0 to v1.2 deleted such NodeClaims after 15 minutes)"
