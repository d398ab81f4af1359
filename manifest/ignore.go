package manifest

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// IgnoreFile is the name of the file, at the root of a directory given to the reader, that lists the
// paths under it not to read: a repository root holds Terraform output, CI configuration and other
// YAML that is not for the cluster.
const IgnoreFile = ".karpenter-guard-ignore"

// Ignore is a parsed ignore file: gitignore-like rules matched against slash-separated paths relative
// to the directory it is in.
//
// What is supported: one glob per line (doublestar syntax: *, ?, [a-z], {a,b} and ** for any number of
// directories); blank lines and lines starting with # are skipped; a leading ! re-includes what an
// earlier line excluded (the last matching line wins); a trailing / matches directories only; a
// pattern with a / at its start or in its middle is anchored to the ignore file's directory, one
// without matches a file or directory of that name at any depth; a leading \ escapes a # or ! that
// starts a pattern. Unlike git, trailing spaces are always trimmed. As with git, a file inside an
// excluded directory cannot be re-included: excluded directories are not walked.
type Ignore struct {
	rules []ignoreRule
}

type ignoreRule struct {
	// pattern is matched against the whole relative path.
	pattern string
	negate  bool
	dirOnly bool
	line    int
}

// ParseIgnore parses an ignore file. file names it in errors; a line whose glob is malformed is an
// error with that line, and the other lines still count.
func ParseIgnore(file string, data []byte) (*Ignore, []Error) {
	ig := &Ignore{}
	var errs []Error
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), len(data)+1)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		r := ignoreRule{line: n}
		if strings.HasPrefix(text, "!") {
			r.negate, text = true, text[1:]
		} else if strings.HasPrefix(text, `\#`) || strings.HasPrefix(text, `\!`) {
			text = text[1:]
		}
		if strings.HasSuffix(text, "/") {
			r.dirOnly, text = true, strings.TrimRight(text, "/")
		}
		anchored := strings.Contains(text, "/")
		text = strings.TrimPrefix(text, "/")
		if text == "" {
			errs = append(errs, Error{File: file, Line: n, Message: "ignore pattern matches nothing: give a glob such as terraform/** or *.tfvars.json"})
			continue
		}
		if !anchored && !strings.HasPrefix(text, "**") {
			text = "**/" + text
		}
		if !doublestar.ValidatePattern(text) {
			errs = append(errs, Error{File: file, Line: n, Message: fmt.Sprintf("malformed glob %q (unclosed [ or {, or a trailing \\)", sc.Text())})
			continue
		}
		r.pattern = text
		ig.rules = append(ig.rules, r)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, Error{File: file, Message: "cannot read: " + err.Error()})
	}
	return ig, errs
}

// Excluded reports whether a path, slash-separated and relative to the ignore file's directory, is
// excluded: the last rule that matches it decides.
func (ig *Ignore) Excluded(rel string, dir bool) bool {
	if ig == nil {
		return false
	}
	excluded := false
	for _, r := range ig.rules {
		if r.dirOnly && !dir {
			continue
		}
		if ok, _ := doublestar.Match(r.pattern, rel); ok {
			excluded = !r.negate
		}
	}
	return excluded
}

// ValidateExclude checks an --exclude glob.
func ValidateExclude(pattern string) error {
	if pattern == "" || !doublestar.ValidatePattern(pattern) {
		return fmt.Errorf("malformed glob %q: use *, ?, [a-z], {a,b} and ** (any number of directories)", pattern)
	}
	return nil
}

// matchExclude reports whether an --exclude glob matches a slash-separated path relative to the
// walked directory, or its base name.
func matchExclude(pattern, rel string) bool {
	if ok, _ := doublestar.Match(pattern, rel); ok {
		return true
	}
	ok, _ := doublestar.Match(pattern, path.Base(rel))
	return ok
}
