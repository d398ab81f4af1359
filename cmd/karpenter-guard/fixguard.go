package main

import (
	"fmt"
	"maps"
	"slices"

	"github.com/karpenter-guard/karpenter-guard/fix"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// karpenterCRDInvalid is the rule whose findings are what the API server refuses.
const karpenterCRDInvalid = "karpenter-crd-invalid"

// maxFixAttempts bounds how often fixAccepted leaves objects out and tries again; each attempt leaves
// out at least one more object.
const maxFixAttempts = 8

// regression is an object --fix would leave refused by the API server for a reason its input did not
// have (a v1beta1 object whose conversion reveals a value v1 refuses).
type regression struct {
	object  string // File: Kind "name", for messages
	message string
}

// fixAccepted applies the safe fixes of set, leaving out every fix of an object whose result the API
// server would refuse for a reason the input did not have, and every fix that edits such an object:
// --fix never writes what Karpenter's CRDs refuse. It returns the outcome, the objects left out and
// why, and an error when it cannot settle (then nothing may be written).
func fixAccepted(set *manifest.Set, eval fix.Evaluator) (fix.Outcome, []regression, error) {
	had := map[string]bool{} // what the API server refuses in the input already
	for _, f := range eval(set).Findings {
		if f.Rule == karpenterCRDInvalid {
			had[schemaKey(f)] = true
		}
	}
	left := map[string]regression{}
	for range maxFixAttempts {
		outcome := fix.Apply(set, withoutFixesOf(eval, left))
		found := schemaRegressions(set, outcome.Files, eval, had)
		if len(found) == 0 {
			return outcome, slices.Collect(maps.Values(left)), nil
		}
		for k, r := range found {
			left[k] = r
		}
	}
	return fix.Outcome{}, slices.Collect(maps.Values(left)), fmt.Errorf("--fix wrote nothing: its result would still hold objects the API server refuses after leaving out %d; fix them by hand, or report the fix as a bug", len(left))
}

// objectKey identifies an object across re-reads of its file (a fix may change its apiVersion).
func objectKey(r objects.Ref) string {
	return r.File + "\x00" + r.Kind + "\x00" + r.Namespace + "\x00" + r.Name
}

// withoutFixesOf returns eval with the edits dropped from findings on, or editing, the objects left
// out: their findings are still reported, as not fixable.
func withoutFixesOf(eval fix.Evaluator, left map[string]regression) fix.Evaluator {
	if len(left) == 0 {
		return eval
	}
	return func(s *manifest.Set) validators.Result {
		res := eval(s)
		for i, f := range res.Findings {
			drop := left[objectKey(f.Object)] != (regression{})
			for _, e := range f.Edits {
				if e.Object != nil && left[objectKey(e.Object.Ref())] != (regression{}) {
					drop = true
				}
			}
			if drop {
				res.Findings[i].Edits = nil
				res.Findings[i].Fixable = false
			}
		}
		return res
	}
}

// schemaKey identifies a karpenter-crd-invalid finding across re-reads: its object and message.
func schemaKey(f validators.Finding) string { return objectKey(f.Object) + "\x00" + f.Message }

// schemaRegressions returns, by object, what the API server would refuse in the fixed files that it
// does not refuse in the input (had: the input's karpenter-crd-invalid findings, by schemaKey).
func schemaRegressions(set *manifest.Set, fixed map[string][]byte, eval fix.Evaluator, had map[string]bool) map[string]regression {
	if len(fixed) == 0 {
		return nil
	}
	after := &manifest.Set{Sources: map[string][]byte{}}
	for _, p := range slices.Sorted(maps.Keys(set.Sources)) {
		data := set.Sources[p]
		if d, ok := fixed[p]; ok {
			data = d
		}
		after.Add(manifest.Source{Path: p, Data: data})
	}
	out := map[string]regression{}
	for _, f := range eval(after).Findings {
		if f.Rule == karpenterCRDInvalid && !had[schemaKey(f)] {
			if _, seen := out[objectKey(f.Object)]; !seen {
				out[objectKey(f.Object)] = regression{object: fmt.Sprintf("%s:%d: %s %q", f.Object.File, f.Object.Line, f.Object.Kind, f.Object.Name), message: f.Message}
			}
		}
	}
	return out
}
