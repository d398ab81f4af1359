package crds

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

var benchNodeClass = map[string]any{
	"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": map[string]any{"name": "default"},
	"spec": map[string]any{
		"amiSelectorTerms":           []any{map[string]any{"alias": "al2023@latest"}},
		"role":                       "KarpenterNodeRole-prod",
		"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "prod"}}},
		"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "prod"}}},
		"kubelet":                    map[string]any{"maxPods": int64(110)},
	},
}

// BenchmarkFirstValidation is what the first EC2NodeClass of a run costs: loading the built-in CRDs
// and building the schema and CEL validators (once per Set), then validating.
func BenchmarkFirstValidation(b *testing.B) {
	for b.Loop() {
		s, err := Embedded()
		if err != nil {
			b.Fatal(err)
		}
		if _, ok, err := s.Validate(context.Background(), benchNodeClass); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkValidation is each further EC2NodeClass with a spec validated before (another name): the
// remembered verdict.
func BenchmarkValidation(b *testing.B) {
	s, err := Embedded()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, ok, err := s.Validate(context.Background(), benchNodeClass); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkValidationDistinct is an EC2NodeClass unlike any validated before: no remembered verdict.
func BenchmarkValidationDistinct(b *testing.B) {
	s, err := Embedded()
	if err != nil {
		b.Fatal(err)
	}
	i := int64(0)
	for b.Loop() {
		i++
		obj := runtimeCopy(benchNodeClass)
		obj["spec"].(map[string]any)["kubelet"] = map[string]any{"maxPods": i}
		if _, ok, err := s.Validate(context.Background(), obj); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func runtimeCopy(m map[string]any) map[string]any { return runtime.DeepCopyJSON(m) }
