package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readmeCommandRE matches a check command of the README's "Two commands" block and the exit code its
// comment promises: `go run ./cmd/karpenter-guard check -f examples/   # exits 1: …`.
var readmeCommandRE = regexp.MustCompile(`(?m)^go run \./cmd/karpenter-guard (check [^#]+?)\s+# exits (\d)\b`)

// TestReadmeFirstCommandsExitAsSaid runs the check commands a new user copies from the README's "Two
// commands" and compares their exit codes with the ones the README promises: the first one exits 1
// by design (the examples hold broken manifests), and the README shows a clean run beside it.
func TestReadmeFirstCommandsExitAsSaid(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, "## Two commands")
	if start < 0 {
		t.Fatal(`README.md has no "## Two commands" section`)
	}
	section := readme[start:]
	if end := strings.Index(section[len("## "):], "\n## "); end >= 0 {
		section = section[:end+len("## ")]
	}
	if !strings.Contains(section, "exits 1 by design") || !strings.Contains(section, "broken manifests") {
		t.Errorf("the Two commands section does not say that the first command exits 1 by design because the examples hold broken manifests:\n%s", section)
	}
	matches := readmeCommandRE.FindAllStringSubmatch(section, -1)
	codes := map[int]bool{}
	inRepoRoot(t)
	for _, m := range matches {
		want, _ := strconv.Atoi(m[2])
		codes[want] = true
		code, _, stderr := cli(t, "", strings.Fields(m[1])...)
		if code != want {
			t.Errorf("README: `%s` exits %d, the README says %d (stderr %q)", m[1], code, want, stderr)
		}
	}
	if !codes[1] || !codes[0] {
		t.Errorf("the Two commands section should show the examples exiting 1 and a clean run exiting 0 (`# exits N` comments); found %q", matches)
	}
}
