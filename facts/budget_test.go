package facts

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// budgetSnapshots are snapshots whose aliases the YAML budget refuses, each with the line of the alias
// at fault and what the error says. They seed FuzzDecodeSnapshot too.
var budgetSnapshots = []struct {
	name, doc string
	line      int
	msg       string
}{
	{"billion laughs in image tags", lines(hdrAPI, hdrKind, "images:", "- id: ami-1", "  tags:", "    a0: &a0 lol") + laughLevels(9), 10,
		"YAML aliases expand this document to"},
	{"merge key inside its own anchor", lines(hdrAPI, hdrKind, "cluster: &c {<<: *c}"), 3, "alias *c is inside the value of its own anchor &c (line 3)"},
	{"list inside its own anchor", lines(hdrAPI, hdrKind, "roles: &r [*r]"), 3, "alias *r is inside the value of its own anchor &r"},
	{"mutual references", lines(hdrAPI, hdrKind, "awsAuth: &a", "  mapRoles: &m [*a]"), 4, "alias *a is inside the value of its own anchor &a"},
}

// laughLevels returns the levels of a "billion laughs" under a0, indented as image tags.
func laughLevels(levels int) string {
	var b strings.Builder
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "    a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	return b.String()
}

// TestSnapshotYAMLBudget: a snapshot over the YAML budget is refused at the alias's line, before the
// schema check or the decoder walks it.
func TestSnapshotYAMLBudget(t *testing.T) {
	for _, tc := range budgetSnapshots {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeSnapshotFile([]byte(tc.doc))
			var se *SnapshotError
			if !errors.As(err, &se) || se.Line != tc.line || !strings.Contains(se.Message, tc.msg) {
				t.Errorf("got %v, want line %d: …%s…", err, tc.line, tc.msg)
			}
		})
	}
	t.Run("anchors used normally", func(t *testing.T) {
		cf, err := DecodeSnapshotFile([]byte(lines(hdrAPI, hdrKind, "images:", "- {id: ami-1, tags: &t {team: a}}", "- {id: ami-2, tags: *t}")))
		if err != nil {
			t.Fatal(err)
		}
		if imgs := *cf.Images; imgs[1].Tags["team"] != "a" {
			t.Errorf("aliased tags %v", imgs[1].Tags)
		}
	})
}
