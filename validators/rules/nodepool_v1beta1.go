package rules

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var nodepoolV1beta1 = &validators.Rule{
	ID:            "nodepool-v1beta1",
	Kinds:         []string{validators.KindNodePool},
	DefaultAction: config.ActionDeny,
	Fixable:       true,
	Scope:         validators.ScopeCLI,
	Summary:       "`karpenter.sh/v1beta1` or a v1beta1-only field (`nodeClassRef.apiVersion`, `WhenUnderutilized`, `disruption.expireAfter`, template `kubelet`, `resources`)",
	Doc: "Karpenter serves only karpenter.sh/v1 since v1.1. A v1beta1 NodePool fails to apply, and v1beta1 " +
		"fields on a v1 NodePool are dropped by the API server without a word: the kubelet settings you " +
		"wrote never reach a node. The fix converts: apiVersion v1; nodeClassRef {group, kind, name}; " +
		"WhenUnderutilized becomes WhenEmptyOrUnderutilized; disruption.expireAfter moves to " +
		"template.spec.expireAfter; template.spec.kubelet moves to the referenced EC2NodeClass when that " +
		"class is in the same input and no other NodePool there gives it different settings (otherwise it " +
		"is reported); template.spec.resources is removed.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		np := o.NodePool
		var out []validators.Finding
		if o.Version() == "v1beta1" {
			out = append(out, validators.Finding{
				Field:   "apiVersion",
				Line:    o.Fields.Line("apiVersion"),
				Message: "karpenter.sh/v1beta1 is no longer served (Karpenter v1.1 and later), so kubectl apply fails with \"no matches for kind NodePool\"",
				Fix:     "apiVersion: karpenter.sh/v1",
				Edits:   []validators.Edit{{Object: o, Op: validators.EditSet, Key: "apiVersion", Value: validators.Scalar(objects.GroupKarpenter + "/v1")}},
			})
		}
		if f, ok := convertNodeClassRef(o); ok {
			out = append(out, f)
		}
		if d := np.Spec.Disruption; d != nil && d.ConsolidationPolicy == "WhenUnderutilized" {
			out = append(out, validators.Finding{
				Field:   "spec.disruption.consolidationPolicy",
				Line:    o.Fields.Line("spec", "disruption", "consolidationPolicy"),
				Message: "consolidationPolicy WhenUnderutilized was renamed in v1",
				Fix:     "consolidationPolicy: WhenEmptyOrUnderutilized",
				Edits:   []validators.Edit{{Object: o, Path: []any{"spec", "disruption"}, Op: validators.EditSet, Key: "consolidationPolicy", Value: validators.Scalar("WhenEmptyOrUnderutilized")}},
			})
		}
		if f, ok := moveExpireAfter(o); ok {
			out = append(out, f)
		}
		if f, ok := moveKubelet(c, o); ok {
			out = append(out, f)
		}
		if o.Fields.Has("spec", "template", "spec", "resources") {
			out = append(out, validators.Finding{
				Field:   "spec.template.spec.resources",
				Line:    o.Fields.Line("spec", "template", "spec", "resources"),
				Message: "spec.template.spec.resources was removed in v1 and is dropped silently",
				Fix:     "remove spec.template.spec.resources",
				Edits:   []validators.Edit{{Object: o, Path: []any{"spec", "template", "spec"}, Op: validators.EditDelete, Key: "resources"}},
			})
		}
		return out, nil
	},
}

// nodeClassRefPath is where a NodePool references its node class.
var nodeClassRefPath = []any{"spec", "template", "spec", "nodeClassRef"}

// convertNodeClassRef reports a v1beta1 nodeClassRef (apiVersion, or no group or kind) with the edits
// that make it {group, kind, name}.
func convertNodeClassRef(o *objects.Object) (validators.Finding, bool) {
	ref := o.NodePool.Spec.Template.Spec.NodeClassRef
	if ref == nil || (!o.Fields.Has(append(nodeClassRefPath, "apiVersion")...) && ref.Group != "" && ref.Kind != "") {
		return validators.Finding{}, false
	}
	group := ref.Group
	if group == "" {
		group, _, _ = strings.Cut(ref.APIVersion, "/")
		if group == "" {
			group = objects.GroupKarpenterAWS
		}
	}
	kind := ref.Kind
	if kind == "" {
		kind = objects.KindEC2NodeClass
	}
	f := validators.Finding{
		Field: "spec.template.spec.nodeClassRef",
		Line:  o.Fields.Line(nodeClassRefPath...),
		Fix:   fmt.Sprintf("nodeClassRef: {group: %s, kind: %s, name: %s}", group, kind, ref.Name),
	}
	path := append([]any(nil), nodeClassRefPath...)
	switch {
	case o.Fields.Has(append(nodeClassRefPath, "apiVersion")...):
		f.Message = fmt.Sprintf("nodeClassRef uses apiVersion %q; v1 references node classes by group, kind and name", ref.APIVersion)
		if ref.Group == "" {
			f.Edits = append(f.Edits, validators.Edit{Object: o, Path: path, Op: validators.EditRename, Key: "apiVersion", NewKey: "group", Value: validators.Scalar(group)})
		} else {
			f.Edits = append(f.Edits, validators.Edit{Object: o, Path: path, Op: validators.EditDelete, Key: "apiVersion"})
		}
	default:
		f.Message = "nodeClassRef must name group, kind and name in v1"
		if ref.Group == "" {
			f.Edits = append(f.Edits, validators.Edit{Object: o, Path: path, Op: validators.EditAdd, Key: "group", Value: validators.Scalar(group)})
		}
	}
	if ref.Kind == "" {
		f.Edits = append(f.Edits, validators.Edit{Object: o, Path: path, Op: validators.EditAdd, Key: "kind", Value: validators.Scalar(kind)})
	}
	return f, true
}

