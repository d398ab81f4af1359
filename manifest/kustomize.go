package manifest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/internal/yamlbudget"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// originAnnotation is the annotation in which kustomize records where a rendered object came from,
// when a kustomization asks for it with buildMetadata: [originAnnotations].
const originAnnotation = "config.kubernetes.io/origin"

// KustomizeError is a kustomization that kustomize could not build.
type KustomizeError struct {
	Dir string
	Err error
	// Refused is set when check itself refused what the kustomization reads (a remote resource, a
	// file outside the repository, YAML over the budget, too many loads), rather than kustomize failing
	// to build it.
	Refused bool
}

func (e *KustomizeError) Error() string {
	return fmt.Sprintf("kustomize build %s: %v", e.Dir, e.Err)
}

func (e *KustomizeError) Unwrap() error { return e.Err }

// AddKustomization renders the kustomization in dir, as `kustomize build dir` would with its default
// options (no plugins, no Helm, files only from inside the kustomization's root), and adds the rendered
// objects to the set, each at its source: the file it was read from and its line there.
//
// kustomize is asked to annotate every object with its origin, whatever the kustomization says, and
// the annotation is removed again before the object is decoded, so that no rule sees it. An object
// the build left as its source file has it (only metadata changed, such as a name prefix, labels or a
// namespace) keeps its file and the line of each field there. An object a patch changed, or a
// generator made, is reported in the kustomization file that did it: the one built for a patch
// (kustomize does not record which patch changed which field), at its patches list; the generator's
// for a generated one. A build that fails is a *KustomizeError.
//
// Unless Reader.AllowRemote is set, kustomize reads nothing but files of the repository that holds
// dir (else of dir), never through a link out of it, and a kustomization naming a remote resource,
// base or component (an http(s) or git URL) is refused before anything is fetched: a *RemoteError.
func (r Reader) AddKustomization(ctx context.Context, set *Set, dir string) error {
	_, err := r.addKustomization(ctx, set, dir, "")
	return err
}

// addKustomization is AddKustomization that also returns the files the rendered objects came from.
// tree, when not "", is the tree kustomize may read outside a repository (see boundary).
func (r Reader) addKustomization(ctx context.Context, set *Set, dir, tree string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	kustFile, err := kustomizationFile(dir)
	if err != nil {
		return nil, &KustomizeError{Dir: dir, Err: err}
	}
	abs, err := filepath.Abs(kustFile)
	if err != nil {
		return nil, &KustomizeError{Dir: dir, Err: err}
	}
	fsys := &guardedFS{FileSystem: filesys.MakeFsOnDisk(), kustomization: abs, max: r.max(), allowRemote: r.AllowRemote}
	if !r.AllowRemote {
		if fsys.tree, err = boundary(dir, tree); err != nil {
			return nil, &KustomizeError{Dir: dir, Err: err}
		}
	}
	// kustomize is given the absolute path: a relative one that reads as a git URL
	// (github.com/org/repo, git@host:repo, a directory a repository may well hold) it would clone.
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, &KustomizeError{Dir: dir, Err: err}
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, absDir)
	if fsys.refused != nil {
		return nil, &KustomizeError{Dir: dir, Err: fsys.refused, Refused: true}
	}
	if err != nil {
		return nil, &KustomizeError{Dir: dir, Err: err}
	}
	if r.FactsHome {
		for _, home := range append(existingHome(dir), ancestorFactsHomes(dir)...) {
			if slices.Contains(set.FactsHomes, home) {
				continue
			}
			data, err := r.readFile(home)
			if err != nil {
				set.Errors = append(set.Errors, Error{File: home, Message: err.Error()})
				continue
			}
			set.FactsHomes = append(set.FactsHomes, home)
			set.addFactsHome(Source{Path: home, Data: data})
		}
	}
	if set.scopes == nil {
		set.scopes = map[*objects.Object]string{}
	}
	sources := map[string][]*objects.Object{} // source file → its objects
	var files []string
	for _, res := range m.Resources() {
		origin, err := res.GetOrigin()
		if err != nil {
			return nil, &KustomizeError{Dir: dir, Err: fmt.Errorf("origin of %s: %w", res.CurId(), err)}
		}
		if err := res.SetOrigin(nil); err != nil {
			return nil, &KustomizeError{Dir: dir, Err: fmt.Errorf("remove the origin of %s: %w", res.CurId(), err)}
		}
		data, err := res.AsYAML()
		if err != nil {
			return nil, &KustomizeError{Dir: dir, Err: fmt.Errorf("render %s: %w", res.CurId(), err)}
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
			return nil, &KustomizeError{Dir: dir, Err: fmt.Errorf("read back %s: %v", res.CurId(), err)}
		}
		if err := set.budget.Check(&doc); err != nil {
			// kustomize writes aliases out, so this is the size of what it rendered.
			e := budgetError(kustFile, 0, err)
			e.Line, e.Message = 0, fmt.Sprintf("%s as kustomize renders it: %s", res.CurId(), e.Message)
			set.Errors = append(set.Errors, e)
			continue
		}
		root := doc.Content[0]
		file := r.place(sources, dir, kustFile, origin, root)
		if origin != nil && origin.Repo == "" && origin.ConfiguredIn == "" {
			files = append(files, filepath.Join(dir, origin.Path))
		}
		objs, ignored, others, errs := decodeNode(file, 0, root, map[*yaml.Node]bool{})
		for _, o := range objs {
			set.scopes[o] = kustFile
		}
		set.Objects = append(set.Objects, objs...)
		set.Ignored += ignored
		set.addOthers(others)
		set.Errors = append(set.Errors, errs...)
	}
	if set.buildSources == nil {
		set.buildSources = map[string][]string{}
	}
	set.buildSources[kustFile] = files
	return files, nil
}

