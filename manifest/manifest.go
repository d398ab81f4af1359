// Package manifest reads Kubernetes manifests from files, directories and standard input into objects,
// keeping every object's file and line. One broken document never hides the others: each input error is
// recorded with its file and line and reading goes on.
package manifest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/internal/yamlbudget"
	"github.com/karpenter-guard/karpenter-guard/internal/yamlpos"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// DefaultMaxFileSize is the largest file the CLI reads (8 MiB): far above any real manifest set, small
// enough that a stray binary or log file is refused quickly.
const DefaultMaxFileSize = 8 << 20

// Stdin is the path that means standard input.
const Stdin = "-"

// Error is an input problem: a file that cannot be read or a document that cannot be decoded.
type Error struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
	// notObject marks, inside this package, a document that is not a Kubernetes object: counted in
	// Set.NotObjects, never reported.
	notObject bool
}

func (e Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Message)
}

// Source is one input file held in memory.
type Source struct {
	Path string
	Data []byte
}

// Set is everything read from the inputs.
type Set struct {
	Objects []*objects.Object
	Errors  []Error
	// Ignored counts well-formed objects of kinds the tool does not check.
	Ignored int
	// NotObjects counts documents that are not Kubernetes objects at all (no kind or metadata: a Helm Chart.yaml
	// or values.yaml, a kustomization, configuration of other tools): a repository root holds them
	// beside its manifests, so they are skipped, not errors.
	NotObjects int
	// OtherNodeClasses are the node classes of other Karpenter providers among the ignored objects
	// (AKSNodeClass, …), each as the v1 reference that names it: group, kind and name. A NodePool
	// whose nodeClassRef gives only a name (as Azure's v1beta1 pools do) may mean one of them, not an
	// EC2NodeClass.
	OtherNodeClasses []objects.NodeClassRef
	// ServiceAccounts are the ServiceAccounts among the ignored objects: without a cluster to read,
	// those of Karpenter's controller and aws-node tell whose permissions to check (IRSA annotations).
	ServiceAccounts []ServiceAccount
	// Charts are the Helm chart directories (a Chart.yaml in them) skipped while walking a directory:
	// their templates are not YAML until Helm renders them.
	Charts []string
	// Excluded are the paths under a walked directory left out by --exclude or an ignore file
	// (IgnoreFile), files and directories (a directory counts once: it is not walked).
	Excluded []string
	// Unread are the paths found under the inputs and deliberately not read (links out of the tree,
	// special files, kustomize patches), with the reason.
	Unread []Unread
	// Notes are what the reader has to tell that is neither an error nor a finding: a kustomization
	// under a directory that does not build, and what was checked instead.
	Notes []string
	// Rendered are the kustomization directories under the -f directories that were rendered
	// (Reader.Kustomize).
	Rendered []string
	// FactsHomes are the ClusterFacts snapshots read from FactsHome directories, in the order read.
	FactsHomes []string
	// Sources holds the bytes of every file read, by path, for the fixer.
	Sources map[string][]byte

	// scopes holds, for the objects kustomize rendered, the kustomization file built: see ScopeFile.
	scopes map[*objects.Object]string
	// buildSources holds, for each kustomization built, the files its objects came from: see Apart.
	buildSources map[string][]string
	// budget bounds what the aliases of every document read into the set may expand to, together.
	budget yamlbudget.Budget
}

// ScopeFile returns the file whose directory decides which ClusterFacts describe the cluster an object
// goes to: the file it was read from, or for an object rendered by kustomize (AddKustomization), the
// kustomization built, since an overlay, not the base it takes the object from, names the cluster.
func (s *Set) ScopeFile(o *objects.Object) string {
	if f, ok := s.scopes[o]; ok {
		return f
	}
	return o.File
}

// Build returns the kustomization that rendered o (AddKustomization), "" for an object read from a
// file as it is. Objects of one build are deployed together and refer to each other (a NodePool to its
// EC2NodeClass); objects of different builds (two overlays of one base) never see each other.
func (s *Set) Build(o *objects.Object) string {
	return s.scopes[o]
}

