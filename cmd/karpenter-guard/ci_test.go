package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// asCLI, set in the environment, makes the test binary run as karpenter-guard (TestMain), so that a
// test runs the command as a process, the way pre-commit and CI scripts do, without building it.
const asCLI = "KARPENTER_GUARD_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// runBinary runs karpenter-guard as a process in the repository root and returns its exit code and
// combined output.
func runBinary(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), asCLI+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	}
	t.Fatalf("run %v: %v", args, err)
	return 0, ""
}

type preCommitHook struct {
	ID            string `yaml:"id"`
	Name          string `yaml:"name"`
	Description   string `yaml:"description"`
	Entry         string `yaml:"entry"`
	Language      string `yaml:"language"`
	Files         string `yaml:"files"`
	PassFilenames *bool  `yaml:"pass_filenames"`
}

// TestPreCommitHooks reads .pre-commit-hooks.yaml as pre-commit does and runs each hook's entry as
// pre-commit would: the entry's words, the project's args, then the staged files its files pattern
// selects.
func TestPreCommitHooks(t *testing.T) {
	data, err := os.ReadFile("../../.pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var hooks []preCommitHook
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&hooks); err != nil {
		t.Fatalf(".pre-commit-hooks.yaml: %v", err)
	}
	byID := map[string]preCommitHook{}
	for _, h := range hooks {
		// language golang builds karpenter-guard; language script runs the release binary
		// (TestReleaseHooks).
		language := h.Language == "golang" || (h.Language == "script" && strings.HasPrefix(h.Entry, "hack/install-release.sh "))
		if h.ID == "" || h.Name == "" || h.Description == "" || !language || h.PassFilenames == nil || !*h.PassFilenames {
			t.Errorf("hook %+v: want id, name, description, language golang (or script running hack/install-release.sh) and pass_filenames true", h)
		}
		files, err := regexp.Compile(h.Files)
		if err != nil {
			t.Fatalf("hook %s: files: %v", h.ID, err)
		}
		for name, want := range map[string]bool{"a.yaml": true, "deploy/b.yml": true, "main.go": false, "a.yaml.bak": false} {
			if files.MatchString(name) != want {
				t.Errorf("hook %s: files %q matches %s: %v, want %v", h.ID, h.Files, name, !want, want)
			}
		}
		byID[h.ID] = h
	}
	staged := func(h preCommitHook, paths ...string) []string {
		files := regexp.MustCompile(byID[h.ID].Files)
		var out []string
		for _, p := range paths {
			if files.MatchString(p) {
				out = append(out, p)
			}
		}
		return out
	}
	entry := func(h preCommitHook) []string {
		words := strings.Fields(h.Entry)
		if len(words) < 2 || words[0] != "karpenter-guard" || words[1] != "check" || words[len(words)-1] == "-f" {
			t.Fatalf("hook %s: entry %q: want karpenter-guard check …, not ending in -f (it would take the project's first arg as a file)", h.ID, h.Entry)
		}
		return words[1:]
	}

	check, ok := byID["karpenter-guard"]
	if !ok {
		t.Fatal("no hook karpenter-guard")
	}
	production, err := filepath.Glob("../../examples/production/*")
	if err != nil || len(production) < 3 {
		t.Fatalf("examples/production: %v %v", production, err)
	}
	for i, p := range production {
		production[i], _ = filepath.Rel("../..", p)
	}
	// The clean example passes, its ClusterFacts document staged beside it; a deny fails the commit.
	if code, out := runBinary(t, append(entry(check), staged(check, production...)...)...); code != 0 {
		t.Errorf("hook on examples/production: exit %d, want 0\n%s", code, out)
	}
	// A project's args come between the entry and the files: the snapshot given there is used.
	args := append(entry(check), "--facts", "examples/production/cluster-facts.yaml", "-o", "json")
	code, out := runBinary(t, append(args, staged(check, "examples/production/nodepool.yaml", "examples/production/ec2nodeclass.yaml", "examples/production/aws-auth.yaml")...)...)
	if code != 0 || !strings.Contains(out, `"notEvaluated": [],`) || !strings.Contains(out, `"objects":3,`) {
		t.Errorf("hook with args --facts: exit %d, want 0 with every check of the 3 objects evaluated\n%s", code, out)
	}
	code, out = runBinary(t, append(entry(check), staged(check, "examples/field-reports/04-instance-profile-arn.yaml", "README.md", "examples/production/nodepool.yaml")...)...)
	if code != 1 || !strings.Contains(out, "[instance-profile-arn]") || !strings.Contains(out, "2 objects checked") {
		t.Errorf("hook on a deny: exit %d, want 1 with the finding on the 2 staged objects\n%s", code, out)
	}

	fix, ok := byID["karpenter-guard-fix"]
	if !ok {
		t.Fatal("no hook karpenter-guard-fix")
	}
	src, err := os.ReadFile("../../examples/field-reports/01-v1beta1-nodepool.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := writeTemp(t, t.TempDir(), "pool.yaml", string(src))
	code, out = runBinary(t, append(entry(fix), staged(fix, p)...)...)
	if after, _ := os.ReadFile(p); code != 0 || bytes.Equal(after, src) || !strings.Contains(string(after), "apiVersion: karpenter.sh/v1\n") {
		t.Errorf("fix hook: exit %d, want 0 and the file rewritten to v1\n%s", code, out)
	}
}

type actionInput struct {
	Description string `yaml:"description"`
	Required    bool   `yaml:"required"`
	Default     string `yaml:"default"`
}

type actionStep struct {
	Name            string            `yaml:"name"`
	ID              string            `yaml:"id"`
	If              string            `yaml:"if"`
	ContinueOnError string            `yaml:"continue-on-error"`
	Uses            string            `yaml:"uses"`
	Shell           string            `yaml:"shell"`
	Run             string            `yaml:"run"`
	Env             map[string]string `yaml:"env"`
	With            map[string]string `yaml:"with"`
}

type action struct {
	Name        string                 `yaml:"name"`
	Description string                 `yaml:"description"`
	Author      string                 `yaml:"author"`
	Branding    map[string]string      `yaml:"branding"`
	Inputs      map[string]actionInput `yaml:"inputs"`
	Outputs     map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

var (
	inputRef     = regexp.MustCompile(`\binputs\.([a-z-]+)`)
	pinnedAction = regexp.MustCompile(`^[a-z0-9-]+/[a-z0-9-]+(/[a-z0-9-]+)?@v[0-9]+(\.[0-9]+){0,2}$`)
	longFlag     = regexp.MustCompile(`(?:^|\s)(--[a-z][a-z-]*)`)
)

// TestAction checks action.yml as far as can be without a runner: a composite action whose every
// input is used and reaches its scripts only through the environment (an input spliced into a
// script could inject shell), whose actions are pinned by tag, which verifies the archive it
// downloads against the release checksums, and whose flags exist in the check command.
func TestAction(t *testing.T) {
	a := readAction(t)
	if a.Name == "" || a.Description == "" || a.Runs.Using != "composite" || len(a.Runs.Steps) == 0 {
		t.Fatalf("action.yml: want a name, a description and composite steps: %+v", a)
	}
	for _, name := range []string{"version", "path", "facts", "fail-on", "fail-on-empty", "args", "upload-sarif"} {
		if _, ok := a.Inputs[name]; !ok {
			t.Errorf("input %s missing", name)
		}
	}
	if v := a.Inputs["version"].Default; !regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(v) {
		t.Errorf("version default %q: want a pinned release such as v0.1.0", v)
	}
	if d := a.Inputs["fail-on"].Default; d != "deny" {
		t.Errorf("fail-on default %q, want deny as the command's", d)
	}
	doc, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range a.Inputs {
		row := fmt.Sprintf("| `%s` | ", name)
		if !strings.Contains(string(doc), row) {
			t.Errorf("input %s has no row in docs/ci.md's table of inputs (%q)", name, row)
		}
		if in.Description == "" {
			t.Errorf("input %s has no description", name)
		}
	}

	used := map[string]bool{}
	var install, check *actionStep
	for i := range a.Runs.Steps {
		s := &a.Runs.Steps[i]
		for _, text := range append(append([]string{s.If}, mapValues(s.Env)...), mapValues(s.With)...) {
			for _, m := range inputRef.FindAllStringSubmatch(text, -1) {
				used[m[1]] = true
			}
		}
		switch {
		case s.Uses != "":
			if !pinnedAction.MatchString(s.Uses) {
				t.Errorf("step %q uses %q: pin actions by release tag", s.Name, s.Uses)
			}
		case s.Run != "":
			if s.Shell == "" {
				t.Errorf("step %q: a composite run step needs a shell", s.Name)
			}
			if strings.Contains(s.Run, "${{") {
				t.Errorf("step %q splices an expression into its script: pass it through env", s.Name)
			}
		default:
			t.Errorf("step %q neither runs nor uses anything", s.Name)
		}
		if strings.Contains(s.Run, "releases/download") {
			install = s
		}
		if s.ID == "check" {
			check = s
		}
	}
	for name := range a.Inputs {
		if !used[name] {
			t.Errorf("input %s is used by no step", name)
		}
	}
	for name, o := range a.Outputs {
		if !strings.Contains(o.Value, "steps.check.outputs."+name) || check == nil || !strings.Contains(check.Run, name+"=") {
			t.Errorf("output %s: %q is not set by the check step", name, o.Value)
		}
	}

	if install == nil || check == nil {
		t.Fatal("want a step downloading the release and a step with id check")
	}
	for _, want := range []string{
		"https://github.com/karpenter-guard/karpenter-guard/releases/download/v${version}",
		// GoReleaser's archive name_template karpenter-guard_{{ .Version }}_{{ .Os }}_{{ .Arch }}.
		`archive="karpenter-guard_${version}_linux_${arch}.tar.gz"`,
		`"$base/checksums.txt"`,
		"sha256sum --check --strict",
		`"$GITHUB_PATH"`,
	} {
		if !strings.Contains(install.Run, want) {
			t.Errorf("install step lacks %q", want)
		}
	}
	// The check step runs karpenter-guard check with flags the command has, and writes the formats
	// the later steps read.
	cmd := newRootCommand(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	sub, _, err := cmd.Find([]string{"check"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(check.Run, "karpenter-guard check -o github") {
		t.Errorf("check step does not run karpenter-guard check -o github:\n%s", check.Run)
	}
	for _, m := range longFlag.FindAllStringSubmatch(check.Run, -1) {
		if sub.Flags().Lookup(strings.TrimPrefix(m[1], "--")) == nil {
			t.Errorf("check step passes %s, which check does not have", m[1])
		}
	}
	for _, m := range regexp.MustCompile(`--report-file "([a-z]+)=`).FindAllStringSubmatch(check.Run, -1) {
		if !slices.Contains(reportFormats, m[1]) {
			t.Errorf("check step writes format %q, which check does not know", m[1])
		}
	}
	for _, want := range []string{`>> "$GITHUB_STEP_SUMMARY"`, `>> "$GITHUB_OUTPUT"`} {
		if !strings.Contains(check.Run, want) {
			t.Errorf("check step lacks %q", want)
		}
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
