package manifest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"

	"github.com/karpenter-guard/karpenter-guard/objects"
)

// A GitOps repository holds kustomizations beside plain manifests. Read file by file, it is judged
// wrongly: a patch holds only the fields it changes (a whole-object check refuses it for the fields it
// lacks), and a base is not what the cluster gets. With Reader.Kustomize, the reader reads the
// repository as kustomize and a GitOps tool do.

// kustomization is what the reader needs of one kustomization file: the files and directories it uses,
// and how.
type kustomization struct {
	// dir is the directory holding it, and file the kustomization file.
	dir, file string
	// component is a kind: Component, which only a kustomization can include.
	component bool
	// resources are the local files of its resources (and bases); includes the local directories of
	// resources, bases and components, and of generators, transformers and validators given as
	// kustomizations.
	resources, includes []string
	// inputs are the local files it reads other than as resources: patches, replacements, generator
	// sources, configurations, CRD schemas, OpenAPI schemas, plugin configurations, Helm values.
	inputs []string
	// err is why the file cannot be read as a kustomization: kustomize will say the same.
	err error
}

// readKustomization reads the kustomization in dir (kustomize's own type and decoder, which knows
// the deprecated spellings), with paths joined to dir. ok is false when dir holds none.
func (r Reader) readKustomization(dir string) (k kustomization, ok bool) {
	file := findKustomizationFile(dir)
	if file == "" {
		return kustomization{}, false
	}
	k = kustomization{dir: dir, file: file}
	data, err := r.readFile(file)
	if err != nil {
		k.err = err
		return k, true
	}
	var kt types.Kustomization
	if err := kt.Unmarshal(data); err != nil {
		k.err = err
		return k, true
	}
	kt.FixKustomization()
	k.component = kt.Kind == types.ComponentKind
	local := func(p string) (string, bool) {
		if p == "" || strings.Contains(p, "\n") || isRemote(p) || filepath.IsAbs(p) {
			return "", false
		}
		return filepath.Join(dir, filepath.FromSlash(p)), true
	}
	input := func(p string) {
		if l, ok := local(p); ok {
			k.inputs = append(k.inputs, l)
		}
	}
	for _, res := range kt.Resources {
		l, ok := local(res)
		if !ok {
			continue
		}
		if isDir(l) {
			k.includes = append(k.includes, l)
		} else {
			k.resources = append(k.resources, l)
		}
	}
	for _, c := range kt.Components {
		if l, ok := local(c); ok {
			k.includes = append(k.includes, l)
		}
	}
	for _, list := range [][]string{kt.Generators, kt.Transformers, kt.Validators} {
		for _, g := range list {
			l, ok := local(g)
			switch {
			case !ok:
			case isDir(l):
				k.includes = append(k.includes, l)
			default:
				k.inputs = append(k.inputs, l)
			}
		}
	}
	for _, p := range kt.Patches {
		input(p.Path)
	}
	for _, p := range kt.PatchesJson6902 {
		input(p.Path)
	}
	for _, p := range kt.PatchesStrategicMerge {
		input(string(p))
	}
	for _, rf := range kt.Replacements {
		input(rf.Path)
	}
	for _, list := range [][]string{kt.Crds, kt.Configurations} {
		for _, p := range list {
			input(p)
		}
	}
	input(kt.OpenAPI["path"])
	sources := func(s types.KvPairSources) {
		for _, f := range s.FileSources {
			if _, path, found := strings.Cut(f, "="); found {
				f = path
			}
			input(f)
		}
		for _, e := range s.EnvSources {
			input(e)
		}
	}
	for _, g := range kt.ConfigMapGenerator {
		sources(g.KvPairSources)
	}
	for _, g := range kt.SecretGenerator {
		sources(g.KvPairSources)
	}
	for _, h := range kt.HelmCharts {
		input(h.ValuesFile)
		for _, v := range h.AdditionalValuesFiles {
			input(v)
		}
	}
	return k, true
}

// findKustomizationFile returns the kustomization file of dir, "" when it has none.
func findKustomizationFile(dir string) string {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, name)
		if info, err := os.Lstat(p); err == nil && info.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// isKustomizationName reports whether a file name is one kustomize reads as a kustomization.
