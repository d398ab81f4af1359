package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var nodeRoleAccessEntryStale = &validators.Rule{
	ID:            "node-role-access-entry-stale",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.ClusterAuthenticationMode, facts.AccessEntries, facts.Roles},
	MayNeed:       []facts.Fact{facts.InstanceProfiles},
	Summary:       "the access entry is older than the role (role re-created; the entry points at a dead role id)",
	Doc: "Access entries are bound to the role's unique id. When a role is deleted and created again under " +
		"the same name, the old entry still shows the ARN but authorizes nothing. Re-create the entry.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		a, err := authorizationOf(c, o)
		if err != nil || a == nil {
			return nil, err
		}
		e := a.entry
		if e == nil || e.CreatedAt.IsZero() || a.role.CreateDate.IsZero() || !e.CreatedAt.Before(a.role.CreateDate) {
			return nil, nil
		}
		return []validators.Finding{{
			Field: a.field,
			Line:  o.Fields.Line("spec", strings.TrimPrefix(a.field, "spec.")),
			Message: fmt.Sprintf("the access entry for %s was created %s, before the role itself (%s): the role was re-created and the entry still points at the old role id",
				a.role.ARN, e.CreatedAt.Format("2006-01-02"), a.role.CreateDate.Format("2006-01-02")),
			Fix: a.recreateEntry(),
		}}, nil
	},
}
