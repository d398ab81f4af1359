package validators

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// eksOptimizedPrefixes are the name prefixes of AWS-published EKS-optimized AMIs (domain.md §4).
var eksOptimizedPrefixes = []string{
	"amazon-eks-node-",
	"amazon-eks-arm64-node-",
	"amazon-eks-gpu-node-",
	"bottlerocket-aws-k8s-",
	"Windows_Server-",
}

// isEKSOptimizedName reports whether an AMI name pattern selects AWS-published EKS-optimized images.
func isEKSOptimizedName(name string) bool {
	for _, p := range eksOptimizedPrefixes {
		if strings.HasPrefix(name, p) {
			return p != "Windows_Server-" || strings.Contains(name, "EKS_Optimized")
		}
	}
	return false
}

var amiSelectorMissingOwner = &Rule{
	ID:            "ami-selector-missing-owner",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Fixable:       true,
	Summary:       "an `amiSelectorTerms` term has `name` but no `owner`",
	Doc: "A name term without an owner searches the images of your own account and of Amazon, so an " +
		"image in your account whose name happens to match a public EKS AMI pattern is picked silently " +
		"(an old test image, a copied base image). The fix adds the owner: `amazon` for the EKS-optimized " +
		"name patterns, else amiOwners.defaultOwner from the configuration; with no default it is reported, " +
		"never guessed.",
	Check: func(c *Context, o *objects.Object) []Finding {
		var out []Finding
		for i, t := range o.NodeClass.Spec.AMISelectorTerms {
			if t.Name == "" || t.Owner != "" || has(o, "spec", "amiSelectorTerms", i, "owner") {
				continue
			}
			f := Finding{
				Field:   objects.Path("spec", "amiSelectorTerms", i),
				Line:    lineAt(o, "spec", "amiSelectorTerms", i),
				Message: fmt.Sprintf("AMI term selects by name %q with no owner, so images in this account named alike are picked too", t.Name),
			}
			owner := ""
			switch {
			case isEKSOptimizedName(t.Name):
				owner = "amazon"
			case c.Config.AMIOwners.DefaultOwner != "":
				owner = c.Config.AMIOwners.DefaultOwner
			}
			if owner == "" {
				f.Fix = "add owner: self, or the account id that publishes the image (set amiOwners.defaultOwner to let --fix add it)"
			} else {
				f.Fix = "add owner: " + owner
				f.Edits = []Edit{{Object: o, Path: []any{"spec", "amiSelectorTerms", i}, Op: EditAdd, Key: "owner", Value: ownerScalar(owner)}}
			}
			out = append(out, f)
		}
		return out
	},
}

// ownerScalar renders an owner, quoting account ids so YAML keeps them strings.
func ownerScalar(owner string) *yaml.Node {
	n := Scalar(owner)
	if strings.Trim(owner, "0123456789") == "" {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}
