package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// readAction reads action.yml as the runner does, refusing keys the test does not know.
func readAction(t *testing.T) action {
	t.Helper()
	data, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a action
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

// actionContext is what a step's expressions read: the action's inputs (their defaults, then
// overrides), the steps context and the github context of one event.
func actionContext(a action, inputs map[string]string, steps, github map[string]any) map[string]any {
	in := map[string]any{}
	for name, i := range a.Inputs {
		in[name] = i.Default
	}
	for name, v := range inputs {
		in[name] = v
	}
	return map[string]any{"inputs": in, "steps": steps, "github": github}
}

// TestActionSARIFUpload: the SARIF upload is tried only where code scanning can take it (not for pull
// requests from forks or Dependabot, whose token is read-only), may fail without failing the job
// (a private repository without code scanning refuses it), and a notice says when nothing was
// uploaded. The step conditions are evaluated as the runner evaluates them, for each kind of run.
func TestActionSARIFUpload(t *testing.T) {
	a := readAction(t)
	var upload, notice *actionStep
	for i := range a.Runs.Steps {
		s := &a.Runs.Steps[i]
		switch {
		case strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif@"):
			upload = s
		case upload != nil && strings.Contains(s.If, "steps."+upload.ID+".outcome"):
			notice = s
		}
		if s.ContinueOnError != "" && s != upload {
			t.Errorf("step %q has continue-on-error: only the upload may fail without failing the job", s.Name)
		}
	}
	if upload == nil || upload.ID == "" {
		t.Fatal("no upload-sarif step with an id")
	}
	if upload.ContinueOnError != "true" {
		t.Errorf("upload step continue-on-error %q, want true: code scanning refuses the upload in a private repository without it, and that must not fail the job", upload.ContinueOnError)
	}
	if notice == nil || strings.Contains(notice.Run, "exit") || !strings.Contains(notice.Run, "::notice") {
		t.Fatalf("want a step after the upload that prints a ::notice when nothing was uploaded, and cannot fail: %+v", notice)
	}

	const repo = "acme/platform"
	event := func(name, actor, headRepo string) map[string]any {
		g := map[string]any{"event_name": name, "actor": actor, "repository": repo, "event": map[string]any{}}
		if headRepo != "" {
			g["event"] = map[string]any{"pull_request": map[string]any{"head": map[string]any{"repo": map[string]any{"full_name": headRepo}}}}
		}
		return g
	}
	withSARIF := map[string]any{"check": map[string]any{"outputs": map[string]any{"sarif-file": "/tmp/karpenter-guard.sarif", "exit-code": "1"}}}
	noSARIF := map[string]any{"check": map[string]any{"outputs": map[string]any{"exit-code": "2"}}}
	for _, tc := range []struct {
		name   string
		inputs map[string]string
		steps  map[string]any
		github map[string]any
		want   bool
	}{
		{"push", nil, withSARIF, event("push", "alice", ""), true},
		{"schedule", nil, withSARIF, event("schedule", "alice", ""), true},
		{"pull request from the repository", nil, withSARIF, event("pull_request", "alice", repo), true},
		{"pull request from a fork", nil, withSARIF, event("pull_request", "mallory", "mallory/platform"), false},
		{"Dependabot", nil, withSARIF, event("pull_request", "dependabot[bot]", repo), false},
		{"Dependabot on push", nil, withSARIF, event("push", "dependabot[bot]", ""), false},
		{"upload-sarif false", map[string]string{"upload-sarif": "false"}, withSARIF, event("push", "alice", ""), false},
		{"no SARIF written", nil, noSARIF, event("push", "alice", ""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalCondition(upload.If, actionContext(a, tc.inputs, tc.steps, tc.github))
			if err != nil {
				t.Fatalf("upload if %q: %v", upload.If, err)
			}
			if got != tc.want {
				t.Errorf("upload runs: %v, want %v (if: %s)", got, tc.want, upload.If)
			}
			// The notice follows exactly the runs where the upload was wanted and did not succeed.
			for _, outcome := range []string{"success", "failure", "skipped"} {
				if outcome == "skipped" && got || outcome != "skipped" && !got {
					continue // the outcome this run cannot have
				}
				steps := map[string]any{}
				for k, v := range tc.steps {
					steps[k] = v
				}
				steps[upload.ID] = map[string]any{"outcome": outcome}
				shown, err := evalCondition(notice.If, actionContext(a, tc.inputs, steps, tc.github))
				if err != nil {
					t.Fatalf("notice if %q: %v", notice.If, err)
				}
				wanted := tc.inputs["upload-sarif"] != "false" && tc.steps["check"].(map[string]any)["outputs"].(map[string]any)["sarif-file"] != nil
				if want := wanted && outcome != "success"; shown != want {
					t.Errorf("upload %s: notice shown %v, want %v", outcome, shown, want)
				}
			}
		})
	}
}

// TestActionCheckStep runs the Action's check step as the runner would (bash, its env evaluated from
// the inputs, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files) with this build as karpenter-guard: a path
// that holds no Karpenter object fails it by default (fail-on-empty) with the reason annotated and in
// the job summary; fail-on-empty "false" lets it pass with a warning; findings still exit 1.
func TestActionCheckStep(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash: the Action's steps run in bash")
	}
	a := readAction(t)
	var check *actionStep
	for i := range a.Runs.Steps {
		if a.Runs.Steps[i].ID == "check" {
			check = &a.Runs.Steps[i]
		}
	}
	if check == nil || check.Shell != "bash" {
		t.Fatal("no bash step with id check")
	}
	if d := a.Inputs["fail-on-empty"].Default; d != "true" {
		t.Errorf("fail-on-empty default %q, want true: in CI a path that holds no Karpenter manifest is a mistake", d)
	}
	deny, err := os.ReadFile("../../examples/field-reports/04-instance-profile-arn.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The runner puts karpenter-guard on PATH; here it is this test binary, run as the CLI.
	bin := t.TempDir()
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	writeTemp(t, bin, "karpenter-guard", fmt.Sprintf("#!/bin/sh\n%s=1 exec %q \"$@\"\n", asCLI, self))
	if err := os.Chmod(filepath.Join(bin, "karpenter-guard"), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name       string
		inputs     map[string]string
		wantExit   string
		wantOutput []string // on the step's standard output (annotations, summary line)
		wantSumm   string   // in the job summary
	}{
		{
			name: "no Karpenter object", inputs: map[string]string{"path": "app"}, wantExit: "2",
			wantOutput: []string{"::error title=nothing checked::no EC2NodeClass, NodePool or aws-auth ConfigMap in app, only 2 objects of other kinds: is the path right?"},
			wantSumm:   "nothing checked: no EC2NodeClass, NodePool or aws-auth ConfigMap in app, only 2 objects of other kinds: is the path right? (--fail-on-empty: the run fails, exit 2)",
		},
		{
			name: "no Karpenter object, fail-on-empty false", inputs: map[string]string{"path": "app", "fail-on-empty": "false"}, wantExit: "0",
			wantOutput: []string{"::warning title=nothing checked::"},
			wantSumm:   "nothing checked: no EC2NodeClass, NodePool or aws-auth ConfigMap in app, only 2 objects of other kinds: is the path right?\n",
		},
		{
			name: "a deny finding", inputs: map[string]string{"path": "app deploy"}, wantExit: "1",
			wantOutput: []string{"::error file=deploy/pool.yaml,line=10,title=instance-profile-arn::"},
			wantSumm:   "| **deny** | `instance-profile-arn` |",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work, runnerTemp := t.TempDir(), t.TempDir()
			writeTemp(t, work, "app/deploy.yaml", otherKinds)
			writeTemp(t, work, "deploy/pool.yaml", string(deny))
			output, summary := filepath.Join(runnerTemp, "output"), filepath.Join(runnerTemp, "summary")
			ctx := actionContext(a, tc.inputs, map[string]any{}, map[string]any{})
			env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "RUNNER_TEMP=" + runnerTemp,
				"GITHUB_OUTPUT=" + output, "GITHUB_STEP_SUMMARY=" + summary, "HOME=" + work}
			for k, v := range check.Env {
				value, err := evalTemplate(v, ctx)
				if err != nil {
					t.Fatalf("env %s: %v", k, err)
				}
				env = append(env, k+"="+value)
			}
			// The runner's bash: bash --noprofile --norc -eo pipefail {0}.
			script := writeTemp(t, runnerTemp, "step.sh", check.Run)
			cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
			cmd.Dir, cmd.Env = work, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the check step failed: %v\n%s", err, out)
			}
			outputs, _ := os.ReadFile(output)
			if !strings.Contains(string(outputs), "exit-code="+tc.wantExit+"\n") || !strings.Contains(string(outputs), "sarif-file=") {
				t.Errorf("GITHUB_OUTPUT %q, want exit-code=%s and the SARIF file\n%s", outputs, tc.wantExit, out)
			}
			for _, want := range tc.wantOutput {
				if !strings.Contains(string(out), want) {
					t.Errorf("step output lacks %q:\n%s", want, out)
				}
			}
			if summ, _ := os.ReadFile(summary); !strings.Contains(string(summ), tc.wantSumm) {
				t.Errorf("job summary lacks %q:\n%s", tc.wantSumm, summ)
			}
		})
	}
}

