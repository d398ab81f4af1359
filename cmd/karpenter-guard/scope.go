package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/crds"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// A ClusterFacts document in the input describes the cluster the manifests beside it go to: it applies
// to the objects in its directory and below (GitOps repositories keep one directory per cluster), the
// nearest one winning. Objects read from standard input use a facts document from standard input.
// `--facts FILE` applies to every object and makes input facts documents ignored.

// scopedFacts is one facts provider and the directory it covers ("" covers everything).
type scopedFacts struct {
	dir      string
	provider facts.Provider
}

// loadFactsFile reads --facts.
func loadFactsFile(path string) (*facts.Snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read facts: %w", err)
	}
	cf, err := facts.DecodeSnapshotFile(data)
	var se *facts.SnapshotError
	if errors.As(err, &se) {
		return nil, fmt.Errorf("facts %s:%d: %s", path, se.Line, se.Message)
	}
	if err != nil {
		return nil, fmt.Errorf("facts %s: %w", path, err)
	}
	return facts.NewSnapshot(cf), nil
}

// factsScopes decodes the ClusterFacts documents of the input. Problems are input errors (file, line).
func factsScopes(set *manifest.Set) ([]scopedFacts, []manifest.Error) {
	var scopes []scopedFacts
	var errs []manifest.Error
	byDir := map[string]string{}
	for _, o := range set.Objects {
		if o.Kind != objects.KindClusterFacts {
			continue
		}
		cf, err := facts.DecodeSnapshot(o.Root, o.LineOffset)
		if err != nil {
			line := o.LineOf(o.Root)
			msg := err.Error()
			var se *facts.SnapshotError
			if errors.As(err, &se) {
				line, msg = se.Line, se.Message
			}
			errs = append(errs, manifest.Error{File: o.File, Line: line, Message: "ClusterFacts: " + msg})
			continue
		}
		dir := scopeDir(o.File)
		if prev, dup := byDir[dir]; dup {
			errs = append(errs, manifest.Error{File: o.File, Line: o.LineOf(o.Root),
				Message: fmt.Sprintf("a second ClusterFacts for the same directory (the first is in %s): keep one per cluster directory", prev)})
			continue
		}
		byDir[dir] = o.File
		scopes = append(scopes, scopedFacts{dir: dir, provider: facts.NewSnapshot(cf)})
	}
	// Longest directory first, so the nearest facts win.
	sort.Slice(scopes, func(i, j int) bool { return len(scopes[i].dir) > len(scopes[j].dir) })
	return scopes, errs
}

// scopeDir returns the directory a ClusterFacts document applies to: its own, or for a snapshot in a
// facts home (manifest.FactsHome), the directory that holds the home.
func scopeDir(file string) string {
	if file == "<stdin>" {
		return file
	}
	dir := filepath.Clean(filepath.Dir(file))
	if filepath.Base(dir) == manifest.FactsHome {
		dir = filepath.Dir(dir)
	}
	return dir
}

