// Package crds holds the Karpenter CRDs this build supports and validates objects against them with the
// API server's own code (k8s.io/apiextensions-apiserver): the OpenAPI schema, the fields a strict
// kubectl apply refuses as unknown, the list-type invariants and the CEL x-kubernetes-validations, in
// the order the API server runs them on a create. `check` then says offline what `kubectl apply` would
// say, and `--fix` never writes what the API server refuses.
package crds

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/objects"
)

// Release is the Karpenter release whose CRDs are embedded (crds/karpenter; `make karpenter-crds`).
const Release = "v1.14.1"

//go:embed karpenter/*.yaml
var embedded embed.FS

// Set is a set of CRDs to validate objects against, by group, version and kind. Each served version's
// validators are built on first use (CEL compiles every rule of the CRD), once per Set.
type Set struct {
	// Source says where the CRDs came from, for messages: "Karpenter v1.14.1 (built in)" or a directory.
	Source   string
	versions map[schema.GroupVersionKind]*version
	// kinds lists every group and kind defined, served version or not.
	kinds map[schema.GroupKind][]string
}

type version struct {
	crd   string
	props *apiextensions.JSONSchemaProps

	once       sync.Once
	err        error
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator
	// celReadsMetadata is set when a CEL rule of the schema mentions metadata: results then depend on
	// the whole object, not only on what is outside metadata.
	celReadsMetadata bool
	// results remembers the verdicts on the parts of objects outside metadata (see Validate);
	// objectResults the verdicts on whole objects, so that one validated before skips decoding its
	// metadata too.
	results       *lru.Cache[[sha256.Size]byte, Result]
	objectResults *lru.Cache[[sha256.Size]byte, Result]
}

// rememberedResults is how many distinct objects a version remembers its verdict on, both without
// metadata and whole: the pools and classes of a GitOps repository or a cluster repeat a few specs
// under many names, and the CEL rules cost most of a validation (BENCHMARKS.md). A whole object's entry
// is its digest and a Result whose slices it shares with the spec's entry (a few hundred bytes, a few
// MiB in all).
const rememberedResults = 16384

// Embedded returns the CRDs of Release, built into the binary.
func Embedded() (*Set, error) {
	s, err := loadFS(embedded, "karpenter")
	if err != nil {
		return nil, fmt.Errorf("built-in Karpenter %s CRDs: %w", Release, err)
	}
	s.Source = "Karpenter " + Release + " (built in)"
	return s, nil
}

// Load reads every CustomResourceDefinition in the .yaml, .yml and .json files of dir (documents of other
// kinds are skipped), such as a Karpenter release's pkg/apis/crds or its Helm chart's crds directory.
func Load(dir string) (*Set, error) {
	s, err := loadFS(os.DirFS(dir), ".")
	if err != nil {
		return nil, fmt.Errorf("read CRDs from %s: %w", dir, err)
	}
	if len(s.kinds) == 0 {
		return nil, fmt.Errorf("read CRDs from %s: no CustomResourceDefinition found in its .yaml, .yml or .json files", dir)
	}
	s.Source = dir
	return s, nil
}

func loadFS(fsys fs.FS, dir string) (*Set, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case ".yaml", ".yml", ".json":
		default:
			continue
		}
		if e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(fsys, filepath.ToSlash(filepath.Join(dir, e.Name())))
		if err != nil {
			return nil, err
		}
		found, err := decodeCRDs(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		crds = append(crds, found...)
	}
	return New(crds...)
}

// decodeCRDs returns the CustomResourceDefinitions among the YAML or JSON documents of data.
func decodeCRDs(data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	r := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw runtime.RawExtension
		if err := r.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(bytes.TrimSpace(raw.Raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw.Raw), []byte("null")) {
			continue
		}
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(raw.Raw, &head); err != nil {
			return nil, err
		}
		if head.Kind != "CustomResourceDefinition" || head.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw.Raw, crd); err != nil {
			return nil, fmt.Errorf("CustomResourceDefinition: %w", err)
		}
		out = append(out, crd)
	}
}

// New returns a Set of the given CRDs' served versions.
func New(crds ...*apiextensionsv1.CustomResourceDefinition) (*Set, error) {
	s := &Set{versions: map[schema.GroupVersionKind]*version{}, kinds: map[schema.GroupKind][]string{}}
	for _, crd := range crds {
		gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			s.kinds[gk] = append(s.kinds[gk], v.Name)
			val := v.Schema
			if val == nil || val.OpenAPIV3Schema == nil {
				return nil, fmt.Errorf("CRD %s version %s has no schema", crd.Name, v.Name)
			}
			internal := &apiextensions.CustomResourceValidation{}
			if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
				return nil, fmt.Errorf("CRD %s version %s: convert schema: %w", crd.Name, v.Name, err)
			}
			s.versions[gk.WithVersion(v.Name)] = &version{crd: crd.Name, props: internal.OpenAPIV3Schema}
		}
	}
	for gk := range s.kinds {
		sort.Strings(s.kinds[gk])
	}
	return s, nil
}

