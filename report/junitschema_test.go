package report

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// junitElement is what the JUnit schema allows of one element.
type junitElement struct {
	required, optional []string
	children           []string
	// text says whether the element may hold text.
	text bool
}

// junitSchema is the subset of the Jenkins xunit plugin's junit-10.xsd (the JUnit shape GitLab and
// the Jenkins JUnit plugin read) that the JUnit output may use: its elements, their attributes and
// which element may hold which. Left out are only the elements of test reruns (rerunFailure,
// flakyError, …), which a linter has no use for. The schema's one typed attribute, time (its
// SUREFIRE_TIME), is checked by junitTime.
var junitSchema = map[string]junitElement{
	"testsuites": {optional: []string{"name", "time", "tests", "failures", "errors"}, children: []string{"testsuite"}},
	"testsuite": {
		required: []string{"name", "tests", "failures", "errors"},
		optional: []string{"group", "time", "skipped", "timestamp", "hostname", "id", "package", "file", "log", "url"},
		children: []string{"testsuite", "properties", "testcase", "system-out", "system-err"},
	},
	"properties": {children: []string{"property"}},
	"property":   {required: []string{"name", "value"}},
	"testcase": {
		required: []string{"name"},
		optional: []string{"time", "classname", "group"},
		children: []string{"skipped", "error", "failure", "system-out", "system-err"},
	},
	"failure":    {optional: []string{"type", "message"}, text: true},
	"error":      {optional: []string{"type", "message"}, text: true},
	"skipped":    {optional: []string{"type", "message"}, text: true},
	"system-out": {text: true},
	"system-err": {text: true},
}

// junitTime is junit-10.xsd's SUREFIRE_TIME pattern, anchored as XSD patterns are.
var junitTime = regexp.MustCompile(`^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$`)

type xmlNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []xmlNode  `xml:",any"`
	Text     string     `xml:",chardata"`
}

// validateJUnit checks a JUnit document against junitSchema, and that the counts of every suite and
// of the whole document are those of its test cases, which GitLab and Jenkins show as they are.
func validateJUnit(data []byte) error {
	var root xmlNode
	if err := xml.Unmarshal(data, &root); err != nil {
		return fmt.Errorf("not XML: %w", err)
	}
	if root.XMLName.Local != "testsuites" {
		return fmt.Errorf("root element <%s>, want <testsuites>", root.XMLName.Local)
	}
	if err := validateElement(root, "testsuites"); err != nil {
		return err
	}
	var total [3]int
	for _, suite := range root.Children {
		counts, err := validateCounts(suite)
		if err != nil {
			return err
		}
		for i := range total {
			total[i] += counts[i]
		}
	}
	for i, name := range []string{"tests", "failures", "errors"} {
		if v, ok := attr(root, name); ok && v != strconv.Itoa(total[i]) {
			return fmt.Errorf("<testsuites %s=%q>, but its suites count %d", name, v, total[i])
		}
	}
	return nil
}

func validateElement(n xmlNode, path string) error {
	rule, ok := junitSchema[n.XMLName.Local]
	if !ok || n.XMLName.Space != "" {
		return fmt.Errorf("%s: element not in the schema", path)
	}
	for _, a := range n.Attrs {
		if a.Name.Space != "" || !slices.Contains(rule.required, a.Name.Local) && !slices.Contains(rule.optional, a.Name.Local) {
			return fmt.Errorf("%s: attribute %q not in the schema", path, a.Name.Local)
		}
		if a.Name.Local == "time" && (n.XMLName.Local == "testsuite" || n.XMLName.Local == "testsuites") && !junitTime.MatchString(a.Value) {
			return fmt.Errorf("%s: time %q is not a SUREFIRE_TIME", path, a.Value)
		}
	}
	for _, r := range rule.required {
		if _, ok := attr(n, r); !ok {
			return fmt.Errorf("%s: required attribute %q missing", path, r)
		}
	}
	if !rule.text && strings.TrimSpace(n.Text) != "" {
		return fmt.Errorf("%s: text %q where the schema allows none", path, n.Text)
	}
	for _, c := range n.Children {
		if !slices.Contains(rule.children, c.XMLName.Local) {
			return fmt.Errorf("%s: <%s> not allowed here", path, c.XMLName.Local)
		}
		if err := validateElement(c, path+"/"+c.XMLName.Local); err != nil {
			return err
		}
	}
	return nil
}

