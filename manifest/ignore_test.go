package manifest

import (
	"strings"
	"testing"
)

// TestIgnore covers the ignore-file syntax: anchoring, base names at any depth, directory-only rules,
// negation (the last matching rule wins), escapes, comments and malformed globs.
func TestIgnore(t *testing.T) {
	const file = `# comment

terraform/templates/
*.rendered.yaml
!keep.rendered.yaml
/values.yaml
docs/
\#notes.yaml
clusters/**/secrets/*.yaml
`
	ig, errs := ParseIgnore(IgnoreFile, []byte(file))
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	for _, tc := range []struct {
		rel  string
		dir  bool
		want bool
	}{
		{"terraform/templates", true, true},
		{"terraform/templates", false, false}, // a file of that name: the rule is for directories
		{"terraform", true, false},
		{"a.rendered.yaml", false, true},
		{"deep/er/a.rendered.yaml", false, true},
		{"terraform/keep.rendered.yaml", false, false},
		{"values.yaml", false, true},
		{"charts/app/values.yaml", false, false}, // anchored to the root
		{"docs", true, true},
		{"site/docs", true, true}, // no slash in the middle: any depth
		{"#notes.yaml", false, true},
		{"clusters/prod/secrets/db.yaml", false, true},
		{"clusters/prod/eu/secrets/db.yaml", false, true},
		{"clusters/prod/db.yaml", false, false},
		{"karpenter/nodepool.yaml", false, false},
	} {
		if got := ig.Excluded(tc.rel, tc.dir); got != tc.want {
			t.Errorf("Excluded(%q, dir=%v) = %v, want %v", tc.rel, tc.dir, got, tc.want)
		}
	}
	var none *Ignore
	if none.Excluded("a.yaml", false) {
		t.Error("no ignore file excludes a path")
	}
}

func TestIgnoreErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		lines      []int
		message    string
	}{
		{"unclosed bracket", "ok.yaml\n[abc\n", []int{2}, "malformed glob"},
		{"unclosed brace", "{a,b\n", []int{1}, "malformed glob"},
		{"slash only", "ok/\n/\n", []int{2}, "matches nothing"},
		{"negated nothing", "!\n", []int{1}, "matches nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ig, errs := ParseIgnore("ign", []byte(tc.file))
			if ig == nil {
				t.Fatal("no rules returned beside the errors")
			}
			if len(errs) != len(tc.lines) {
				t.Fatalf("errors %v, want lines %v", errs, tc.lines)
			}
			for i, e := range errs {
				if e.File != "ign" || e.Line != tc.lines[i] || !strings.Contains(e.Message, tc.message) {
					t.Errorf("error %+v, want ign:%d %q", e, tc.lines[i], tc.message)
				}
			}
		})
	}
}

func TestValidateExclude(t *testing.T) {
	for pattern, ok := range map[string]bool{"kustomize/**": true, "*.json": true, "{a,b}/*.yaml": true, "[a": false, "": false} {
		if err := ValidateExclude(pattern); (err == nil) != ok {
			t.Errorf("ValidateExclude(%q) = %v, want ok=%v", pattern, err, ok)
		}
	}
	for _, tc := range []struct {
		pattern, rel string
		want         bool
	}{
		{"kustomize/**", "kustomize", true},
		{"kustomize/**", "kustomize/base/a.yaml", true},
		{"values.yaml", "charts/x/values.yaml", true}, // base name
		{"*.json", "terraform/outputs.json", true},
		{"terraform/*.json", "terraform/x/outputs.json", false},
	} {
		if got := matchExclude(tc.pattern, tc.rel); got != tc.want {
			t.Errorf("matchExclude(%q, %q) = %v, want %v", tc.pattern, tc.rel, got, tc.want)
		}
	}
}

// FuzzParseIgnore: ParseIgnore never panics, every error names the file and one of its lines, and
// Excluded never panics on what it parsed.
func FuzzParseIgnore(f *testing.F) {
	f.Add([]byte("# c\nterraform/\n!keep.yaml\n\\#x\n**/a/**/b\n[z\n{a,b\n/\n"), "a/b/c.yaml")
	f.Add([]byte("\r\n\t!\x00\xff\n"), "x")
	f.Fuzz(func(t *testing.T, data []byte, rel string) {
		lines := strings.Count(string(data), "\n") + 1
		ig, errs := ParseIgnore("fuzz", data)
		for _, e := range errs {
			if e.File != "fuzz" || e.Message == "" || e.Line < 0 || e.Line > lines {
				t.Fatalf("bad error %+v (%d lines)", e, lines)
			}
		}
		ig.Excluded(rel, false)
		ig.Excluded(rel, true)
	})
}
