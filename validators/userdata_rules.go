package validators

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
)

// This file holds the userData family: userdata-invalid, userdata-bootstrap-on-al2023 and
// custom-userdata-missing-unregistered-taint.

const nodeConfigFix = `remove that line and let nodeadm configure the node: put kubelet settings in spec.kubelet or in a MIME part
  Content-Type: application/node.eks.aws
  apiVersion: node.eks.aws/v1alpha1
  kind: NodeConfig
  spec: {kubelet: {config: {...}, flags: [...]}}
(Karpenter adds the cluster name, endpoint and CA itself)`

var userdataBootstrapOnAL2023 = &Rule{
	ID:            "userdata-bootstrap-on-al2023",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Summary:       "AL2023 userData runs `/etc/eks/bootstrap.sh` or `nodeadm init`",
	Doc: "AL2023 nodes boot with nodeadm, configured by a NodeConfig; /etc/eks/bootstrap.sh exists only " +
		"on AL2, so a script calling it fails and the instance never becomes a node. systemd already runs " +
		"nodeadm in two phases; running `nodeadm init` again from userData breaks that sequence. Put " +
		"settings in a NodeConfig MIME part or in spec.kubelet instead.",
	Check: func(c *Context, o *objects.Object) []Finding {
		nc := o.NodeClass
		if family(nc) != userdata.FamilyAL2023 || nc.Spec.UserData == nil {
			return nil
		}
		ud, err := c.parseUserData(o)
		if err != nil {
			return nil // userdata-invalid reports it
		}
		var out []Finding
		for _, call := range ud.BootstrapCalls() {
			where := fmt.Sprintf("line %d of userData", call.Line)
			if ud.MIME {
				where = fmt.Sprintf("line %d of MIME part %d", call.Line, call.Part)
			}
			why := "AL2023 has no bootstrap.sh, so the node never joins"
			if !strings.Contains(call.Text, "bootstrap.sh") {
				why = "systemd already runs nodeadm; a second init breaks the boot"
			}
			out = append(out, Finding{
				Field:   "spec.userData",
				Line:    o.Fields.Line("spec", "userData"),
				Message: fmt.Sprintf("AL2023 userData runs %q (%s): %s", truncate(call.Text, 60), where, why),
				Fix:     nodeConfigFix,
			})
		}
		return out
	},
}

var userdataInvalid = &Rule{
	ID:            "userdata-invalid",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Summary:       "userData cannot be parsed for its AMI family",
	Doc: "Karpenter merges custom userData with its own: AL2 and AL2023 userData must be a shell script, " +
		"a NodeConfig (AL2023) or a well-formed MIME multi-part document; Bottlerocket userData must be TOML. " +
		"Broken MIME boundaries, a NodeConfig with the wrong apiVersion or kind, or invalid TOML make " +
		"launches fail or nodes boot unconfigured.",
	Check: func(c *Context, o *objects.Object) []Finding {
		nc := o.NodeClass
		if nc.Spec.UserData == nil {
			return nil
		}
		fam := family(nc)
		switch fam {
		case userdata.FamilyAL2, userdata.FamilyAL2023, userdata.FamilyBottlerocket:
		default:
			return nil
		}
		if _, err := c.parseUserData(o); err != nil {
			return []Finding{{
				Field:   "spec.userData",
				Line:    o.Fields.Line("spec", "userData"),
				Message: fmt.Sprintf("%s userData is invalid: %v", fam, err),
				Fix:     userdataFormat(fam),
			}}
		}
		return nil
	},
}

func userdataFormat(fam string) string {
	switch fam {
	case userdata.FamilyBottlerocket:
		return "write Bottlerocket settings as TOML tables, e.g. [settings.kubernetes] with max-pods = 110 on the next line"
	case userdata.FamilyAL2023:
		return "use a shell script, a NodeConfig (apiVersion: node.eks.aws/v1alpha1, kind: NodeConfig), or MIME multi-part with a boundary that opens every part and closes with --BOUNDARY--"
	}
	return "use a shell script or MIME multi-part with a boundary that opens every part and closes with --BOUNDARY--"
}

var customUserdataMissingUnregisteredTaint = &Rule{
	ID:            "custom-userdata-missing-unregistered-taint",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Summary:       "`amiFamily: Custom` userData never registers `karpenter.sh/unregistered:NoExecute`",
	Doc: "With amiFamily Custom, Karpenter passes userData through untouched, so it must register the node " +
		"with the taint karpenter.sh/unregistered:NoExecute, which Karpenter removes once it has initialised " +
		"the node. Without it the NodeClaim never registers and Karpenter deletes the instance after 15 " +
		"minutes, over and over.",
	Check: func(_ *Context, o *objects.Object) []Finding {
		nc := o.NodeClass
		if nc.Spec.AMIFamily != userdata.FamilyCustom {
			return nil
		}
		text := ""
		if nc.Spec.UserData != nil {
			text = *nc.Spec.UserData
		}
		if userdata.RegistersUnregisteredTaint(text) {
			return nil
		}
		msg := "amiFamily Custom userData never registers the taint karpenter.sh/unregistered:NoExecute, so NodeClaims never register and are deleted after 15 minutes"
		if strings.TrimSpace(text) == "" {
			msg = "amiFamily Custom has no userData: Karpenter generates none for Custom, so the node never joins or registers its taint"
		}
		return []Finding{{
			Field:   "spec.userData",
			Line:    o.Fields.Line("spec", "userData"),
			Message: msg,
			Fix:     "register the node with the taint: kubelet --register-with-taints=karpenter.sh/unregistered=:NoExecute (or registerWithTaints in the kubelet configuration / NodeConfig)",
		}}
	},
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

type parsedUserData struct {
	ud  userdata.UserData
	err error
}

// parseUserData parses an EC2NodeClass's userData for its family once per evaluation; several rules
// read it.
func (c *Context) parseUserData(o *objects.Object) (userdata.UserData, error) {
	if p, ok := c.userData.get(o); ok {
		return p.ud, p.err
	}
	text := ""
	if o.NodeClass.Spec.UserData != nil {
		text = *o.NodeClass.Spec.UserData
	}
	ud, err := userdata.Parse(family(o.NodeClass), text)
	c.userData.put(o, parsedUserData{ud, err})
	return ud, err
}
