package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
)

var amiFamilyMismatch = &validators.Rule{
	ID:            "ami-family-mismatch",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Images},
	MayNeed:       []facts.Fact{facts.SSMParameters},
	Summary:       "a resolved image belongs to another family than `amiFamily`",
	Doc: "Karpenter generates userData for spec.amiFamily. An AL2 image picked by name or id under " +
		"amiFamily AL2023 (karpenter-provider-aws issue 7660), or a Bottlerocket image under AL2023, boots " +
		"with userData it cannot read and never joins. Each Windows family is one release: a Windows2019 " +
		"image under amiFamily Windows2022 joins, but its nodes carry the 2022 build label, so pods built " +
		"for 2022 are scheduled onto 2019 and fail to start.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		want := o.NodeClass.Spec.AMIFamily
		if want == "" || want == userdata.FamilyCustom {
			return nil, nil
		}
		var out []validators.Finding
		for i, t := range o.NodeClass.Spec.AMISelectorTerms {
			if t.Alias != "" {
				continue // an alias is its family's own image
			}
			imgs, _, err := ami.ResolveTerm(c, t)
			if err != nil {
				return nil, err
			}
			var bad []facts.Image
			var fams []string
			for _, img := range imgs {
				if f := ami.ImageFamily(img.Name); f != "" && !ami.SameFamily(f, want) {
					bad = append(bad, img)
					if !slices.Contains(fams, f) {
						fams = append(fams, f)
					}
				}
			}
			if len(bad) == 0 {
				continue
			}
			why := fmt.Sprintf("which cannot read %s userData", want)
			if userdata.IsWindows(want) && allWindows(fams) {
				// One bootstrap for every Windows release, but Karpenter labels and schedules the nodes as
				// the family's release (node.kubernetes.io/windows-build).
				why = fmt.Sprintf("while Karpenter labels their nodes with %s's Windows build, so pods built for %s land on another release", want, want)
			}
			out = append(out, validators.Finding{
				Field:   objects.Path("spec", "amiSelectorTerms", i),
				Line:    o.Fields.Line("spec", "amiSelectorTerms", i),
				Message: fmt.Sprintf("amiFamily is %s but AMI term %d selects %s images, %s: %s", want, i, strings.Join(fams, "/"), why, ami.DescribeImages(bad)),
				Fix:     fmt.Sprintf("select %s images (e.g. alias: %s), or set amiFamily to the images' family", want, ami.DefaultAlias(want)),
			})
		}
		return out, nil
	},
}

// allWindows reports whether every family named is a Windows release.
func allWindows(fams []string) bool {
	for _, f := range fams {
		if !userdata.IsWindows(f) {
			return false
		}
	}
	return true
}
