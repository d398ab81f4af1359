package validators

import (
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// This file holds nodepool-nodeclass-missing and nodepool-no-limits.

var nodepoolNodeclassMissing = &Rule{
	ID:            "nodepool-nodeclass-missing",
	Kinds:         []string{KindNodePool},
	DefaultAction: config.ActionWarn,
	MayNeed:       []facts.Fact{facts.ClusterNodeClasses},
	Summary:       "`nodeClassRef` names an EC2NodeClass that does not exist",
	Doc: "A NodePool whose nodeClassRef names a missing EC2NodeClass is accepted and then never launches a " +
		"node: Karpenter marks it not ready and pending pods stay pending. The CLI looks for the class in " +
		"its input; the webhook looks in the cluster.",
	Check: func(c *Context, o *objects.Object) []Finding {
		ref := o.NodePool.Spec.Template.Spec.NodeClassRef
		if ref == nil || ref.Name == "" || (ref.Kind != "" && ref.Kind != objects.KindEC2NodeClass) {
			return nil
		}
		if c.Scope != ScopeCLI {
			// The webhook and the audit look in the cluster, which must be known (caches synced).
			if err := c.Facts.Known(c, facts.ClusterNodeClasses); err != nil {
				return c.unknownFact(err)
			}
		}
		if c.NodeClass(ref.Name) != nil {
			return nil
		}
		where := "in the cluster"
		if c.Scope == ScopeCLI {
			where = "in the input"
		}
		return []Finding{{
			Field:   "spec.template.spec.nodeClassRef.name",
			Line:    o.Fields.Line("spec", "template", "spec", "nodeClassRef", "name"),
			Message: fmt.Sprintf("nodeClassRef names EC2NodeClass %q, which is not %s, so this pool launches no node until it exists", ref.Name, where),
			Fix:     fmt.Sprintf("create EC2NodeClass %q, or point nodeClassRef.name at an existing one", ref.Name),
		}}
	},
}

var nodepoolNoLimits = &Rule{
	ID:            "nodepool-no-limits",
	Kinds:         []string{KindNodePool},
	DefaultAction: config.ActionWarn,
	Summary:       "no `spec.limits`",
	Doc: "Without spec.limits a NodePool scales as far as pending pods ask: a runaway Deployment or a " +
		"scheduling bug becomes an unbounded EC2 bill. Set cpu (and memory) limits a little above the " +
		"pool's expected peak.",
	Check: func(_ *Context, o *objects.Object) []Finding {
		if len(o.NodePool.Spec.Limits) > 0 {
			return nil
		}
		return []Finding{{
			Field:   "spec.limits",
			Line:    o.Fields.Line("spec", "limits"),
			Message: "NodePool has no spec.limits, so it can scale without bound",
			Fix:     "add spec.limits, e.g. limits: {cpu: \"1000\", memory: 1000Gi}",
		}}
	},
}
