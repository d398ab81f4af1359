package fix_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/fix"
)

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestWriteFile: the file is replaced whole with the mode it had (exactly, whatever the umask), a new
// file gets the mode given, a symbolic link stays a link to the replaced file, and no temporary file
// is left beside it.
func TestWriteFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		old  string // "" for no file
		mode fs.FileMode
		link bool // path is a symbolic link to the file
	}{
		{name: "0644", old: "kind: EC2NodeClass\n", mode: 0o644},
		{name: "0640", old: "kind: EC2NodeClass\n", mode: 0o640},
		{name: "0600", old: "kind: EC2NodeClass\n", mode: 0o600},
		{name: "0666 not reduced by the umask", old: "kind: EC2NodeClass\n", mode: 0o666},
		{name: "0755", old: "#!/bin/sh\n", mode: 0o755},
		{name: "longer than the new content", old: string(make([]byte, 1<<20)), mode: 0o644},
		{name: "new file", mode: 0o644},
		{name: "symbolic link", old: "kind: NodePool\n", mode: 0o640, link: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "karpenter.yaml")
			path := file
			if tc.old != "" {
				if err := os.WriteFile(file, []byte(tc.old), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(file, tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			if tc.link {
				path = filepath.Join(dir, "link.yaml")
				if err := os.Symlink("karpenter.yaml", path); err != nil {
					t.Fatal(err)
				}
			}
			mode := tc.mode
			if info, err := os.Stat(path); err == nil { // as check --fix does: the file's own mode
				mode = info.Mode().Perm()
			}
			const data = "kind: EC2NodeClass\nspec:\n  instanceProfile: p\n"
			if err := fix.WriteFile(path, []byte(data), mode); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != data {
				t.Errorf("content %q, want %q", got, data)
			}
			info, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != tc.mode {
				t.Errorf("mode %v, want %v", info.Mode().Perm(), tc.mode)
			}
			if tc.link {
				if l, err := os.Lstat(path); err != nil || l.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("the symbolic link was replaced by a file: %v %v", l, err)
				}
			}
			want := []string{"karpenter.yaml"}
			if tc.link {
				want = append(want, "link.yaml")
			}
			if names := entries(t, dir); !slices.Equal(names, want) {
				t.Errorf("directory holds %q, want %q", names, want)
			}
		})
	}
}

// TestWriteFileError: a write that fails leaves what was there and no temporary file.
func TestWriteFileError(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the path to write
	}{
		{"over a directory", func(t *testing.T, dir string) string {
			// The temporary file is written and synced; the rename over a directory fails.
			p := filepath.Join(dir, "manifests")
			if err := os.MkdirAll(filepath.Join(p, "inner"), 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"in a directory that does not exist", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "missing", "karpenter.yaml")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.setup(t, dir)
			before := entries(t, dir)
			if err := fix.WriteFile(path, []byte("kind: NodePool\n"), 0o644); err == nil {
				t.Fatal("WriteFile succeeded")
			}
			if after := entries(t, dir); !slices.Equal(after, before) {
				t.Errorf("directory holds %q after the error, want %q", after, before)
			}
		})
	}
}