// build makes the version's validators the way the API server's CRD handler does.
func (v *version) build() error {
	v.once.Do(func() {
		st, err := structuralschema.NewStructural(v.props)
		if err != nil {
			v.err = fmt.Errorf("CRD %s: structural schema: %w", v.crd, err)
			return
		}
		st = st.DeepCopy()
		if err := structuraldefaulting.PruneDefaults(st); err != nil {
			v.err = fmt.Errorf("CRD %s: defaults: %w", v.crd, err)
			return
		}
		validator, _, err := apiservervalidation.NewSchemaValidator(v.props)
		if err != nil {
			v.err = fmt.Errorf("CRD %s: schema validator: %w", v.crd, err)
			return
		}
		v.structural, v.validator = st, validator
		v.cel = cel.NewValidator(st, true, celconfig.PerCallLimit)
		v.celReadsMetadata = rulesMention(v.props, "metadata")
		if v.results, v.err = lru.New[[sha256.Size]byte, Result](rememberedResults); v.err != nil {
			return
		}
		v.objectResults, v.err = lru.New[[sha256.Size]byte, Result](rememberedResults)
	})
	return v.err
}

// Served returns the versions the Set serves for a group and kind, sorted (none when it does not define
// the kind).
func (s *Set) Served(group, kind string) []string {
	return s.kinds[schema.GroupKind{Group: group, Kind: kind}]
}

// Result is what the API server would say about one object on a create.
type Result struct {
	// UnknownFields are the paths of fields the schema does not define: a strict kubectl apply (its
	// default) refuses the object with `strict decoding error: unknown field "<path>"`, and a
	// non-strict client sees them dropped.
	UnknownFields []string
	// Errors are the validation errors, each rendered by Error() as the API server prints it
	// ("spec.disruption.consolidateAfter: Required value").
	Errors field.ErrorList
	// CELSkipped is set when schema errors kept the CEL rules from running, as the API server skips
	// them then (it adds "some validation rules were not checked because the object was invalid"):
	// more errors may follow once Errors are corrected.
	CELSkipped bool
}

// Validate validates obj (a decoded JSON object: map[string]any with int64 and float64 numbers, as
// the API server decodes a request) against its kind's CRD, without changing it. ok is false when the
// Set does not serve obj's apiVersion and kind. It follows the API server's create path: metadata and
// unknown fields are pruned and nulls without defaults dropped, defaults are applied, status is
// dropped (Karpenter's CRDs have the status subresource), then the schema, embedded metadata, list
// types and, when none of those errors blocks them, the CEL rules are checked. Verdicts are remembered
// by the object without its metadata (see cacheKey) and by the whole object; the Errors and
// UnknownFields of a result are shared and must not be modified.
func (s *Set) Validate(ctx context.Context, obj map[string]any) (res Result, ok bool, err error) {
	return s.validate(ctx, obj, func() (objects.ContentDigest, error) { return objects.DigestContent(obj) })
}

// ValidateObject is Validate of o's content (objects.Object.Content), its verdict remembered by the
// digest o computes once (objects.Object.ContentDigest): the CLI and the audit validate the same
// objects in every evaluation, and encoding an object to find its verdict costs as much as the rest of
// a remembered validation.
func (s *Set) ValidateObject(ctx context.Context, o *objects.Object) (res Result, ok bool, err error) {
	content, err := o.Content()
	if err != nil {
		return Result{}, false, err
	}
	return s.validate(ctx, content, o.ContentDigest)
}