// validateCounts checks a suite's tests, failures, errors and skipped against its test cases, and
// returns the first three.
func validateCounts(suite xmlNode) ([3]int, error) {
	name, _ := attr(suite, "name")
	var tests, failures, errs, skipped int
	for _, c := range suite.Children {
		if c.XMLName.Local != "testcase" {
			continue
		}
		tests++
		outcomes := 0
		for _, o := range c.Children {
			switch o.XMLName.Local {
			case "failure":
				failures++
				outcomes++
			case "error":
				errs++
				outcomes++
			case "skipped":
				skipped++
				outcomes++
			}
		}
		if outcomes > 1 {
			return [3]int{}, fmt.Errorf("suite %q: a test case with %d outcomes", name, outcomes)
		}
	}
	for attrName, want := range map[string]int{"tests": tests, "failures": failures, "errors": errs, "skipped": skipped} {
		if v, ok := attr(suite, attrName); ok && v != strconv.Itoa(want) {
			return [3]int{}, fmt.Errorf("suite %q: %s=%q, but it has %d", name, attrName, v, want)
		}
	}
	return [3]int{tests, failures, errs}, nil
}

func attr(n xmlNode, name string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

// TestJUnitMatchesSchema validates every JUnit golden file, those of this package and those of the
// command's examples, against the schema subset.
func TestJUnitMatchesSchema(t *testing.T) {
	files, err := filepath.Glob("testdata/*.junit.xml")
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := filepath.Glob("../cmd/karpenter-guard/testdata/*.junit.xml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 || len(cmd) < 1 {
		t.Fatalf("JUnit goldens %v and %v: want this package's two and the examples'", files, cmd)
	}
	for _, f := range append(files, cmd...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := validateJUnit(data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestJUnitSchemaRefuses: the schema check fails each way a JUnit document can be wrong.
func TestJUnitSchemaRefuses(t *testing.T) {
	const ok = `<testsuites tests="1" failures="1" errors="0"><testsuite name="s" tests="1" failures="1" errors="0" time="0"><testcase name="c" classname="k"><failure message="m">text</failure></testcase></testsuite></testsuites>`
	if err := validateJUnit([]byte(ok)); err != nil {
		t.Fatalf("valid document refused: %v", err)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"root", `<testsuite name="s" tests="0" failures="0" errors="0"/>`, "root element"},
		{"unknown attribute", strings.Replace(ok, `classname="k"`, `classname="k" file="f"`, 1), `attribute "file"`},
		{"missing required", strings.Replace(ok, ` errors="0" time`, ` time`, 1), `required attribute "errors"`},
		{"unknown element", strings.Replace(ok, `<failure message="m">text</failure>`, `<warning/>`, 1), "<warning> not allowed"},
		{"nesting", strings.Replace(ok, `<failure message="m">text</failure>`, `<failure><skipped/></failure>`, 1), "<skipped> not allowed"},
		{"text", strings.Replace(ok, `<testcase name="c" classname="k">`, `<testcase name="c" classname="k">loose`, 1), "allows none"},
		{"time", strings.Replace(ok, `time="0"`, `time="1s"`, 1), "SUREFIRE_TIME"},
		{"suite count", strings.Replace(ok, `<testsuite name="s" tests="1"`, `<testsuite name="s" tests="2"`, 1), `tests="2"`},
		{"total count", strings.Replace(ok, `<testsuites tests="1" failures="1"`, `<testsuites tests="1" failures="0"`, 1), `failures="0"`},
		{"two outcomes", strings.Replace(ok, `text</failure>`, `text</failure><skipped/>`, 1), "2 outcomes"},
	} {
		err := validateJUnit([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}
