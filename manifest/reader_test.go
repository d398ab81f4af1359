package manifest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// writeFiles creates files (slash-separated paths relative to dir) with their content.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func named(kind, name string) string {
	switch kind {
	case "NodePool":
		return "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: " + name + "\n"
	case "EC2NodeClass":
		return "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: " + name + "\n"
	}
	return "apiVersion: v1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n"
}

// objectNames lists "file:line name" for every object read, with file relative to dir.
func objectNames(t *testing.T, dir string, set *Set) []string {
	t.Helper()
	var s []string
	for _, o := range set.Objects {
		rel, err := filepath.Rel(dir, o.File)
		if err != nil {
			t.Fatal(err)
		}
		s = append(s, filepath.ToSlash(rel)+":"+strconv.Itoa(o.Ref().Line)+" "+o.Name)
	}
	return s
}

func TestReadDirectory(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"b.yaml":                  named("NodePool", "b") + "---\n" + named("EC2NodeClass", "b2"),
		"a.yml":                   named("NodePool", "a"),
		"c.json":                  `{"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "c"}}`,
		"sub/d.YAML":              named("NodePool", "d"),
		"sub/deeper/e.yaml":       "# comment\n" + named("NodePool", "e"),
		"sub/deeper/f.Yml":        named("Service", "ignored-f"),
		"z/.hidden-file.yaml":     named("NodePool", "hidden-file"),
		".git/config.yaml":        named("NodePool", "in-git"),
		"sub/.cache/g.yaml":       named("NodePool", "in-cache"),
		"notes.txt":               named("NodePool", "txt"),
		"README.md":               "# readme\n",
		"sub/kustomization.yaml~": named("NodePool", "backup"),
		"yaml":                    named("NodePool", "no-ext"),
	})
	set := Reader{}.Read(context.Background(), []string{dir})
	if len(set.Errors) != 0 {
		t.Fatalf("errors: %v", set.Errors)
	}
	want := []string{"a.yml:1 a", "b.yaml:1 b", "b.yaml:6 b2", "c.json:1 c", "sub/d.YAML:1 d", "sub/deeper/e.yaml:2 e", "z/.hidden-file.yaml:1 hidden-file"}
	if got := objectNames(t, dir, set); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("objects in this order:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if set.Ignored != 1 {
		t.Errorf("ignored = %d, want 1", set.Ignored)
	}
	var sources []string
	for p := range set.Sources {
		rel, _ := filepath.Rel(dir, p)
		sources = append(sources, filepath.ToSlash(rel))
	}
	sort.Strings(sources)
	wantSources := "a.yml b.yaml c.json sub/d.YAML sub/deeper/e.yaml sub/deeper/f.Yml z/.hidden-file.yaml"
	if strings.Join(sources, " ") != wantSources {
		t.Errorf("sources = %v, want %s", sources, wantSources)
	}
	if got := string(set.Sources[filepath.Join(dir, "a.yml")]); got != named("NodePool", "a") {
		t.Errorf("source of a.yml = %q", got)
	}
}