func covers(dir, file string) bool {
	if dir == "<stdin>" || file == "<stdin>" {
		return dir == file
	}
	d := filepath.Clean(filepath.Dir(file))
	// Absolute, so that a snapshot found above a relative path given ("..") covers it.
	if ad, err := filepath.Abs(d); err == nil {
		if adir, err := filepath.Abs(dir); err == nil {
			d, dir = ad, adir
		}
	}
	return d == dir || strings.HasPrefix(d, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// evaluator evaluates a set with the facts that apply to each object: --facts or --live, else the
// nearest input ClusterFacts, else none. An aws-auth ConfigMap of the input stands in for aws-auth
// where the facts covering it do not know it.
type evaluator struct {
	ctx context.Context
	cat *validators.Catalog
	cfg *config.Config
	// facts, when set, applies to every object (--facts, --live).
	facts facts.Provider
	// crds, when set, are the Karpenter CRDs to validate against (--karpenter-crds).
	crds *crds.Set
}

func (e *evaluator) evaluate(set *manifest.Set) (validators.Result, []manifest.Error) {
	var scopes []scopedFacts
	var errs []manifest.Error
	if e.facts != nil {
		scopes = []scopedFacts{{dir: "", provider: e.facts}}
	} else {
		scopes, errs = factsScopes(set)
	}
	groups := make([][]*objects.Object, len(scopes)+1) // last: no facts
	for _, o := range set.Objects {
		i := len(scopes)
		for j, s := range scopes {
			if s.dir == "" || covers(s.dir, set.ScopeFile(o)) {
				i = j
				break
			}
		}
		groups[i] = append(groups[i], o)
	}
	// Objects of one kustomization build are deployed together. A build's references resolve to its own
	// objects, plain files and the builds it may be deployed with, never to a build deployed apart from
	// it (two overlays of one base go to different clusters: set.Apart). A plain file's resolve to
	// anything in the input, as they always have: which build it is applied with is not known, and a
	// reference is never called missing for want of knowing.
	inputs := map[string][]*objects.Object{"": set.Objects}
	for _, o := range set.Objects {
		b := set.Build(o)
		if _, done := inputs[b]; done {
			continue
		}
		for _, other := range set.Objects {
			if !set.Apart(b, set.Build(other)) {
				inputs[b] = append(inputs[b], other)
			}
		}
	}
	var res validators.Result
	for i, group := range groups {
		for _, objs := range byBuild(set, group) {
			var p facts.Provider = facts.None{}
			if i < len(scopes) {
				p = scopes[i].provider
				if data, malformed, ok := validators.InputAWSAuth(objs); ok {
					p = facts.WithInputAWSAuth(p, data, malformed)
				}
			}
			c := &validators.Context{Context: e.ctx, Config: e.cfg, Facts: p, Input: inputs[set.Build(objs[0])], OtherNodeClasses: set.OtherNodeClasses, Scope: validators.ScopeCLI, CRDs: e.crds}
			// The NodePools that launch from a class are those of the same cluster: the same facts scope
			// (directories with their own snapshots describe different clusters) and the same build.
			c.FindNodePools = func(string) []*objects.Object { return objs }
			r := e.cat.Evaluate(c, objs)
			res.Findings = append(res.Findings, r.Findings...)
			res.NotEvaluated = append(res.NotEvaluated, r.NotEvaluated...)
			res.Skipped = append(res.Skipped, r.Skipped...)
			res.Objects += r.Objects
			res.Notes = append(res.Notes, r.Notes...)
		}
	}
	res = withoutRepeats(res)
	validators.SortFindings(res.Findings)
	return res, errs
}

// byBuild splits the objects of one facts scope by the kustomization build they come from, in the
// order first seen.
func byBuild(set *manifest.Set, objs []*objects.Object) [][]*objects.Object {
	var order []string
	builds := map[string][]*objects.Object{}
	for _, o := range objs {
		b := set.Build(o)
		if _, seen := builds[b]; !seen {
			order = append(order, b)
		}
		builds[b] = append(builds[b], o)
	}
	out := make([][]*objects.Object, 0, len(order))
	for _, b := range order {
		out = append(out, builds[b])
	}
	return out
}

// withoutRepeats drops findings, checks not evaluated and skips that repeat one already kept exactly:
// a base object two overlays render unchanged is checked once per overlay, and the same finding at the
// same object, file and line says nothing new the second time.
func withoutRepeats(res validators.Result) validators.Result {
	seen := map[string]bool{}
	first := func(parts ...any) bool {
		k := fmt.Sprintf("%#v", parts)
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	}
	findings := res.Findings[:0]
	for _, f := range res.Findings {
		if first("f", f.Rule, f.Action, f.Object, f.Field, f.Line, f.Message, f.Fix) {
			findings = append(findings, f)
		}
	}
	res.Findings = findings
	notEvaluated := res.NotEvaluated[:0]
	for _, n := range res.NotEvaluated {
		if first("n", n.Rule, n.Object, n.Reason) {
			notEvaluated = append(notEvaluated, n)
		}
	}
	res.NotEvaluated = notEvaluated
	skipped := res.Skipped[:0]
	for _, s := range res.Skipped {
		if first("s", s.Rule, s.Object, s.Reason) {
			skipped = append(skipped, s)
		}
	}
	res.Skipped = skipped
	return res
}