// Apart reports whether two builds (Build) are deployed apart: they render objects from a common
// source file, as two overlays of one base do, each for its own cluster. Builds of disjoint files (a
// kustomization of EC2NodeClasses beside one of NodePools) may be deployed together.
func (s *Set) Apart(a, b string) bool {
	if a == "" || b == "" || a == b {
		return false
	}
	files := map[string]bool{}
	for _, f := range s.buildSources[a] {
		files[filepath.Clean(f)] = true
	}
	for _, f := range s.buildSources[b] {
		if files[filepath.Clean(f)] {
			return true
		}
	}
	return false
}

// Reader reads manifests.
type Reader struct {
	// MaxFileSize is the largest file accepted, in bytes; 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Exclude are globs of paths not to read under a walked directory, matched against the path
	// relative to the directory given and against the base name (see Ignore for the syntax).
	Exclude []string
	// Kustomize makes the reader understand the kustomizations under a directory it walks: each one
	// no other kustomization there includes is rendered as kustomize builds it (AddKustomization), the
	// files it takes its objects from are checked through the rendering, the files kustomizations use
	// as patches or generator input are never judged as whole objects (also when named with -f), and
	// a kustomization that does not build leaves its files to be read one by one, with a note.
	// Without it (--fix, which edits files), every file is read as it is, except patches.
	Kustomize bool
	// Render, with Kustomize, renders the kustomizations; without it only patches are left out.
	Render bool
	// AllowRemote lets kustomize fetch remote resources, bases and components (http(s) and git URLs).
	// Off by default: a check on a pull request must never make the runner reach an address the pull
	// request chose.
	AllowRemote bool
	// FactsHome makes the reader look for a ClusterFacts snapshot at FactsHome/cluster-facts.yaml in
	// every directory it walks and, for each path given, in its directory's ancestors up to the
	// repository root (the first directory holding .git): see FindFactsHomes.
	FactsHome bool
}

// Read reads every path (file, directory walked recursively for .yaml/.yml/.json, or "-").
func (r Reader) Read(ctx context.Context, paths []string) *Set {
	set := &Set{Sources: map[string][]byte{}}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			set.Errors = append(set.Errors, Error{File: p, Message: err.Error()})
			return set
		}
		if p == Stdin {
			data, err := r.readLimited(Stdin, r.Stdin)
			if err != nil {
				set.Errors = append(set.Errors, Error{File: "<stdin>", Message: err.Error()})
				continue
			}
			set.Add(Source{Path: "<stdin>", Data: data})
			continue
		}
		if err := insideTree(p); err != nil {
			set.Errors = append(set.Errors, Error{File: p, Message: err.Error()})
			continue
		}
		w := walk{exclude: r.Exclude, factsHome: r.FactsHome}
		err := w.expand(p)
		set.Charts = append(set.Charts, w.charts...)
		set.Excluded = append(set.Excluded, w.excluded...)
		set.Unread = append(set.Unread, w.unread...)
		set.Errors = append(set.Errors, w.errs...)
		if err != nil {
			set.Errors = append(set.Errors, Error{File: p, Message: err.Error()})
			continue
		}
		files := w.files
		var homes []string
		if r.FactsHome {
			homes = append(w.homes, ancestorFactsHomes(p)...)
		}
		for _, f := range homes {
			if slices.Contains(set.FactsHomes, f) {
				continue // found again from another path given
			}
			data, err := r.readFile(f)
			if err != nil {
				set.Errors = append(set.Errors, Error{File: f, Message: err.Error()})
				continue
			}
			set.FactsHomes = append(set.FactsHomes, f)
			set.addFactsHome(Source{Path: f, Data: data})
		}
		if r.Kustomize {
			files = r.throughKustomizations(ctx, set, p, &w)
		}
		for _, f := range files {
			data, err := r.readFile(f)
			if err != nil {
				set.Errors = append(set.Errors, Error{File: f, Message: err.Error()})
				continue
			}
			set.Add(Source{Path: f, Data: data})
		}
	}
	return set
}

