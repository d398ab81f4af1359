package rules

import (
	"fmt"
	"sort"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var staleCompatibilityAnnotation = &validators.Rule{
	ID:            "stale-compatibility-annotation",
	Kinds:         []string{validators.KindEC2NodeClass, validators.KindNodePool},
	DefaultAction: config.ActionWarn,
	Fixable:       true,
	Summary:       "a v1beta1 compatibility annotation on a NodePool or EC2NodeClass",
	Doc: "The v1.0 conversion webhook recorded v1beta1 settings in compatibility.karpenter.sh/… and " +
		"compatibility.karpenter.k8s.aws/… annotations. They are meaningless today, and Karpenter v1.1 to " +
		"v1.5 refuse to start while any NodePool still carries v1beta1-kubelet-conversion. The fix removes " +
		"them; Karpenter's own cluster-name-tagged and kubelet-drift-hash annotations are left alone.",
	Check: func(_ *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		path := annotationPath()
		var stale []string
		for k := range o.Annotations {
			if staleCompatibilityAnnotations[k] {
				stale = append(stale, k)
			}
		}
		sort.Strings(stale)
		var out []validators.Finding
		for _, k := range stale {
			out = append(out, validators.Finding{
				Field:   objects.Path(append(path, k)...),
				Line:    o.Fields.Line(append(path, k)...),
				Message: fmt.Sprintf("%s is a leftover of the v1beta1 conversion and means nothing today", k),
				Fix:     "remove the annotation " + k,
				Edits:   []validators.Edit{{Object: o, Path: path, Op: validators.EditDelete, Key: k}},
			})
		}
		return out, nil
	},
}

// staleCompatibilityAnnotations were written by the v1.0 conversion and mean nothing today; Karpenter
// v1.1–v1.5 refuse to start while a NodePool carries the kubelet one. Karpenter's own
// cluster-name-tagged and kubelet-drift-hash annotations are not listed: it sets them itself.
var staleCompatibilityAnnotations = map[string]bool{
	"compatibility.karpenter.sh/v1beta1-kubelet-conversion":  true,
	"compatibility.karpenter.sh/v1beta1-nodeclass-reference": true,
	"compatibility.karpenter.k8s.aws/v1beta1-ubuntu":         true,
	"compatibility.karpenter.k8s.aws/v1-alias-version":       true,
}
