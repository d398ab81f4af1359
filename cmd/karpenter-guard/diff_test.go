package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDiffApplies runs check --diff on files where --fix makes several hunks that add and remove
// lines (a v1beta1 NodePool and EC2NodeClass converted to v1, then later documents of the same file
// fixed too) and checks the patch as git and patch read it: every hunk header's line numbers are
// where its lines are in the file and in what --fix writes, git apply takes it without an offset,
// and applying it gives exactly what --fix writes.
func TestDiffApplies(t *testing.T) {
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "field-reports", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	v1beta1, ami, profile := read("01-v1beta1-nodepool.yaml"), read("02-ami-name-without-owner.yaml"), read("04-instance-profile-arn.yaml")
	// An EC2NodeClass whose last line, without a newline, --fix changes: the patch must say so.
	const lastLineProfile = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: last
spec:
  amiSelectorTerms:
    - alias: al2023@v20251112
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: "aws-2026-eks"
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: "aws-2026-eks"
  instanceProfile: arn:aws:iam::069057294951:instance-profile/last-profile`
	tests := []struct {
		name     string
		content  string
		minHunks int
	}{
		{
			name:     "conversion then later fixes",
			content:  v1beta1 + "---\n" + profile + "---\n" + ami,
			minHunks: 4,
		},
		{
			name:     "later fixes then conversion",
			content:  ami + "---\n" + v1beta1 + "---\n" + profile,
			minHunks: 4,
		},
		{
			name:     "no newline at the end",
			content:  v1beta1 + "---\n" + lastLineProfile,
			minHunks: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			const name = "manifests/pools.yaml"
			writeTemp(t, ".", name, tt.content)

			code, diff, stderr := cli(t, "", "check", "-f", name, "--diff")
			if code != 1 {
				t.Fatalf("--diff exit %d, want 1 (a change is shown)\n%s%s", code, diff, stderr)
			}
			code, _, stderr = cli(t, "", "check", "-f", name, "--fix")
			if code != 0 {
				t.Fatalf("--fix exit %d\n%s", code, stderr)
			}
			fixed, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			hunks := checkHunks(t, diff, tt.content, string(fixed))
			if hunks < tt.minHunks {
				t.Errorf("%d hunks, want at least %d (the test needs later hunks to mean anything)\n%s", hunks, tt.minHunks, diff)
			}

			// The patch applies to the original file as git and patch apply it: no offset, no fuzz.
			writeTemp(t, ".", name, tt.content)
			writeTemp(t, ".", "fix.patch", diff)
			if _, err := exec.LookPath("git"); err == nil {
				out, err := exec.Command("git", "apply", "--check", "-v", "fix.patch").CombinedOutput()
				if err != nil || bytes.Contains(out, []byte("offset")) {
					t.Errorf("git apply --check: %v\n%s\n%s", err, out, diff)
				}
			}
			if _, err := exec.LookPath("patch"); err == nil {
				out, err := exec.Command("patch", "-p1", "--dry-run", "-i", "fix.patch").CombinedOutput()
				if err != nil || bytes.Contains(out, []byte("offset")) || bytes.Contains(out, []byte("fuzz")) {
					t.Errorf("patch --dry-run: %v\n%s\n%s", err, out, diff)
				}
			}
			if _, err := exec.LookPath("git"); err == nil {
				if out, err := exec.Command("git", "apply", "fix.patch").CombinedOutput(); err != nil {
					t.Fatalf("git apply: %v\n%s", err, out)
				}
				applied, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				if string(applied) != string(fixed) {
					t.Errorf("the patch applied gives\n%s\nwant what --fix writes\n%s", applied, fixed)
				}
			}
		})
	}
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// checkHunks reads a unified diff of one file and checks each hunk against the old and new contents:
// its header counts its lines, and its lines are in old and new at the lines its header names. It
// returns the number of hunks.
func checkHunks(t *testing.T, diff, oldText, newText string) int {
	t.Helper()
	oldLines, newLines := splitKeepEOL(oldText), splitKeepEOL(newText)
	type hunk struct {
		header                     string
		oldStart, oldN, newStart   int
		newN                       int
		oldBody, newBody           []string
		sawOld, sawNew, lastMarker int
	}
	var hunks []*hunk
	var h *hunk
	atoi := func(s string, def int) int {
		if s == "" {
			return def
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("hunk header number %q: %v", s, err)
		}
		return n
	}
	sc := bufio.NewScanner(strings.NewReader(diff))
	for sc.Scan() {
		line := sc.Text()
		if m := hunkHeader.FindStringSubmatch(line); m != nil {
			h = &hunk{header: line, oldStart: atoi(m[1], 0), oldN: atoi(m[2], 1), newStart: atoi(m[3], 0), newN: atoi(m[4], 1)}
			hunks = append(hunks, h)
			continue
		}
		if h == nil {
			continue // the file header
		}
		switch {
		case strings.HasPrefix(line, " "):
			h.oldBody = append(h.oldBody, line[1:]+"\n")
			h.newBody = append(h.newBody, line[1:]+"\n")
			h.lastMarker = 0
		case strings.HasPrefix(line, "-"):
			h.oldBody = append(h.oldBody, line[1:]+"\n")
			h.lastMarker = 1
		case strings.HasPrefix(line, "+"):
			h.newBody = append(h.newBody, line[1:]+"\n")
			h.lastMarker = 2
		case line == `\ No newline at end of file`:
			// The line before has no newline: on the side(s) it belongs to.
			if h.lastMarker != 2 {
				h.oldBody[len(h.oldBody)-1] = strings.TrimSuffix(h.oldBody[len(h.oldBody)-1], "\n")
			}
			if h.lastMarker != 1 {
				h.newBody[len(h.newBody)-1] = strings.TrimSuffix(h.newBody[len(h.newBody)-1], "\n")
			}
		default:
			t.Fatalf("line %q in a hunk", line)
		}
	}
	for i, h := range hunks {
		if len(h.oldBody) != h.oldN || len(h.newBody) != h.newN {
			t.Errorf("hunk %d %q holds %d old and %d new lines", i+1, h.header, len(h.oldBody), len(h.newBody))
		}
		if got := lineRange(oldLines, h.oldStart, h.oldN); got != strings.Join(h.oldBody, "") {
			t.Errorf("hunk %d %q: the old file at line %d reads\n%s\nnot\n%s", i+1, h.header, h.oldStart, got, strings.Join(h.oldBody, ""))
		}
		if got := lineRange(newLines, h.newStart, h.newN); got != strings.Join(h.newBody, "") {
			t.Errorf("hunk %d %q: the fixed file at line %d reads\n%s\nnot\n%s", i+1, h.header, h.newStart, got, strings.Join(h.newBody, ""))
		}
	}
	return len(hunks)
}

// splitKeepEOL splits s into lines, each with its newline.
func splitKeepEOL(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// lineRange is the n lines of lines from the 1-based line start, or a description of why there are
// none.
func lineRange(lines []string, start, n int) string {
	if n == 0 {
		return ""
	}
	if start < 1 || start-1+n > len(lines) {
		return fmt.Sprintf("(lines %d to %d of a file of %d lines)", start, start+n-1, len(lines))
	}
	return strings.Join(lines[start-1:start-1+n], "")
}
