package rules

import (
	"fmt"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"

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
		if f, ok := convertNodeClassRef(c, o); ok {
			out = append(out, f)
		}
		if d := np.Spec.Disruption; d != nil && d.ConsolidationPolicy == "WhenUnderutilized" {
			f := validators.Finding{
				Field:   "spec.disruption.consolidationPolicy",
				Line:    o.Fields.Line("spec", "disruption", "consolidationPolicy"),
				Message: "consolidationPolicy WhenUnderutilized was renamed in v1",
				Fix:     "consolidationPolicy: WhenEmptyOrUnderutilized",
				Edits:   []validators.Edit{{Object: o, Path: []any{"spec", "disruption"}, Op: validators.EditSet, Key: "consolidationPolicy", Value: validators.Scalar("WhenEmptyOrUnderutilized")}},
			}
			if o.Fields.Value("spec", "disruption", "consolidateAfter") == nil {
				// v1 requires consolidateAfter in a disruption block; Karpenter's own conversion of
				// WhenUnderutilized sets 0s, which keeps v1beta1's behaviour (consolidate at once).
				f.Message += ", and v1 requires consolidateAfter with it (Karpenter's conversion sets 0s: consolidate as soon as a node is underutilized, as v1beta1 did)"
				f.Fix += ", consolidateAfter: 0s"
				f.Edits = append(f.Edits, consolidateAfterZero(o))
			}
			out = append(out, f)
		}
		if f, ok := defaultedPolicyNeedsConsolidateAfter(o); ok {
			out = append(out, f)
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
// that make it {group, kind, name}. What the ref leaves out is an EC2NodeClass's, unless the ref means
// another provider's class (otherProviderClass: an AKSNodeClass of that name in the input, …): then it
// is that class's group and kind, and when the input does not tell them the finding has no edits.
func convertNodeClassRef(c *validators.Context, o *objects.Object) (validators.Finding, bool) {
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
	if other, ok := otherProviderClass(c, ref); ok {
		group, kind = other.Group, other.Kind
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
	if group == "" || kind == "" {
		// Another provider's class, of a group or kind neither the ref nor the input tells: no guess.
		unknown := "group and kind"
		switch {
		case group != "":
			unknown = "kind"
		case kind != "":
			unknown = "group"
		}
		f.Fix = fmt.Sprintf("nodeClassRef: {group: %s, kind: %s, name: %s}, with the %s of the node class it means (another provider's, not an EC2NodeClass: --fix cannot tell which)",
			orPlaceholder(group, "<group>"), orPlaceholder(kind, "<kind>"), ref.Name, unknown)
		f.Edits = nil
	}
	return f, true
}

// orPlaceholder returns s, or placeholder when s is empty.
func orPlaceholder(s, placeholder string) string {
	if s == "" {
		return placeholder
	}
	return s
}

// defaultedPolicyNeedsConsolidateAfter reports a v1beta1 disruption block without a consolidation
// policy or consolidateAfter: v1beta1 defaulted the policy to WhenUnderutilized, while v1 requires
// consolidateAfter in a disruption block (its default applies only to an absent block). Karpenter's
// conversion sets 0s, as for WhenUnderutilized.
func defaultedPolicyNeedsConsolidateAfter(o *objects.Object) (validators.Finding, bool) {
	d := o.NodePool.Spec.Disruption
	if o.Version() != "v1beta1" || d == nil || d.ConsolidationPolicy != "" || o.Fields.Value("spec", "disruption", "consolidateAfter") != nil {
		return validators.Finding{}, false
	}
	return validators.Finding{
		Field:   "spec.disruption",
		Line:    o.Fields.Line("spec", "disruption"),
		Message: "v1 requires consolidateAfter in a disruption block; this one has none and relied on v1beta1's default policy, WhenUnderutilized, which consolidated at once (Karpenter's conversion sets 0s)",
		Fix:     "consolidateAfter: 0s (v1's default policy, WhenEmptyOrUnderutilized, keeps the behaviour)",
		Edits:   []validators.Edit{consolidateAfterZero(o)},
	}, true
}

// consolidateAfterZero is the edit that sets spec.disruption.consolidateAfter to 0s, as Karpenter's
// conversion does: added, or set where it is written as null.
func consolidateAfterZero(o *objects.Object) validators.Edit {
	edit := validators.Edit{Object: o, Path: []any{"spec", "disruption"}, Op: validators.EditAdd, Key: "consolidateAfter", Value: validators.Scalar("0s")}
	if o.Fields.Has("spec", "disruption", "consolidateAfter") {
		edit.Op = validators.EditSet // consolidateAfter: null
	}
	return edit
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
	want := v1Kubelet(np.Spec.Template.Spec.Kubelet)
	value := o.Fields.Node("spec", "template", "spec", "kubelet")
	if _, ok := np.Spec.Template.Spec.Kubelet["containerRuntime"]; ok {
		// Karpenter v1 removed containerRuntime (containerd is the only runtime): its conversion drops it,
		// and the EC2NodeClass schema has no such field.
		deleteKey(value, "containerRuntime")
		f.Fix += " (containerRuntime is left out: v1 removed it, containerd is the only runtime)"
	}
	for _, other := range c.Input {
		if other == o || other.NodePool == nil {
			continue
		}
		oref := other.NodePool.Spec.Template.Spec.NodeClassRef
		if oref == nil || oref.Name != ref.Name || (oref.Kind != "" && oref.Kind != objects.KindEC2NodeClass) {
			continue
		}
		// Settings on the class reach every pool that uses it: moving them changes the other pool's
		// nodes (and Karpenter replaces them as drifted) unless it asked for the same.
		if theirs := v1Kubelet(other.NodePool.Spec.Template.Spec.Kubelet); !reflect.DeepEqual(theirs, want) {
			what := "different kubelet settings"
			if len(theirs) == 0 {
				what = "no kubelet settings"
			}
			f.Fix += fmt.Sprintf(" by hand: NodePool %q also uses that class with %s, and settings on the class would change its nodes too (Karpenter replaces them as drifted), so give one of them its own EC2NodeClass", other.Name, what)
			return f, true
		}
	}
	del := validators.Edit{Object: o, Path: []any{"spec", "template", "spec"}, Op: validators.EditDelete, Key: "kubelet"}
	switch {
	case !target.Fields.Has("spec", "kubelet"):
		f.Edits = []validators.Edit{del, {Object: target, Path: []any{"spec"}, Op: validators.EditAdd, Key: "kubelet", Value: value}}
	case reflect.DeepEqual(v1Kubelet(target.NodeClass.Spec.Kubelet), want):
		f.Edits = []validators.Edit{del}
	default:
		f.Fix += " by hand: that EC2NodeClass already has different spec.kubelet settings"
	}
	return f, true
}

// v1Kubelet returns kubelet settings as v1 keeps them: without containerRuntime, which v1 removed; nil
// for none.
func v1Kubelet(k map[string]any) map[string]any {
	out := map[string]any{}
	for key, v := range k {
		if key != "containerRuntime" {
			out[key] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// deleteKey removes a key from a mapping node, if it is there.
func deleteKey(m *yaml.Node, key string) {
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
