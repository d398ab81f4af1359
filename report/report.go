// Package report renders the outcome of a check or audit as text for people, JSON for tools and SARIF
// for code scanning. The JSON shape is a public contract: add fields, never rename them.
package report

import (
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// Report is everything one run found.
type Report struct {
	Findings     []validators.Finding      `json:"findings"`
	NotEvaluated []validators.NotEvaluated `json:"notEvaluated"`
	Skipped      []validators.Skipped      `json:"skipped"`
	Errors       []manifest.Error          `json:"errors"`
	// Notes are what the facts provider said about its answers, such as a cached answer served
	// because AWS throttled (live facts only).
	Notes   []string `json:"notes,omitempty"`
	Summary Summary  `json:"summary"`
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
	// Fixed counts findings fixed by --fix (0 without it).
	Fixed int `json:"fixed"`
}

// New builds a report from an evaluation and the input errors.
func New(res validators.Result, set *manifest.Set) *Report {
	r := &Report{
		Findings:     nonNil(res.Findings),
		NotEvaluated: nonNil(res.NotEvaluated),
		Skipped:      nonNil(res.Skipped),
		Errors:       nonNil(set.Errors),
		Notes:        res.Notes,
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

// ExitCode is 2 when the run had input errors, 1 when a finding denies, else 0.
func (r *Report) ExitCode() int {
	switch {
	case len(r.Errors) > 0:
		return ExitFailed
	case r.Summary.Deny > 0:
		return ExitDenied
	}
	return ExitOK
}