func isKustomizationName(name string) bool {
	return slices.Contains(konfig.RecognizedKustomizationFileNames(), name)
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// throughKustomizations applies Reader.Kustomize to the path p given to Read, walked in w: it
// renders the walked directory's top kustomizations into set and returns the files left to read one by
// one. The kustomizations of p's ancestors, up to the repository root, are read too, for the patches
// they take from p.
func (r Reader) throughKustomizations(ctx context.Context, set *Set, p string, w *walk) []string {
	var all []kustomization
	seen := map[string]bool{}
	add := func(dir string) {
		clean := filepath.Clean(dir)
		if seen[clean] {
			return
		}
		seen[clean] = true
		if k, ok := r.readKustomization(dir); ok {
			all = append(all, k)
		}
	}
	for _, dir := range w.kustomizations {
		add(dir)
	}
	for _, dir := range ancestorDirs(p) {
		add(dir)
	}

	// Files used as patches or inputs are never whole objects.
	inputs := map[string]kustomization{} // file → the kustomization that uses it
	for _, k := range all {
		for _, in := range k.inputs {
			if _, dup := inputs[filepath.Clean(in)]; !dup {
				inputs[filepath.Clean(in)] = k
			}
		}
	}
	covered := map[string]bool{}
	if r.Render && w.root != "" {
		walked := all[:0:0]
		for _, k := range all {
			if slices.Contains(w.kustomizations, k.dir) {
				walked = append(walked, k)
			}
		}
		for _, k := range topKustomizations(walked) {
			r.renderInto(ctx, set, k, walked, w, covered)
		}
	}
	if k, ok := inputs[filepath.Clean(p)]; ok && r.Render && w.root == "" && !slices.Contains(set.Rendered, k.dir) {
		// A patch named on its own (pre-commit names the files changed): what it changes is checked
		// in what the kustomization that uses it renders.
		r.renderInto(ctx, set, k, all, w, covered)
	}
	var files []string
	for _, f := range w.files {
		clean := filepath.Clean(f)
		if by, ok := inputs[clean]; ok {
			set.Unread = append(set.Unread, Unread{Path: f, Kind: UnreadPatch,
				Reason: fmt.Sprintf("used by %s as a patch or input, not a whole object: not read on its own", by.file)})
			continue
		}
		if covered[clean] {
			continue
		}
		files = append(files, f)
	}
	return files
}

// topKustomizations returns the kustomizations that no other one includes, components left out: the
// ones a GitOps tool or a person builds.
func topKustomizations(all []kustomization) []kustomization {
	included := map[string]bool{}
	for _, k := range all {
		for _, inc := range k.includes {
			included[filepath.Clean(inc)] = true
		}
	}
	var top []kustomization
	for _, k := range all {
		if !k.component && !included[filepath.Clean(k.dir)] {
			top = append(top, k)
		}
	}
	return top
}

// renderInto renders the top kustomization k into set. Its objects come through the rendering, at
// their source files, and the files they come from (with every resource file of the kustomizations it
// includes) are marked covered, so that they are not read again on their own. Objects from a path the
// walk excludes are dropped. A kustomization that does not build leaves nothing covered and a note.
func (r Reader) renderInto(ctx context.Context, set *Set, k kustomization, all []kustomization, w *walk, covered map[string]bool) {
	if k.err != nil {
		set.Notes = append(set.Notes, fmt.Sprintf("%s is not a kustomization kustomize can read (%v): the files of %s are checked one by one", k.file, k.err, k.dir))
		return
	}
	rendered := &Set{Sources: map[string][]byte{}, FactsHomes: slices.Clone(set.FactsHomes)}
	tree := ""
	if w.root != "" {
		tree = w.real
	}
	sources, err := r.addKustomization(ctx, rendered, k.dir, tree)
	var ke *KustomizeError
	var remote *RemoteError
	switch {
	case err == nil:
	case errors.As(err, &remote):
		set.Notes = append(set.Notes, fmt.Sprintf("%s not rendered: %s names the remote resource %s, which check does not fetch without --kustomize-allow-remote; "+
			"the files of %s are checked one by one, and its patches not at all (they are checked only in what kustomize renders)", k.dir, remote.File, remote.URL, k.dir))
		return
	case errors.As(err, &ke) && ke.Refused:
		// What check refuses to read (YAML over the budget, a file out of the repository, too many
		// loads) is an input error, as it is for the files check reads itself.
		var at Error
		if errors.As(ke.Err, &at) {
			set.Errors = append(set.Errors, at)
		} else {
			set.Errors = append(set.Errors, Error{File: k.file, Message: "kustomize build " + k.dir + ": " + ke.Err.Error()})
		}
		return
	default:
		set.Notes = append(set.Notes, fmt.Sprintf("%s not rendered (%s): the files of %s are checked one by one, and its patches not at all (they are checked only in what kustomize renders)", k.dir, kustomizeReason(err), k.dir))
		return
	}
	set.Rendered = append(set.Rendered, k.dir)
	if set.buildSources == nil {
		set.buildSources = map[string][]string{}
	}
	for b, files := range rendered.buildSources {
		set.buildSources[b] = files
	}
	for _, f := range sources {
		covered[filepath.Clean(f)] = true
	}
	byDir := map[string]kustomization{}
	for _, o := range all {
		byDir[filepath.Clean(o.dir)] = o
	}
	var mark func(k kustomization, seen map[string]bool)
	mark = func(k kustomization, seen map[string]bool) {
		if seen[k.dir] {
			return
		}
		seen[k.dir] = true
		for _, res := range k.resources {
			covered[filepath.Clean(res)] = true
		}
		for _, inc := range k.includes {
			if o, ok := byDir[filepath.Clean(inc)]; ok {
				mark(o, seen)
			}
		}
	}
	mark(k, map[string]bool{})

	if set.scopes == nil {
		set.scopes = map[*objects.Object]string{}
	}
	for _, o := range rendered.Objects {
		if w.excludes(o.File, false) {
			continue
		}
		set.Objects = append(set.Objects, o)
		if scope, ok := rendered.scopes[o]; ok {
			set.scopes[o] = scope
		}
	}
	set.FactsHomes = rendered.FactsHomes
	set.Ignored += rendered.Ignored
	set.OtherNodeClasses = append(set.OtherNodeClasses, rendered.OtherNodeClasses...)
	set.ServiceAccounts = append(set.ServiceAccounts, rendered.ServiceAccounts...)
	set.Errors = append(set.Errors, rendered.Errors...)
}

// kustomizeReason words why a kustomization under a directory was not rendered, for a note.
func kustomizeReason(err error) string {
	var ke *KustomizeError
	if errors.As(err, &ke) {
		return fmt.Sprintf("kustomize cannot build it: `karpenter-guard check -k %s` shows kustomize's error", ke.Dir)
	}
	return err.Error()
}

// boundary returns the tree kustomize may read for a kustomization in dir, resolved and absolute:
// the repository that holds dir (an overlay takes its base from beside it); outside a repository (a
// tarball, a CI checkout without .git), tree when given (the directory -f walks), else the working
// directory when dir is below it, else dir itself.
func boundary(dir, tree string) (string, error) {
	if dirs, ok := upToRepository(dir); ok {
		return realPath(dirs[len(dirs)-1])
	}
	if tree != "" {
		return realPath(tree)
	}
	if wd, err := os.Getwd(); err == nil {
		if abs, err := filepath.Abs(dir); err == nil && within(wd, abs) {
			return realPath(wd)
		}
	}
	return realPath(dir)
}

// insideTree checks a path given on the command line, file or directory: one that symbolic links
// (itself or a directory on its way) lead out of the repository that holds it is refused, so that a
// link committed in a pull request cannot make a check read, and print, the runner's files. Outside a
// repository a named file may lead no further than its own directory's tree, a named directory is its
// own tree.
func insideTree(p string) error {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil
	}
	target, err := realPath(p)
	if err != nil {
		if info, lerr := os.Lstat(p); lerr == nil && info.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("cannot read: symbolic link to %s, which does not exist", linkText(p))
		}
		return nil // the read says what is wrong
	}
	if target == abs {
		return nil // no link on the way
	}
	info, err := os.Stat(target)
	if err != nil {
		return nil
	}
	dir := abs
	if !info.IsDir() {
		dir = filepath.Dir(abs)
	}
	dirs, inRepo := upToRepository(dir)
	var tree string
	switch {
	case inRepo:
		tree, err = realPath(dirs[len(dirs)-1])
	case info.IsDir():
		return nil
	default:
		tree, err = realPath(dir)
	}
	if err != nil || within(tree, target) {
		return nil
	}
	where := displayDir(dir, tree)
	if li, err := os.Lstat(p); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("symbolic link to %s, outside %s: not read (name the file it points to, if you mean it)", linkText(p), where)
	}
	return fmt.Errorf("leads through a symbolic link to %s, outside %s: not read (name the path it points to, if you mean it)", target, where)
}

