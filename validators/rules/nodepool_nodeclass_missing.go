package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var nodepoolNodeclassMissing = &validators.Rule{
	ID:            "nodepool-nodeclass-missing",
	Kinds:         []string{validators.KindNodePool},
	DefaultAction: config.ActionWarn,
	MayNeed:       []facts.Fact{facts.ClusterNodeClasses},
	Summary:       "`nodeClassRef` names an EC2NodeClass that does not exist",
	Doc: "A NodePool whose nodeClassRef names a missing EC2NodeClass is accepted and then never launches a " +
		"node: Karpenter marks it not ready and pending pods stay pending. The CLI looks for the class in " +
		"its input; the webhook looks in the cluster.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		ref := o.NodePool.Spec.Template.Spec.NodeClassRef
		if ref == nil || ref.Name == "" {
			return nil, nil
		}
		if _, other := otherProviderClass(c, ref); other {
			return nil, nil // another provider's class: not an EC2NodeClass, and not this rule's to find
		}
		if c.Scope != validators.ScopeCLI {
			// The webhook and the audit look in the cluster, which must be known (caches synced).
			if err := c.Facts.Known(c, facts.ClusterNodeClasses); err != nil {
				return nil, err
			}
		}
		if c.NodeClass(ref.Name) != nil {
			return nil, nil
		}
		where := "in the cluster"
		if c.Scope == validators.ScopeCLI {
			where = "in the input"
		}
		return []validators.Finding{{
			Field:   "spec.template.spec.nodeClassRef.name",
			Line:    o.Fields.Line("spec", "template", "spec", "nodeClassRef", "name"),
			Message: fmt.Sprintf("nodeClassRef names EC2NodeClass %q, which is not %s, so this pool launches no node until it exists", ref.Name, where),
			Fix:     fmt.Sprintf("create EC2NodeClass %q, or point nodeClassRef.name at an existing one", ref.Name),
		}}, nil
	},
}

// otherProviderClass reports whether a nodeClassRef means another Karpenter provider's node class
// (AKSNodeClass, …) rather than an EC2NodeClass, and returns that class as a v1 reference, with its
// group or kind "" where neither the ref nor the input tells it. A ref means another provider's class
// when its group (or its v1beta1 apiVersion's group) or its kind is not AWS's; or when it gives
// neither (Azure's v1beta1 pools give only a name), no EC2NodeClass has its name and
// Context.OtherNodeClasses holds a class of that name. A ref that gives only AWS's group or kind means
// an EC2NodeClass.
func otherProviderClass(c *validators.Context, ref *objects.NodeClassRef) (objects.NodeClassRef, bool) {
	group := ref.Group
	if group == "" {
		group, _, _ = strings.Cut(ref.APIVersion, "/")
	}
	out := objects.NodeClassRef{Group: group, Kind: ref.Kind, Name: ref.Name}
	explicit := (group != "" && group != objects.GroupKarpenterAWS) || (ref.Kind != "" && ref.Kind != objects.KindEC2NodeClass)
	if !explicit && (group != "" || ref.Kind != "") {
		return objects.NodeClassRef{}, false
	}
	// The input's classes of that name that fit what the ref gives tell what it leaves out, when they
	// agree on it.
	var matches []objects.NodeClassRef
	for _, oc := range c.OtherNodeClasses {
		if oc.Name == ref.Name && (group == "" || oc.Group == group) && (ref.Kind == "" || oc.Kind == ref.Kind) {
			matches = append(matches, oc)
		}
	}
	if !explicit && (len(matches) == 0 || c.NodeClass(ref.Name) != nil) {
		return objects.NodeClassRef{}, false
	}
	if len(matches) > 0 {
		g, k := matches[0].Group, matches[0].Kind
		for _, m := range matches[1:] {
			if m.Group != g {
				g = ""
			}
			if m.Kind != k {
				k = ""
			}
		}
		if out.Group == "" {
			out.Group = g
		}
		if out.Kind == "" {
			out.Kind = k
		}
	}
	return out, true
}
