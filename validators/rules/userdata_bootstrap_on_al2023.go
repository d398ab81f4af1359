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

var userdataBootstrapOnAL2023 = &validators.Rule{
	ID:            "userdata-bootstrap-on-al2023",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Summary:       "AL2023 userData runs `/etc/eks/bootstrap.sh` or `nodeadm init`",
	Doc: "AL2023 nodes boot with nodeadm, configured by a NodeConfig; /etc/eks/bootstrap.sh exists only " +
		"on AL2, so a script calling it fails and the instance never becomes a node (deny). systemd already " +
		"runs nodeadm in two phases; running `nodeadm init` again from userData repeats them and restarts " +
		"containerd and the kubelet while the node joins: nodes still join, so that is at most a warning. Put " +
		"settings in a NodeConfig MIME part or in spec.kubelet instead.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		nc := o.NodeClass
		if ami.Family(nc) != userdata.FamilyAL2023 || nc.Spec.UserData == nil {
			return nil, nil
		}
		ud, err := parseUserData(c, o)
		if err != nil {
			return nil, nil // userdata-invalid reports it
		}
		var out []validators.Finding
		for _, call := range ud.BootstrapCalls() {
			where := fmt.Sprintf("line %d of userData", call.Line)
			if ud.MIME {
				where = fmt.Sprintf("line %d of MIME part %d", call.Line, call.Part)
			}
			f := validators.Finding{
				Field: "spec.userData",
				Line:  o.Fields.Line("spec", "userData"),
				Fix:   nodeConfigFix,
			}
			why := "AL2023 has no bootstrap.sh, so the node never joins"
			if !strings.Contains(call.Text, "bootstrap.sh") {
				// Nodes still join (AWS's own blueprints do this after resizing a disk): a risk, not a
				// failure.
				why = "systemd already runs nodeadm's config and run phases, so a second init repeats them and restarts containerd and the kubelet while the node joins"
				f.AtMost = config.ActionWarn
			}
			f.Message = fmt.Sprintf("AL2023 userData runs %q (%s): %s", truncate(call.Text, 60), where, why)
			out = append(out, f)
		}
		return out, nil
	},
}

// nodeConfigFix is the fix of every bootstrap call.
const nodeConfigFix = `remove that line and let nodeadm configure the node: put kubelet settings in spec.kubelet or in a MIME part
  Content-Type: application/node.eks.aws
  apiVersion: node.eks.aws/v1alpha1
  kind: NodeConfig
  spec: {kubelet: {config: {...}, flags: [...]}}
(Karpenter adds the cluster name, endpoint and CA itself)`

// truncate shortens s to n runes, ending with an ellipsis when it cuts.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
