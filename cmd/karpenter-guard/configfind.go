package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// configHomeFile is the GuardConfig's place beside the snapshot in a repository:
// .karpenter-guard/config.yaml, found the way the snapshot is found above a path given.
const configHomeFile = "config.yaml"

// findConfig returns the GuardConfig that applies to the paths of a run: for each path (a file, a
// directory, or - for standard input, which looks from the working directory), the nearest
// .karpenter-guard/config.yaml in its directory or above it up to the repository root
// (manifest.NearestHomeFile). A run has one configuration: paths that find different files are an
// error naming them; paths that find none take the one the others found. "" when none is found.
func findConfig(paths []string) (string, error) {
	found, by := "", ""
	for _, p := range paths {
		from := p
		if p == manifest.Stdin {
			from = "."
		}
		home := manifest.NearestHomeFile(from, configHomeFile)
		if home == "" || sameFile(home, found) {
			continue
		}
		if found != "" {
			return "", fmt.Errorf("%s finds the GuardConfig %s and %s finds %s: a run takes one configuration; "+
				"check them in separate runs, or name the one to use with --config", by, found, pathName(p), home)
		}
		found, by = home, pathName(p)
	}
	return found, nil
}

// pathName names a path given to check in a message.
func pathName(p string) string {
	if p == manifest.Stdin {
		return "standard input (from the working directory)"
	}
	return p
}

// sameFile reports whether two paths name the same file (by absolute path; "" is no file).
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// catalogFor returns the catalog and the GuardConfig of a command that reads paths: --config when
// given, else the GuardConfig found for the paths (findConfig), named on w, else the defaults.
func (g *globalOptions) catalogFor(paths []string, w io.Writer) (*validators.Catalog, *config.Config, error) {
	if g.configFile != "" {
		return g.catalog()
	}
	home, err := findConfig(paths)
	if err != nil {
		return nil, nil, err
	}
	if home == "" {
		return g.catalog()
	}
	fmt.Fprintf(w, "note: GuardConfig from %s (--config overrides it)\n", home)
	cat, cfg, err := g.catalogFrom(home)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (the GuardConfig of the paths checked: fix it, or name another file with --config)", err)
	}
	return cat, cfg, nil
}

// joinPaths lists the -f paths and -k directories of a run, in order.
func joinPaths(files, kustomizations []string) []string {
	return append(append([]string{}, files...), kustomizations...)
}
