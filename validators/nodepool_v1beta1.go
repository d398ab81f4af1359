package validators

import (
	"fmt"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

var nodepoolV1beta1 = &Rule{
	ID:            "nodepool-v1beta1",
	Kinds:         []string{KindNodePool},
	DefaultAction: config.ActionDeny,
	Fixable:       true,
	Scope:         ScopeCLI,
	Summary:       "`karpenter.sh/v1beta1` or a v1beta1-only field (`nodeClassRef.apiVersion`, `WhenUnderutilized`, `disruption.expireAfter`, template `kubelet`, `resources`)",
	Doc: "Karpenter serves only karpenter.sh/v1 since v1.1. A v1beta1 NodePool fails to apply, and v1beta1 " +
		"fields on a v1 NodePool are dropped by the API server without a word: the kubelet settings you " +
		"wrote never reach a node. The fix converts: apiVersion v1; nodeClassRef {group, kind, name}; " +
		"WhenUnderutilized becomes WhenEmptyOrUnderutilized; disruption.expireAfter moves to " +
		"template.spec.expireAfter; template.spec.kubelet moves to the referenced EC2NodeClass when that " +
		"class is in the same input and no other NodePool there gives it different settings (otherwise it " +
		"is reported); template.spec.resources is removed.",
	Check: func(c *Context, o *objects.Object) []Finding {
		np := o.NodePool
		var out []Finding
		if o.Version() == "v1beta1" {
			out = append(out, Finding{
				Field:   "apiVersion",
				Line:    lineAt(o, "apiVersion"),
				Message: "karpenter.sh/v1beta1 is no longer served (Karpenter v1.1 and later), so kubectl apply fails with \"no matches for kind NodePool\"",
				Fix:     "apiVersion: karpenter.sh/v1",
				Edits:   []Edit{{Object: o, Op: EditSet, Key: "apiVersion", Value: Scalar(objects.GroupKarpenter + "/v1")}},
			})
		}
		if f, ok := convertNodeClassRef(o); ok {
			out = append(out, f)
		}
		if d := np.Spec.Disruption; d != nil && d.ConsolidationPolicy == "WhenUnderutilized" {
			out = append(out, Finding{
				Field:   "spec.disruption.consolidationPolicy",
				Line:    lineAt(o, "spec", "disruption", "consolidationPolicy"),
				Message: "consolidationPolicy WhenUnderutilized was renamed in v1",
				Fix:     "consolidationPolicy: WhenEmptyOrUnderutilized",
				Edits:   []Edit{{Object: o, Path: []any{"spec", "disruption"}, Op: EditSet, Key: "consolidationPolicy", Value: Scalar("WhenEmptyOrUnderutilized")}},
			})
		}
		if f, ok := moveExpireAfter(o); ok {
			out = append(out, f)
		}
		if f, ok := moveKubelet(c, o); ok {
			out = append(out, f)
		}
		if has(o, "spec", "template", "spec", "resources") {
			out = append(out, Finding{
				Field:   "spec.template.spec.resources",
				Line:    lineAt(o, "spec", "template", "spec", "resources"),
				Message: "spec.template.spec.resources was removed in v1 and is dropped silently",
				Fix:     "remove spec.template.spec.resources",
				Edits:   []Edit{{Object: o, Path: []any{"spec", "template", "spec"}, Op: EditDelete, Key: "resources"}},
			})
		}
		return out
	},
}

var nodeClassRefPath = []any{"spec", "template", "spec", "nodeClassRef"}

func convertNodeClassRef(o *objects.Object) (Finding, bool) {
	ref := o.NodePool.Spec.Template.Spec.NodeClassRef
	if ref == nil || (!has(o, append(nodeClassRefPath, "apiVersion")...) && ref.Group != "" && ref.Kind != "") {
		return Finding{}, false
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
	f := Finding{
		Field: "spec.template.spec.nodeClassRef",
		Line:  lineAt(o, nodeClassRefPath...),
		Fix:   fmt.Sprintf("nodeClassRef: {group: %s, kind: %s, name: %s}", group, kind, ref.Name),
	}
	path := append([]any(nil), nodeClassRefPath...)
	switch {
	case has(o, append(nodeClassRefPath, "apiVersion")...):
		f.Message = fmt.Sprintf("nodeClassRef uses apiVersion %q; v1 references node classes by group, kind and name", ref.APIVersion)
		if ref.Group == "" {
			f.Edits = append(f.Edits, Edit{Object: o, Path: path, Op: EditRename, Key: "apiVersion", NewKey: "group", Value: Scalar(group)})
		} else {
			f.Edits = append(f.Edits, Edit{Object: o, Path: path, Op: EditDelete, Key: "apiVersion"})
		}
	default:
		f.Message = "nodeClassRef must name group, kind and name in v1"
		if ref.Group == "" {
			f.Edits = append(f.Edits, Edit{Object: o, Path: path, Op: EditAdd, Key: "group", Value: Scalar(group)})
		}
	}
	if ref.Kind == "" {
		f.Edits = append(f.Edits, Edit{Object: o, Path: path, Op: EditAdd, Key: "kind", Value: Scalar(kind)})
	}
	return f, true
}

func moveExpireAfter(o *objects.Object) (Finding, bool) {
	if !has(o, "spec", "disruption", "expireAfter") {
		return Finding{}, false
	}
	old := objects.Lookup(o.Root, "spec", "disruption", "expireAfter")
	f := Finding{
		Field:   "spec.disruption.expireAfter",
		Line:    lineAt(o, "spec", "disruption", "expireAfter"),
		Message: fmt.Sprintf("disruption.expireAfter (%s) moved to spec.template.spec.expireAfter in v1; here it is dropped silently", old.Value),
		Fix:     fmt.Sprintf("move it: spec.template.spec.expireAfter: %s", old.Value),
	}
	del := Edit{Object: o, Path: []any{"spec", "disruption"}, Op: EditDelete, Key: "expireAfter"}
	cur := objects.Lookup(o.Root, "spec", "template", "spec", "expireAfter")
	switch {
	case objects.Lookup(o.Root, "spec", "template", "spec") == nil:
		f.Fix += " (add spec.template.spec first)"
	case cur == nil:
		f.Edits = []Edit{del, {Object: o, Path: []any{"spec", "template", "spec"}, Op: EditAdd, Key: "expireAfter", Value: copyNode(old)}}
	case cur.Value == old.Value:
		f.Edits = []Edit{del}
	default:
		f.Message += fmt.Sprintf(", and spec.template.spec.expireAfter already says %s", cur.Value)
		f.Fix = "keep one value in spec.template.spec.expireAfter and remove spec.disruption.expireAfter"
	}
	return f, true
}

func moveKubelet(c *Context, o *objects.Object) (Finding, bool) {
	if !has(o, "spec", "template", "spec", "kubelet") {
		return Finding{}, false
	}
	np := o.NodePool
	f := Finding{
		Field:   "spec.template.spec.kubelet",
		Line:    lineAt(o, "spec", "template", "spec", "kubelet"),
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
		if oref == nil || oref.Name != ref.Name || !has(other, "spec", "template", "spec", "kubelet") {
			continue
		}
		if !reflect.DeepEqual(other.NodePool.Spec.Template.Spec.Kubelet, want) {
			f.Fix += fmt.Sprintf(" by hand: NodePool %q also uses that class with different kubelet settings, so give one of them its own EC2NodeClass", other.Name)
			return f, true
		}
	}
	del := Edit{Object: o, Path: []any{"spec", "template", "spec"}, Op: EditDelete, Key: "kubelet"}
	switch {
	case !has(target, "spec", "kubelet"):
		f.Edits = []Edit{del, {Object: target, Path: []any{"spec"}, Op: EditAdd, Key: "kubelet", Value: copyNode(objects.Lookup(o.Root, "spec", "template", "spec", "kubelet"))}}
	case reflect.DeepEqual(target.NodeClass.Spec.Kubelet, want):
		f.Edits = []Edit{del}
	default:
		f.Fix += " by hand: that EC2NodeClass already has different spec.kubelet settings"
	}
	return f, true
}

// copyNode deep-copies a node tree, dropping positions and comments so it renders cleanly elsewhere.
func copyNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := &yaml.Node{Kind: n.Kind, Style: n.Style &^ yaml.FlowStyle, Tag: n.Tag, Value: n.Value, Anchor: "", Alias: n.Alias}
	if n.Kind == yaml.AliasNode {
		return copyNode(n.Alias)
	}
	for _, ch := range n.Content {
		c.Content = append(c.Content, copyNode(ch))
	}
	return c
}
