package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/internal/golden"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

var update = flag.Bool("update", false, "rewrite golden files and the README rule table")

const (
	rulesBegin = "<!-- rules:begin -->\n"
	rulesEnd   = "<!-- rules:end -->"
)

// TestReadmeRuleTable fails when the README's rule table and the catalog disagree.
func TestReadmeRuleTable(t *testing.T) {
	const path = "../../README.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	i, j := strings.Index(readme, rulesBegin), strings.Index(readme, rulesEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no %q … %q section", strings.TrimSpace(rulesBegin), rulesEnd)
	}
	want := rules.Default().Markdown(ruleSources(t))
	got := readme[i+len(rulesBegin) : j]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(readme[:i+len(rulesBegin)]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md rule table is out of date; run `make readme`.\n--- catalog\n%s\n--- README\n%s", want, got)
}

var ruleIDRE = regexp.MustCompile(`(?m)^\s+ID:\s+"([a-z0-9-]+)",`)

// ruleSources maps each rule ID to the validators/rules file that declares it, and fails when a rule
// is declared nowhere or twice.
func ruleSources(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../validators/rules/*.go")
	if err != nil {
		t.Fatal(err)
	}
	src := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ruleIDRE.FindAllStringSubmatch(string(data), -1) {
			if prev, dup := src[m[1]]; dup {
				t.Errorf("rule %s declared in %s and %s", m[1], prev, f)
			}
			src[m[1]] = strings.TrimPrefix(f, "../../")
		}
	}
	for _, id := range rules.Default().IDs() {
		if src[id] == "" {
			t.Errorf("rule %s: no declaration ID: %q found under validators/rules/", id, id)
		}
	}
	return src
}

// TestReadmeRulesReference keeps docs/rules.md, the page SARIF results and the README link to, equal
// to the catalog.
func TestReadmeRulesReference(t *testing.T) {
	golden.Compare(t, "../../docs/rules.md", rules.Default().Reference(ruleSources(t), ruleTests(t)), *update)
}

// ruleTests maps each rule ID to the validators/rules test file whose table test writes its golden
// file.
func ruleTests(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../validators/rules/*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{}
	for _, id := range rules.Default().IDs() {
		re := regexp.MustCompile(`(testRule(Named)?\(t, "` + id + `"|"` + id + `\.golden"|"` + id + `")`)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if loc := re.FindIndex(data); loc != nil && (tests[id] == "" || strings.HasPrefix(string(data[loc[0]:]), "testRule")) {
				tests[id] = strings.TrimPrefix(f, "../../")
			}
		}
		if tests[id] == "" {
			t.Errorf("rule %s: no test under validators/rules/ names it", id)
		}
	}
	return tests
}