// place finds where a rendered object is in the repository, sets the line of every node of root to
// its line there and returns the file. sources caches the objects of the source files read.
func (r Reader) place(sources map[string][]*objects.Object, dir, kustFile string, origin *resource.Origin, root *yaml.Node) string {
	switch {
	case origin == nil:
		// Not tracked (kustomize gives every object an origin): the kustomization built.
		setLines(root, 1)
		return kustFile
	case origin.Repo != "":
		setLines(root, 0)
		return origin.Repo + "//" + filepath.ToSlash(origin.Path)
	case httpOrigin(origin.Path) != "":
		// Fetched over http (--kustomize-allow-remote): its lines are not known.
		setLines(root, 1)
		return httpOrigin(origin.Path)
	case origin.ConfiguredIn != "":
		// Made by a generator.
		setLines(root, 1)
		return filepath.Join(dir, origin.ConfiguredIn)
	}
	file := filepath.Join(dir, origin.Path)
	objs, ok := sources[file]
	if !ok {
		data, err := r.readFile(file)
		if err == nil {
			objs, _, _ = Parse(file, data)
		}
		sources[file] = objs
	}
	src := sourceObject(objs, root)
	if src == nil {
		setLines(root, 1)
		return file
	}
	if !sameContent(src.Root, root) {
		setLines(root, patchesLine(kustFile))
		return kustFile
	}
	mapLines(root, src.Root, src.LineOffset, src.LineOf(src.Root))
	return file
}

// sourceObject finds, among the objects of the source file, the one a rendered object was made from:
// the same kind and name, else the only one of that kind whose name the rendered name contains (a
// namePrefix or nameSuffix), else the only one of that kind.
func sourceObject(objs []*objects.Object, rendered *yaml.Node) *objects.Object {
	kind, name := scalar(rendered, "kind"), scalar(rendered, "metadata", "name")
	var sameKind, named []*objects.Object
	for _, o := range objs {
		if o.Kind != kind {
			continue
		}
		if o.Name == name {
			return o
		}
		sameKind = append(sameKind, o)
		if o.Name != "" && strings.Contains(name, o.Name) {
			named = append(named, o)
		}
	}
	switch {
	case len(named) == 1:
		return named[0]
	case len(sameKind) == 1:
		return sameKind[0]
	}
	return nil
}

func scalar(n *yaml.Node, path ...any) string {
	v := objects.Lookup(n, path...)
	if v == nil || v.Kind != yaml.ScalarNode {
		return ""
	}
	return v.Value
}

// sameContent reports whether a rendered object equals its source outside metadata, which name
// prefixes, labels and namespaces change without moving a field.
func sameContent(src, rendered *yaml.Node) bool {
	a, errA := withoutMetadata(src)
	b, errB := withoutMetadata(rendered)
	return errA == nil && errB == nil && reflect.DeepEqual(a, b)
}

func withoutMetadata(n *yaml.Node) (map[string]any, error) {
	// Through JSON, as the API server would see it, so that YAML styles and tags do not count.
	out, err := yaml.Marshal(n)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := sigsyaml.Unmarshal(out, &m); err != nil {
		return nil, err
	}
	delete(m, "metadata")
	return m, nil
}

