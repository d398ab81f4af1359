package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/karpenter-guard/karpenter-guard/internal/wording"
	"github.com/karpenter-guard/karpenter-guard/manifest"
)

// inputOptions are check's flags that choose what is read besides -f: kustomizations to render and
// paths to leave out of the directories walked.
type inputOptions struct {
	kustomizations []string
	exclude        []string
	// render renders the kustomizations found under -f directories (manifest.Reader.Render).
	render bool
	// allowRemote lets kustomize fetch remote resources (manifest.Reader.AllowRemote).
	allowRemote bool
}

func (o *inputOptions) addFlags(f *pflag.FlagSet) {
	f.StringArrayVarP(&o.kustomizations, "kustomize", "k", nil, "render the kustomization in this directory (as kustomize build) and check the objects at their source files; repeatable")
	f.StringArrayVar(&o.exclude, "exclude", nil, "glob of paths not to read under a -f directory, relative to it or a base name (** for any directories); repeatable")
	f.BoolVar(&o.render, "render-kustomizations", true, "under -f directories, render each kustomization no other one includes and check its objects as kustomize builds them (false: read each file as it is; kustomize patches are never read as whole objects)")
	f.BoolVar(&o.allowRemote, "kustomize-allow-remote", false, "let kustomize fetch remote resources, bases and components (http and git URLs); never on untrusted input such as pull requests")
}

// validate checks the input flags before anything is read.
func (o *inputOptions) validate(files []string, fix bool) error {
	if len(files) == 0 && len(o.kustomizations) == 0 {
		return errors.New("check needs at least one -f PATH (a file, a directory, or - for stdin) or -k DIR (a kustomization)")
	}
	for _, g := range o.exclude {
		if err := manifest.ValidateExclude(g); err != nil {
			return fmt.Errorf("--exclude: %w", err)
		}
	}
	if fix && len(o.kustomizations) > 0 {
		return errors.New("--fix and --diff edit the files given with -f; objects rendered from -k cannot be written back: fix the base or overlay with -f instead")
	}
	return nil
}

// readInputs reads the -f paths and renders the -k kustomizations. facts home snapshots are looked
// for unless findFacts is false (--facts or --live give the facts). When notes is set it says on w
// which snapshots it found. A kustomization that does not build fails the run: its objects are
// unknown, so nothing it would deploy could be judged.
func readInputs(ctx context.Context, reader manifest.Reader, files []string, o *inputOptions, findFacts, notes, fix bool, w io.Writer) (*manifest.Set, error) {
	reader.Exclude = o.exclude
	reader.FactsHome = findFacts
	reader.Kustomize = true
	reader.Render = o.render && !fix
	reader.AllowRemote = o.allowRemote
	set := &manifest.Set{Sources: map[string][]byte{}}
	if len(files) > 0 {
		set = reader.Read(ctx, files)
	}
	for _, dir := range o.kustomizations {
		if err := reader.AddKustomization(ctx, set, dir); err != nil {
			return nil, err // names the directory
		}
	}
	if notes {
		for _, home := range set.FactsHomes {
			fmt.Fprintf(w, "note: facts from %s (for the manifests of %s and below)\n", home, factsHomeDir(home))
		}
		writeReadNotes(w, set)
	}
	return set, nil
}

// writeReadNotes says on w what the reader rendered, what it did not read and why, and what it has
// to tell besides: links out of the tree and special files one by one (they are rare and each may
// matter), kustomize patches in one line.
func writeReadNotes(w io.Writer, set *manifest.Set) {
	if len(set.Rendered) > 0 {
		fmt.Fprintf(w, "note: kustomizations rendered, their objects checked as kustomize builds them, at their source files: %s\n", strings.Join(set.Rendered, ", "))
	}
	patches := 0
	for _, u := range set.Unread {
		if u.Kind == manifest.UnreadPatch {
			patches++
			continue
		}
		fmt.Fprintf(w, "note: %s not read: %s\n", u.Path, u.Reason)
	}
	if patches > 0 {
		what := wording.Plural(patches, "kustomize patch or input", "kustomize patches and inputs") + " not read on its own"
		if patches > 1 {
			what = wording.Plural(patches, "kustomize patch or input", "kustomize patches and inputs") + " not read on their own"
		}
		fmt.Fprintf(w, "note: %s: a patch holds only the fields it changes, and is checked in what its kustomization renders (-o json lists them)\n", what)
	}
	for _, n := range set.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// factsHomeDir names the directory a facts home snapshot describes.
func factsHomeDir(home string) string {
	return scopeDir(home)
}
