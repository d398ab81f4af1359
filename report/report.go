// Package report renders the outcome of a check or audit as text for people, JSON for tools, SARIF
// for code scanning, JUnit XML for CI test reports (GitLab, Jenkins), GitHub workflow commands for
// annotations and Markdown for job summaries. The JSON shape is a public contract: add fields, never
// rename them.
package report

import (
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// SchemaVersion names the shape of the JSON report, written as its "schemaVersion". Fields are only
// ever added under one version; a change that renames, retypes or removes a field would bring a new
// version, so a consumer can refuse a shape it does not know instead of misreading it.
const SchemaVersion = "karpenter-guard.io/report/v1"

// Report is everything one run found.
type Report struct {
	Findings     []validators.Finding      `json:"findings"`
	NotEvaluated []validators.NotEvaluated `json:"notEvaluated"`
	Skipped      []validators.Skipped      `json:"skipped"`
	Errors       []manifest.Error          `json:"errors"`
	// Unread are the paths found under the inputs and deliberately not read: symbolic links out of the
	// tree, special files, kustomize patches (checked through what their kustomization renders).
	Unread []manifest.Unread `json:"unread"`
	// Notes are what the facts provider said about its answers, such as a cached answer served
	// because AWS throttled (live facts only).
	Notes   []string `json:"notes,omitempty"`
	Summary Summary  `json:"summary"`
	// Objects are the objects evaluated, for the formats that list what passed too (JUnit: a CI test
	// report with nothing in it reads as a broken job, not a clean one).
	Objects []objects.Ref `json:"-"`
	// FailOnEmpty makes a run that checked nothing (Summary.NothingChecked) a failed run, exit 2
	// (--fail-on-empty): in CI a path that holds no Karpenter manifest is a mistake to stop on.
	FailOnEmpty bool `json:"-"`
}

// Summary counts what the run found.
type Summary struct {
	// Objects counts the EC2NodeClasses, NodePools and aws-auth ConfigMaps evaluated.
	Objects      int `json:"objects"`
	Deny         int `json:"deny"`
	Warn         int `json:"warn"`
	Audit        int `json:"audit"`
	NotEvaluated int `json:"notEvaluated"`
	Skipped      int `json:"skipped"`
	Errors       int `json:"errors"`
	// Ignored counts well-formed objects of other kinds in the input.
	Ignored int `json:"ignored"`
	// NotObjects counts documents that are not Kubernetes objects (Helm values, kustomizations, …),
	// skipped.
	NotObjects int `json:"notObjects"`
	// Excluded counts the paths --exclude or a .karpenter-guard-ignore file left out of the directories
	// walked (a directory once).
	Excluded int `json:"excluded"`
	// Unread counts the paths found and deliberately not read (Report.Unread).
	Unread int `json:"unread"`
	// Rendered counts the kustomizations under the -f directories rendered as kustomize builds them.
	Rendered int `json:"rendered"`
	// Fixed counts findings fixed by --fix (0 without it).
	Fixed int `json:"fixed"`
	// NothingChecked is set when the run evaluated no EC2NodeClass, NodePool or aws-auth ConfigMap
	// and had no input error: it says where the run looked, what it found instead and the likely
	// mistake, so that a mistyped path does not pass for a clean run. Empty otherwise.
	NothingChecked string `json:"nothingChecked,omitempty"`
}

// New builds a report from an evaluation and the input errors.
func New(res validators.Result, set *manifest.Set) *Report {
	r := &Report{
		Findings:     nonNil(res.Findings),
		NotEvaluated: nonNil(res.NotEvaluated),
		Skipped:      nonNil(res.Skipped),
		Errors:       nonNil(set.Errors),
		Unread:       nonNil(set.Unread),
		Notes:        res.Notes,
	}
	for _, o := range set.Objects {
		r.Objects = append(r.Objects, o.Ref())
	}
	counts := res.Counts()
	r.Summary = Summary{
		Objects:      res.Objects,
		Deny:         counts[config.ActionDeny],
		Warn:         counts[config.ActionWarn],
		Audit:        counts[config.ActionAudit],
		NotEvaluated: len(res.NotEvaluated),
		Skipped:      len(res.Skipped),
		Errors:       len(set.Errors),
		Ignored:      set.Ignored,
		NotObjects:   set.NotObjects,
		Excluded:     len(set.Excluded),
		Unread:       len(set.Unread),
		Rendered:     len(set.Rendered),
	}
	return r
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Exit codes of check and audit.
const (
	ExitOK     = 0
	ExitDenied = 1
	ExitFailed = 2
)

// FailOn is the least severe finding that makes a run exit 1 (--fail-on).
type FailOn string

// The --fail-on values.
const (
	// FailOnDeny exits 1 on a deny finding: what the webhook would refuse.
	FailOnDeny FailOn = "deny"
	// FailOnWarn exits 1 on a deny or a warn finding. Findings of rules set to audit never fail a
	// run: that action means "record, do not act" everywhere.
	FailOnWarn FailOn = "warn"
	// FailOnNever exits 0 whatever the findings; input errors still exit 2.
	FailOnNever FailOn = "never"
)

// ParseFailOn parses a --fail-on value.
func ParseFailOn(s string) (FailOn, error) {
	switch f := FailOn(s); f {
	case FailOnDeny, FailOnWarn, FailOnNever:
		return f, nil
	}
	return "", fmt.Errorf("unknown --fail-on %q: expected deny, warn or never", s)
}

// Fails reports whether a finding of action a fails a run under f.
func (f FailOn) Fails(a config.Action) bool {
	switch f {
	case FailOnNever:
		return false
	case FailOnWarn:
		return a == config.ActionDeny || a == config.ActionWarn
	}
	return a == config.ActionDeny
}

// Empty reports whether the run evaluated no EC2NodeClass, NodePool or aws-auth ConfigMap and had no
// input error (which would explain it): the command then says why in Summary.NothingChecked.
func (r *Report) Empty() bool {
	return r.Summary.Objects == 0 && len(r.Errors) == 0
}

// emptyFails reports whether the run checked nothing and FailOnEmpty makes that a failure.
func (r *Report) emptyFails() bool {
	return r.FailOnEmpty && r.Summary.NothingChecked != ""
}

// ExitCode is ExitCodeFor(FailOnDeny).
func (r *Report) ExitCode() int {
	return r.ExitCodeFor(FailOnDeny)
}

// ExitCodeFor is 2 when the run had input errors or checked nothing under FailOnEmpty, 1 when a
// finding fails the run under f, else 0.
func (r *Report) ExitCodeFor(f FailOn) int {
	if len(r.Errors) > 0 || r.emptyFails() {
		return ExitFailed
	}
	for _, fd := range r.Findings {
		if f.Fails(fd.Action) {
			return ExitDenied
		}
	}
	return ExitOK
}
