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
	info, err := os.Stat(path)
	if err != nil {
		return nil
	}
	dir := path
	if !info.IsDir() {
		dir = filepath.Dir(path)
	}
	if !isRepositoryRoot(dir) && !inRepository(dir) {
		if info.IsDir() {
			return nil // the walk looks in the directory itself
		}
		return existingHome(dir)
	}
	first := info.IsDir() // a directory's own snapshot is the walk's
	for {
		if !first {
			if home := existingHome(dir); home != nil {
				return home
			}
		}
		first = false
		if isRepositoryRoot(dir) {
			return nil
		}
		parent := filepath.Join(dir, "..")
		if same(parent, dir) {
			return nil
		}
		dir = parent
	}
}

// inRepository reports whether a directory is inside a repository: one of its ancestors holds .git.
func inRepository(dir string) bool {
	for {
		if isRepositoryRoot(dir) {
			return true
		}
		parent := filepath.Join(dir, "..")
		if same(parent, dir) {
			return false
		}
		dir = parent
	}
}

func isRepositoryRoot(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil
}

func existingHome(dir string) []string {
	home := filepath.Join(dir, FactsHome, FactsHomeFile)
	if info, err := os.Stat(home); err == nil && info.Mode().IsRegular() {
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