var templateExpr = regexp.MustCompile(`\$\{\{(.*?)\}\}`)

// evalTemplate replaces each ${{ expression }} in s with its value, as the runner does in env and with.
func evalTemplate(s string, ctx map[string]any) (string, error) {
	var firstErr error
	out := templateExpr.ReplaceAllStringFunc(s, func(m string) string {
		v, err := evalExpr(templateExpr.FindStringSubmatch(m)[1], ctx)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return exprString(v)
	})
	return out, firstErr
}

// evalCondition evaluates a step's if: as the runner does (an expression, with or without ${{ }}),
// and reports whether the step runs. Steps without a status function run only while the job
// succeeds, which the Action's steps always do.
func evalCondition(cond string, ctx map[string]any) (bool, error) {
	cond = strings.TrimSpace(cond)
	if m := templateExpr.FindStringSubmatch(cond); m != nil && m[0] == cond {
		cond = m[1]
	}
	v, err := evalExpr(cond, ctx)
	return truthy(v), err
}

// evalExpr evaluates the subset of GitHub Actions expressions action.yml uses: property paths,
// string literals, true, false, null, ==, !=, !, && and || (which return an operand, as GitHub's
// do), and parentheses. Comparisons follow GitHub's: strings compare ignoring case, values of
// different types compare as numbers. Written here because no Go library evaluates them.
func evalExpr(expr string, ctx map[string]any) (any, error) {
	p := &exprParser{s: expr, ctx: ctx}
	v, err := p.or()
	if err == nil && strings.TrimSpace(p.s[p.i:]) != "" {
		err = fmt.Errorf("unexpected %q", p.s[p.i:])
	}
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", expr, err)
	}
	return v, nil
}

