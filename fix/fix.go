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
		byFile := map[string][]textEdit{}
		counted := map[string]int{}
		for _, f := range res.Findings {
			if !f.Fixable {
				continue
			}
			key := fmt.Sprintf("%s:%d:%s:%s", f.Object.File, f.Line, f.Rule, f.Field)
			if refused[key] {
				continue
			}
			var edits []textEdit
			var files []string
			var err error
			for _, e := range f.Edits {
				file := e.Object.File
				var te []textEdit
				te, err = render(newFile(current[file]), e)
				if err != nil {
					break
				}
				for range te {
					files = append(files, file)
				}
				edits = append(edits, te...)
			}
			if err != nil {
				refused[key] = true
				out.Problems = append(out.Problems, fmt.Sprintf("%s:%d: [%s] not fixed: %v", f.Object.File, f.Line, f.Rule, err))
				continue
			}
			files, edits = mergeInserts(files, edits)
			if selfOverlap(files, edits) {
				refused[key] = true
				out.Problems = append(out.Problems, fmt.Sprintf("%s:%d: [%s] not fixed: its edits overlap", f.Object.File, f.Line, f.Rule))
				continue
			}
			if overlaps(byFile, files, edits) {
				continue // next round, after re-evaluation
			}
			for i, te := range edits {
				byFile[files[i]] = append(byFile[files[i]], te)
			}
			counted[key]++
		}
		if len(byFile) == 0 {
			break
		}
		next := &manifest.Set{Sources: map[string][]byte{}}
		for _, p := range sortedKeys(current) {
			data := current[p]
			if edits, ok := byFile[p]; ok {
				changed, err := applyEdits(p, data, edits)
				if err != nil {
					out.Problems = append(out.Problems, err.Error())
					for k := range counted {
						refused[k] = true
					}
				} else {
					data = changed
					current[p] = changed
					out.Files[p] = changed
				}
			}
			next.Add(manifest.Source{Path: p, Data: data})
		}
		out.Fixed += len(counted)
		cur = next
	}
	return out
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

func overlaps(byFile map[string][]textEdit, files []string, edits []textEdit) bool {
	for i, e := range edits {
		for _, have := range byFile[files[i]] {
			if intersect(e, have) {
				return true
			}
		}
	}
	return false
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
