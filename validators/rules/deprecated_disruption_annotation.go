package rules

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var deprecatedDisruptionAnnotation = &validators.Rule{
	ID:            "deprecated-disruption-annotation",
	Kinds:         []string{validators.KindNodePool},
	DefaultAction: config.ActionDeny,
	Fixable:       true,
	Summary:       "`karpenter.sh/do-not-evict` or `do-not-consolidate` in the node template annotations",
	Doc: "Karpenter v1 ignores karpenter.sh/do-not-evict and karpenter.sh/do-not-consolidate: nodes you " +
		"meant to protect are disrupted like any other. The one annotation today is " +
		"karpenter.sh/do-not-disrupt: \"true\"; the fix renames the first deprecated annotation to it and " +
		"removes the rest.",
	Check: func(_ *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		path := []any{"spec", "template", "metadata", "annotations"}
		ann := o.NodePool.Spec.Template.Metadata.Annotations
		_, hasNew := ann[annotationDoNotDisrupt]
		var out []validators.Finding
		for _, key := range deprecatedDisruptionAnnotations {
			if _, ok := ann[key]; !ok {
				continue
			}
			f := validators.Finding{
				Field:   objects.Path(append(path, key)...),
				Line:    o.Fields.Line(append(path, key)...),
				Message: fmt.Sprintf("%s is ignored since Karpenter v1, so these nodes are not protected from disruption", key),
				Fix:     annotationDoNotDisrupt + `: "true"`,
			}
			if hasNew {
				f.Edits = []validators.Edit{{Object: o, Path: path, Op: validators.EditDelete, Key: key}}
			} else {
				f.Edits = []validators.Edit{{Object: o, Path: path, Op: validators.EditRename, Key: key, NewKey: annotationDoNotDisrupt, Value: quoted("true")}}
				hasNew = true
			}
			out = append(out, f)
		}
		return out, nil
	},
}

// annotationDoNotDisrupt is the one disruption annotation of Karpenter v1.
const annotationDoNotDisrupt = "karpenter.sh/do-not-disrupt"

// deprecatedDisruptionAnnotations are the annotations it replaced, which v1 ignores.
var deprecatedDisruptionAnnotations = []string{"karpenter.sh/do-not-evict", "karpenter.sh/do-not-consolidate"}

// quoted returns a double-quoted string scalar, for Edit values.
func quoted(v string) *yaml.Node {
	n := validators.Scalar(v)
	n.Style = yaml.DoubleQuotedStyle
	return n
}