// moveExpireAfter reports spec.disruption.expireAfter with the edits that move it to
// spec.template.spec.expireAfter, unless that already says something else.
func moveExpireAfter(o *objects.Object) (validators.Finding, bool) {
	if !o.Fields.Has("spec", "disruption", "expireAfter") {
		return validators.Finding{}, false
	}
	old := fmt.Sprint(o.Fields.Value("spec", "disruption", "expireAfter"))
	f := validators.Finding{
		Field:   "spec.disruption.expireAfter",
		Line:    o.Fields.Line("spec", "disruption", "expireAfter"),
		Message: fmt.Sprintf("disruption.expireAfter (%s) moved to spec.template.spec.expireAfter in v1; here it is dropped silently", old),
		Fix:     fmt.Sprintf("move it: spec.template.spec.expireAfter: %s", old),
	}
	del := validators.Edit{Object: o, Path: []any{"spec", "disruption"}, Op: validators.EditDelete, Key: "expireAfter"}
	cur := o.Fields.Value("spec", "template", "spec", "expireAfter")
	switch {
	case o.Fields.Value("spec", "template", "spec") == nil:
		f.Fix += " (add spec.template.spec first)"
	case cur == nil:
		f.Edits = []validators.Edit{del, {Object: o, Path: []any{"spec", "template", "spec"}, Op: validators.EditAdd, Key: "expireAfter", Value: o.Fields.Node("spec", "disruption", "expireAfter")}}
	case fmt.Sprint(cur) == old:
		f.Edits = []validators.Edit{del}
	default:
		f.Message += fmt.Sprintf(", and spec.template.spec.expireAfter already says %v", cur)
		f.Fix = "keep one value in spec.template.spec.expireAfter and remove spec.disruption.expireAfter"
	}
	return f, true
}

// moveKubelet reports spec.template.spec.kubelet with the edits that move it to the referenced
// EC2NodeClass, when that class is in the input and no other pool there gives it other settings.
func moveKubelet(c *validators.Context, o *objects.Object) (validators.Finding, bool) {
	if !o.Fields.Has("spec", "template", "spec", "kubelet") {
		return validators.Finding{}, false
	}
	np := o.NodePool
	f := validators.Finding{
		Field:   "spec.template.spec.kubelet",
		Line:    o.Fields.Line("spec", "template", "spec", "kubelet"),
		Message: "spec.template.spec.kubelet moved to the EC2NodeClass in v1; on a NodePool the API server drops it and no node gets these settings",
	}
	ref := np.Spec.Template.Spec.NodeClassRef
	if ref == nil || ref.Name == "" || (ref.Kind != "" && ref.Kind != objects.KindEC2NodeClass) {
		f.Fix = "move these settings to spec.kubelet of the EC2NodeClass this pool uses"
		return f, true
	}
	f.Fix = fmt.Sprintf("move these settings to spec.kubelet of EC2NodeClass %q", ref.Name)
	target := c.NodeClass(ref.Name)
	if target == nil {
		f.Fix += " (it is not in the input, so --fix cannot move them)"
		return f, true
	}
	want := np.Spec.Template.Spec.Kubelet
	for _, other := range c.Input {
		if other == o || other.NodePool == nil {
			continue
		}
		oref := other.NodePool.Spec.Template.Spec.NodeClassRef
		if oref == nil || oref.Name != ref.Name || !other.Fields.Has("spec", "template", "spec", "kubelet") {
			continue
		}
		if !reflect.DeepEqual(other.NodePool.Spec.Template.Spec.Kubelet, want) {
			f.Fix += fmt.Sprintf(" by hand: NodePool %q also uses that class with different kubelet settings, so give one of them its own EC2NodeClass", other.Name)
			return f, true
		}
	}
	del := validators.Edit{Object: o, Path: []any{"spec", "template", "spec"}, Op: validators.EditDelete, Key: "kubelet"}
	switch {
	case !target.Fields.Has("spec", "kubelet"):
		f.Edits = []validators.Edit{del, {Object: target, Path: []any{"spec"}, Op: validators.EditAdd, Key: "kubelet", Value: o.Fields.Node("spec", "template", "spec", "kubelet")}}
	case reflect.DeepEqual(target.NodeClass.Spec.Kubelet, want):
		f.Edits = []validators.Edit{del}
	default:
		f.Fix += " by hand: that EC2NodeClass already has different spec.kubelet settings"
	}
	return f, true
}