// addFactsHome parses a FactsHome snapshot into the set: its ClusterFacts document, and an error for
// any other object, which belongs beside the manifests, not in the hidden directory no tool applies.
func (s *Set) addFactsHome(src Source) {
	before := len(s.Objects)
	s.Add(src)
	kept := s.Objects[:before]
	for _, o := range s.Objects[before:] {
		if o.Kind == objects.KindClusterFacts {
			kept = append(kept, o)
			continue
		}
		s.Errors = append(s.Errors, Error{File: src.Path, Line: o.Ref().Line,
			Message: fmt.Sprintf("%s in %s: only a ClusterFacts snapshot belongs there; move the object beside the manifests", o.Ref(), FactsHome)})
	}
	s.Objects = kept
}

func (r Reader) max() int64 {
	if r.MaxFileSize > 0 {
		return r.MaxFileSize
	}
	return DefaultMaxFileSize
}

func (r Reader) readFile(path string) ([]byte, error) {
	data, err := readRegular(path, r.max())
	if err != nil {
		return nil, readError(err)
	}
	return data, nil
}

// readError words a failed read: the size limit as it is, anything else as "cannot read".
func readError(err error) error {
	var large errTooLarge
	if errors.As(err, &large) {
		return large
	}
	return fmt.Errorf("cannot read: %w", unwrapPath(err))
}

func (r Reader) readLimited(name string, in io.Reader) ([]byte, error) {
	if in == nil {
		return nil, errors.New("no standard input")
	}
	data, err := readAllLimited(in, r.max())
	if err != nil {
		return nil, readError(err)
	}
	return data, nil
}

// errTooLarge is a file over the size limit.
type errTooLarge int64

func (e errTooLarge) Error() string {
	return fmt.Sprintf("file is larger than the %s limit (--max-file-size): not a manifest, or split it", humanSize(int64(e)))
}