func TestReadPaths(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"manifest.txt":         named("NodePool", "txt"),
		"noext":                named("NodePool", "noext"),
		".hidden/h.yaml":       named("NodePool", "h"),
		"only-hidden/.x/a.yml": named("NodePool", "x"),
		"only-other/a.txt":     named("NodePool", "x"),
		"empty/.keep":          "",
		"ok.yaml":              named("NodePool", "ok"),
		"broken.yaml":          named("NodePool", "good") + "---\nkind: [\n---\n" + named("EC2NodeClass", "after"),
	})
	if err := os.Mkdir(filepath.Join(dir, "really-empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"dangling/real.yaml": named("NodePool", "real")})
	if err := os.Symlink("gone.yaml", filepath.Join(dir, "dangling", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return filepath.Join(dir, filepath.FromSlash(name)) }

	for _, tc := range []struct {
		name    string
		paths   []string
		objects []string
		errors  []string // "path-relative-to-dir:line: message substring"
	}{
		{"file with another extension named explicitly", []string{p("manifest.txt"), p("noext")}, []string{"manifest.txt:1 txt", "noext:1 noext"}, nil},
		{"hidden directory named explicitly", []string{p(".hidden")}, []string{".hidden/h.yaml:1 h"}, nil},
		{"missing path, then the others", []string{p("missing.yaml"), p("ok.yaml")}, []string{"ok.yaml:1 ok"},
			[]string{"missing.yaml:0: cannot read: no such file or directory"}},
		{"missing directory", []string{p("nope/")}, nil, []string{"nope:0: cannot read: no such file or directory"}},
		{"directory with only hidden manifests", []string{p("only-hidden"), p("ok.yaml")}, []string{"ok.yaml:1 ok"},
			[]string{"only-hidden:0: directory holds no .yaml, .yml or .json file"}},
		{"directory with other files", []string{p("only-other")}, nil, []string{"only-other:0: directory holds no .yaml, .yml or .json file"}},
		{"directory with a hidden file only", []string{p("empty")}, nil, []string{"empty:0: directory holds no .yaml"}},
		{"empty directory", []string{p("really-empty")}, nil, []string{"really-empty:0: directory holds no .yaml"}},
		{"dangling symlink in a directory", []string{p("dangling")}, []string{"dangling/real.yaml:1 real"},
			[]string{"dangling/link.yaml:0: cannot read: symbolic link to gone.yaml, which does not exist"}},
		{"broken document in a file", []string{p("broken.yaml")}, []string{"broken.yaml:1 good", "broken.yaml:8 after"},
			[]string{"broken.yaml:6: invalid YAML"}},
		{"same file twice", []string{p("ok.yaml"), p("ok.yaml")}, []string{"ok.yaml:1 ok", "ok.yaml:1 ok"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := Reader{}.Read(context.Background(), tc.paths)
			if got := objectNames(t, dir, set); strings.Join(got, ", ") != strings.Join(tc.objects, ", ") {
				t.Errorf("objects = %v, want %v", got, tc.objects)
			}
			if len(set.Errors) != len(tc.errors) {
				t.Fatalf("errors = %v, want %d", set.Errors, len(tc.errors))
			}
			for i, e := range set.Errors {
				rel, err := filepath.Rel(dir, e.File)
				if err != nil {
					t.Fatal(err)
				}
				if got := filepath.ToSlash(rel) + ":" + strconv.Itoa(e.Line) + ": " + e.Message; !strings.HasPrefix(got, tc.errors[i]) {
					t.Errorf("error %d = %q, want %q...", i, got, tc.errors[i])
				}
			}
		})
	}
}

func TestReadSizeLimit(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("# padding\n", 200) // 2000 bytes
	exact := named("NodePool", "exact")
	exact += strings.Repeat("#", 1024-len(exact))
	writeFiles(t, dir, map[string]string{"big.yaml": big, "exact.yaml": exact, "small.yaml": named("NodePool", "small")})
	for _, tc := range []struct {
		name    string
		max     int64
		limit   string // in the message, "" when big.yaml is read
		objects int
	}{
		{"1 KiB", 1024, "larger than the 1 KiB limit (--max-file-size)", 2},
		{"in bytes", 1000, "larger than the 1000 bytes limit", 1},
		{"2 MiB", 2 << 20, "", 2},
		{"default", 0, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := Reader{MaxFileSize: tc.max}.Read(context.Background(), []string{dir})
			if len(set.Objects) != tc.objects {
				t.Errorf("objects = %v, want %d", refs(set.Objects), tc.objects)
			}
			var sizeErrs []Error
			for _, e := range set.Errors {
				if strings.Contains(e.Message, "limit") {
					sizeErrs = append(sizeErrs, e)
				}
			}
			if tc.limit == "" {
				// big.yaml is read: comments only.
				if len(set.Errors) != 1 || !strings.Contains(set.Errors[0].Message, "file is empty") {
					t.Errorf("errors = %v, want only big.yaml empty", set.Errors)
				}
				return
			}
			if len(sizeErrs) == 0 || sizeErrs[0].File != filepath.Join(dir, "big.yaml") || sizeErrs[0].Line != 0 ||
				!strings.Contains(sizeErrs[0].Message, tc.limit) || !strings.Contains(sizeErrs[0].Message, "split it") {
				t.Errorf("errors = %v, want big.yaml: %s", set.Errors, tc.limit)
			}
			if _, ok := set.Sources[filepath.Join(dir, "big.yaml")]; ok {
				t.Error("an oversized file is kept in Sources")
			}
		})
	}
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{
		1:                  "1 bytes",
		1000:               "1000 bytes",
		1024:               "1 KiB",
		1536:               "1536 bytes",
		3 << 10:            "3 KiB",
		1 << 20:            "1 MiB",
		(1 << 20) + 1024:   "1025 KiB",
		DefaultMaxFileSize: "8 MiB",
	} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestReadStdin(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.yaml": named("NodePool", "file")})
	t.Run("documents", func(t *testing.T) {
		in := named("NodePool", "in") + "---\nbroken: [\n---\n" + named("Deployment", "d")
		set := Reader{Stdin: strings.NewReader(in)}.Read(context.Background(), []string{Stdin, filepath.Join(dir, "f.yaml")})
		if len(set.Objects) != 2 || set.Objects[0].File != "<stdin>" || set.Objects[0].Name != "in" || set.Objects[1].Name != "file" {
			t.Errorf("objects = %v", refs(set.Objects))
		}
		if len(set.Errors) != 1 || set.Errors[0].File != "<stdin>" || set.Errors[0].Line != 6 {
			t.Errorf("errors = %v, want <stdin>:6", set.Errors)
		}
		if string(set.Sources["<stdin>"]) != in || set.Ignored != 1 {
			t.Errorf("sources %q, ignored %d", set.Sources["<stdin>"], set.Ignored)
		}
	})
	t.Run("JSON", func(t *testing.T) {
		set := Reader{Stdin: strings.NewReader("{\n\t\"apiVersion\": \"karpenter.sh/v1\",\n\t\"kind\": \"NodePool\",\n\t\"metadata\": {\"name\": \"j\"}\n}\n")}.Read(context.Background(), []string{"-"})
		if len(set.Errors) != 0 || len(set.Objects) != 1 || !set.Objects[0].JSON {
			t.Errorf("objects %v, errors %v", refs(set.Objects), set.Errors)
		}
	})
	for _, tc := range []struct {
		name  string
		r     Reader
		error string
	}{
		{"no reader", Reader{}, "no standard input"},
		{"empty", Reader{Stdin: strings.NewReader("")}, "file is empty"},
		{"too large", Reader{Stdin: strings.NewReader(strings.Repeat("a", 2048)), MaxFileSize: 2047}, "larger than the 2047 bytes limit"},
		{"read error", Reader{Stdin: iotest.ErrReader(errors.New("broken pipe"))}, "cannot read: broken pipe"},
		{"binary", Reader{Stdin: strings.NewReader("a\n\x00")}, "binary data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := tc.r.Read(context.Background(), []string{Stdin, filepath.Join(dir, "f.yaml")})
			if len(set.Errors) != 1 || set.Errors[0].File != "<stdin>" || !strings.Contains(set.Errors[0].Message, tc.error) {
				t.Errorf("errors = %v, want <stdin>: %s", set.Errors, tc.error)
			}
			if len(set.Objects) != 1 || set.Objects[0].Name != "file" {
				t.Errorf("the file after stdin was not read: %v", refs(set.Objects))
			}
		})
	}
}

func TestReadCancelled(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.yaml": named("NodePool", "a")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	set := Reader{}.Read(ctx, []string{filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")})
	if len(set.Objects) != 0 || len(set.Errors) != 1 || set.Errors[0].File != filepath.Join(dir, "a.yaml") ||
		!strings.Contains(set.Errors[0].Message, "context canceled") {
		t.Errorf("objects %v, errors %v; want only a cancellation error", refs(set.Objects), set.Errors)
	}
}

