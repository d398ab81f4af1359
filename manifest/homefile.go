package manifest

import (
	"os"
	"path/filepath"
)

// NearestHomeFile returns the nearest FactsHome/name that applies to path: in path's own directory (the
// directory itself when path is one), else in its parent directories, looking no higher than the
// repository root (the first directory, from path up, that holds .git). Outside a repository only the
// path's own directory is looked at, so that a file in a home directory or /tmp is never picked up by
// accident. It returns "" when there is none. Files that hold one setting for a whole run (the
// GuardConfig) are found this way; a ClusterFacts snapshot is found per directory by the reader.
func NearestHomeFile(path, name string) string {
	info, err := os.Stat(path)
	if err != nil {
		return ""
	}
	var dirs []string
	if info.IsDir() {
		dirs = append(dirs, path)
	}
	for _, dir := range append(dirs, ancestorDirs(path)...) {
		if home := filepath.Join(dir, FactsHome, name); regularInside(home) {
			return home
		}
	}
	return ""
}
