package rules

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/crds"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// builtinCRDs is the catalog's copy of the embedded Karpenter CRDs, whose validators are built on first
// use.
var builtinCRDs = &validators.Resource[crdSet]{Name: "Karpenter CRDs", New: func() crdSet {
	s, err := crds.Embedded()
	return crdSet{s, err}
}}

type crdSet struct {
	set *crds.Set
	err error
}

var karpenterCRDInvalid = &validators.Rule{
	ID:            "karpenter-crd-invalid",
	Kinds:         []string{validators.KindEC2NodeClass, validators.KindNodePool},
	DefaultAction: config.ActionDeny,
	Scope:         validators.ScopeCLIAndAudit,
	Summary:       "the API server refuses the object: Karpenter's CRD schema or one of its CEL rules fails, or a field is unknown",
	Doc: "Karpenter's CRDs validate every NodePool and EC2NodeClass: types, enums, patterns, required " +
		"fields and CEL rules (role or instanceProfile, not both; consolidateAfter with " +
		"WhenEmptyOrUnderutilized; ...). This rule runs that validation offline with the API server's own " +
		"code (k8s.io/apiextensions-apiserver) against the CRDs of the Karpenter release this build " +
		"supports (or those given with --karpenter-crds), so `check` says what `kubectl apply` would " +
		"say, with the field's line. Unknown fields are reported too: kubectl's default strict validation " +
		"refuses them, and clients that do not validate see them dropped. The webhook does not run it: the " +
		"API server has already validated what it sends. Versions the CRDs no longer serve are reported " +
		"by nodepool-v1beta1 and nodeclass-v1beta1, and the fields those rules explain are not repeated here. " +
		"A value holding a ${VAR} variable, which Flux's postBuild substitution or envsubst replaces before " +
		"the object is applied, is only a warning when the schema refuses it as written.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		set := c.CRDs
		if set == nil {
			builtin := validators.Shared(c, builtinCRDs)
			if builtin.err != nil {
				return nil, builtin.err
			}
			set = builtin.set
		}
		v := schemaVerdictOf(c, set, o)
		res, ok, err := v.res, v.ok, v.err
		if err != nil || !ok {
			return nil, err
		}
		explained := explainedFields(c, o)
		var out []validators.Finding
		for _, path := range res.UnknownFields {
			if explained.covers(path) {
				continue
			}
			out = append(out, validators.Finding{
				Field: path,
				Line:  o.Fields.Line(crds.PathElements(path)...),
				Message: fmt.Sprintf("kubectl apply fails with %s: strict decoding error: unknown field %q (%s has no such field; clients that do not validate strictly see it dropped)",
					kubectlCannotHandle(o), path, schemaName(o, set)),
				Fix: "remove " + path + ", or move it where the schema has it",
			})
		}
		for _, e := range res.Errors {
			if explained.covers(e.Field) {
				continue
			}
			f := validators.Finding{
				Field:   e.Field,
				Line:    o.Fields.Line(crds.PathElements(e.Field)...),
				Message: fmt.Sprintf("kubectl apply fails: The %s %q is invalid: %s", o.Kind, o.Name, e.Error()),
				Fix:     crdFix(e.Field, res.CELSkipped),
			}
			if v := placeholder(o.Fields.Value(crds.PathElements(e.Field)...)); v != "" {
				// Flux's postBuild substitution (and envsubst in CI) replaces ${VAR} before the API server
				// sees the value: the manifest may well work.
				f.AtMost = config.ActionWarn
				f.Message = fmt.Sprintf("%s: unless %s is substituted before the object is applied (Flux's postBuild substitution, envsubst), as it likely is", f.Message, v)
				f.Fix = "check the manifests as they are applied, variables substituted (for Flux: kustomize build DIR | flux envsubst | karpenter-guard check -f -)"
			}
			out = append(out, f)
		}
		return out, nil
	},
}

// schemaVerdict is what the API server would say of one object (see crds.Set.Validate).
type schemaVerdict struct {
	res crds.Result
	ok  bool
	err error
}

// schemaVerdicts are the verdicts on the Karpenter objects an evaluation judges, reached concurrently
// the first time the rule runs: validation is most of `check`'s time on a large input (BENCHMARKS.md),
// and objects are independent.
var schemaVerdicts = &validators.Analysis[*crds.Set, map[*objects.Object]schemaVerdict]{Name: "schema verdicts of the input"}