func TestSetAdd(t *testing.T) {
	var s Set // zero value: Sources is made on first use
	s.Add(Source{Path: "a.yaml", Data: []byte(named("NodePool", "a") + "---\n" + named("Service", "s"))})
	s.Add(Source{Path: "b.yaml", Data: []byte("kind: [\n")})
	s.Add(Source{Path: "c.yaml", Data: []byte(named("EC2NodeClass", "c"))})
	if len(s.Objects) != 2 || s.Objects[0].File != "a.yaml" || s.Objects[1].File != "c.yaml" || s.Ignored != 1 {
		t.Errorf("objects %v, ignored %d", refs(s.Objects), s.Ignored)
	}
	if len(s.Errors) != 1 || s.Errors[0].File != "b.yaml" || s.Errors[0].Line != 1 {
		t.Errorf("errors %v", s.Errors)
	}
	if len(s.Sources) != 3 || string(s.Sources["b.yaml"]) != "kind: [\n" {
		t.Errorf("sources %v", s.Sources)
	}
}

// readWithin reads paths, failing the test if reading blocks (a FIFO or a terminal opened).
func readWithin(t *testing.T, r Reader, paths ...string) *Set {
	t.Helper()
	done := make(chan *Set, 1)
	go func() { done <- r.Read(context.Background(), paths) }()
	select {
	case set := <-done:
		return set
	case <-time.After(20 * time.Second):
		t.Fatal("reading blocked: a FIFO or a device was opened")
		return nil
	}
}
