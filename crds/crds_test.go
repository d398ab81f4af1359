package crds

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPathElements(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []any
	}{
		{"spec.disruption.consolidateAfter", []any{"spec", "disruption", "consolidateAfter"}},
		{"spec.amiSelectorTerms[0].alias", []any{"spec", "amiSelectorTerms", 0, "alias"}},
		{"spec.tags[kubernetes.io/cluster/prod]", []any{"spec", "tags", "kubernetes.io/cluster/prod"}},
		{"spec.template.spec.requirements[12]", []any{"spec", "template", "spec", "requirements", 12}},
		{"", nil},
		{"spec[", []any{"spec", ""}},
	} {
		if got := PathElements(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("PathElements(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func TestEmbeddedServesV1Only(t *testing.T) {
	s, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, gk := range [][2]string{{"karpenter.sh", "NodePool"}, {"karpenter.k8s.aws", "EC2NodeClass"}} {
		if got := s.Served(gk[0], gk[1]); !reflect.DeepEqual(got, []string{"v1"}) {
			t.Errorf("%s %s served versions %v, want [v1]", gk[0], gk[1], got)
		}
	}
	for _, obj := range []map[string]any{
		{"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool"},
		{"apiVersion": "v1", "kind": "ConfigMap"},
		{"apiVersion": "karpenter.sh/v1/extra", "kind": "NodePool"},
		{},
	} {
		if _, ok, err := s.Validate(context.Background(), obj); ok || err != nil {
			t.Errorf("Validate(%v) = ok %v, err %v: want not handled", obj, ok, err)
		}
	}
}

// TestValidateDoesNotChangeTheObject: the object is the caller's (the watch cache's map, shared).
func TestValidateDoesNotChangeTheObject(t *testing.T) {
	s, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "x"},
		"spec": map[string]any{"unknown": true, "disruption": nil, "template": map[string]any{"spec": map[string]any{}}}, "status": map[string]any{}}
	before := fmtValue(obj)
	res, ok, err := s.Validate(context.Background(), obj)
	if !ok || err != nil {
		t.Fatalf("ok %v, err %v", ok, err)
	}
	if fmtValue(obj) != before {
		t.Errorf("Validate changed the object:\n%s\nwas\n%s", fmtValue(obj), before)
	}
	if !reflect.DeepEqual(res.UnknownFields, []string{"spec.unknown"}) || len(res.Errors) == 0 || !res.CELSkipped {
		t.Errorf("result %+v: want spec.unknown, errors for the missing nodeClassRef and requirements, CEL skipped", res)
	}
}

// fmtValue renders a JSON value with sorted keys, to compare before and after.
func fmtValue(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

func TestLoadErrors(t *testing.T) {
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "notes.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "crd.yaml"), []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {group: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{filepath.Join(empty, "missing"), "no such file or directory"},
		{empty, "no CustomResourceDefinition found"},
		{broken, "crd.yaml"},
	} {
		if _, err := Load(tc.dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%s) = %v, want an error containing %q", tc.dir, err, tc.want)
		}
	}
	s, err := Load("karpenter")
	if err != nil || s.Source != "karpenter" || len(s.Served("karpenter.sh", "NodePool")) != 1 {
		t.Errorf("Load(karpenter) = %v, %v", s, err)
	}
}

// TestRememberedVerdicts: an object validated before under another name, with other metadata, gets the
// same verdict, and its own metadata's unknown fields.
func TestRememberedVerdicts(t *testing.T) {
	s, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	pool := func(meta map[string]any) map[string]any {
		return map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": meta,
			"spec": map[string]any{"weight": int64(500), "template": map[string]any{"spec": map[string]any{
				"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"},
				"requirements": []any{}}}}}
	}
	first, _, err := s.Validate(context.Background(), pool(map[string]any{"name": "a"}))
	if err != nil || len(first.Errors) != 1 || len(first.UnknownFields) != 0 {
		t.Fatalf("first: %+v, %v (want the weight's error only)", first, err)
	}
	second, _, err := s.Validate(context.Background(), pool(map[string]any{"name": "b", "labelz": map[string]any{}}))
	if err != nil || len(second.Errors) != 1 || second.Errors[0].Error() != first.Errors[0].Error() || !reflect.DeepEqual(second.UnknownFields, []string{"metadata.labelz"}) {
		t.Errorf("second: %+v, %v (want the same error and metadata.labelz)", second, err)
	}
	third, _, _ := s.Validate(context.Background(), pool(map[string]any{"name": "c"}))
	if len(third.UnknownFields) != 0 {
		t.Errorf("the second object's metadata leaked into the third's verdict: %v", third.UnknownFields)
	}
}
