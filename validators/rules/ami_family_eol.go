package rules

import (
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
)

var amiFamilyEOL = &validators.Rule{
	ID:            "ami-family-eol",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.ClusterVersion},
	MayNeed:       []facts.Fact{facts.Images},
	Summary:       "AL2 on Kubernetes 1.33 or later; `windows2025@` below 1.35",
	Doc: "EKS published no AL2 AMIs after Kubernetes 1.32, so AL2 (amiFamily, al2@ alias, or an AL2 image) " +
		"has nothing to run on 1.33 and later; windows2025 needs 1.35. Move to the al2023@latest alias.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		cl, err := c.Facts.Cluster(c)
		if err != nil {
			return nil, err
		}
		minor := cl.Minor()
		nc := o.NodeClass
		fam, _, hasAlias := ami.Alias(nc)
		switch {
		case minor >= 33 && (nc.Spec.AMIFamily == userdata.FamilyAL2 || fam == "al2"):
			field, line := "spec.amiFamily", o.Fields.Line("spec", "amiFamily")
			if fam == "al2" {
				field, line = aliasField(o)
			}
			return []validators.Finding{{Field: field, Line: line,
				Message: fmt.Sprintf("cluster %s runs Kubernetes %s, and EKS publishes no AL2 AMIs after 1.32 (AL2 support ended 2025-11-26)", cl.Name, cl.Version),
				Fix:     "amiSelectorTerms: [{alias: al2023@latest}] (and amiFamily: AL2023 or none; move any userData to a NodeConfig)"}}, nil
		case minor >= 0 && minor < 35 && hasAlias && fam == "windows2025":
			field, line := aliasField(o)
			return []validators.Finding{{Field: field, Line: line,
				Message: fmt.Sprintf("alias windows2025@ needs Kubernetes 1.35 or later; cluster %s runs %s", cl.Name, cl.Version),
				Fix:     "alias: windows2022@latest"}}, nil
		case minor >= 33:
			// Only an AL2 image chosen by name or id is left to find: a term other than an alias with
			// images unknown leaves the rule not evaluated (resolveTerm's error), never passed.
			for i, t := range nc.Spec.AMISelectorTerms {
				if t.Alias != "" {
					continue
				}
				imgs, _, err := ami.ResolveTerm(c, t)
				if err != nil {
					return nil, err
				}
				var al2 []facts.Image
				for _, img := range imgs {
					if ami.ImageFamily(img.Name) == userdata.FamilyAL2 {
						al2 = append(al2, img)
					}
				}
				if len(al2) > 0 {
					return []validators.Finding{{Field: objects.Path("spec", "amiSelectorTerms", i), Line: o.Fields.Line("spec", "amiSelectorTerms", i),
						Message: fmt.Sprintf("AMI term %d selects AL2 images on Kubernetes %s, where AL2 is no longer supported: %s", i, cl.Version, ami.DescribeImages(al2)),
						Fix:     "amiSelectorTerms: [{alias: al2023@latest}]"}}, nil
				}
			}
		}
		return nil, nil
	},
}

// aliasField returns the field and line of the class's alias term, or of amiSelectorTerms.
func aliasField(o *objects.Object) (string, int) {
	for i, t := range o.NodeClass.Spec.AMISelectorTerms {
		if t.Alias != "" {
			return objects.Path("spec", "amiSelectorTerms", i, "alias"), o.Fields.Line("spec", "amiSelectorTerms", i, "alias")
		}
	}
	return "spec.amiSelectorTerms", o.Fields.Line("spec", "amiSelectorTerms")
}
