package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/objects"
)

// JUnitOptions controls the JUnit output.
type JUnitOptions struct {
	// FailOn decides which findings are <failure>s, so that the test report is red exactly when the
	// run exits 1 (the zero value is FailOnDeny).
	FailOn FailOn
}

// The JUnit XML shape: the subset of the Jenkins xunit plugin's junit-10.xsd that GitLab and the
// Jenkins JUnit plugin read. Every attribute and element here is one that schema declares.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Time     string      `xml:"time,attr"`
		File     string      `xml:"file,attr,omitempty"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitOutcome `xml:"failure,omitempty"`
		Error     *junitOutcome `xml:"error,omitempty"`
		Skipped   *junitOutcome `xml:"skipped,omitempty"`
		SystemOut *junitText    `xml:"system-out,omitempty"`
	}
	junitOutcome struct {
		Type    string `xml:"type,attr,omitempty"`
		Message string `xml:"message,attr,omitempty"`
		// Text is CDATA: messages quote YAML, and a report read in a log stays readable.
		Text string `xml:",cdata"`
	}
	junitText struct {
		Text string `xml:",cdata"`
	}
)

// WriteJUnit writes the report as JUnit XML for CI test reports (GitLab's artifacts:reports:junit,
// Jenkins' junit step).
//
// One <testsuite> per input file, and every test case's classname is that file without its
// extension: GitLab shows the classname as a test's suite and ignores the <testsuite> name, so its
// test report lists the findings by the file to edit; Jenkins splits a classname at its last dot into
// package and class, hence no extension.
//
// Test cases, named so that a name survives edits elsewhere in the file (GitLab compares a merge
// request's tests with its target branch's by name, and keeps only the first of equal names):
//   - a finding: "rule: Kind \"name\" field". A finding that fails the run under opt.FailOn is a
//     <failure> whose text is the message, the fix and file:line; any other (warn without
//     --fail-on warn, audit) passes with the same text as <system-out>: JUnit has no warning
//     status, and a test report that is red while the job is green misleads.
//   - a check not evaluated: "rule: Kind \"name\"", <skipped> with the reason; likewise a rule the
//     object opted out of (karpenter-guard.io/skip).
//   - an object without a finding: "Kind \"name\"", passing, so that a clean run reports its objects
//     as passed tests instead of an empty report (which Jenkins' junit step refuses).
//   - an input error: "input error", an <error>.
//   - a run that checked nothing: "nothing checked", in a suite of its own, <skipped> with the reason
//     (an <error> under FailOnEmpty), so that the report is not empty and says why.
func (r *Report) WriteJUnit(w io.Writer, opt JUnitOptions) error {
	if opt.FailOn == "" {
		opt.FailOn = FailOnDeny
	}
	type entry struct {
		objLine, order, line int
		c                    junitCase
	}
	files := map[string][]entry{}
	withFindings := map[objects.Ref]bool{}
	for _, f := range r.Findings {
		withFindings[f.Object] = true
		text := f.Message
		if f.Fix != "" {
			text += "\nfix: " + f.Fix
		}
		text += "\nat " + location(f.Object.File, f.Line)
		c := junitCase{Name: caseName(f.Rule, f.Object, f.Field)}
		if opt.FailOn.Fails(f.Action) {
			c.Failure = &junitOutcome{Type: string(f.Action), Message: f.Message, Text: xmlChars(text)}
		} else {
			c.SystemOut = &junitText{Text: xmlChars(string(f.Action) + ": " + text)}
		}
		files[f.Object.File] = append(files[f.Object.File], entry{f.Object.Line, 0, f.Line, c})
	}
	for _, o := range r.Objects {
		if !withFindings[o] {
			files[o.File] = append(files[o.File], entry{o.Line, 1, o.Line, junitCase{Name: o.String()}})
		}
	}
	for _, s := range r.Skipped {
		c := junitCase{Name: caseName(s.Rule, s.Object, ""), Skipped: &junitOutcome{Message: "skipped by the object: " + s.Reason}}
		files[s.Object.File] = append(files[s.Object.File], entry{s.Object.Line, 2, s.Object.Line, c})
	}
	for _, n := range r.NotEvaluated {
		c := junitCase{Name: caseName(n.Rule, n.Object, ""), Skipped: &junitOutcome{Message: "not evaluated: " + n.Reason}}
		files[n.Object.File] = append(files[n.Object.File], entry{n.Object.Line, 3, n.Object.Line, c})
	}
	for _, e := range r.Errors {
		c := junitCase{Name: "input error", Error: &junitOutcome{Type: "input error", Message: e.Message, Text: xmlChars(e.Error())}}
		files[e.File] = append(files[e.File], entry{e.Line, 4, e.Line, c})
	}

	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	doc := junitSuites{Name: "karpenter-guard", Time: "0"}
	if reason := r.Summary.NothingChecked; reason != "" {
		c := junitCase{Name: "nothing checked", Classname: "karpenter-guard", Time: "0"}
		suite := junitSuite{Name: "karpenter-guard", Time: "0", Tests: 1}
		if r.emptyFails() {
			c.Error = &junitOutcome{Type: "nothing checked", Message: reason, Text: xmlChars("nothing checked: " + reason + " (--fail-on-empty)")}
			suite.Errors++
		} else {
			c.Skipped = &junitOutcome{Message: "nothing checked: " + reason}
			suite.Skipped++
		}
		suite.Cases = []junitCase{c}
		doc.Tests += suite.Tests
		doc.Errors += suite.Errors
		doc.Suites = append(doc.Suites, suite)
	}
	for _, file := range names {
		entries := files[file]
		sort.SliceStable(entries, func(i, j int) bool {
			a, b := entries[i], entries[j]
			if a.objLine != b.objLine {
				return a.objLine < b.objLine
			}
			if a.order != b.order {
				return a.order < b.order
			}
			return a.line < b.line
		})
		suite := junitSuite{Name: suiteName(file), Time: "0", File: file}
		seen := map[string]int{}
		for _, e := range entries {
			c := e.c
			c.Classname = className(file)
			c.Time = "0"
			if seen[c.Name]++; seen[c.Name] > 1 {
				c.Name = fmt.Sprintf("%s (%d)", c.Name, seen[c.Name])
			}
			suite.Tests++
			switch {
			case c.Failure != nil:
				suite.Failures++
			case c.Error != nil:
				suite.Errors++
			case c.Skipped != nil:
				suite.Skipped++
			}
			suite.Cases = append(suite.Cases, c)
		}
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Errors += suite.Errors
		doc.Suites = append(doc.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// caseName names a test case by rule, object and field: never by line, which any edit above it
// shifts.
func caseName(rule string, ref objects.Ref, field string) string {
	name := rule + ": " + ref.String()
	if field != "" {
		name += " " + field
	}
	return name
}

// suiteName names the suite of a file; objects read from a cluster (audit) have none.
func suiteName(file string) string {
	if file == "" {
		return "cluster"
	}
	return filepath.ToSlash(file)
}

// className is a file's suite name without the extension, for Jenkins (see WriteJUnit).
func className(file string) string {
	name := suiteName(file)
	switch ext := filepath.Ext(name); strings.ToLower(ext) {
	case ".yaml", ".yml", ".json":
		return strings.TrimSuffix(name, ext)
	}
	return name
}

// location is file:line, or the file alone when the line is unknown.
func location(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", suiteName(file), line)
	}
	return suiteName(file)
}

// xmlChars replaces the characters XML 1.0 cannot hold, even in CDATA (control characters of a
// binary input named in an error), with U+FFFD; encoding/xml does so for attributes and escaped
// text, not for CDATA.
func xmlChars(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}
