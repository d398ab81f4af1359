package crds

import (
	"context"
	"reflect"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/objects"
)

// TestValidateObject: an object's verdict is Validate's on its content, the first time and when
// remembered whole, for an invalid spec, unknown metadata fields and metadata the API server cannot
// decode; and a remembered object's metadata does not leak into another's verdict on the same spec.
func TestValidateObject(t *testing.T) {
	s, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	spec := `"spec":{"weight":500,"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"x"},"requirements":[]}}}`
	for _, tc := range []struct {
		doc string
		// firstError and unknown are what the verdict must hold, so that each case tests a path.
		firstError, unknown string
	}{
		{`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"a"},` + spec + `}`, "spec.weight", ""},
		{`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"b","labelz":{}},` + spec + `}`, "spec.weight", "metadata.labelz"},
		{`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"c","generation":"one"},` + spec + `}`, "metadata", ""},
		{`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"d"},` + spec + `}`, "spec.weight", ""},
	} {
		doc := tc.doc
		d, err := objects.FromJSON([]byte(doc), "")
		if err != nil {
			t.Fatal(err)
		}
		content, err := d.Object.Content()
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := Embedded() // remembers nothing yet
		if err != nil {
			t.Fatal(err)
		}
		want, wantOK, err := fresh.Validate(context.Background(), content)
		if err != nil || !wantOK || len(want.Errors) == 0 || want.Errors[0].Field != tc.firstError ||
			(tc.unknown != "" && !reflect.DeepEqual(want.UnknownFields, []string{tc.unknown})) || (tc.unknown == "" && len(want.UnknownFields) > 0) {
			t.Fatalf("%s: Validate = %+v, %v, %v; want the error of %s and unknown fields %q", doc, want, wantOK, err, tc.firstError, tc.unknown)
		}
		for i := range 2 {
			got, ok, err := s.ValidateObject(context.Background(), d.Object)
			if err != nil || !ok || !sameResult(got, want) {
				t.Errorf("%s, validation %d: %+v, %v, %v; Validate of its content on a new Set: %+v", doc, i+1, got, ok, err, want)
			}
		}
	}
}

// sameResult compares results by what the API server would print.
func sameResult(a, b Result) bool {
	if !reflect.DeepEqual(a.UnknownFields, b.UnknownFields) || a.CELSkipped != b.CELSkipped || len(a.Errors) != len(b.Errors) {
		return false
	}
	for i := range a.Errors {
		if a.Errors[i].Error() != b.Errors[i].Error() {
			return false
		}
	}
	return true
}
