package main

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// flagLine matches a flag line of cobra's help: the flag, then an optional argument name, then the
// two or more spaces that separate them from the usage text (or the end of the line).
var flagLine = regexp.MustCompile(`^\s+(?:-\w, )?--[\w-]+(?: (.*?))?(?:\s{2,}|$)`)

// plainArgName is an argument name pflag derives from a flag's type (string, duration, stringArray,
// time-encoding, …) or an upper-case placeholder a usage string names on purpose (NAME).
var plainArgName = regexp.MustCompile(`^(?:[a-z][A-Za-z0-9-]*|[A-Z][A-Z0-9_]*)$`)

// TestHelpFlagArgumentNames runs every command's --help and fails when a flag's argument name is not
// a plain word: pflag takes a back-quoted phrase in a usage string as the argument name, so
// "name (as in `aws eks list-clusters`)" shows up as "--cluster-name aws eks list-clusters".
func TestHelpFlagArgumentNames(t *testing.T) {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(newRootCommand(strings.NewReader(""), io.Discard, io.Discard), nil)
	if len(paths) < 7 {
		t.Fatalf("found %d commands, want the root and every subcommand: %v", len(paths), paths)
	}
	for _, path := range paths {
		name := strings.Join(append([]string{"karpenter-guard"}, path...), " ")
		t.Run(name, func(t *testing.T) {
			code, out, stderr := cli(t, "", append(append([]string(nil), path...), "--help")...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and no stderr", code, stderr)
			}
			flags := 0
			for _, line := range strings.Split(out, "\n") {
				m := flagLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				flags++
				if m[1] != "" && !plainArgName.MatchString(m[1]) {
					t.Errorf("argument name %q is not a plain word (a back-quoted phrase in the usage string?):\n%s", m[1], line)
				}
			}
			if flags == 0 {
				t.Fatalf("no flag lines in the help:\n%s", out)
			}
		})
	}
}
