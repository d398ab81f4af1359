//go:build unix

package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWalkStaysInTheTree: a directory walk reads a symbolic link only when it leads to a regular file
// inside the directory given; a link out of it named like a manifest (a pull request's way to make CI
// read the runner's files), a link to a directory inside, a FIFO and a link to /dev/stdin are listed as
// not read with the reason, and none of them blocks the walk. Other links out of the tree are ignored
// alike, whether their target exists or not, is a file or a directory: nothing tells what is outside.
func TestWalkStaysInTheTree(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.yaml": named("NodePool", "from-outside")})
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{
		"ok.yaml":          named("NodePool", "ok"),
		"shared/pool.yaml": named("NodePool", "shared"),
		"sub/dir/x.yaml":   named("NodePool", "in-linked-dir"),
	})
	links := map[string]string{
		"out.yaml":        filepath.Join(outside, "secret.yaml"),
		"out-rel.yaml":    "../" + filepath.Base(outside) + "/secret.yaml",
		"inside.yaml":     "shared/pool.yaml",
		"linked-dir":      "sub/dir",
		"outside-dir":     outside,
		"stdin.yaml":      "/dev/stdin",
		"gone.yaml":       filepath.Join(outside, "no-such-key"),
		"not-a-manifest":  filepath.Join(outside, "secret.yaml"),
		"probe-missing":   filepath.Join(outside, "no-such-file"),
		"shared/up.yml":   "../ok.yaml",
		"shared/loop.yml": "loop.yml",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(repo, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(repo, "pipe.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	// out-rel.yaml resolves relative to repo's parent only when outside is its sibling.
	if filepath.Dir(outside) != filepath.Dir(repo) {
		t.Fatalf("temporary directories %s and %s are not siblings", outside, repo)
	}

	set := readWithin(t, Reader{}, repo)
	want := []string{"inside.yaml:1 shared", "ok.yaml:1 ok", "shared/pool.yaml:1 shared", "shared/up.yml:1 ok", "sub/dir/x.yaml:1 in-linked-dir"}
	if got := objectNames(t, repo, set); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	unread := map[string]string{}
	for _, u := range set.Unread {
		rel, _ := filepath.Rel(repo, u.Path)
		unread[filepath.ToSlash(rel)] = u.Kind + ": " + u.Reason
	}
	wantUnread := map[string]string{
		"out.yaml":     "symlink: symbolic link to " + filepath.Join(outside, "secret.yaml") + ", outside " + repo + ": not followed",
		"out-rel.yaml": "symlink: symbolic link to ../" + filepath.Base(outside) + "/secret.yaml, outside " + repo + ": not followed",
		"linked-dir":   "symlink: symbolic link to a directory: not followed (give the directory itself with -f)",
		"stdin.yaml":   "", // resolves outside the tree (/proc/...) or to a device: either way not read
		"pipe.yaml":    "special: a FIFO, not a regular file: not read",
		// A link out of the tree to nothing is not followed either: whether it exists is not asked.
		"gone.yaml": "symlink: symbolic link to " + filepath.Join(outside, "no-such-key") + ", outside " + repo + ": not followed",
	}
	for path, reason := range wantUnread {
		got, ok := unread[path]
		switch {
		case !ok:
			t.Errorf("%s is not listed as not read (unread: %v)", path, unread)
		case reason != "" && got != reason:
			t.Errorf("%s not read because %q, want %q", path, got, reason)
		}
		delete(unread, path)
	}
	for path, reason := range unread {
		t.Errorf("%s also not read: %s", path, reason)
	}
	var errs []string
	for _, e := range set.Errors {
		rel, _ := filepath.Rel(repo, e.File)
		errs = append(errs, filepath.ToSlash(rel)+": "+e.Message)
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "shared/loop.yml: cannot read: symbolic link to loop.yml, which does not exist") {
		t.Errorf("errors = %q, want the link loop only", errs)
	}
}

// TestNamedSpecialFiles: a FIFO or /dev/stdin named with -f is refused without being opened (opening a
// FIFO blocks until someone writes); standard input is read only as "-". A named link that leads out of
// its repository is refused; one that stays in it is read.
func TestNamedSpecialFiles(t *testing.T) {
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.yaml": named("NodePool", "outside")})
	writeFiles(t, repo, map[string]string{"manifests/pool.yaml": named("NodePool", "pool")})
	for name, target := range map[string]string{
		"manifests/out.yaml": filepath.Join(outside, "secret.yaml"),
		"manifests/in.yaml":  "pool.yaml",
		"manifests/up.yaml":  "../manifests/pool.yaml",
	} {
		if err := os.Symlink(target, filepath.Join(repo, name)); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(repo, "pipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want string // error message prefix; "" reads the object
	}{
		{fifo, "cannot read: a FIFO, not a regular file: only files, directories and - (standard input) are read"},
		{"/dev/stdin", "cannot read: a"},
		{"/dev/zero", "cannot read: a character device, not a regular file"},
		{filepath.Join(repo, "manifests/out.yaml"), "symbolic link to " + filepath.Join(outside, "secret.yaml") + ", outside the repository ("},
		{filepath.Join(repo, "manifests/in.yaml"), ""},
		{filepath.Join(repo, "manifests/up.yaml"), ""},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			set := readWithin(t, Reader{}, tc.path)
			if tc.want == "" {
				if len(set.Errors) != 0 || len(set.Objects) != 1 {
					t.Fatalf("errors %v, %d objects: want the object", set.Errors, len(set.Objects))
				}
				return
			}
			if len(set.Errors) != 1 || !strings.HasPrefix(set.Errors[0].Message, tc.want) {
				t.Fatalf("errors = %v, want one starting %q", set.Errors, tc.want)
			}
			if len(set.Objects) != 0 {
				t.Errorf("read %d objects", len(set.Objects))
			}
		})
	}
}

// TestWalkSymlinkedRoot: a directory given as a symbolic link is walked where it leads, and the tree
// is the one it leads to.
func TestWalkSymlinkedRoot(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"real/a.yaml": named("NodePool", "a")})
	link := filepath.Join(dir, "link")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	set := readWithin(t, Reader{}, link)
	if len(set.Errors) != 0 || len(set.Objects) != 1 || set.Objects[0].File != filepath.Join(link, "a.yaml") {
		t.Fatalf("errors %v, objects %v: want link/a.yaml", set.Errors, objectNames(t, dir, set))
	}
}

