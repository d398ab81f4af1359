package rules

import (
	"fmt"
	"sort"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var exceptionUnknownRule = &validators.Rule{
	ID:            "exception-unknown-rule",
	Kinds:         []string{validators.KindAny},
	DefaultAction: config.ActionWarn,
	Summary:       "`karpenter-guard.io/skip` names a rule ID that does not exist",
	Doc: "A misspelt rule ID in karpenter-guard.io/skip skips nothing, so the problem it was meant to " +
		"excuse is still reported (or a later one is not excused). The message names the unknown IDs; " +
		"`karpenter-guard rules` lists the real ones.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		ex, cat := validators.ExceptionOf(o), c.Catalog()
		var unknown []string
		for _, id := range ex.IDs {
			if cat != nil && cat.Rule(id) == nil {
				unknown = append(unknown, id)
			}
		}
		if len(unknown) == 0 {
			return nil, nil
		}
		sort.Strings(unknown)
		return []validators.Finding{{
			Field:   objects.Path("metadata", "annotations", validators.AnnotationSkip),
			Line:    annotationLine(o, validators.AnnotationSkip),
			Message: fmt.Sprintf("skips unknown rule %s, which skips nothing", quoteList(unknown)),
			Fix:     "use rule IDs listed by `karpenter-guard rules`",
		}}, nil
	},
}
