package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
)

var amiOwnerNotAllowed = &validators.Rule{
	ID:            "ami-owner-not-allowed",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Images},
	MayNeed:       []facts.Fact{facts.SSMParameters, facts.ClusterVersion},
	Enabled:       func(c *config.Config) bool { return len(c.AMIOwners.Allowed) > 0 },
	Summary:       "a resolved image's owner is not in `amiOwners.allowed` (off when the list is empty)",
	Doc: "With amiOwners.allowed configured, every image a selector resolves to must be owned by an " +
		"allowed account id or alias (amazon, or self for the cluster's account), so nodes never boot an " +
		"image from an unexpected publisher.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		account := ""
		var accountErr error = facts.Unknown("cluster.accountID", "not in the facts snapshot")
		if cl, err := c.Facts.Cluster(c); err != nil {
			accountErr = err
		} else {
			account = cl.AccountID
		}
		var out []validators.Finding
		for i, t := range o.NodeClass.Spec.AMISelectorTerms {
			imgs, _, err := ami.ResolveTerm(c, t)
			if err != nil {
				return nil, err
			}
			var bad []facts.Image
			for _, img := range imgs {
				if !ownerAllowed(img, c.Config.AMIOwners.Allowed, account) {
					bad = append(bad, img)
				}
			}
			if len(bad) == 0 {
				continue
			}
			// With self allowed, an unknown account cannot tell this account's images from others'.
			if account == "" {
				for _, a := range c.Config.AMIOwners.Allowed {
					if a == "self" {
						return nil, accountErr
					}
				}
			}
			out = append(out, validators.Finding{
				Field:   objects.Path("spec", "amiSelectorTerms", i),
				Line:    o.Fields.Line("spec", "amiSelectorTerms", i),
				Message: fmt.Sprintf("AMI term %d selects images whose owner is not allowed (%s): %s", i, strings.Join(c.Config.AMIOwners.Allowed, ", "), ami.DescribeImages(bad)),
				Fix:     "add owner: to the term with an allowed owner, or extend amiOwners.allowed if this publisher is trusted",
			})
		}
		return out, nil
	},
}

// ownerAllowed reports whether amiOwners.allowed admits the image's owner; self is account ("" when
// unknown, which admits nothing).
func ownerAllowed(img facts.Image, allowed []string, account string) bool {
	for _, a := range allowed {
		switch a {
		case "self":
			if account != "" && img.OwnerID == account {
				return true
			}
		case "amazon", "aws-marketplace":
			if img.OwnerAlias == a {
				return true
			}
		default:
			if img.OwnerID == a {
				return true
			}
		}
	}
	return false
}
