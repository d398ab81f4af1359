package validators

import (
	"strings"

	"github.com/karpenter-guard/karpenter-guard/objects"
)

// The exception annotations.
const (
	AnnotationSkip       = "karpenter-guard.io/skip"
	AnnotationSkipReason = "karpenter-guard.io/skip-reason"
)

// KindAny marks rules that apply to every checked kind (the exception rules). The engine never skips
// them: an exception cannot excuse itself.
const KindAny = "any"

// Exception is what an object's exception annotations say: the rules it opts out of, and why.
type Exception struct {
	// IDs are the rule IDs listed in karpenter-guard.io/skip, trimmed, each once, in order.
	IDs []string
	// Reason is karpenter-guard.io/skip-reason, trimmed ("" when absent).
	Reason string

	rules map[string]bool
}

// ExceptionOf reads an object's exception annotations.
func ExceptionOf(o *objects.Object) Exception {
	ex := Exception{Reason: strings.TrimSpace(o.Annotations[AnnotationSkipReason])}
	skip := o.Annotations[AnnotationSkip]
	if skip == "" { // most objects: no map, no split
		return ex
	}
	ex.rules = map[string]bool{}
	for _, id := range strings.Split(skip, ",") {
		if id = strings.TrimSpace(id); id != "" && !ex.rules[id] {
			ex.rules[id] = true
			ex.IDs = append(ex.IDs, id)
		}
	}
	return ex
}

// Skips reports whether the exception lists the rule of that ID.
func (ex Exception) Skips(id string) bool { return ex.rules[id] }

func (ex Exception) describe() string {
	if ex.Reason == "" {
		return AnnotationSkip + " (no reason given)"
	}
	return AnnotationSkip + ": " + ex.Reason
}
