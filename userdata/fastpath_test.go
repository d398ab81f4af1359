package userdata

import (
	"math/rand/v2"
	"mime"
	"reflect"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
)

// The fast paths must be taken for the userData people write (or they buy nothing) and must decline
// whatever they do not fully understand (or they would disagree with Karpenter and nodeadm). The
// fuzz targets below check the second promise on arbitrary input; these tables pin the first and
// the notable refusals.

func TestFastParseMIMETakesCommonDocuments(t *testing.T) {
	for name, text := range map[string]string{
		"NodeConfig and shell":    mimeDoc(ncPart, shellPart),
		"benchmark corpus":        corpus.UserData,
		"preamble and epilogue":   "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\nThis is a multi-part message in MIME format.\n\n--B\n" + shellPart + "--B--\nepilogue\n",
		"empty body":              "Content-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: text/x-shellscript\n\n--B--\n",
		"no part Content-Type":    "Content-Type: multipart/mixed; boundary=B\n\n--B\n\necho hi\n--B--",
		"boundary-like body line": "Content-Type: multipart/mixed; boundary=B\n\n--B\n\necho --B\n--Bx\n--B--\n",
		"base64 NodeConfig part":  mimeDoc("Content-Type: application/node.eks.aws\n\n" + b64(nodeConfig)),
		"lower-case header names": "mime-version: 1.0\ncontent-type: multipart/mixed; boundary=B\n\n--B\ncontent-type: text/x-shellscript\n\necho hi\n--B--\n",
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := fastParseMIME(text)
			if !ok {
				t.Fatalf("fast path declined %q", text)
			}
			want, err := parseMIMEWithLibrary(text)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("fast path gave %#v; library gave %#v, %v", got, want, err)
			}
		})
	}
}

func TestFastParseMIMEDeclinesWhatItDoesNotKnow(t *testing.T) {
	for name, text := range map[string]string{
		"CRLF line endings":         "Content-Type: multipart/mixed; boundary=B\r\n\r\n--B\r\n\r\necho hi\r\n--B--\r\n",
		"folded header":             "Content-Type: multipart/mixed;\n boundary=B\n\n--B\n\necho hi\n--B--\n",
		"quoted-printable part":     "Content-Type: multipart/mixed; boundary=B\n\n--B\nContent-Transfer-Encoding: quoted-printable\n\necho=20hi\n--B--\n",
		"padded boundary line":      "Content-Type: multipart/mixed; boundary=B\n\n--B  \n\necho hi\n--B--\n",
		"no close boundary":         "Content-Type: multipart/mixed; boundary=B\n\n--B\n\necho hi\n",
		"not multipart":             "Content-Type: text/x-shellscript\n\necho hi\n",
		"no boundary parameter":     "Content-Type: multipart/mixed\n\n--B\n\necho hi\n--B--\n",
		"header line without colon": "Content-Type: multipart/mixed; boundary=B\n\n--B\nnot a header\n\necho hi\n--B--\n",
		"junk after close boundary": "Content-Type: multipart/mixed; boundary=B\n\n--B\n\necho hi\n--B--junk\n",
		"10,001 part headers":       "Content-Type: multipart/mixed; boundary=B\n\n--B\n" + strings.Repeat("A:\n", 10001) + "\necho hi\n--B--\n",
	} {
		t.Run(name, func(t *testing.T) {
			if got, ok := fastParseMIME(text); ok {
				t.Fatalf("fast path took %q and gave %#v", text, got)
			}
		})
	}
}

func TestSimpleNodeConfig(t *testing.T) {
	const head = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n"
	for _, tc := range []struct {
		name string
		text string
		want bool
	}{
		{"nested mappings", nodeConfig, true},
		{"flags sequence", head + "spec:\n  kubelet:\n    flags:\n      - --node-labels=team=a,tier=b\n      - \"--max-pods=58\"\n", true},
		{"unindented sequence", head + "spec:\n  kubelet:\n    flags:\n    - --v=2\n    config:\n      maxPods: 58\n", true},
		{"comments and blank lines", "# nodeadm\n" + head + "\nspec:\n  # kubelet\n  kubelet:\n\n    config:\n      maxPods: 58\n", true},
		{"null value", head + "spec:\n", true},
		{"quoted values", head + "spec:\n  kubelet:\n    config:\n      shutdownGracePeriod: '30s'\n", true},
		{"flow mapping", head + "spec: {kubelet: {config: {maxPods: 58}}}\n", false},
		{"block scalar", head + "spec:\n  instance:\n    note: |\n      text\n", false},
		{"wrong kind", "apiVersion: node.eks.aws/v1alpha1\nkind: Pod\n", false},
		{"repeated top-level key", head + "spec:\n  a: b\nspec:\n  c: d\n", false},
		{"second document", head + "---\n" + head, false},
		{"continuation line", head + "spec:\n  a: b\n    c: d\n", false},
		{"bad dedent", head + "spec:\n    a: b\n  c: d\n", false},
		{"tab indentation", head + "spec:\n\ta: b\n", false},
		{"indented first line", "  " + head, false},
		{"mapping value after scalar", head + "spec: x: y\n", false},
		{"key longer than YAML allows", head + strings.Repeat("k", 1025) + ": v\n", false},
		{"long nested key", head + "spec:\n  " + strings.Repeat("k", 1025) + ": v\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := simpleNodeConfig(tc.text); got != tc.want {
				t.Fatalf("simpleNodeConfig(%q) = %v, want %v", tc.text, got, tc.want)
			}
			if tc.want {
				if err := checkNodeConfigWithYAML(tc.text, 0); err != nil {
					t.Fatalf("yaml.v3 refuses what the fast path accepts: %v", err)
				}
			}
		})
	}
}

