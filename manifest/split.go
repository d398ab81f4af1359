package manifest

import (
	"bytes"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// Document is one YAML document of a file and the file line it starts on.
type Document struct {
	Data      []byte
	StartLine int
}

// Split cuts a YAML stream into documents at "---" and "..." marker lines.
//
// Written by hand because a YAML decoder stops at the first syntax error of a stream and cannot resume,
// while we must report that error and still check every other document; and because splitting by lines
// lets us keep each document's starting line. A marker is only a marker at column 0, where the YAML spec
// forbids it inside content, so block scalars (userData) are never cut.
func Split(data []byte) []Document {
	var docs []Document
	start, startLine := 0, 1
	line := 1
	// directives: the text since start is directives ("%YAML 1.1"), comments and blank lines only, with at
	// least one directive. Directives belong to the document their "---" opens, so no cut is made there.
	directives, content := false, false
	for i := 0; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if end >= 0 {
			next = i + end + 1
		}
		text := strings.TrimRight(string(data[i:next]), "\r\n")
		switch {
		case isMarker(text, "---"):
			if i > start && (!directives || content) {
				docs = append(docs, Document{Data: data[start:i], StartLine: startLine})
				// The marker line stays with the new document: it may carry content ("--- {a: 1}").
				start, startLine = i, line
			}
			directives, content = false, true
		case isMarker(text, "..."):
			docs = append(docs, Document{Data: data[start:i], StartLine: startLine})
			start, startLine = next, line+1
			directives, content = false, false
		case strings.HasPrefix(text, "%"):
			directives = true
		case strings.TrimSpace(text) != "" && !strings.HasPrefix(strings.TrimSpace(text), "#"):
			content = true
		}
		i = next
		line++
	}
	if start < len(data) {
		docs = append(docs, Document{Data: data[start:], StartLine: startLine})
	}
	return docs
}

func isMarker(line, marker string) bool {
	if !strings.HasPrefix(line, marker) {
		return false
	}
	rest := line[len(marker):]
	return rest == "" || rest[0] == ' ' || rest[0] == '\t'
}

var syntaxLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError returns the 1-based line (inside the document) and text of a YAML syntax error.
func syntaxError(err error) (int, string) {
	msg := err.Error()
	if m := syntaxLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}

// errorLine returns the line of doc (1-based) where the syntax error msg shows: the first line at which the
// document, cut after it, already fails with that error. yaml.v3's own line number, yamlLine, is only a
// hint: it counts parser errors from 0 and often gives the line where the enclosing mapping starts rather
// than the bad line. The hint is tried first; otherwise bisection costs a few more parses, and only for a
// document that is broken anyway.
func errorLine(doc []byte, yamlLine int, msg string) int {
	lines := bytes.Count(doc, []byte("\n"))
	if len(doc) > 0 && doc[len(doc)-1] != '\n' {
		lines++
	}
	fails := func(n int) bool {
		var root yaml.Node
		err := yaml.Unmarshal(doc[:lineEnd(doc, n)], &root)
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
	lo, hi := 1, max(lines, 1) // the whole document fails with msg
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

// fileLines turns the node lines and columns yaml.v3 counted in doc into lines and columns of the file.
// yaml.v3 also breaks lines at a CR without LF and at NEL, LS and PS (U+0085, U+2028, U+2029), and does
// not count a leading byte order mark in columns, while files, editors and the fixer count lines by LF
// and columns in characters from the LF.
func fileLines(doc []byte, root *yaml.Node) {
	bom := bytes.HasPrefix(doc, []byte("\uFEFF"))
	if !bom && !otherBreaks(doc) {
		return
	}
	var nodes []*yaml.Node
	var collect func(n *yaml.Node)
	collect = func(n *yaml.Node) {
		if n.Line > 0 {
			nodes = append(nodes, n)
		}
		for _, c := range n.Content {
			collect(c)
		}
	}
	collect(root)
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Line < nodes[j].Line })
	// Walk doc once: yline is yaml.v3's line, fline the file line, startCol the file column (in
	// characters) where yline starts, col the characters read on fline so far.
	yline, fline, startCol, col := 1, 1, 0, 0
	if bom {
		startCol = 1
	}
	i := 0
	for _, n := range nodes {
		for yline < n.Line && i < len(doc) {
			r, size := utf8.DecodeRune(doc[i:])
			switch {
			case r == '\r' && i+1 < len(doc) && doc[i+1] == '\n':
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

// otherBreaks reports whether doc holds a line break other than LF and CR LF.
func otherBreaks(doc []byte) bool {
	for i, b := range doc {
		if b == '\r' && (i+1 == len(doc) || doc[i+1] != '\n') {
			return true
		}
	}
	return bytes.Contains(doc, []byte("\u0085")) || bytes.Contains(doc, []byte("\u2028")) || bytes.Contains(doc, []byte("\u2029"))
}
