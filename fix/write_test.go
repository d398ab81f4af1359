package fix_test

import (
	"errors"
	"io/fs"
	"maps"
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

// TestReplaceFileModes: the file is replaced whole with the mode it had (exactly, whatever the umask),
// a new file gets the mode given, and no temporary file is left beside it.
func TestReplaceFileModes(t *testing.T) {
	for _, tc := range []struct {
		name string
		old  string // "" for no file
		mode fs.FileMode
	}{
		{name: "0644", old: "kind: EC2NodeClass\n", mode: 0o644},
		{name: "0640", old: "kind: EC2NodeClass\n", mode: 0o640},
		{name: "0600", old: "kind: EC2NodeClass\n", mode: 0o600},
		{name: "0666 not reduced by the umask", old: "kind: EC2NodeClass\n", mode: 0o666},
		{name: "0755", old: "#!/bin/sh\n", mode: 0o755},
		{name: "longer than the new content", old: string(make([]byte, 1<<20)), mode: 0o644},
		{name: "new file", mode: 0o644},
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
			const data = "kind: EC2NodeClass\nspec:\n  instanceProfile: p\n"
			if err := fix.ReplaceFile(path, []byte(data), tc.mode); err != nil {
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
			want := []string{"karpenter.yaml"}
			if names := entries(t, dir); !slices.Equal(names, want) {
				t.Errorf("directory holds %q, want %q", names, want)
			}
		})
	}
}

// TestReplaceFileError: a write that fails leaves what was there and no temporary file.
func TestReplaceFileError(t *testing.T) {
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
			if err := fix.ReplaceFile(path, []byte("kind: NodePool\n"), 0o644); err == nil {
				t.Fatal("ReplaceFile succeeded")
			}
			if after := entries(t, dir); !slices.Equal(after, before) {
				t.Errorf("directory holds %q after the error, want %q", after, before)
			}
		})
	}
}

// TestReplaceFile: a regular file is replaced whole and keeps its mode, a new file gets the mode given,
// and a symbolic link (to a file or to nothing), a directory or a missing directory are refused with
// everything left as it was and no temporary file beside it.
func TestReplaceFile(t *testing.T) {
	const data = "apiVersion: karpenter-guard.io/v1alpha1\nkind: ClusterFacts\n"
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, dir string) string // returns the path to write
		wantErr error                                 // nil: the write succeeds
		mode    fs.FileMode                           // the mode of the written file
	}{
		{name: "existing file keeps its mode", mode: 0o640, setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "cluster-facts.yaml")
			if err := os.WriteFile(p, []byte("old snapshot, longer than the new one\n\n\n\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, 0o640); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{name: "new file", mode: 0o644, setup: func(t *testing.T, dir string) string {
			return filepath.Join(dir, "cluster-facts.yaml")
		}},
		{name: "symbolic link to a file", wantErr: fix.ErrSymlink, setup: func(t *testing.T, dir string) string {
			if err := os.WriteFile(filepath.Join(dir, "elsewhere"), []byte("not yours\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "cluster-facts.yaml")
			if err := os.Symlink("elsewhere", p); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{name: "symbolic link to nothing", wantErr: fix.ErrSymlink, setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "cluster-facts.yaml")
			if err := os.Symlink("created-through-the-link", p); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{name: "directory", wantErr: fix.ErrNotRegular, setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "cluster-facts.yaml")
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{name: "missing directory", wantErr: fs.ErrNotExist, setup: func(t *testing.T, dir string) string {
			return filepath.Join(dir, "missing", "cluster-facts.yaml")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.setup(t, dir)
			before := snapshotDir(t, dir)
			err := fix.ReplaceFile(path, []byte(data), 0o644)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				if after := snapshotDir(t, dir); !maps.Equal(after, before) {
					t.Errorf("directory changed on error:\nbefore %q\nafter  %q", before, after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != data {
				t.Fatalf("content %q (%v), want %q", got, err, data)
			}
			if info, err := os.Lstat(path); err != nil || info.Mode() != tc.mode {
				t.Errorf("mode %v (%v), want a regular file with mode %v", info.Mode(), err, tc.mode)
			}
			if names := entries(t, dir); !slices.Equal(names, []string{"cluster-facts.yaml"}) {
				t.Errorf("directory holds %q, want only the file", names)
			}
		})
	}
}

// snapshotDir maps each name in dir to what it is: a file's content and mode, a link's target.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range entries(t, dir) {
		p := filepath.Join(dir, name)
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[name] = "link to " + target
		case info.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			out[name] = info.Mode().String() + " " + string(b)
		default:
			out[name] = info.Mode().String()
		}
	}
	return out
}
