package facts

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// File lines of a snapshot file, as editors count them. yaml.v3 counts parser errors from 0, often gives
// the line where the enclosing collection starts rather than the bad line, and breaks lines at a lone
// CR and at NEL, LS and PS (U+0085, U+2028, U+2029). The same corrections as the manifest reader's
// (manifest/split.go), so a snapshot read with --facts and one read from the input get the same lines.

var syntaxLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError returns yaml.v3's line (a hint) and the text of a YAML syntax error.
func syntaxError(err error) (int, string) {
	msg := err.Error()
	if m := syntaxLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}

// firstSyntaxError returns the first syntax error of a YAML stream, or nil.
func firstSyntaxError(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// syntaxErrorLine returns the file line (1-based) where the syntax error msg shows: the first line at
// which the stream, cut after it, already fails with that error. The yaml.v3 hint is tried first;
// otherwise bisection costs a few more parses, and only for a file that is broken anyway.
func syntaxErrorLine(data []byte, yamlLine int, msg string) int {
	lines := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	fails := func(n int) bool {
		err := firstSyntaxError(data[:lineEnd(data, n)])
		if err == nil {
			return false
		}
		_, m := syntaxError(err)
		return m == msg
	}
	for _, n := range []int{yamlLine + 1, yamlLine} {
		if n >= 1 && n <= lines && fails(n) && (n == 1 || !fails(n-1)) {
			return n
		}
	}
	lo, hi := 1, max(lines, 1)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// lineEnd returns the offset just past line n (1-based) of data.
func lineEnd(data []byte, n int) int {
	off := 0
	for ; n > 0; n-- {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return len(data)
		}
		off += i + 1
	}
	return off
}

// fileLines turns the node lines yaml.v3 counted in data into lines of the file (LF-separated).
func fileLines(data []byte, root *yaml.Node) {
	if !otherBreaks(data) {
		return
	}
	var nodes []*yaml.Node
	seen := map[*yaml.Node]bool{}
	var collect func(n *yaml.Node)
	collect = func(n *yaml.Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		if n.Line > 0 {
			nodes = append(nodes, n)
		}
		for _, c := range n.Content {
			collect(c)
		}
	}
	collect(root)
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Line < nodes[j].Line })
	yline, fline, i := 1, 1, 0
	for _, n := range nodes {
		for yline < n.Line && i < len(data) {
			r, size := utf8.DecodeRune(data[i:])
			switch {
			case r == '\r' && i+1 < len(data) && data[i+1] == '\n':
				size = 2
				fallthrough
			case r == '\n':
				yline, fline = yline+1, fline+1
			case r == '\r' || r == '\u0085' || r == '\u2028' || r == '\u2029':
				yline++
			}
			i += size
		}
		if yline != n.Line {
			return
		}
		n.Line = fline
	}
}

// otherBreaks reports whether data holds a line break other than LF and CR LF.
func otherBreaks(data []byte) bool {
	for i, b := range data {
		if b == '\r' && (i+1 == len(data) || data[i+1] != '\n') {
			return true
		}
	}
	return bytes.Contains(data, []byte("\u0085")) || bytes.Contains(data, []byte("\u2028")) || bytes.Contains(data, []byte("\u2029"))
}
