package manifest

import (
	"bytes"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/internal/yamlpos"
)

func TestSplit(t *testing.T) {
	type doc struct {
		data  string
		start int
	}
	for _, tc := range []struct {
		name string
		in   string
		want []doc
	}{
		{"empty input", "", nil},
		{"one document", "a: 1\nb: 2\n", []doc{{"a: 1\nb: 2\n", 1}}},
		{"leading marker", "---\na: 1\n", []doc{{"---\na: 1\n", 1}}},
		{"two documents", "a: 1\n---\nb: 2\n", []doc{{"a: 1\n", 1}, {"---\nb: 2\n", 2}}},
		{"three documents keep their start lines", "a: 1\nb: 2\n---\nc: 3\n\n---\nd: 4\n",
			[]doc{{"a: 1\nb: 2\n", 1}, {"---\nc: 3\n\n", 3}, {"---\nd: 4\n", 6}}},
		{"marker with a comment", "a: 1\n--- # next\nb: 2\n", []doc{{"a: 1\n", 1}, {"--- # next\nb: 2\n", 2}}},
		{"marker with a tab and a comment", "a: 1\n---\t# next\nb: 2\n", []doc{{"a: 1\n", 1}, {"---\t# next\nb: 2\n", 2}}},
		{"marker carrying content", "--- {a: 1}\n--- {b: 2}\n", []doc{{"--- {a: 1}\n", 1}, {"--- {b: 2}\n", 2}}},
		{"consecutive markers", "---\n---\na: 1\n", []doc{{"---\n", 1}, {"---\na: 1\n", 2}}},
		{"trailing marker", "a: 1\n---\n", []doc{{"a: 1\n", 1}, {"---\n", 2}}},
		{"trailing marker without newline", "a: 1\n---", []doc{{"a: 1\n", 1}, {"---", 2}}},
		{"end marker", "a: 1\n...\nb: 2\n", []doc{{"a: 1\n", 1}, {"b: 2\n", 3}}},
		{"end marker then start marker", "a: 1\n...\n---\nb: 2\n", []doc{{"a: 1\n", 1}, {"---\nb: 2\n", 3}}},
		{"end marker with a comment", "a: 1\n... # done\nb: 2\n", []doc{{"a: 1\n", 1}, {"b: 2\n", 3}}},
		{"end marker at the end without newline", "a: 1\n...", []doc{{"a: 1\n", 1}}},
		{"end marker alone", "...\n", []doc{{"", 1}}},
		{"CRLF", "a: 1\r\n---\r\nb: 2\r\n...\r\nc: 3\r\n",
			[]doc{{"a: 1\r\n", 1}, {"---\r\nb: 2\r\n", 2}, {"c: 3\r\n", 5}}},
		{"CRLF marker with trailing space", "a: 1\r\n--- \r\nb: 2\r\n", []doc{{"a: 1\r\n", 1}, {"--- \r\nb: 2\r\n", 2}}},
		{"no trailing newline", "a: 1\n---\nb: 2", []doc{{"a: 1\n", 1}, {"---\nb: 2", 2}}},
		{"four dashes are not a marker", "a: |\n----\n", []doc{{"a: |\n----\n", 1}}},
		{"dashes followed by text are not a marker", "---a: 1\n", []doc{{"---a: 1\n", 1}}},
		{"dots followed by text are not a marker", "...a\n", []doc{{"...a\n", 1}}},
		{"indented markers in a block scalar are content", "userData: |\n  ---\n  ...\n  --- x\nb: 2\n",
			[]doc{{"userData: |\n  ---\n  ...\n  --- x\nb: 2\n", 1}}},
		{"tab-indented marker is content", "a: |\n\t---\n", []doc{{"a: |\n\t---\n", 1}}},
		{"comment before the first marker", "# header\n---\na: 1\n", []doc{{"# header\n", 1}, {"---\na: 1\n", 2}}},
		{"directive stays with its document", "%YAML 1.1\n---\na: 1\n---\nb: 2\n",
			[]doc{{"%YAML 1.1\n---\na: 1\n", 1}, {"---\nb: 2\n", 4}}},
		{"directive with comments", "# c\n%YAML 1.1\n\n%TAG ! tag:example.com,2000:\n---\na: 1\n",
			[]doc{{"# c\n%YAML 1.1\n\n%TAG ! tag:example.com,2000:\n---\na: 1\n", 1}}},
		{"directive after an end marker", "a: 1\n...\n%YAML 1.1\n---\nb: 2\n",
			[]doc{{"a: 1\n", 1}, {"%YAML 1.1\n---\nb: 2\n", 3}}},
		{"percent line inside a document does not join documents", "---\na: 1\n%YAML 1.1\n---\nb: 2\n",
			[]doc{{"---\na: 1\n%YAML 1.1\n", 1}, {"---\nb: 2\n", 4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Split([]byte(tc.in))
			if len(got) != len(tc.want) {
				t.Fatalf("Split(%q) = %d documents %q, want %d", tc.in, len(got), docStrings(got), len(tc.want))
			}
			for i, w := range tc.want {
				if string(got[i].Data) != w.data || got[i].StartLine != w.start {
					t.Errorf("document %d = {%q, line %d}, want {%q, line %d}", i, got[i].Data, got[i].StartLine, w.data, w.start)
				}
			}
		})
	}
}

func docStrings(docs []Document) []string {
	var s []string
	for _, d := range docs {
		s = append(s, string(d.Data))
	}
	return s
}

// TestSplitCoversInput: the documents of Split are consecutive slices of the input, in order, with
// only the end-marker lines left out, and each StartLine is the line its data starts on.
func TestSplitCoversInput(t *testing.T) {
	in := []byte("# c\na: 1\n---\nb: |\n  ---\n...\n\n---\nc: 3\n...\n--- {d: 4}")
	docs := Split(in)
	if len(docs) != 5 {
		t.Fatalf("%d documents %q, want 5", len(docs), docStrings(docs))
	}
	at := 0
	for _, d := range docs {
		if bytes.HasPrefix(in[at:], []byte("...\n")) {
			at += len("...\n")
		}
		if !bytes.HasPrefix(in[at:], d.Data) {
			t.Fatalf("document %q does not follow at offset %d", d.Data, at)
		}
		if line := 1 + bytes.Count(in[:at], []byte("\n")); line != d.StartLine {
			t.Errorf("document %q starts on line %d, StartLine says %d", d.Data, line, d.StartLine)
		}
		at += len(d.Data)
	}
	if at != len(in) {
		t.Errorf("documents end at offset %d of %d", at, len(in))
	}
}

func TestErrorLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want int
	}{
		{"bad indentation", "a:\n  b: 1\n  c: 2\n d: 3\n", 4},
		{"list item in a mapping", "a: 1\nb: 2\n- c\n", 3},
		{"tab indentation", "a:\n  b: 1\n\tc: 2\n", 3},
		{"unclosed flow mapping points at its line", "a: 1\nb: {c: 1\nd: 2\n", 2},
		{"unterminated quote points at its start", "a: 1\nb: 'x\nc: 2\nd: 3\n", 2},
		{"error on the first line", "a: b: c\n", 1},
		{"no trailing newline", "a: 1\nb: c: d", 2},
		{"control character", "a: 1\nb: 2\nc: \x01\n", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := parseString(t, "f.yaml", tc.doc)
			if len(errs) != 1 {
				t.Fatalf("errors = %v, want one", errs)
			}
			line, msg := yamlpos.SyntaxError(yamlError(t, tc.doc))
			if got := yamlpos.ErrorLine([]byte(tc.doc), line, msg, parseDocument); got != tc.want {
				t.Errorf("ErrorLine = %d, want %d (%s)", got, tc.want, msg)
			}
			// A wrong hint from yaml.v3 does not change the answer.
			for _, hint := range []int{0, 1, 2, 100} {
				if got := yamlpos.ErrorLine([]byte(tc.doc), hint, msg, parseDocument); got != tc.want {
					t.Errorf("ErrorLine with hint %d = %d, want %d", hint, got, tc.want)
				}
			}
			if errs[0].Line != tc.want {
				t.Errorf("Parse error line = %d, want %d", errs[0].Line, tc.want)
			}
		})
	}
}
