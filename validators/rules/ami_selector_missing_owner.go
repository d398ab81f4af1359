package rules

import (
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
)

var amiSelectorMissingOwner = &validators.Rule{
	ID:            "ami-selector-missing-owner",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Fixable:       true,
	Summary:       "an `amiSelectorTerms` term has `name` but no `owner`",
	Doc: "A name term without an owner searches the images of your own account and of Amazon, so an " +
		"image in your account whose name happens to match a public EKS AMI pattern is picked silently " +
		"(an old test image, a copied base image). It denies when image facts show the term picking images " +
		"of several owners, or an image named like the EKS-optimized AMIs that Amazon did not publish; " +
		"otherwise the term works today and the finding is at most a warning. The fix adds the owner: `amazon` for the EKS-optimized " +
		"name patterns, else amiOwners.defaultOwner from the configuration; with no default it is reported, " +
		"never guessed. With image facts, the fix adds the one owner the term resolves to, and reports " +
		"instead when the term resolves to images of several owners.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		var out []validators.Finding
		for i, t := range o.NodeClass.Spec.AMISelectorTerms {
			if t.Name == "" || t.Owner != "" || o.Fields.Has("spec", "amiSelectorTerms", i, "owner") {
				continue
			}
			// A leading wildcard hides the EKS image name from the prefix test, not from this one.
			namesEKSImage := isEKSOptimizedName(strings.TrimLeft(t.Name, "*?"))
			msg := fmt.Sprintf("AMI term selects by name %q with no owner, so images in this account named alike are picked too", t.Name)
			if !namesEKSImage {
				msg = fmt.Sprintf("AMI term selects by name %q with no owner, so EC2 searches this account and Amazon's public images and picks any image named alike in either", t.Name)
			}
			f := validators.Finding{
				Field:   objects.Path("spec", "amiSelectorTerms", i),
				Line:    o.Fields.Line("spec", "amiSelectorTerms", i),
				Message: msg,
			}
			owner, several := resolvedOwner(c, t)
			// The term works as long as what it picks is the image meant: a deny needs image facts
			// showing it picks images of several owners, or an image named like Amazon's EKS AMIs that
			// Amazon did not publish. Otherwise it is a risk, not a failure: warn.
			if len(several) == 0 && (owner == "" || owner == "amazon" || !namesEKSImage) {
				f.AtMost = config.ActionWarn
				if owner == "" && c.Facts.Known(c, facts.Images) != nil {
					f.Message += " (without image facts, whether it picks a wrong image today is unknown)"
				}
			} else if len(several) == 0 {
				f.Message += fmt.Sprintf("; today it picks images of %s, not Amazon's EKS-optimized ones", owner)
			}
			switch {
			case len(several) == 0 && owner != "" && owner != "amazon" && namesEKSImage:
				f.Fix = fmt.Sprintf("add owner: amazon for the EKS-optimized image the name stands for, or owner: %s if this account's copy is the one you mean (never guessed)", owner)
				out = append(out, f)
				continue
			case len(several) > 0:
				var choices []string
				for _, img := range several {
					if choice := "owner: " + img.Owner(); !slices.Contains(choices, choice) {
						choices = append(choices, choice)
					}
				}
				f.Message += "; it resolves to images of several owners: " + ami.DescribeImages(several)
				f.Fix = "add " + strings.Join(choices, " or ") + ", whichever publishes the image you mean (never guessed between several)"
				out = append(out, f)
				continue
			case owner != "":
			case isEKSOptimizedName(t.Name):
				owner = "amazon"
			case namesEKSImage:
				// A leading wildcard hides the EKS image name from the prefix test, and may be meant to
				// match an account's copies too: suggest amazon (self would select no EKS image), but
				// never add it unasked.
				f.Fix = "add owner: amazon if the term means the EKS-optimized images it names (owner: self selects none of them); it is not added for you, since a leading * also matches this account's images named alike, which owner: amazon would exclude"
				out = append(out, f)
				continue
			case c.Config.AMIOwners.DefaultOwner != "":
				owner = c.Config.AMIOwners.DefaultOwner
			}
			if owner == "" {
				f.Fix = "add owner: self, or the account id that publishes the image (set amiOwners.defaultOwner to let --fix add it)"
			} else {
				f.Fix = "add owner: " + owner
				f.Edits = []validators.Edit{{Object: o, Path: []any{"spec", "amiSelectorTerms", i}, Op: validators.EditAdd, Key: "owner", Value: ownerScalar(owner)}}
			}
			out = append(out, f)
		}
		return out, nil
	},
}

// eksOptimizedPrefixes are the name prefixes of AWS-published EKS-optimized AMIs (docs/design.md §4).
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

// resolvedOwner returns the single owner of the images a name term resolves to ("amazon" for AWS, else
// the account id), or, when they have several owners, the images in several. Both are empty when
// images are unknown or none match: the static fix applies then.
func resolvedOwner(c *validators.Context, t objects.AMISelectorTerm) (owner string, several []facts.Image) {
	if c.Facts.Known(c, facts.Images) != nil {
		return "", nil
	}
	imgs, _, err := ami.ResolveTerm(c, objects.AMISelectorTerm{Name: t.Name, Tags: t.Tags})
	if err != nil || len(imgs) == 0 {
		return "", nil
	}
	var owners []string
	for _, img := range imgs {
		if !slices.Contains(owners, img.Owner()) {
			owners = append(owners, img.Owner())
		}
	}
	if len(owners) > 1 {
		return "", imgs
	}
	return owners[0], nil
}

// ownerScalar renders an owner, quoting account ids so YAML keeps them strings.
func ownerScalar(owner string) *yaml.Node {
	n := validators.Scalar(owner)
	if strings.Trim(owner, "0123456789") == "" {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}
