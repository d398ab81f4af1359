package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var exceptionMissingReason = &validators.Rule{
	ID:            "exception-missing-reason",
	Kinds:         []string{validators.KindAny},
	DefaultAction: config.ActionWarn,
	Summary:       "`karpenter-guard.io/skip` without `karpenter-guard.io/skip-reason`",
	Doc: "An object may opt out of rules with the annotation karpenter-guard.io/skip (a comma-separated list " +
		"of rule IDs), but every exception must say why in karpenter-guard.io/skip-reason, so that the next " +
		"person can tell a deliberate exception from a silenced problem. The listed rules are still skipped.",
	Check: func(_ *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		ex := validators.ExceptionOf(o)
		if len(ex.IDs) == 0 || ex.Reason != "" {
			return nil, nil
		}
		return []validators.Finding{{
			Field:   objects.Path("metadata", "annotations", validators.AnnotationSkip),
			Line:    annotationLine(o, validators.AnnotationSkip),
			Message: fmt.Sprintf("skips %s without saying why", strings.Join(ex.IDs, ", ")),
			Fix:     fmt.Sprintf("add the annotation %s: \"<why these rules do not apply>\"", validators.AnnotationSkipReason),
		}}, nil
	},
}