// readAllLimited reads at most max bytes of in; more is an errTooLarge.
func readAllLimited(in io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(in, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errTooLarge(max)
	}
	return data, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Add parses one source into the set.
func (s *Set) Add(src Source) {
	if s.Sources == nil {
		s.Sources = map[string][]byte{}
	}
	s.Sources[src.Path] = src.Data
	objs, ignored, notObjects, others, errs := parse(src.Path, src.Data, &s.budget)
	s.Objects = append(s.Objects, objs...)
	s.Ignored += ignored
	s.NotObjects += notObjects
	s.addOthers(others)
	s.Errors = append(s.Errors, errs...)
}

// Parse decodes every document of one file. It returns the recognised objects, the number of
// well-formed objects of other kinds, and one error per document that could not be read.
func Parse(file string, data []byte) ([]*objects.Object, int, []Error) {
	objs, ignored, _, _, errs := parse(file, data, &yamlbudget.Budget{})
	return objs, ignored, errs
}

// parse is Parse that also returns how many documents are not Kubernetes objects at all (skipped,
// see looksLikeObject) and the other providers' node classes among the ignored objects. budget holds
// the alias expansion of the documents read before.
func parse(file string, data []byte, budget *yamlbudget.Budget) (objs []*objects.Object, ignored, notObjects int, others ignoredKinds, errs []Error) {
	objs, ignored, others, errs = parseDocuments(file, data, budget)
	errs = slices.DeleteFunc(errs, func(e Error) bool {
		if e.notObject {
			notObjects++
		}
		return e.notObject
	})
	return objs, ignored, notObjects, others, errs
}

// parseDocuments decodes every document of one file; documents that are not Kubernetes objects come
// back as errors marked notObject, which parse counts instead. An object's document over the YAML
// budget (package yamlbudget: aliases that expand too far or into themselves, nesting too deep) is an
// error at its line before anything expands it; budget carries the totals of the input read so far.
func parseDocuments(file string, data []byte, budget *yamlbudget.Budget) ([]*objects.Object, int, ignoredKinds, []Error) {
	if line, bad := binaryLine(data); bad {
		return nil, 0, ignoredKinds{}, []Error{{File: file, Line: line, Message: "binary data, not YAML or JSON"}}
	}
	docs := Split(data)
	if strings.EqualFold(filepath.Ext(file), ".json") {
		docs = []Document{{Data: data, StartLine: 1}}
	}
	var (
		objs    []*objects.Object
		ignored int
		others  ignoredKinds
		errs    []Error
		found   bool
	)
	for _, d := range docs {
		var root yaml.Node
		if err := yaml.Unmarshal(d.Data, &root); err != nil {
			line, msg := yamlpos.SyntaxError(err)
			errs = append(errs, Error{File: file, Line: d.StartLine - 1 + yamlpos.ErrorLine(d.Data, line, msg, parseDocument), Message: "invalid YAML: " + msg})
			found = true
			continue
		}
		if len(root.Content) == 0 || emptyDocument(root.Content[0]) {
			continue // a document of comments or blank lines only, or a bare "---"
		}
		found = true
		yamlpos.FileLines(d.Data, &root)
		if !looksLikeObject(root.Content[0]) {
			// Not a manifest (a List's items are, so only whole documents are skipped).
			errs = append(errs, Error{File: file, Line: d.StartLine, Message: "not a Kubernetes object (no kind or metadata): skipped", notObject: true})
			continue
		}
		if err := budget.Check(&root); err != nil {
			errs = append(errs, budgetError(file, d.StartLine-1, err))
			continue
		}
		o, ig, oc, es := decodeNode(file, d.StartLine-1, root.Content[0], map[*yaml.Node]bool{})
		end := d.StartLine - 1 + bytes.Count(d.Data, []byte("\n"))
		if len(d.Data) > 0 && d.Data[len(d.Data)-1] != '\n' {
			end++
		}
		for _, ob := range o {
			ob.DocRoot, ob.DocEndLine = root.Content[0], end
		}
		objs = append(objs, o...)
		ignored += ig
		others.merge(oc)
		errs = append(errs, es...)
	}
	if !found {
		errs = append(errs, Error{File: file, Line: 1, Message: "file is empty: no Kubernetes object in it"})
	}
	return objs, ignored, others, errs
}

// budgetError words a yamlbudget error as an input error of file, whose node lines are shifted by
// offset.
func budgetError(file string, offset int, err error) Error {
	var be *yamlbudget.Error
	if errors.As(err, &be) {
		return Error{File: file, Line: offset + be.Line, Message: be.Message}
	}
	return Error{File: file, Line: offset + 1, Message: err.Error()}
}

// emptyDocument reports whether a parsed document holds no node at all: "---" with nothing after it.
func emptyDocument(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Value == "" && n.Style == 0
}

// parseDocument parses one YAML document, for yamlpos.ErrorLine.
func parseDocument(data []byte) error {
	var root yaml.Node
	return yaml.Unmarshal(data, &root)
}

// decodeNode decodes one document node, expanding List objects into their items: the recognised
// objects, the number of ignored ones, the other providers' node classes among those, and the errors.
// expanded holds the items of the Lists already expanded: a YAML alias can make a List contain itself,
// or repeat a List until the document expands to billions of objects, so each List is expanded only
// once.
func decodeNode(file string, offset int, n *yaml.Node, expanded map[*yaml.Node]bool) ([]*objects.Object, int, ignoredKinds, []Error) {
	if items := listItems(n); items != nil {
		if expanded[items] {
			return nil, 0, ignoredKinds{}, []Error{{File: file, Line: offset + n.Line, Message: "List repeated through a YAML alias: write its items out instead"}}
		}
		expanded[items] = true
		var (
			objs    []*objects.Object
			ignored int
			others  ignoredKinds
			errs    []Error
		)
		for _, it := range items.Content {
			o, ig, oc, es := decodeNode(file, offset, it, expanded)
			objs = append(objs, o...)
			ignored += ig
			others.merge(oc)
			errs = append(errs, es...)
		}
		return objs, ignored, others, errs
	}
	d, err := objects.Decode(n, file, offset)
	if err != nil {
		var de *objects.DecodeError
		if errors.As(err, &de) {
			return nil, 0, ignoredKinds{}, []Error{{File: file, Line: de.Line, Message: de.Message}}
		}
		return nil, 0, ignoredKinds{}, []Error{{File: file, Line: offset + n.Line, Message: err.Error()}}
	}
	if d.Object == nil {
		if ref, ok := otherNodeClass(n); ok {
			return nil, 1, ignoredKinds{nodeClasses: []objects.NodeClassRef{ref}}, nil
		}
		if sa, ok := serviceAccount(n); ok {
			return nil, 1, ignoredKinds{serviceAccounts: []ServiceAccount{sa}}, nil
		}
		return nil, 1, ignoredKinds{}, nil
	}
	return []*objects.Object{d.Object}, 0, ignoredKinds{}, nil
}

// looksLikeObject reports whether a document claims to be a Kubernetes object: a mapping with a kind or
// a metadata key. Documents with neither (Helm values, a Chart.yaml, whose apiVersion is Helm's, a
// kustomization, other tools' configuration) are not manifests; a kind without an apiVersion, or
// metadata without a kind, is a broken manifest.
func looksLikeObject(n *yaml.Node) bool {
	n = objects.Lookup(n) // through an alias
	if n == nil || n.Kind != yaml.MappingNode {
		return false
	}
	kind, _ := objects.MapEntry(n, "kind")
	meta, _ := objects.MapEntry(n, "metadata")
	return kind != nil || meta != nil
}

// otherNodeClass reports whether an ignored object is another Karpenter provider's node class: a
// named object of a kind ending in NodeClass whose group is not karpenter.k8s.aws (AKSNodeClass of
// karpenter.azure.com, …). It returns the v1 reference that names it.
func otherNodeClass(n *yaml.Node) (objects.NodeClassRef, bool) {
	var h struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
	}
	if n.Decode(&h) != nil {
		return objects.NodeClassRef{}, false
	}
	group, _, versioned := strings.Cut(h.APIVersion, "/")
	if !versioned || group == "" || group == objects.GroupKarpenterAWS || !strings.HasSuffix(h.Kind, "NodeClass") || h.Metadata.Name == "" {
		return objects.NodeClassRef{}, false
	}
	return objects.NodeClassRef{Group: group, Kind: h.Kind, Name: h.Metadata.Name}, true
}