type exprParser struct {
	s   string
	i   int
	ctx map[string]any
}

func (p *exprParser) skip() {
	for p.i < len(p.s) && unicode.IsSpace(rune(p.s[p.i])) {
		p.i++
	}
}

func (p *exprParser) eat(tok string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *exprParser) or() (any, error) {
	v, err := p.and()
	for err == nil && p.eat("||") {
		var r any
		if r, err = p.and(); !truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *exprParser) and() (any, error) {
	v, err := p.unary()
	for err == nil && p.eat("&&") {
		var r any
		if r, err = p.unary(); truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *exprParser) unary() (any, error) {
	p.skip()
	if strings.HasPrefix(p.s[p.i:], "!") && !strings.HasPrefix(p.s[p.i:], "!=") {
		p.i++
		v, err := p.unary()
		return !truthy(v), err
	}
	return p.compare()
}

func (p *exprParser) compare() (any, error) {
	l, err := p.primary()
	if err != nil {
		return nil, err
	}
	switch {
	case p.eat("=="):
		r, err := p.primary()
		return exprEqual(l, r), err
	case p.eat("!="):
		r, err := p.primary()
		return !exprEqual(l, r), err
	}
	return l, nil
}

func (p *exprParser) primary() (any, error) {
	p.skip()
	switch {
	case p.eat("("):
		v, err := p.or()
		if err == nil && !p.eat(")") {
			err = fmt.Errorf("missing ) at %d", p.i)
		}
		return v, err
	case strings.HasPrefix(p.s[p.i:], "'"):
		var b strings.Builder
		for p.i++; p.i < len(p.s); p.i++ {
			if p.s[p.i] == '\'' {
				if strings.HasPrefix(p.s[p.i:], "''") {
					b.WriteByte('\'')
					p.i++
					continue
				}
				p.i++
				return b.String(), nil
			}
			b.WriteByte(p.s[p.i])
		}
		return nil, fmt.Errorf("unterminated string")
	}
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] == '.' || p.s[p.i] == '-' || p.s[p.i] == '_' || unicode.IsLetter(rune(p.s[p.i])) || unicode.IsDigit(rune(p.s[p.i]))) {
		p.i++
	}
	word := p.s[start:p.i]
	switch word {
	case "":
		return nil, fmt.Errorf("expected a value at %d", start)
	case "true", "false":
		return word == "true", nil
	case "null":
		return nil, nil
	}
	var v any = p.ctx
	for _, name := range strings.Split(word, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil // a property of nothing is null
		}
		v = m[name]
	}
	return v, nil
}

