package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var selectorTermIgnoredFields = &validators.Rule{
	ID:            "selector-term-ignored-fields",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Summary:       "a selector term mixes `id` with `tags`/`name`, or an AMI term mixes `ssmParameter` with other fields",
	Doc: "Inside one selector term fields are ANDed, but a subnet or security-group term with an id selects " +
		"by the id alone, and an AMI term with ssmParameter resolves the parameter alone: the other fields " +
		"are silently ignored, and the CRD admits the term when another term is clean. Split the term into " +
		"one term per intent; terms are ORed.",
	Check: func(_ *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		var out []validators.Finding
		for _, sel := range []struct{ field, what string }{
			{"subnetSelectorTerms", "subnet"},
			{"securityGroupSelectorTerms", "security-group"},
		} {
			for i := range o.Fields.Len("spec", sel.field) {
				ks := o.Fields.Keys("spec", sel.field, i)
				if !slices.Contains(ks, "id") {
					continue
				}
				var ignored []string
				for _, k := range ks {
					if k == "tags" || k == "name" {
						ignored = append(ignored, k)
					}
				}
				if len(ignored) == 0 {
					continue
				}
				id := fmt.Sprint(o.Fields.Value("spec", sel.field, i, "id"))
				out = append(out, validators.Finding{
					Field:   objects.Path("spec", sel.field, i),
					Line:    o.Fields.Line("spec", sel.field, i),
					Message: fmt.Sprintf("%s term %d sets id %q together with %s: Karpenter selects by the id alone and silently ignores %s", sel.what, i, id, strings.Join(ignored, " and "), strings.Join(ignored, " and ")),
					Fix:     fmt.Sprintf("split it into two terms: `- id: %s` and a term with only %s", id, strings.Join(ignored, " and ")),
				})
			}
		}
		for i := range o.NodeClass.Spec.AMISelectorTerms {
			ks := o.Fields.Keys("spec", "amiSelectorTerms", i)
			if !slices.Contains(ks, "ssmParameter") {
				continue
			}
			var others []string
			for _, k := range ks {
				switch k {
				case "alias", "id", "tags", "name", "owner":
					others = append(others, k)
				}
			}
			if len(others) == 0 {
				continue
			}
			out = append(out, validators.Finding{
				Field:   objects.Path("spec", "amiSelectorTerms", i),
				Line:    o.Fields.Line("spec", "amiSelectorTerms", i),
				Message: fmt.Sprintf("AMI term %d mixes ssmParameter with %s: part of the term is silently ignored", i, strings.Join(others, ", ")),
				Fix:     fmt.Sprintf("split it: one term with only ssmParameter, another with %s", strings.Join(others, ", ")),
			})
		}
		return out, nil
	},
}
