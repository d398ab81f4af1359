package webhook

import (
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	jsonpatch "gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// fixesFor picks the findings whose fixes the request gets. On UPDATE, a finding whose edits touch a
// field the request leaves as stored is skipped (returned in skipped): the fix would change a live
// EC2NodeClass the user did not edit, and Karpenter would replace its nodes.
func fixesFor(rv *review, findings []validators.Finding) (applied, skipped []validators.Finding) {
	for _, f := range findings {
		if len(f.Edits) == 0 {
			continue
		}
		if rv.req.Operation == admissionv1.Update && editsUnchanged(rv, f.Edits) {
			skipped = append(skipped, f)
			continue
		}
		applied = append(applied, f)
	}
	return applied, skipped
}

// patchesFor turns the edits of the applied findings into JSON patch operations.
func patchesFor(rv *review, applied []validators.Finding) []jsonpatch.JsonPatchOperation {
	var ops []jsonpatch.JsonPatchOperation
	for _, f := range applied {
		for _, e := range f.Edits {
			ops = append(ops, patchOps(rv.obj.Fields, e)...)
		}
	}
	return ops
}

// editsUnchanged reports whether every field the edits touch is the same in the stored object: for a
// key that is added, the mapping it goes into (an AMI term); else the key's own value.
func editsUnchanged(rv *review, edits []validators.Edit) bool {
	for _, e := range edits {
		path := append(append([]any{}, e.Path...), e.Key)
		if e.Op == validators.EditAdd {
			path = e.Path
		}
		if !rv.unchanged(path) {
			return false
		}
	}
	return true
}

// patchOps is one edit as JSON patch operations on the object's JSON, whose fields are fields.
func patchOps(fields objects.Fields, e validators.Edit) []jsonpatch.JsonPatchOperation {
	at := pointer(e.Path...)
	key := at + "/" + escape(e.Key)
	switch e.Op {
	case validators.EditSet:
		return []jsonpatch.JsonPatchOperation{jsonpatch.NewOperation("replace", key, value(e.Value))}
	case validators.EditAdd:
		return []jsonpatch.JsonPatchOperation{jsonpatch.NewOperation("add", key, value(e.Value))}
	case validators.EditDelete:
		return []jsonpatch.JsonPatchOperation{jsonpatch.NewOperation("remove", key, nil)}
	case validators.EditRename:
		var val any
		if e.Value != nil {
			val = value(e.Value)
		} else { // the value moves with the key
			val = fields.Value(append(append([]any{}, e.Path...), e.Key)...)
		}
		return []jsonpatch.JsonPatchOperation{
			jsonpatch.NewOperation("remove", key, nil),
			jsonpatch.NewOperation("add", at+"/"+escape(e.NewKey), val),
		}
	}
	return nil
}

// pointer renders a JSON pointer (RFC 6901) from field path elements.
func pointer(path ...any) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		switch v := p.(type) {
		case int:
			b.WriteString(strconv.Itoa(v))
		case string:
			b.WriteString(escape(v))
		}
	}
	return b.String()
}

// pointerEscaper escapes a JSON-pointer token (RFC 6901); a Replacer is safe for concurrent use.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func escape(s string) string { return pointerEscaper.Replace(s) }

// value decodes an edit's YAML value into the JSON value it stands for.
func value(n *yaml.Node) any {
	if n == nil {
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	return v
}
