// Package yamlpos gives file lines to what go.yaml.in/yaml/v3 reports, so the manifest reader and the
// facts snapshot point at the same lines an editor shows.
//
// Written by hand because yaml.v3 counts parser-error lines from 0 and often names the line where the
// enclosing collection starts rather than the bad one, and breaks lines at a lone CR and at NEL, LS and
// PS (U+0085, U+2028, U+2029) where files, editors and our fixer count only LF.
package yamlpos

import (
	"bytes"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

var syntaxLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// LineRE matches the "line N:" yaml.v3 puts before each problem of an error (N in group 1): callers
// shift, rename or drop it.
var LineRE = regexp.MustCompile(`line (\d+):`)

// SyntaxError returns yaml.v3's line for a syntax error (a hint, see ErrorLine) and the error's text.
func SyntaxError(err error) (int, string) {
	msg := err.Error()
	if m := syntaxLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}

// ErrorLine returns the line of data (1-based) where the syntax error msg shows: the first line at
// which data, cut after it, already fails with that error according to parse. yamlLine, yaml.v3's own
// number, is tried first; otherwise bisection costs a few more parses, only for input that is broken.
func ErrorLine(data []byte, yamlLine int, msg string, parse func([]byte) error) int {
	lines := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	fails := func(n int) bool {
		err := parse(data[:lineEnd(data, n)])
		if err == nil {
			return false
		}
		_, m := SyntaxError(err)
		return m == msg
	}
	for _, n := range []int{yamlLine + 1, yamlLine} {
		if n >= 1 && n <= lines && fails(n) && (n == 1 || !fails(n-1)) {
			return n
		}
	}
	lo, hi := 1, max(lines, 1) // the whole input fails with msg
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

// FileLines rewrites the lines and columns yaml.v3 counted in the nodes under root (parsed from data)
// into LF-counted file lines and columns in characters from the LF. A leading byte order mark, which
// yaml.v3 does not count in columns, is counted. Nodes reached twice (aliases) are moved once.
func FileLines(data []byte, root *yaml.Node) {
	bom := bytes.HasPrefix(data, []byte("\uFEFF"))
	if !bom && !otherBreaks(data) {
		return
	}
	var nodes []*yaml.Node
	seen := map[*yaml.Node]bool{}
	var collect func(n *yaml.Node)
	collect = func(n *yaml.Node) {
		if n == nil || seen[n] {
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
	// Walk data once: yline is yaml.v3's line, fline the file line, startCol the file column (in
	// characters) where yline starts, col the characters read on fline so far.
	yline, fline, startCol, col := 1, 1, 0, 0
	if bom {
		startCol = 1
	}
	i := 0
	for _, n := range nodes {
		for yline < n.Line && i < len(data) {
			r, size := utf8.DecodeRune(data[i:])
			switch {
			case r == '\r' && i+1 < len(data) && data[i+1] == '\n':
				size = 2
				fallthrough
			case r == '\n':
				yline, fline, startCol, col = yline+1, fline+1, 0, 0
			case r == '\r' || r == '\u0085' || r == '\u2028' || r == '\u2029':
				col++
				yline, startCol = yline+1, col
			default:
				col++
			}
			i += size
		}
		if yline != n.Line {
			return
		}
		n.Line = fline
		if n.Column > 0 {
			n.Column += startCol
		}
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
