package rules

import (
	"fmt"

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
		if ref == nil || ref.Name == "" || (ref.Kind != "" && ref.Kind != objects.KindEC2NodeClass) {
			return nil, nil
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
