package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/karpenter-guard/karpenter-guard/validators"
)

// WriteJSON writes the report as JSON with one array element per line: as readable and diffable as
// indented JSON for people, and several times faster for the tens of thousands of entries a large
// repository produces (json.Indent re-scans every byte).
//
// The first member is "schemaVersion" (SchemaVersion). Each finding carries "line", the line of its
// field (the object's line when the field is absent from the file), beside the object's own line in
// "object.line".
func (r *Report) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("{\n")
	bw.WriteString(`  "schemaVersion": "` + SchemaVersion + "\",\n")
	findings := make([]jsonFinding, len(r.Findings))
	for i, f := range r.Findings {
		findings[i] = jsonFinding{Finding: f, Line: f.Line}
	}
	writeArray(bw, "findings", findings)
	writeArray(bw, "notEvaluated", r.NotEvaluated)
	writeArray(bw, "skipped", r.Skipped)
	writeArray(bw, "errors", r.Errors)
	writeArray(bw, "unread", r.Unread)
	bw.WriteString(`  "summary": `)
	writeValue(bw, r.Summary)
	bw.WriteString("\n}\n")
	return bw.Flush()
}

func writeArray[T any](w *bufio.Writer, name string, items []T) {
	w.WriteString(`  "` + name + `": [`)
	for i, it := range items {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n    ")
		writeValue(w, it)
	}
	if len(items) > 0 {
		w.WriteString("\n  ")
	}
	w.WriteString("],\n")
}

func writeValue(w *bufio.Writer, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every value here is plain data (strings, ints, bools); Encode cannot fail on it.
		panic(err)
	}
	w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// jsonFinding is a finding as the JSON report writes it: validators.Finding leaves its line out of
// its own JSON encoding, the report adds it.
type jsonFinding struct {
	validators.Finding
	// Line is the file line of the finding's field.
	Line int `json:"line,omitempty"`
}
