package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The real-world corpus: public manifests copied unchanged from other repositories (SOURCES.yaml says
// where from and under which licence), and the reviewed findings of check on each of them.
const (
	realWorldDir      = "testdata/realworld"
	realWorldSources  = "SOURCES.yaml"
	realWorldExpected = "expected.yaml"
	realWorldReadme   = "README.md"

	// unreviewed marks a finding that -update wrote and nobody has explained yet.
	unreviewed = "UNREVIEWED"
)

// allowedLicenses are the licences under which a file may be copied into the corpus: each allows
// redistribution of the file unchanged inside this repository.
var allowedLicenses = map[string]bool{
	"Apache-2.0":   true,
	"MIT":          true,
	"MIT-0":        true,
	"BSD-2-Clause": true,
	"BSD-3-Clause": true,
	"ISC":          true,
	"CC-BY-4.0":    true,
	"CC-BY-SA-4.0": true,
}

// realWorldSource is one entry of SOURCES.yaml.
type realWorldSource struct {
	File        string `yaml:"file"`
	Repository  string `yaml:"repository"`
	Commit      string `yaml:"commit"`
	Path        string `yaml:"path"`
	License     string `yaml:"license"`
	LicenseFile string `yaml:"licenseFile"`
}

// realWorldFinding is one finding of check, as expected.yaml records it. Reason is the reviewer's
// one-line explanation of why the finding is right, or why it is accepted knowingly; it is not
// compared, only required.
type realWorldFinding struct {
	File   string `yaml:"file"`
	Rule   string `yaml:"rule"`
	Action string `yaml:"action"`
	Kind   string `yaml:"kind,omitempty"`
	Name   string `yaml:"name,omitempty"`
	Field  string `yaml:"field,omitempty"`
	Reason string `yaml:"reason"`
}

func (f realWorldFinding) key() string {
	return strings.Join([]string{f.File, f.Rule, f.Action, f.Kind, f.Name, f.Field}, "\x00")
}

func (f realWorldFinding) String() string {
	s := fmt.Sprintf("%s: %s %s", f.File, strings.ToUpper(f.Action), f.Rule)
	if f.Kind != "" || f.Name != "" {
		s += fmt.Sprintf(" on %s %q", f.Kind, f.Name)
	}
	if f.Field != "" {
		s += " at " + f.Field
	}
	return s
}

type realWorldExpectation struct {
	Findings []realWorldFinding `yaml:"findings"`
}

var (
	commitRE     = regexp.MustCompile(`^[0-9a-f]{40}$`)
	repositoryRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// TestRealWorld runs check, offline and without cluster facts, on every file of the real-world
// corpus one by one (as `karpenter-guard check -f FILE` would) and compares the findings with the
// reviewed expectations in testdata/realworld/expected.yaml.
//
// After a rule change: go test ./cmd/karpenter-guard/ -run TestRealWorld -update rewrites
// expected.yaml, keeping the reason of every finding that still occurs and marking new ones
// UNREVIEWED; the test fails until each of those has a reason. Review the diff: a deny on a
// manifest that works on a real cluster is a false positive to fix in the rule, not to accept.
func TestRealWorld(t *testing.T) {
	inRepoRoot(t)
	sources := readRealWorldSources(t)
	checkRealWorldFiles(t, sources)

	var got []realWorldFinding
	for _, s := range sources {
		got = append(got, realWorldCheck(t, filepath.ToSlash(filepath.Join(realWorldDir, s.File)))...)
	}
	sortRealWorldFindings(got)

	expectedPath := filepath.Join(realWorldDir, realWorldExpected)
	want := readRealWorldExpected(t, expectedPath)
	if *update {
		reasons := map[string][]string{}
		for _, f := range want {
			reasons[f.key()] = append(reasons[f.key()], f.Reason)
		}
		for i := range got {
			k := got[i].key()
			if rs := reasons[k]; len(rs) > 0 {
				got[i].Reason, reasons[k] = rs[0], rs[1:]
			} else {
				got[i].Reason = unreviewed
			}
		}
		writeRealWorldExpected(t, expectedPath, got)
		want = got
	} else {
		diffRealWorld(t, want, got)
	}

	for _, f := range want {
		switch r := strings.TrimSpace(f.Reason); {
		case r == "" || r == unreviewed:
			t.Errorf("%s: no reviewed reason in %s (explain why the finding is right, or mark it FALSE-POSITIVE: why)", f, expectedPath)
		case strings.Contains(r, "\n"):
			t.Errorf("%s: the reason must be one line", f)
		case f.Action == "deny" && strings.HasPrefix(r, "FALSE-POSITIVE"):
			// The worst bug this product can have: a deny on a manifest that works on a real cluster.
			t.Errorf("%s: a reviewed false deny: %s", f, r)
		}
	}
}

// readRealWorldSources reads SOURCES.yaml strictly and checks every entry.
func readRealWorldSources(t *testing.T) []realWorldSource {
	t.Helper()
	path := filepath.Join(realWorldDir, realWorldSources)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sources []realWorldSource
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&sources); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(sources) == 0 {
		t.Fatalf("%s lists no file", path)
	}
	seen := map[string]bool{}
	for i, s := range sources {
		where := fmt.Sprintf("%s entry %d (%s)", path, i+1, s.File)
		switch {
		case s.File == "" || s.Repository == "" || s.Commit == "" || s.Path == "" || s.License == "" || s.LicenseFile == "":
			t.Errorf("%s: every field (file, repository, commit, path, license, licenseFile) is required", where)
			continue
		case !repositoryRE.MatchString(s.Repository):
			t.Errorf("%s: repository %q is not owner/name", where, s.Repository)
		case !commitRE.MatchString(s.Commit):
			t.Errorf("%s: commit %q is not a 40-hex commit id", where, s.Commit)
		case !allowedLicenses[s.License]:
			t.Errorf("%s: licence %q is not one of the allowed licences %v", where, s.License, sortedKeys(allowedLicenses))
		}
		if want := strings.Replace(s.Repository, "/", "__", 1) + "/" + s.Path; s.File != want {
			t.Errorf("%s: file should be %q (owner__name/path in the repository)", where, want)
		}
		if seen[s.File] {
			t.Errorf("%s: listed twice", where)
		}
		seen[s.File] = true
	}
	return sources
}

// checkRealWorldFiles fails when a file on disk is not in SOURCES.yaml or an entry has no file.
func checkRealWorldFiles(t *testing.T, sources []realWorldSource) {
	t.Helper()
	listed := map[string]bool{}
	for _, s := range sources {
		listed[s.File] = true
	}
	onDisk := map[string]bool{}
	err := filepath.WalkDir(realWorldDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(realWorldDir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch rel {
		case realWorldSources, realWorldExpected, realWorldReadme:
			return nil
		}
		if !d.Type().IsRegular() {
			t.Errorf("%s is not a regular file", path)
		}
		onDisk[rel] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for f := range onDisk {
		if !listed[f] {
			t.Errorf("%s/%s is not listed in %s (add its source and licence)", realWorldDir, f, realWorldSources)
		}
	}
	for f := range listed {
		if !onDisk[f] {
			t.Errorf("%s lists %s, which is not in %s", realWorldSources, f, realWorldDir)
		}
	}
}

// realWorldCheck runs check -o json on one file and returns its findings and input errors.
func realWorldCheck(t *testing.T, file string) []realWorldFinding {
	t.Helper()
	code, out, stderr := cli(t, "", "check", "-f", file, "-o", "json")
	if code != 0 && code != 1 && code != 2 {
		t.Fatalf("check -f %s: exit %d\n%s%s", file, code, out, stderr)
	}
	var rep struct {
		Findings []struct {
			Rule   string `json:"rule"`
			Action string `json:"action"`
			Object struct {
				Kind string `json:"kind"`
				Name string `json:"name"`
				File string `json:"file"`
			} `json:"object"`
			Field string `json:"field"`
		} `json:"findings"`
		Errors []struct {
			File    string `json:"file"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("check -f %s -o json: exit %d, unreadable output: %v\n%s%s", file, code, err, out, stderr)
	}
	rel := strings.TrimPrefix(file, realWorldDir+"/")
	var found []realWorldFinding
	for _, f := range rep.Findings {
		if f.Object.File != file {
			t.Errorf("check -f %s reported a finding in %s", file, f.Object.File)
		}
		found = append(found, realWorldFinding{File: rel, Rule: f.Rule, Action: f.Action, Kind: f.Object.Kind, Name: f.Object.Name, Field: f.Field})
	}
	// An input error (a file check cannot read) is recorded like a finding, so that it is reviewed too.
	for _, e := range rep.Errors {
		found = append(found, realWorldFinding{File: rel, Rule: "input-error", Action: "error", Field: e.Message})
	}
	if code == 2 && len(rep.Errors) == 0 {
		t.Errorf("check -f %s: exit 2 without an input error\n%s%s", file, out, stderr)
	}
	return found
}

func sortRealWorldFindings(found []realWorldFinding) {
	sort.SliceStable(found, func(i, j int) bool { return found[i].key() < found[j].key() })
}

func readRealWorldExpected(t *testing.T, path string) []realWorldFinding {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) && *update {
		return nil
	}
	if err != nil {
		t.Fatalf("read %s (go test -run TestRealWorld -update writes it): %v", path, err)
	}
	var exp realWorldExpectation
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&exp); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return exp.Findings
}

// diffRealWorld reports every finding that appeared or disappeared, as a multiset difference.
func diffRealWorld(t *testing.T, want, got []realWorldFinding) {
	t.Helper()
	count := map[string]int{}
	for _, f := range want {
		count[f.key()]++
	}
	var added []realWorldFinding
	for _, f := range got {
		if count[f.key()] > 0 {
			count[f.key()]--
		} else {
			added = append(added, f)
		}
	}
	var removed []realWorldFinding
	for _, f := range want {
		if count[f.key()] > 0 {
			count[f.key()]--
			removed = append(removed, f)
		}
	}
	for _, f := range added {
		t.Errorf("new finding, not in %s: %s", realWorldExpected, f)
	}
	for _, f := range removed {
		t.Errorf("expected finding no longer reported: %s (reason was: %s)", f, f.Reason)
	}
	if len(added)+len(removed) > 0 {
		t.Logf("review the changes, then rerun with -update: it keeps the reasons of findings that still occur and marks new ones %s", unreviewed)
	}
}

const realWorldExpectedHeader = `# Reviewed findings of "karpenter-guard check -f FILE" (offline, no cluster facts) on each file of
# the real-world corpus (SOURCES.yaml). Written by: go test ./cmd/karpenter-guard/ -run TestRealWorld -update
# which keeps the reason of every finding that still occurs and writes UNREVIEWED for new ones.
# Every finding needs a one-line reason: why it is right, why it is accepted knowingly, or
# "FALSE-POSITIVE: why" for a finding the rule should not make (a bug to fix in the rule).
`

// writeRealWorldExpected writes expected.yaml through a temporary file and a rename, so that an
// interrupted run never leaves a half-written file.
func writeRealWorldExpected(t *testing.T, path string, found []realWorldFinding) {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString(realWorldExpectedHeader)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(realWorldExpectation{Findings: found}); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		t.Fatal(err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		t.Fatal(err)
	}
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