// WritableInside checks a file check is asked to write (--report-file, facts export -o): its directory
// may not lead, through symbolic links, out of the repository that holds it, so that a directory link
// committed in a pull request cannot turn the write into one of a file elsewhere. Outside a repository
// nothing is checked: the path is the caller's own. A link at the file itself is fix.ReplaceFile's to
// refuse.
func WritableInside(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	dir := filepath.Dir(abs)
	dirs, inRepo := upToRepository(dir)
	if !inRepo {
		return nil
	}
	realDir, err := realPath(dir)
	if err != nil {
		return nil // the write says the directory does not exist
	}
	tree, err := realPath(dirs[len(dirs)-1])
	if err != nil || within(tree, realDir) {
		return nil
	}
	return fmt.Errorf("its directory %s leads through a symbolic link to %s, outside the repository: karpenter-guard does not write there", filepath.Dir(path), realDir)
}

// regularInside reports whether p is a regular file, or a symbolic link to one inside the tree that
// holds p (boundary): the files check finds by itself (a facts home, a GuardConfig, an ignore file) are
// never read through a link out of the repository.
func regularInside(p string) bool {
	info, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if info.Mode().IsRegular() {
		return true
	}
	if info.Mode()&fs.ModeSymlink == 0 {
		return false
	}
	target, err := realPath(p)
	if err != nil {
		return false
	}
	tree, err := boundary(filepath.Dir(p), "")
	if err != nil || !within(tree, target) {
		return false
	}
	ti, err := os.Stat(target)
	return err == nil && ti.Mode().IsRegular()
}

// displayDir names the boundary for a message: the repository root relative to dir when it can.
func displayDir(dir, tree string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return tree
	}
	rel, err := filepath.Rel(abs, tree)
	if err != nil || rel == "." {
		return "its directory"
	}
	return "the repository (" + filepath.Join(dir, rel) + ")"
}