// validate is Validate with obj's digest from digest, asked only when obj is of a served kind.
func (s *Set) validate(ctx context.Context, obj map[string]any, digest func() (objects.ContentDigest, error)) (res Result, ok bool, err error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return Result{}, false, nil
	}
	v := s.versions[gv.WithKind(kind)]
	if v == nil {
		return Result{}, false, nil
	}
	if err := v.build(); err != nil {
		return Result{}, false, err
	}
	d, err := digest()
	if err != nil {
		return Result{}, false, err
	}
	whole := wholeKey(d)
	if r, ok := v.objectResults.Get(whole); ok {
		return r, true, nil
	}
	meta, hasMeta, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		// What the API server answers to metadata it cannot decode (a label that is a list, ...).
		res = Result{Errors: field.ErrorList{field.Invalid(field.NewPath("metadata"), nil, err.Error())}}
		v.objectResults.Add(whole, res)
		return res, true, nil
	}
	key := v.cacheKey(d)
	if r, ok := v.results.Get(key); ok {
		r = r.withMetadataUnknown(metaUnknown)
		v.objectResults.Add(whole, r)
		return r, true, nil
	}
	u := runtime.DeepCopyJSON(obj)
	res.UnknownFields = structuralpruning.PruneWithOptions(u, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u, v.structural)
	if err, paths := schemaobjectmeta.CoerceWithOptions(nil, u, v.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true}); err != nil {
		res.Errors = field.ErrorList{err}
	} else {
		res.UnknownFields = append(res.UnknownFields, paths...)
		if hasMeta {
			if err := schemaobjectmeta.SetObjectMeta(u, meta); err != nil {
				return Result{}, false, fmt.Errorf("restore metadata: %w", err)
			}
		}
		structuraldefaulting.Default(u, v.structural)
		delete(u, "status")
		errs := apiservervalidation.ValidateCustomResource(nil, u, v.validator)
		errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u, v.structural, false)...)
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, u)...)
		if blocksCEL(errs) {
			res.CELSkipped = true
		} else {
			celErrs, _ := v.cel.Validate(ctx, nil, v.structural, u, nil, celconfig.RuntimeCELCostBudget)
			errs = append(errs, celErrs...)
		}
		res.Errors = errs
	}
	v.results.Add(key, res)
	res = res.withMetadataUnknown(metaUnknown)
	v.objectResults.Add(whole, res)
	return res, true, nil
}

// withMetadataUnknown returns r with the unknown metadata fields of one object added, sorted.
func (r Result) withMetadataUnknown(paths []string) Result {
	if len(paths) == 0 {
		return r
	}
	r.UnknownFields = append(append([]string(nil), paths...), r.UnknownFields...)
	sort.Strings(r.UnknownFields)
	return r
}

// cacheKey identifies what a verdict depends on: the object without its metadata (names, labels,
// annotations and the server's fields, which no Karpenter CEL rule reads, and whose unknown fields
// Validate finds apart), or the whole object when a CEL rule of the schema mentions metadata.
func (v *version) cacheKey(d objects.ContentDigest) [sha256.Size]byte {
	if !v.celReadsMetadata {
		return d.WithoutMetadata
	}
	return wholeKey(d)
}

// wholeKey identifies the whole object, metadata included.
func wholeKey(d objects.ContentDigest) [sha256.Size]byte {
	return sha256.Sum256(append(d.WithoutMetadata[:], d.Metadata[:]...))
}

// rulesMention reports whether a CEL rule or message expression of the schema mentions word.
func rulesMention(p *apiextensions.JSONSchemaProps, word string) bool {
	if p == nil {
		return false
	}
	for _, r := range p.XValidations {
		if strings.Contains(r.Rule, word) || strings.Contains(r.MessageExpression, word) {
			return true
		}
	}
	for _, c := range p.Properties {
		if rulesMention(&c, word) {
			return true
		}
	}
	if p.Items != nil {
		if rulesMention(p.Items.Schema, word) {
			return true
		}
		for _, c := range p.Items.JSONSchemas {
			if rulesMention(&c, word) {
				return true
			}
		}
	}
	if p.AdditionalProperties != nil && rulesMention(p.AdditionalProperties.Schema, word) {
		return true
	}
	for _, group := range [][]apiextensions.JSONSchemaProps{p.AllOf, p.AnyOf, p.OneOf} {
		for _, c := range group {
			if rulesMention(&c, word) {
				return true
			}
		}
	}
	return false
}

// blocksCEL reports whether the API server would skip the CEL rules for these schema errors (the rules
// may assume what the schema guarantees).
func blocksCEL(errs field.ErrorList) bool {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// PathElements splits a field path as the API server prints it ("spec.amiSelectorTerms[0].tags[team]",
// or an unknown field's "spec.template.spec.kubelet") into mapping keys (string) and list indexes
// (int), as objects.Fields takes them.
func PathElements(path string) []any {
	var out []any
	for i := 0; i < len(path); {
		switch path[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return append(out, path[i+1:])
			}
			inner := path[i+1 : i+end]
			if n, err := strconv.Atoi(inner); err == nil && n >= 0 {
				out = append(out, n)
			} else {
				out = append(out, inner)
			}
			i += end + 1
		default:
			end := strings.IndexAny(path[i:], ".[")
			if end < 0 {
				end = len(path) - i
			}
			out = append(out, path[i:i+end])
			i += end
		}
	}
	return out
}
