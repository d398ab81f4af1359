package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestJSONReportSchema: what `check -o json` prints for the examples (findings, checks not
// evaluated, skips, input errors) validates against schemas/report.schema.json, with a JSON Schema
// validator of its own; a report with a field the schema does not know, or a field of the wrong type,
// does not.
func TestJSONReportSchema(t *testing.T) {
	inRepoRoot(t)
	const path = "schemas/report.schema.json"
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(path, doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	valid := func(report string) error {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(report))
		if err != nil {
			t.Fatalf("not JSON: %v\n%s", err, report)
		}
		return schema.Validate(inst)
	}

	runs := [][]string{
		{"-f", "examples/"},
		{"-f", "examples/production"},
		{"-f", "examples/field-reports/02-ami-name-without-owner.yaml", "-f", "testdata-does-not-exist"}, // an input error
	}
	clusters, _ := filepath.Glob("examples/clusters/*")
	for _, dir := range clusters {
		runs = append(runs, []string{"-f", dir})
	}
	sections := map[string]bool{}
	for _, args := range runs {
		code, out, stderr := cli(t, "", append([]string{"check", "-o", "json"}, args...)...)
		if code > 2 || out == "" {
			t.Fatalf("check %v: exit %d\n%s", args, code, stderr)
		}
		if err := valid(out); err != nil {
			t.Errorf("check %v -o json does not validate against %s: %v", args, path, err)
		}
		for _, s := range []string{"findings", "notEvaluated", "skipped", "errors"} {
			if !strings.Contains(out, `"`+s+`": []`) {
				sections[s] = true
			}
		}
	}
	if len(sections) != 4 {
		t.Errorf("the runs fill only %v: each section should hold something in one of them", sections)
	}

	_, out, _ := cli(t, "", "check", "-o", "json", "-f", "examples/field-reports/04-instance-profile-arn.yaml")
	for name, bad := range map[string]string{
		"an unknown field":      strings.Replace(out, `"summary": {`, `"summary": {"passed":1,`, 1),
		"a boolean as a string": strings.Replace(out, `"fixable":true`, `"fixable":"true"`, 1),
		"another schemaVersion": strings.Replace(out, "karpenter-guard.io/report/v1", "karpenter-guard.io/report/v2", 1),
	} {
		if bad == out {
			t.Fatalf("%s: the report was not changed", name)
		}
		if valid(bad) == nil {
			t.Errorf("a report with %s validates", name)
		}
	}
}