// mapLines sets the line of every node of a rendered object to the line of the same node (same path
// of keys and indexes) in its source, shifted by offset; a node the source lacks (a label kustomize
// added) takes its parent's line.
func mapLines(rendered, src *yaml.Node, offset, parent int) {
	line := parent
	if src != nil && src.Line > 0 {
		line = offset + src.Line
	}
	rendered.Line = line
	switch rendered.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(rendered.Content); i += 2 {
			key := rendered.Content[i]
			var srcKey, srcVal *yaml.Node
			if src != nil {
				srcKey, srcVal = objects.MapEntry(src, key.Value)
			}
			mapLines(key, srcKey, offset, line)
			mapLines(rendered.Content[i+1], resolveAlias(srcVal), offset, key.Line)
		}
	case yaml.SequenceNode:
		s := resolveAlias(src)
		for i, item := range rendered.Content {
			var srcItem *yaml.Node
			if s != nil && s.Kind == yaml.SequenceNode && i < len(s.Content) {
				srcItem = resolveAlias(s.Content[i])
			}
			mapLines(item, srcItem, offset, line)
		}
	}
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// setLines sets the line of every node of n to line.
func setLines(n *yaml.Node, line int) {
	n.Line = line
	for _, c := range n.Content {
		setLines(c, line)
	}
}

// patchesLine returns the line of the patches list of a kustomization file (any of kustomize's
// spellings), else 1.
func patchesLine(file string) int {
	data, err := os.ReadFile(file)
	if err != nil {
		return 1
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 1
	}
	for _, key := range []string{"patches", "patchesStrategicMerge", "patchesJson6902"} {
		if k, _ := objects.MapEntry(doc.Content[0], key); k != nil {
			return k.Line
		}
	}
	return 1
}

// kustomizationFile returns the kustomization file of a directory.
func kustomizationFile(dir string) (string, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("cannot read: %w", unwrapPath(err))
	}
	if !info.IsDir() {
		return "", errors.New("not a directory: -k takes the directory that holds a kustomization.yaml")
	}
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no kustomization.yaml, kustomization.yml or Kustomization in the directory")
}

// guardedFS is the on-disk file system, read as kustomize reads it, except that the kustomization
// built asks for origin annotations (kustomize passes the option down to every kustomization it
// includes, and has no other way to turn it on), and that unless remote resources are allowed:
//   - only regular files inside tree are read, of at most max bytes (a link out of the repository, a
//     FIFO or a device is refused), and nothing is written;
//   - a kustomization that names a remote resource is refused when it is read, before kustomize acts
//     on it: kustomize itself cannot be told not to fetch (its loader clones git URLs and GETs http
//     ones), but every kustomization reaches it through this file system first.
//
// The first refusal is kept in refused, so that the build's error can name it whatever kustomize
// wraps it in.
type guardedFS struct {
	filesys.FileSystem
	// kustomization is the absolute path of the kustomization file built.
	kustomization string
	// tree is the resolved directory kustomize may read in; "" with allowRemote (a remote base is
	// cloned into a temporary directory elsewhere).
	tree        string
	max         int64
	allowRemote bool

	// reads and kustomizations count the files and the kustomizations kustomize read: a tree of
	// overlays that each include two others (a diamond) makes kustomize load and render exponentially
	// many, so one build may read at most maxReads files and maxKustomizations kustomizations.
	reads, kustomizations int

	refused error
}

// The most files and kustomizations one build may read: far above any real repository (a build reads
// a kustomization and its files once per path that includes it), far below what keeps a run busy for
// long.
const (
	maxReads          = 20000
	maxKustomizations = 1000
)

// RemoteError is a kustomization that names a remote resource while remote resources are not allowed.
type RemoteError struct {
	// File is the kustomization file, URL what it names.
	File, URL string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("%s names the remote resource %s: check does not fetch remote resources, bases or components "+
		"(a pull request could make CI reach any address); render it yourself (kustomize build | karpenter-guard check -f -) "+
		"or pass --kustomize-allow-remote where the repository is trusted", e.File, e.URL)
}

// refuse records the first refusal and returns it.
func (f *guardedFS) refuse(err error) error {
	if f.refused == nil {
		f.refused = err
	}
	return err
}

// check refuses a path kustomize may not read: outside the tree, or not a regular file or directory.
func (f *guardedFS) check(path string) error {
	if f.allowRemote {
		return nil
	}
	real, err := realPath(path)
	if err != nil {
		return nil // does not exist: kustomize says so
	}
	if !within(f.tree, real) {
		return f.refuse(fmt.Errorf("%s leads outside %s: kustomize may read only the repository's files", path, f.tree))
	}
	info, err := os.Stat(real)
	if err == nil && !info.Mode().IsRegular() && !info.IsDir() {
		return f.refuse(fmt.Errorf("%s: %w", path, notRegular(info.Mode())))
	}
	return nil
}