// FuzzFastMIME checks that whenever fastParseMIME answers, net/mail and mime/multipart give the same
// parts and no error.
func FuzzFastMIME(f *testing.F) {
	f.Add(mimeDoc(ncPart, shellPart))
	f.Add(corpus.UserData)
	f.Add("Content-Type: multipart/mixed; boundary=B\n\n--B\n\necho --B\n--Bx\n--B--\n")
	f.Add("Content-Type: multipart/mixed; boundary=B\n\npre\n--B\nContent-Type: text/plain\n\n--B\n\n#!/bin/sh\n--B--\n")
	f.Fuzz(func(t *testing.T, text string) {
		got, ok := fastParseMIME(text)
		if !ok {
			return
		}
		want, err := parseMIMEWithLibrary(text)
		if err != nil {
			t.Fatalf("fast path accepted %q, library refused it: %v", text, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("fast path and library disagree on %q:\n fast    %#v\n library %#v", text, got, want)
		}
	})
}

// FuzzSimpleNodeConfig checks that whatever simpleNodeConfig accepts, yaml.v3 accepts too.
func FuzzSimpleNodeConfig(f *testing.F) {
	const head = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n"
	f.Add(nodeConfig)
	f.Add(head + "spec:\n  kubelet:\n    flags:\n    - --v=2\n    config:\n      maxPods: 58\n")
	f.Add(head + "spec:\n  kubelet:\n    flags:\n      - \"--max-pods=58\"\n      - '--v=2'\n  instance:\n    localStorage:\n      strategy: RAID0\n")
	f.Add(head + "# c\nspec:\n  a:\n  b: c\n")
	f.Fuzz(func(t *testing.T, text string) {
		if simpleNodeConfig(text) {
			if err := checkNodeConfigWithYAML(text, 0); err != nil {
				t.Fatalf("fast path accepted %q, yaml.v3 refused it: %v", text, err)
			}
		}
	})
}

// TestSimpleNodeConfigAgreesWithYAMLOnGeneratedDocuments builds documents from the lines NodeConfigs
// are made of, at random indentation, and checks yaml.v3 accepts every one the fast path accepts.
// It explores the structures (nesting, dedents, sequences under keys) that byte-level fuzzing
// rarely reaches.
func TestSimpleNodeConfigAgreesWithYAMLOnGeneratedDocuments(t *testing.T) {
	lines := []string{
		"a:", "a: b", "b: c", "c:", "- x", "- --v=2", "-", "- a: b", "a: 'q'", `a: "q"`, "a: ---", "a: b # c",
		"# c", "", "a: b:c", "a: [x]", "a: x]", "a: {", "? a", "a : b", "a:b", "- - x", "a: -x", "a: - x",
		"a: 'x", `a: "x\""`, "a: ...", "...", "---", "a: %x", "a: @x", "a: x@", "a: !x", "a: x!", "a: &x",
		"a: *x", "a: |", "a: >", "a: 1", "a: true", "a: ~", "a.b/c-d: e", "_a: b", "0: x", "a: b, c",
		"a: b,", "a:  b", "- 'x'", `- "x"`, "-  x", "- x:", "a: x:", "a: 'it''s'", "spec:", "d: e",
	}
	head := []string{"apiVersion: node.eks.aws/v1alpha1", "kind: NodeConfig"}
	rng := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 100000 {
		var b strings.Builder
		n := 1 + rng.IntN(6)
		at := rng.IntN(n + 1)
		for i := range n + 1 {
			if i == at {
				b.WriteString(head[0] + "\n" + head[1] + "\n")
			}
			if i == n {
				break
			}
			b.WriteString(strings.Repeat(" ", []int{0, 0, 1, 2, 2, 4}[rng.IntN(6)]))
			b.WriteString(lines[rng.IntN(len(lines))])
			b.WriteString("\n")
		}
		text := b.String()
		if simpleNodeConfig(text) {
			accepted++
			if err := checkNodeConfigWithYAML(text, 0); err != nil {
				t.Fatalf("fast path accepted %q, yaml.v3 refused it: %v", text, err)
			}
		}
	}
	t.Logf("%d of 100000 generated documents took the fast path", accepted)
	if accepted < 1000 {
		t.Fatalf("only %d generated documents took the fast path: the generator no longer exercises it", accepted)
	}
}

// TestFastParseMIMEAgreesWithLibraryOnGeneratedDocuments builds MIME documents part by part, each
// line usually well formed and sometimes replaced by a near miss (padding, folding, CR, a
// boundary-like line), and checks that whenever the fast path answers, the library gives the same
// parts.
func TestFastParseMIMEAgreesWithLibraryOnGeneratedDocuments(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// pick returns good most of the time, else one of the near misses.
	pick := func(good string, near ...string) string {
		if rng.IntN(8) > 0 {
			return good
		}
		return near[rng.IntN(len(near))]
	}
	bodies := []string{"#!/bin/bash", "echo --B", "--Bx", "apiVersion: node.eks.aws/v1alpha1", "", "echo=20hi", "  indented", "x\r"}
	accepted := 0
	for range 100000 {
		var b strings.Builder
		b.WriteString(pick("MIME-Version: 1.0\n", "", " MIME-Version: 1.0\n", "MIME-Version 1.0\n"))
		b.WriteString(pick(`Content-Type: multipart/mixed; boundary="B"`+"\n", "Content-Type: multipart/mixed;\n boundary=B\n",
			"Content-Type: text/plain\n", "content-type: multipart/mixed; boundary=B\n", "Content-Type: multipart/mixed\n"))
		b.WriteString(pick("\n", "X-A: b\n\n", "\r\n"))
		if rng.IntN(3) == 0 {
			b.WriteString(pick("preamble\n", "--Bx\n", "--B--\n", "\n"))
		}
		for range rng.IntN(4) {
			b.WriteString(pick("--B\n", "--B \n", "--B\r\n", "--B-\n"))
			if rng.IntN(2) == 0 {
				b.WriteString(pick("Content-Type: text/x-shellscript\n", "Content-Type: bad/\n", "Content-Transfer-Encoding: quoted-printable\n",
					"Content-Type: application/node.eks.aws\n", " folded\n", "no colon\n", "Content-Transfer-Encoding: base64\n"))
			}
			b.WriteString(pick("\n", ""))
			for range rng.IntN(4) {
				b.WriteString(bodies[rng.IntN(len(bodies))] + "\n")
			}
		}
		b.WriteString(pick("--B--\n", "--B--", "--B--x\n", "--B-- \n", "", "--B--\nepilogue"))
		text := b.String()
		got, ok := fastParseMIME(text)
		if !ok {
			continue
		}
		accepted++
		want, err := parseMIMEWithLibrary(text)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("on %q the fast path gave %#v; the library gave %#v, %v", text, got, want, err)
		}
	}
	t.Logf("%d of 100000 generated documents took the fast path", accepted)
	if accepted < 1000 {
		t.Fatalf("only %d generated documents took the fast path: the generator no longer exercises it", accepted)
	}
}