// TestWalkRootItself: the directory given is looked at like every directory below it: its own facts
// home is found, and a chart given as the directory is skipped as a chart.
func TestWalkRootItself(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"repo/.karpenter-guard/cluster-facts.yaml": "apiVersion: karpenter-guard.io/v1alpha1\nkind: ClusterFacts\n",
		"repo/pool.yaml":            named("NodePool", "pool"),
		"chart/Chart.yaml":          "apiVersion: v2\nname: app\nversion: 0.1.0\n",
		"chart/templates/pool.yaml": "{{ .Values.pool }}\n",
	})
	set := readWithin(t, Reader{FactsHome: true}, filepath.Join(dir, "repo"), filepath.Join(dir, "chart"))
	if want := filepath.Join(dir, "repo", ".karpenter-guard", "cluster-facts.yaml"); len(set.FactsHomes) != 1 || set.FactsHomes[0] != want {
		t.Errorf("facts homes %v, want %s", set.FactsHomes, want)
	}
	if len(set.Charts) != 1 || set.Charts[0] != filepath.Join(dir, "chart") {
		t.Errorf("charts %v, want the chart given", set.Charts)
	}
	if len(set.Errors) != 0 {
		t.Errorf("errors %v", set.Errors)
	}
}

// TestFilesFoundFromAboveStayInTheRepository: a directory named with -f that leads through a link out
// of its repository is refused, and the files check finds by itself (the snapshot and the GuardConfig
// in .karpenter-guard, the ignore file) are never read through a link out of it: with them linked to a
// file outside, the run neither reads nor prints it.
func TestFilesFoundFromAboveStayInTheRepository(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{
		"clusters/pool.yaml": named("NodePool", "outside"),
		"secret.yaml":        "apiVersion: karpenter-guard.io/v1alpha1\nkind: ClusterFacts\n",
	})
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{".git/HEAD": "x\n", "manifests/pool.yaml": named("NodePool", "pool")})
	for name, target := range map[string]string{
		"clusters":                          filepath.Join(outside, "clusters"),
		".karpenter-guard":                  "", // made below
		"manifests/.karpenter-guard-ignore": filepath.Join(outside, "secret.yaml"),
	} {
		if target == "" {
			continue
		}
		if err := os.Symlink(target, filepath.Join(repo, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(repo, ".karpenter-guard"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FactsHomeFile, "config.yaml"} {
		if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(repo, ".karpenter-guard", name)); err != nil {
			t.Fatal(err)
		}
	}

	set := readWithin(t, Reader{FactsHome: true}, filepath.Join(repo, "clusters"))
	if len(set.Objects) != 0 || len(set.Errors) != 1 || !strings.Contains(set.Errors[0].Message, ", outside the repository (") {
		t.Errorf("linked directory: %d objects, errors %v: want it refused", len(set.Objects), set.Errors)
	}
	set = readWithin(t, Reader{FactsHome: true}, filepath.Join(repo, "manifests"))
	if len(set.FactsHomes) != 0 {
		t.Errorf("facts homes %v read through a link out of the repository", set.FactsHomes)
	}
	if len(set.Errors) != 1 || !strings.Contains(set.Errors[0].Message, "symbolic link out of the repository") {
		t.Errorf("errors %v: want the linked ignore file refused", set.Errors)
	}
	if home := NearestHomeFile(filepath.Join(repo, "manifests"), "config.yaml"); home != "" {
		t.Errorf("GuardConfig %s found through a link out of the repository", home)
	}
}
