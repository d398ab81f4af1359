package validators

import (
	"fmt"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// The exception annotations.
const (
	AnnotationSkip       = "karpenter-guard.io/skip"
	AnnotationSkipReason = "karpenter-guard.io/skip-reason"
)

// KindAny marks rules that apply to every checked kind (the exception rules).
const KindAny = "any"

type exception struct {
	rules  map[string]bool
	ids    []string
	reason string
}

func parseException(o *objects.Object) exception {
	ex := exception{reason: strings.TrimSpace(o.Annotations[AnnotationSkipReason])}
	skip := o.Annotations[AnnotationSkip]
	if skip == "" { // most objects: no map, no split
		return ex
	}
	ex.rules = map[string]bool{}
	for _, id := range strings.Split(skip, ",") {
		if id = strings.TrimSpace(id); id != "" && !ex.rules[id] {
			ex.rules[id] = true
			ex.ids = append(ex.ids, id)
		}
	}
	return ex
}

func (ex exception) describe() string {
	if ex.reason == "" {
		return AnnotationSkip + " (no reason given)"
	}
	return AnnotationSkip + ": " + ex.reason
}

func annotationPath() []any { return []any{"metadata", "annotations"} }

var exceptionMissingReason = &Rule{
	ID:            "exception-missing-reason",
	Kinds:         []string{KindAny},
	DefaultAction: config.ActionWarn,
	Summary:       "`karpenter-guard.io/skip` without `karpenter-guard.io/skip-reason`",
	Doc: "An object may opt out of rules with the annotation karpenter-guard.io/skip (a comma-separated list " +
		"of rule IDs), but every exception must say why in karpenter-guard.io/skip-reason, so that the next " +
		"person can tell a deliberate exception from a silenced problem. The listed rules are still skipped.",
	Check: func(_ *Context, o *objects.Object) []Finding {
		ex := parseException(o)
		if len(ex.ids) == 0 || ex.reason != "" {
			return nil
		}
		return []Finding{{
			Field:   objects.Path("metadata", "annotations", AnnotationSkip),
			Line:    annotationLine(o, AnnotationSkip),
			Message: fmt.Sprintf("skips %s without saying why", strings.Join(ex.ids, ", ")),
			Fix:     fmt.Sprintf("add the annotation %s: \"<why these rules do not apply>\"", AnnotationSkipReason),
		}}
	},
}

var exceptionUnknownRule = &Rule{
	ID:            "exception-unknown-rule",
	Kinds:         []string{KindAny},
	DefaultAction: config.ActionWarn,
	Summary:       "`karpenter-guard.io/skip` names a rule ID that does not exist",
	Doc: "A misspelt rule ID in karpenter-guard.io/skip skips nothing, so the problem it was meant to " +
		"excuse is still reported (or a later one is not excused). The message names the unknown IDs; " +
		"`karpenter-guard rules` lists the real ones.",
	Check: func(c *Context, o *objects.Object) []Finding {
		ex := parseException(o)
		var unknown []string
		for _, id := range ex.ids {
			if c.catalog != nil && c.catalog.Rule(id) == nil {
				unknown = append(unknown, id)
			}
		}
		if len(unknown) == 0 {
			return nil
		}
		sort.Strings(unknown)
		return []Finding{{
			Field:   objects.Path("metadata", "annotations", AnnotationSkip),
			Line:    annotationLine(o, AnnotationSkip),
			Message: fmt.Sprintf("skips unknown rule %s, which skips nothing", quoteList(unknown)),
			Fix:     "use rule IDs listed by `karpenter-guard rules`",
		}}
	},
}

// annotationLine returns the file line of an annotation key, or the object's line.
func annotationLine(o *objects.Object, key string) int {
	return o.Fields.Line(append(annotationPath(), key)...)
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