// schemaVerdictOf returns the verdict on o: from the input's, else validated alone.
func schemaVerdictOf(c *validators.Context, set *crds.Set, o *objects.Object) schemaVerdict {
	all := validators.Memo(c, schemaVerdicts, set, func() map[*objects.Object]schemaVerdict {
		return validateAll(c, set, c.Judged())
	})
	if v, ok := all[o]; ok {
		return v
	}
	return validateObject(c, set, o)
}

// validateAll validates the NodePools and EC2NodeClasses of objs with as many workers as there are
// processors.
func validateAll(ctx context.Context, set *crds.Set, objs []*objects.Object) map[*objects.Object]schemaVerdict {
	out := make(map[*objects.Object]schemaVerdict, len(objs))
	workers := runtime.GOMAXPROCS(0)
	if len(objs) < 4*workers {
		return out // a few objects: each is validated when its turn comes, without goroutines
	}
	var mu sync.Mutex
	work := make(chan *objects.Object)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range work {
				v := validateObject(ctx, set, o)
				mu.Lock()
				out[o] = v
				mu.Unlock()
			}
		}()
	}
	for _, o := range objs {
		if o.NodePool != nil || o.NodeClass != nil {
			work <- o
		}
	}
	close(work)
	wg.Wait()
	return out
}

// validateObject returns the verdict on o, whose content and digest o computes once.
func validateObject(ctx context.Context, set *crds.Set, o *objects.Object) schemaVerdict {
	res, ok, err := set.ValidateObject(ctx, o)
	return schemaVerdict{res: res, ok: ok, err: err}
}

// kubectlCannotHandle renders the start of the API server's strict-decoding error.
func kubectlCannotHandle(o *objects.Object) string {
	return fmt.Sprintf("%s in version %q cannot be handled as a %s", o.Kind, o.Version(), o.Kind)
}

// schemaName names the schema a finding was checked against: the built-in release's or a directory's.
func schemaName(o *objects.Object, set *crds.Set) string {
	return fmt.Sprintf("the %s %s schema of %s", o.APIVersion, o.Kind, set.Source)
}

// crdFix is the generic fix of a schema error: the API server's message already says what it wants.
// When schema errors kept the CEL rules from running, it says to check again.
func crdFix(field string, celSkipped bool) string {
	fix := "correct " + field + " as the message says"
	if field == "" || field == "<nil>" {
		fix = "correct the object as the message says"
	}
	if celSkipped {
		fix += ", then check again: the API server runs the CRD's CEL rules only on an object without schema errors"
	}
	return fix
}

// fieldSet is a set of field paths that covers its members and everything below them.
type fieldSet []string

func (s fieldSet) covers(path string) bool {
	for _, p := range s {
		if path == p || strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[") {
			return true
		}
	}
	return false
}

// explainedFields returns the fields of o that the v1beta1 migration rules report with their own
// message and fix (a WhenUnderutilized policy, a template kubelet), when they run: the schema's
// "Unsupported value" or "unknown field" would only repeat them less helpfully.
func explainedFields(c *validators.Context, o *objects.Object) fieldSet {
	var migration *validators.Rule
	switch o.Kind {
	case objects.KindNodePool:
		migration = nodepoolV1beta1
	case objects.KindEC2NodeClass:
		migration = nodeclassV1beta1
	}
	if migration == nil || c.Catalog() == nil || !runsIn(c, migration, o.Kind) {
		return nil
	}
	fs, err := migration.Check(c, o)
	if err != nil {
		return nil
	}
	var out fieldSet
	for _, f := range fs {
		out = append(out, f.Field)
	}
	return out
}

// runsIn reports whether r runs on objects of kind in c.
func runsIn(c *validators.Context, r *validators.Rule, kind string) bool {
	for _, in := range c.Catalog().RulesIn(c, kind) {
		if in == r {
			return true
		}
	}
	return false
}

// placeholder returns the first ${VAR} variable of v when v is a string, "" otherwise: a value a
// GitOps tool substitutes before applying, which the schema cannot judge as written. Only the value the
// schema refused counts: a variable elsewhere in a mapping says nothing of a rule about the mapping.
func placeholder(v any) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	if i := strings.Index(s, "${"); i >= 0 {
		if j := strings.IndexByte(s[i:], '}'); j > 2 {
			return s[i : i+j+1]
		}
	}
	return ""
}