// FuzzSimpleMediaType checks that whenever simpleMediaType reads a Content-Type, mime.ParseMediaType
// reads the same type and, as its only parameter, the same boundary.
func FuzzSimpleMediaType(f *testing.F) {
	for _, v := range []string{`multipart/mixed; boundary="//"`, "multipart/mixed; boundary=MIMEBOUNDARY", "text/x-shellscript",
		"application/node.eks.aws", ` Text/X-Shellscript `, `multipart/mixed;boundary = "a;b"`, `multipart/mixed; BOUNDARY="a\tb"`,
		`multipart/mixed; boundary=""`, `multipart/mixed; boundary="a\"b"`, "multipart/mixed; boundary=a; charset=x", "text"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		mt, boundary, ok := simpleMediaType(v)
		if !ok {
			return
		}
		wantMT, params, err := mime.ParseMediaType(v)
		if err != nil {
			t.Fatalf("simpleMediaType read %q, mime.ParseMediaType refused it: %v", v, err)
		}
		want := map[string]string{}
		if strings.Contains(v, ";") {
			want["boundary"] = boundary
		}
		if mt != wantMT || !reflect.DeepEqual(params, want) {
			t.Fatalf("%q: simpleMediaType %q %q, mime.ParseMediaType %q %v", v, mt, boundary, wantMT, params)
		}
	})
}

// TestSimpleMediaTypeReadsUserDataForms: the fast reading is taken for the Content-Types userData uses.
func TestSimpleMediaTypeReadsUserDataForms(t *testing.T) {
	for v, want := range map[string][2]string{
		`multipart/mixed; boundary="//"`:           {"multipart/mixed", "//"},
		"multipart/mixed; boundary=MIMEBOUNDARY":   {"multipart/mixed", "MIMEBOUNDARY"},
		"text/x-shellscript; charset=\"us-ascii\"": {"", ""},
		"application/node.eks.aws":                 {"application/node.eks.aws", ""},
		"Text/X-Shellscript":                       {"text/x-shellscript", ""},
	} {
		mt, b, ok := simpleMediaType(v)
		if ok != (want[0] != "") || mt != want[0] || b != want[1] {
			t.Errorf("simpleMediaType(%q) = %q, %q, %v; want %q, %q", v, mt, b, ok, want[0], want[1])
		}
	}
}