// ReadFile reads a file for kustomize within the guard's limits, adding originAnnotations to the
// buildMetadata of the kustomization built.
func (f *guardedFS) ReadFile(path string) ([]byte, error) {
	if err := f.check(path); err != nil {
		return nil, err
	}
	f.reads++
	if isKustomizationName(filepath.Base(path)) {
		f.kustomizations++
	}
	if f.reads > maxReads || f.kustomizations > maxKustomizations {
		return nil, f.refuse(fmt.Errorf("the build reads more than %d files or %d kustomizations (overlays that each include others, over and over): kustomize would take hours; check each overlay with -k", maxReads, maxKustomizations))
	}
	var data []byte
	var err error
	if f.allowRemote {
		data, err = f.FileSystem.ReadFile(path)
	} else {
		data, err = readRegular(path, f.max)
	}
	if err != nil {
		return data, err
	}
	// kustomize expands every alias of what it reads (kyaml's DeAnchor) without bound, and follows an
	// alias inside its own anchor until the stack overflows: a file over the YAML budget never reaches
	// it. A file that is not YAML is left to kustomize.
	if err := yamlbudget.CheckStream(data); err != nil {
		return nil, f.refuse(budgetError(displayPath(path), 0, err))
	}
	if !f.allowRemote {
		url := ""
		if isKustomizationName(filepath.Base(path)) {
			url = remoteReference(data)
		} else {
			url = pluginRemoteReference(data)
		}
		if url != "" {
			return nil, f.refuse(&RemoteError{File: displayPath(path), URL: url})
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil || abs != f.kustomization {
		return data, nil
	}
	var k map[string]any
	if err := sigsyaml.Unmarshal(data, &k); err != nil || k == nil {
		return data, nil // kustomize reports it
	}
	meta, _ := k["buildMetadata"].([]any)
	for _, m := range meta {
		if m == "originAnnotations" {
			return data, nil
		}
	}
	k["buildMetadata"] = append(meta, "originAnnotations")
	return sigsyaml.Marshal(k)
}

// Open opens a file within the guard's limits.
func (f *guardedFS) Open(path string) (filesys.File, error) {
	if err := f.check(path); err != nil {
		return nil, err
	}
	return f.FileSystem.Open(path)
}

// ReadDir lists a directory within the guard's limits.
func (f *guardedFS) ReadDir(path string) ([]string, error) {
	if err := f.check(path); err != nil {
		return nil, err
	}
	return f.FileSystem.ReadDir(path)
}

// Create, Mkdir, MkdirAll, RemoveAll and WriteFile are refused unless remote resources are allowed (a
// remote base is cloned into, and removed from, a temporary directory): a build only reads.
func (f *guardedFS) Create(path string) (filesys.File, error) {
	if err := f.noWrite(path); err != nil {
		return nil, err
	}
	return f.FileSystem.Create(path)
}

func (f *guardedFS) Mkdir(path string) error {
	if err := f.noWrite(path); err != nil {
		return err
	}
	return f.FileSystem.Mkdir(path)
}

func (f *guardedFS) MkdirAll(path string) error {
	if err := f.noWrite(path); err != nil {
		return err
	}
	return f.FileSystem.MkdirAll(path)
}

func (f *guardedFS) RemoveAll(path string) error {
	if err := f.noWrite(path); err != nil {
		return err
	}
	return f.FileSystem.RemoveAll(path)
}

func (f *guardedFS) WriteFile(path string, data []byte) error {
	if err := f.noWrite(path); err != nil {
		return err
	}
	return f.FileSystem.WriteFile(path, data)
}

func (f *guardedFS) noWrite(path string) error {
	if f.allowRemote {
		return nil
	}
	return f.refuse(fmt.Errorf("kustomize tried to write %s: a check only reads", path))
}

// remoteReference returns the first remote URL a kustomization names where kustomize would fetch it:
// resources, bases, components, generators, transformers, validators, and every file it reads (a
// patch or a generator's file given as an http URL is fetched too); "" when there is none or the file
// is not a kustomization kustomize can read (it then says why itself).
func remoteReference(data []byte) string {
	var kt types.Kustomization
	if kt.Unmarshal(data) != nil {
		return ""
	}
	kt.FixKustomization()
	var refs []string
	refs = append(refs, kt.Resources...)
	refs = append(refs, kt.Components...)
	refs = append(refs, kt.Generators...)
	refs = append(refs, kt.Transformers...)
	refs = append(refs, kt.Validators...)
	refs = append(refs, kt.Crds...)
	refs = append(refs, kt.Configurations...)
	refs = append(refs, kt.OpenAPI["path"])
	for _, p := range kt.Patches {
		refs = append(refs, p.Path)
	}
	for _, p := range kt.PatchesJson6902 {
		refs = append(refs, p.Path)
	}
	for _, p := range kt.PatchesStrategicMerge {
		if !strings.Contains(string(p), "\n") {
			refs = append(refs, string(p))
		}
	}
	for _, rf := range kt.Replacements {
		refs = append(refs, rf.Path)
	}
	for _, g := range append(kt.ConfigMapGenerator, configMapArgs(kt.SecretGenerator)...) {
		for _, s := range g.FileSources {
			if _, path, found := strings.Cut(s, "="); found {
				s = path
			}
			refs = append(refs, s)
		}
		refs = append(refs, g.EnvSources...)
	}
	// A helmCharts repo is not listed: kustomize inflates charts only with --enable-helm, which check
	// never passes, so such a kustomization fails to build before anything is fetched.
	for _, h := range kt.HelmCharts {
		refs = append(refs, h.ValuesFile)
		refs = append(refs, h.AdditionalValuesFiles...)
	}
	for _, ref := range refs {
		if ref != "" && isRemote(ref) {
			return ref
		}
	}
	return ""
}

// httpOrigin returns the URL of an object kustomize fetched over http, from its origin's path (which
// kustomize cleans as a file path: "https:/host/x"); "" for any other origin.
func httpOrigin(path string) string {
	for _, scheme := range []string{"https:/", "http:/"} {
		if rest, ok := strings.CutPrefix(path, scheme); ok {
			return scheme + "/" + strings.TrimPrefix(rest, "/")
		}
	}
	return ""
}

// displayPath names a file kustomize read (always by its absolute path) as the user would: relative to
// the working directory when it is below it.
func displayPath(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return rel
}

// pluginRemoteReference returns the first remote URL a builtin plugin's configuration names (a file
// listed under generators, transformers or validators: PatchTransformer's path, ConfigMapGenerator's
// files, ReplacementTransformer's path, ...), where kustomize would fetch it; "" when there is none.
// Only documents of apiVersion builtin are plugin configurations kustomize runs (other plugins are off),
// and only single-line strings are paths: an inline patch's text is not fetched.
func pluginRemoteReference(data []byte) string {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc map[string]any
		if dec.Decode(&doc) != nil {
			return ""
		}
		if doc["apiVersion"] != "builtin" {
			continue
		}
		if url := remoteString(doc); url != "" {
			return url
		}
	}
}

// remoteString returns the first single-line string in v that isRemote calls remote.
func remoteString(v any) string {
	switch v := v.(type) {
	case string:
		if !strings.ContainsAny(v, "\n ") && isRemote(v) {
			return v
		}
	case []any:
		for _, it := range v {
			if url := remoteString(it); url != "" {
				return url
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if url := remoteString(v[k]); url != "" {
				return url
			}
		}
	}
	return ""
}

// configMapArgs gives secret generators' sources the shape of config map generators'.
func configMapArgs(secrets []types.SecretArgs) []types.ConfigMapArgs {
	out := make([]types.ConfigMapArgs, 0, len(secrets))
	for _, s := range secrets {
		out = append(out, types.ConfigMapArgs{GeneratorArgs: s.GeneratorArgs})
	}
	return out
}

// isRemote reports whether kustomize would fetch a path instead of reading it from disk: an URL with a
// scheme (http, https, ssh, file: a git clone of any path), an SCP-like user@host:path, or a GitHub
// path without a scheme, each with kustomize's optional "git::" prefix. It mirrors kustomize's own
// reading of remote references (its parser is internal to kustomize), leaning towards "remote".
func isRemote(p string) bool {
	s := strings.ToLower(strings.TrimSpace(p))
	s = strings.TrimPrefix(s, "git::")
	switch {
	case strings.Contains(s, "://"):
		return true
	case strings.HasPrefix(s, "github.com/"), strings.HasPrefix(s, "github.com:"):
		return true
	}
	return scpLike.MatchString(s)
}

// scpLike is a git SCP-like address: a user name, "@", a host and a path.
var scpLike = regexp.MustCompile(`^[a-z][a-z0-9-]*@[^/]+[:/]`)
