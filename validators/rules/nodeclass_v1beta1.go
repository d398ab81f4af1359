package rules

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
)

var nodeclassV1beta1 = &validators.Rule{
	ID:            "nodeclass-v1beta1",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Fixable:       true,
	Scope:         validators.ScopeCLI,
	Summary:       "`karpenter.k8s.aws/v1beta1`, `amiFamily: Ubuntu`, or no `amiSelectorTerms`",
	Doc: "Karpenter serves only karpenter.k8s.aws/v1 since v1.1, so a v1beta1 EC2NodeClass fails to apply " +
		"(\"no matches for kind\"). v1 also removed amiFamily Ubuntu and made amiSelectorTerms required: the " +
		"family default AMIs of v1beta1 are now written as an alias term. The fix sets apiVersion to v1 and, " +
		"for AL2, AL2023, Bottlerocket and Windows families, adds `alias: <family>@latest` (the v1beta1 " +
		"behaviour; pin a release for production). Ubuntu is reported, not converted: move to AL2023 or to " +
		"Custom with your own AMI.",
	Check: func(_ *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		nc := o.NodeClass
		var out []validators.Finding
		if o.Version() == "v1beta1" {
			f := validators.Finding{
				Field:   "apiVersion",
				Line:    o.Fields.Line("apiVersion"),
				Message: "karpenter.k8s.aws/v1beta1 is no longer served (Karpenter v1.1 and later), so kubectl apply fails with \"no matches for kind EC2NodeClass\"",
				Fix:     "apiVersion: karpenter.k8s.aws/v1",
				Edits:   []validators.Edit{{Object: o, Op: validators.EditSet, Key: "apiVersion", Value: validators.Scalar(objects.GroupKarpenterAWS + "/v1")}},
			}
			if !convertibleToV1(o) {
				// A v1 class without AMI terms (Ubuntu, or a family without an alias) is refused by the
				// v1 schema: --fix does not write it.
				f.Fix += ", once the AMI findings below are resolved by hand (v1 refuses the class as it is, so --fix leaves it)"
				f.Edits = nil
			}
			out = append(out, f)
		}
		if nc.Spec.AMIFamily == userdata.FamilyUbuntu {
			out = append(out, validators.Finding{
				Field:   "spec.amiFamily",
				Line:    o.Fields.Line("spec", "amiFamily"),
				Message: "amiFamily Ubuntu was removed in Karpenter v1",
				Fix:     "use amiFamily: AL2023 with alias: al2023@latest, or amiFamily: Custom with an amiSelectorTerms term for your Ubuntu AMI and userData that bootstraps it",
			})
		}
		if len(nc.Spec.AMISelectorTerms) == 0 && nc.Spec.AMIFamily != userdata.FamilyUbuntu {
			f := validators.Finding{
				Field:   "spec.amiSelectorTerms",
				Line:    o.Fields.Line("spec", "amiSelectorTerms"),
				Message: "amiSelectorTerms is required in v1: the family's default AMIs are no longer implied",
			}
			a := ami.DefaultAlias(nc.Spec.AMIFamily)
			switch {
			case o.Fields.Has("spec", "amiSelectorTerms"):
				f.Fix = "write at least one term, e.g. - alias: al2023@latest"
			case a != "" && o.Fields.Value("spec") != nil:
				f.Fix = "amiSelectorTerms: [{alias: " + a + "}]"
				if pin := ami.PinnedAlias(strings.TrimSuffix(a, "@latest")); pin != "" {
					f.Fix += " (pin a release such as " + pin + " for production)"
				}
				f.Edits = []validators.Edit{{Object: o, Path: []any{"spec"}, Op: validators.EditAdd, Key: "amiSelectorTerms", Value: aliasTerms(a)}}
			default:
				f.Fix = fmt.Sprintf("add amiSelectorTerms selecting the AMI for amiFamily %q (by id, or name with owner)", nc.Spec.AMIFamily)
				if nc.Spec.AMIFamily == "" {
					f.Fix = "add amiSelectorTerms, e.g. - alias: al2023@latest (an alias also sets the AMI family)"
				}
			}
			out = append(out, f)
		}
		return out, nil
	},
}

// convertibleToV1 reports whether --fix can make a v1beta1 class one the v1 schema accepts: it has
// amiSelectorTerms, or a family whose default AMIs an alias term stands for.
func convertibleToV1(o *objects.Object) bool {
	nc := o.NodeClass
	if nc.Spec.AMIFamily == userdata.FamilyUbuntu {
		return false
	}
	if len(nc.Spec.AMISelectorTerms) > 0 {
		return true
	}
	return ami.DefaultAlias(nc.Spec.AMIFamily) != "" && !o.Fields.Has("spec", "amiSelectorTerms") && o.Fields.Value("spec") != nil
}

// aliasTerms returns amiSelectorTerms holding one alias term, for Edit values.
func aliasTerms(a string) *yaml.Node {
	term := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{validators.Scalar("alias"), validators.Scalar(a)}}
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{term}}
}
