package manifest

import (
	"os"
	"path/filepath"
)

// A repository applied by a GitOps tool cannot hold a ClusterFacts snapshot among its manifests: the
// tool would try to apply it, and no CRD defines the kind. Its home is therefore a hidden directory,
// which the reader never walks for manifests: FactsHome/FactsHomeFile in a directory describes the
// cluster the manifests of that directory and below go to, like a ClusterFacts document in it.
const (
	FactsHome     = ".karpenter-guard"
	FactsHomeFile = "cluster-facts.yaml"
)

// ancestorFactsHomes returns the snapshot that applies to a path given to the reader from above it:
// the nearest FactsHome snapshot in the directory of a file given, or in a parent directory of a
// directory given, looking no higher than the repository root (the first directory, from the path up,
// that holds .git). Outside a repository only the path's own directory is looked at, so that a snapshot
// in a home directory or /tmp is never picked up by accident. A directory's own snapshot, and those
// below it, the walk finds.
func ancestorFactsHomes(path string) []string {
	if path == Stdin {
		return nil
	}
	for _, dir := range ancestorDirs(path) {
		if home := existingHome(dir); home != nil {
			return home
		}
	}
	return nil
}

// ancestorDirs returns the directories above a path given to the reader, nearest first, where what
// applies to the path from above it is looked for: for a file, its directory and that directory's
// parents; for a directory, its parents; up to the repository root (the first directory, from the path
// up, that holds .git). Outside a repository: a file's own directory only, nothing for a directory, so
// that a file in a home directory or /tmp is never picked up by accident.
func ancestorDirs(p string) []string {
	info, err := os.Stat(p)
	if err != nil {
		return nil
	}
	if !info.IsDir() {
		dirs, _ := upToRepository(filepath.Dir(p))
		return dirs
	}
	if isRepositoryRoot(p) {
		return nil
	}
	if dirs, ok := upToRepository(filepath.Join(p, "..")); ok {
		return dirs
	}
	return nil
}

// upToRepository returns dir and its parents up to the repository root that holds it, nearest first,
// and true; outside a repository, dir alone and false.
func upToRepository(dir string) ([]string, bool) {
	var dirs []string
	for d := dir; ; {
		dirs = append(dirs, d)
		if isRepositoryRoot(d) {
			return dirs, true
		}
		parent := filepath.Join(d, "..")
		if same(parent, d) {
			return []string{dir}, false
		}
		d = parent
	}
}

func isRepositoryRoot(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil
}

func existingHome(dir string) []string {
	home := filepath.Join(dir, FactsHome, FactsHomeFile)
	if regularInside(home) {
		return []string{home}
	}
	return nil
}

// same reports whether two paths name the same directory (the filesystem root is its own parent).
func same(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
