package manifest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
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
func (r Reader) AddKustomization(ctx context.Context, set *Set, dir string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	kustFile, err := kustomizationFile(dir)
	if err != nil {
		return &KustomizeError{Dir: dir, Err: err}
	}
	abs, err := filepath.Abs(kustFile)
	if err != nil {
		return &KustomizeError{Dir: dir, Err: err}
	}
	fsys := originFS{FileSystem: filesys.MakeFsOnDisk(), kustomization: abs}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
	if err != nil {
		return &KustomizeError{Dir: dir, Err: err}
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
	for _, res := range m.Resources() {
		origin, err := res.GetOrigin()
		if err != nil {
			return &KustomizeError{Dir: dir, Err: fmt.Errorf("origin of %s: %w", res.CurId(), err)}
		}
		if err := res.SetOrigin(nil); err != nil {
			return &KustomizeError{Dir: dir, Err: fmt.Errorf("remove the origin of %s: %w", res.CurId(), err)}
		}
		data, err := res.AsYAML()
		if err != nil {
			return &KustomizeError{Dir: dir, Err: fmt.Errorf("render %s: %w", res.CurId(), err)}
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
			return &KustomizeError{Dir: dir, Err: fmt.Errorf("read back %s: %v", res.CurId(), err)}
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
		objs, ignored, others, errs := decodeNode(file, 0, root, map[*yaml.Node]bool{})
		for _, o := range objs {
			set.scopes[o] = kustFile
		}
		set.Objects = append(set.Objects, objs...)
		set.Ignored += ignored
		set.addOthers(others)
		set.Errors = append(set.Errors, errs...)
	}
	return nil
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

// checkKustomizeInput refuses a file kustomize reads whose YAML is over the budget (package
// yamlbudget): kustomize expands every alias of the resources it reads (kyaml's DeAnchor) without
// bound, and follows an alias inside its own anchor until the stack overflows. A file that is not YAML
// is left to kustomize.
func checkKustomizeInput(path string, data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var budget yamlbudget.Budget
	for {
		var doc yaml.Node
		if dec.Decode(&doc) != nil {
			return nil
		}
		if err := budget.Check(&doc); err != nil {
			return budgetError(path, 0, err)
		}
	}
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

// originFS is the on-disk filesystem, read as kustomize reads it, except that the kustomization
// built asks for origin annotations: kustomize passes the option down to every kustomization it
// includes, and has no other way to turn it on.
type originFS struct {
	filesys.FileSystem
	// kustomization is the absolute path of the kustomization file built.
	kustomization string
}

// ReadFile reads a file, adding originAnnotations to the buildMetadata of the kustomization built.
func (f originFS) ReadFile(path string) ([]byte, error) {
	data, err := f.FileSystem.ReadFile(path)
	if err != nil {
		return data, err
	}
	if err := checkKustomizeInput(path, data); err != nil {
		return nil, err
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
