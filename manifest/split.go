package manifest

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
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
	for i := 0; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if end >= 0 {
			next = i + end + 1
		}
		text := strings.TrimRight(string(data[i:next]), "\r\n")
		switch {
		case isMarker(text, "---"):
			if i > start {
				docs = append(docs, Document{Data: data[start:i], StartLine: startLine})
			}
			// The marker line stays with the new document: it may carry content ("--- {a: 1}").
			start, startLine = i, line
		case isMarker(text, "..."):
			docs = append(docs, Document{Data: data[start:i], StartLine: startLine})
			start, startLine = next, line+1
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