func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case map[string]any:
		return true
	}
	return false
}

func exprEqual(a, b any) bool {
	if as, ok := a.(string); ok {
		if bs, ok := b.(string); ok {
			return strings.EqualFold(as, bs)
		}
	}
	if ab, ok := a.(bool); ok {
		if bb, ok := b.(bool); ok {
			return ab == bb
		}
	}
	if a == nil && b == nil {
		return true
	}
	if _, ok := a.(map[string]any); ok {
		return false // objects equal only themselves; the Action never compares them
	}
	na, nb := exprNumber(a), exprNumber(b)
	return !math.IsNaN(na) && na == nb
}

func exprNumber(v any) float64 {
	switch v := v.(type) {
	case nil:
		return 0
	case bool:
		if v {
			return 1
		}
		return 0
	case string:
		if strings.TrimSpace(v) == "" {
			return 0
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	return math.NaN()
}

func exprString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(v)
	case string:
		return v
	}
	return fmt.Sprint(v)
}

// TestExprEvaluator pins the evaluator the Action tests rest on, against what GitHub documents.
func TestExprEvaluator(t *testing.T) {
	ctx := map[string]any{"inputs": map[string]any{"upload-sarif": "true", "empty": ""}, "github": map[string]any{"actor": "Dependabot[bot]"}}
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{"inputs.upload-sarif == 'true'", true},
		{"inputs.upload-sarif == 'TRUE'", true}, // strings compare ignoring case
		{"inputs.missing == ''", true},          // null and '' are both 0
		{"inputs.empty != ''", false},
		{"github.actor != 'dependabot[bot]'", false},
		{"!(inputs.upload-sarif == 'true' && github.event.pull_request.head.repo.full_name != 'a/b')", false},
		{"!inputs.missing", true},
		{"inputs.missing || 'x'", true},
		{"inputs.upload-sarif == 'true' && inputs.empty", false},
		{"'it''s' == 'IT''S'", true},
	} {
		got, err := evalCondition(tc.expr, ctx)
		if err != nil || got != tc.want {
			t.Errorf("%s = %v (%v), want %v", tc.expr, got, err, tc.want)
		}
	}
	for _, bad := range []string{"inputs.a ==", "(inputs.a", "'open", "inputs.a inputs.b"} {
		if _, err := evalCondition(bad, ctx); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
