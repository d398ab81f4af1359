package validators

import (
	"fmt"
	"sort"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// This file holds the annotation family: deprecated-disruption-annotation and stale-compatibility-annotation.

const annotationDoNotDisrupt = "karpenter.sh/do-not-disrupt"

var deprecatedDisruptionAnnotations = []string{"karpenter.sh/do-not-evict", "karpenter.sh/do-not-consolidate"}

var deprecatedDisruptionAnnotation = &Rule{
	ID:            "deprecated-disruption-annotation",
	Kinds:         []string{KindNodePool},
	DefaultAction: config.ActionDeny,
	Fixable:       true,
	Summary:       "`karpenter.sh/do-not-evict` or `do-not-consolidate` in the node template annotations",
	Doc: "Karpenter v1 ignores karpenter.sh/do-not-evict and karpenter.sh/do-not-consolidate: nodes you " +
		"meant to protect are disrupted like any other. The one annotation today is " +
		"karpenter.sh/do-not-disrupt: \"true\"; the fix renames the first deprecated annotation to it and " +
		"removes the rest.",
	Check: func(_ *Context, o *objects.Object) []Finding {
		path := []any{"spec", "template", "metadata", "annotations"}
		ann := o.NodePool.Spec.Template.Metadata.Annotations
		_, hasNew := ann[annotationDoNotDisrupt]
		var out []Finding
		for _, key := range deprecatedDisruptionAnnotations {
			if _, ok := ann[key]; !ok {
				continue
			}
			f := Finding{
				Field:   objects.Path(append(path, key)...),
				Line:    o.Fields.Line(append(path, key)...),
				Message: fmt.Sprintf("%s is ignored since Karpenter v1, so these nodes are not protected from disruption", key),
				Fix:     annotationDoNotDisrupt + `: "true"`,
			}
			if hasNew {
				f.Edits = []Edit{{Object: o, Path: path, Op: EditDelete, Key: key}}
			} else {
				f.Edits = []Edit{{Object: o, Path: path, Op: EditRename, Key: key, NewKey: annotationDoNotDisrupt, Value: quoted("true")}}
				hasNew = true
			}
			out = append(out, f)
		}
		return out
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

var staleCompatibilityAnnotation = &Rule{
	ID:            "stale-compatibility-annotation",
	Kinds:         []string{KindEC2NodeClass, KindNodePool},
	DefaultAction: config.ActionWarn,
	Fixable:       true,
	Summary:       "a v1beta1 compatibility annotation on a NodePool or EC2NodeClass",
	Doc: "The v1.0 conversion webhook recorded v1beta1 settings in compatibility.karpenter.sh/… and " +
		"compatibility.karpenter.k8s.aws/… annotations. They are meaningless today, and Karpenter v1.1 to " +
		"v1.5 refuse to start while any NodePool still carries v1beta1-kubelet-conversion. The fix removes " +
		"them; Karpenter's own cluster-name-tagged and kubelet-drift-hash annotations are left alone.",
	Check: func(_ *Context, o *objects.Object) []Finding {
		path := annotationPath()
		var stale []string
		for k := range o.Annotations {
			if staleCompatibilityAnnotations[k] {
				stale = append(stale, k)
			}
		}
		sort.Strings(stale)
		var out []Finding
		for _, k := range stale {
			out = append(out, Finding{
				Field:   objects.Path(append(path, k)...),
				Line:    o.Fields.Line(append(path, k)...),
				Message: fmt.Sprintf("%s is a leftover of the v1beta1 conversion and means nothing today", k),
				Fix:     "remove the annotation " + k,
				Edits:   []Edit{{Object: o, Path: path, Op: EditDelete, Key: k}},
			})
		}
		return out
	},
}

func quoted(v string) *yaml.Node {
	n := Scalar(v)
	n.Style = yaml.DoubleQuotedStyle
	return n
}
