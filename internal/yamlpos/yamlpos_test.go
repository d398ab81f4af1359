package yamlpos

import "testing"

func TestLineEnd(t *testing.T) {
	data := []byte("a\nbb\nccc")
	for n, want := range map[int]int{0: 0, 1: 2, 2: 5, 3: 8, 4: 8} {
		if got := lineEnd(data, n); got != want {
			t.Errorf("lineEnd(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestSyntaxError(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int
		msg  string
	}{
		{"yaml: line 12: did not find expected key", 12, "did not find expected key"},
		{"yaml: control characters are not allowed", 0, "control characters are not allowed"},
		{"something else", 0, "something else"},
	} {
		line, msg := SyntaxError(stringError(tc.in))
		if line != tc.line || msg != tc.msg {
			t.Errorf("SyntaxError(%q) = %d, %q; want %d, %q", tc.in, line, msg, tc.line, tc.msg)
		}
	}
}

type stringError string

func (e stringError) Error() string { return string(e) }