// ignoredKinds are the ignored objects some rules still read: other providers' node classes and
// ServiceAccounts.
type ignoredKinds struct {
	nodeClasses     []objects.NodeClassRef
	serviceAccounts []ServiceAccount
}

func (k *ignoredKinds) merge(o ignoredKinds) {
	k.nodeClasses = append(k.nodeClasses, o.nodeClasses...)
	k.serviceAccounts = append(k.serviceAccounts, o.serviceAccounts...)
}

// addOthers adds what was read of the ignored objects to the set.
func (s *Set) addOthers(k ignoredKinds) {
	s.OtherNodeClasses = append(s.OtherNodeClasses, k.nodeClasses...)
	s.ServiceAccounts = append(s.ServiceAccounts, k.serviceAccounts...)
}

// ServiceAccount is a core/v1 ServiceAccount of the input, as far as the identity rules read it.
type ServiceAccount struct {
	Namespace, Name string
	Annotations     map[string]string
}

// serviceAccount reads an ignored object that is a v1 ServiceAccount. One without a namespace is
// left out: which namespace it lands in depends on how it is applied.
func serviceAccount(n *yaml.Node) (ServiceAccount, bool) {
	var h struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name        string            `yaml:"name"`
			Namespace   string            `yaml:"namespace"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"metadata"`
	}
	if n.Decode(&h) != nil || h.APIVersion != "v1" || h.Kind != "ServiceAccount" || h.Metadata.Name == "" || h.Metadata.Namespace == "" {
		return ServiceAccount{}, false
	}
	return ServiceAccount{Namespace: h.Metadata.Namespace, Name: h.Metadata.Name, Annotations: h.Metadata.Annotations}, true
}

// listItems returns the items sequence of a v1 List (or any *List kind), else nil.
func listItems(n *yaml.Node) *yaml.Node {
	k := objects.Lookup(n, "kind")
	if k == nil || k.Kind != yaml.ScalarNode || !strings.HasSuffix(k.Value, "List") {
		return nil
	}
	items := objects.Lookup(n, "items")
	if items == nil || items.Kind != yaml.SequenceNode {
		return nil
	}
	return items
}

// binaryLine reports whether data is not text (a NUL byte or invalid UTF-8) and the line where it
// first stops being text.
func binaryLine(data []byte) (int, bool) {
	if bytes.IndexByte(data, 0) < 0 && utf8.Valid(data) {
		return 0, false
	}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == 0 || (r == utf8.RuneError && size == 1) {
			return 1 + bytes.Count(data[:i], []byte("\n")), true
		}
		i += size
	}
	return 0, false
}
