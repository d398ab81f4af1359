// Package fix applies the machine-applicable fixes of findings to manifest files. It edits the text of
// the files in place: only the bytes a fix changes are touched, so comments, key order, quoting and
// indentation of every other line survive.
//
// Written by hand on top of go.yaml.in/yaml/v3's node positions because re-encoding a YAML tree (the
// only thing the YAML libraries offer) re-indents, drops blank lines and moves comments.
package fix

import (
	"errors"
	"fmt"
	"sort"

	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// maxRounds bounds the fix loop. Each round applies the edits that do not overlap and re-evaluates,
// so that edits depending on each other (rename an annotation, then delete another) settle.
const maxRounds = 8

// Evaluator evaluates a set of objects; the CLI passes the catalog with its context.
type Evaluator func(set *manifest.Set) validators.Result

// Outcome is what Apply changed.
type Outcome struct {
	// Files holds the new contents of every changed file, by path.
	Files map[string][]byte
	// Fixed counts the findings whose edits were applied.
	Fixed int
	// Problems lists fixes that could not be applied, one line each.
	Problems []string
}

// Apply fixes the files of set, in memory, and returns the new contents. The set itself is not changed.
func Apply(set *manifest.Set, eval Evaluator) Outcome {
	out := Outcome{Files: map[string][]byte{}}
	current := map[string][]byte{}
	for p, d := range set.Sources {
		current[p] = d
	}
	cur := set
	refused := map[string]bool{}
	for round := 0; round < maxRounds; round++ {
		res := eval(cur)
		var planned []plannedFix
		for _, f := range res.Findings {
			if !f.Fixable {
				continue
			}
			key := fmt.Sprintf("%s:%d:%s:%s", f.Object.File, f.Line, f.Rule, f.Field)
			if refused[key] {
				continue
			}
			pf, err := plan(key, f, current)
			if err != nil {
				refused[key] = true
				out.Problems = append(out.Problems, fmt.Sprintf("%s:%d: [%s] not fixed: %v", f.Object.File, f.Line, f.Rule, err))
				continue
			}
			if collides(planned, pf) {
				continue // next round, after re-evaluation
			}
			planned = append(planned, pf)
		}
		if len(planned) == 0 {
			break
		}
		changed, applied := applyPlanned(current, planned, refused, &out.Problems)
		if len(applied) == 0 {
			continue
		}
		for p, data := range changed {
			current[p] = data
			out.Files[p] = data
		}
		out.Fixed += len(applied)
		next := &manifest.Set{Sources: map[string][]byte{}}
		for _, p := range sortedKeys(current) {
			next.Add(manifest.Source{Path: p, Data: current[p]})
		}
		cur = next
	}
	return out
}

// plannedFix is one finding's text edits, by file.
type plannedFix struct {
	key   string
	files []string
	edits []textEdit
}

// plan renders a finding's edits against the current file contents.
func plan(key string, f validators.Finding, current map[string][]byte) (plannedFix, error) {
	pf := plannedFix{key: key}
	for _, e := range f.Edits {
		te, err := render(newFile(current[e.Object.File]), e)
		if err != nil {
			return pf, err
		}
		for _, t := range te {
			pf.files = append(pf.files, e.Object.File)
			pf.edits = append(pf.edits, t)
		}
	}
	pf.files, pf.edits = mergeInserts(pf.files, pf.edits)
	if selfOverlap(pf.files, pf.edits) {
		return pf, errors.New("its edits overlap")
	}
	return pf, nil
}

// applyPlanned applies the planned fixes file by file. A fix is applied everywhere or nowhere: when a
// file would not read back cleanly, every fix touching it is dropped (in all its files) and the rest
// is tried again.
func applyPlanned(current map[string][]byte, planned []plannedFix, refused map[string]bool, problems *[]string) (map[string][]byte, []plannedFix) {
	for {
		byFile := map[string][]textEdit{}
		for _, pf := range planned {
			for i, f := range pf.files {
				byFile[f] = append(byFile[f], pf.edits[i])
			}
		}
		changed := map[string][]byte{}
		var failed string
		for _, p := range sortedKeys(current) {
			edits, ok := byFile[p]
			if !ok {
				continue
			}
			data, err := applyEdits(p, current[p], edits)
			if err != nil {
				*problems = append(*problems, err.Error())
				failed = p
				break
			}
			changed[p] = data
		}
		if failed == "" {
			return changed, planned
		}
		var keep []plannedFix
		for _, pf := range planned {
			touches := false
			for _, f := range pf.files {
				touches = touches || f == failed
			}
			if touches {
				refused[pf.key] = true
			} else {
				keep = append(keep, pf)
			}
		}
		planned = keep
	}
}

func collides(planned []plannedFix, pf plannedFix) bool {
	for _, have := range planned {
		for i, e := range pf.edits {
			for j, h := range have.edits {
				if pf.files[i] == have.files[j] && intersect(e, h) {
					return true
				}
			}
		}
	}
	return false
}

// applyEdits applies non-overlapping edits to one file and checks the result still reads as the same
// number of objects with no new errors.
func applyEdits(path string, data []byte, edits []textEdit) ([]byte, error) {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	out := append([]byte(nil), data...)
	for _, e := range edits {
		out = append(out[:e.start], append([]byte(e.text), out[e.end:]...)...)
	}
	before, _, beforeErrs := manifest.Parse(path, data)
	after, _, afterErrs := manifest.Parse(path, out)
	if len(after) != len(before) || len(afterErrs) > len(beforeErrs) {
		return nil, fmt.Errorf("%s: fixes left out: the rewritten file would not read back cleanly", path)
	}
	return out, nil
}

func selfOverlap(files []string, edits []textEdit) bool {
	for i := range edits {
		for j := i + 1; j < len(edits); j++ {
			if files[i] == files[j] && intersect(edits[i], edits[j]) {
				return true
			}
		}
	}
	return false
}

// mergeInserts joins a finding's insertions at the same point (two keys added to one mapping) into
// one, in order.
func mergeInserts(files []string, edits []textEdit) ([]string, []textEdit) {
	var outF []string
	var outE []textEdit
	for i, e := range edits {
		merged := false
		if e.start == e.end {
			for j := range outE {
				if outF[j] == files[i] && outE[j].start == e.start && outE[j].end == e.start {
					outE[j].text += e.text
					merged = true
					break
				}
			}
		}
		if !merged {
			outF = append(outF, files[i])
			outE = append(outE, e)
		}
	}
	return outF, outE
}

// intersect reports whether two edits touch the same bytes (two inserts at one point count too).
func intersect(a, b textEdit) bool {
	return a.start <= b.end && b.start <= a.end && !(a.end == b.start && a.start != a.end && b.start != b.end) && !(b.end == a.start && a.start != a.end && b.start != b.end)
}

func sortedKeys(m map[string][]byte) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// ErrStdin is returned when asked to rewrite standard input in place.
var ErrStdin = errors.New("--fix cannot rewrite standard input: use --diff to see the change")
