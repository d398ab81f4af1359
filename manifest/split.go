package manifest

import (
	"bytes"
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
