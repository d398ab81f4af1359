package rules

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
)

var amiAliasVersionFormat = &validators.Rule{
	ID:            "ami-alias-version-format",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Summary:       "an alias version is neither `latest` nor the family's release format",
	Doc: "An alias is family@version. AL2 and AL2023 releases are written vYYYYMMDD (al2023@v20251112), " +
		"Bottlerocket releases as a semantic version (bottlerocket@v1.26.1), and the Windows families only " +
		"accept latest. Any other version resolves to no AMI and no node launches. `latest` always resolves " +
		"but drifts every node when AWS publishes a release; pin a release for production.",
	Check: func(_ *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		var out []validators.Finding
		for i, t := range o.NodeClass.Spec.AMISelectorTerms {
			if t.Alias == "" {
				continue
			}
			if msg, fix := checkAlias(t.Alias); msg != "" {
				out = append(out, validators.Finding{
					Field:   objects.Path("spec", "amiSelectorTerms", i, "alias"),
					Line:    o.Fields.Line("spec", "amiSelectorTerms", i, "alias"),
					Message: msg,
					Fix:     fix,
				})
			}
		}
		return out, nil
	},
}

// semanticVersion matches a Bottlerocket release version (v1.26.1).
var semanticVersion = regexp.MustCompile(`^v?\d+\.\d+\.\d+$`)

// checkAlias returns a message and fix when an alias is malformed, else "".
func checkAlias(a string) (string, string) {
	fam, ver, ok := strings.Cut(a, "@")
	if !ok || fam == "" || ver == "" {
		return fmt.Sprintf("alias %q is not of the form family@version", a), "alias: al2023@latest (or pin a release such as " + ami.PinnedAlias("al2023") + ")"
	}
	if _, known := ami.AliasFamilies[fam]; !known {
		return fmt.Sprintf("alias %q names family %q, which Karpenter does not know", a, fam),
			"use one of al2, al2023, bottlerocket, windows2019, windows2022, windows2025"
	}
	if ver == "latest" {
		return "", ""
	}
	switch fam {
	case "al2", "al2023":
		if datedRelease(ver) {
			return "", ""
		}
		return fmt.Sprintf("alias %q: %s versions are written vYYYYMMDD, so %q matches no AMI release", a, fam, ver),
			fmt.Sprintf("alias: %s@latest, or a release such as %s", fam, ami.PinnedAlias(fam))
	case "bottlerocket":
		if semanticVersion.MatchString(ver) {
			return "", ""
		}
		return fmt.Sprintf("alias %q: Bottlerocket versions are semantic versions such as v1.26.1, so %q matches no release", a, ver),
			"alias: bottlerocket@latest, or a release such as " + ami.PinnedAlias(fam)
	default:
		return fmt.Sprintf("alias %q: %s can only use version latest", a, fam), "alias: " + fam + "@latest"
	}
}

// datedRelease reports whether ver is an AL2 or AL2023 release, v and a date (v20251112). Checked by
// hand rather than with a regexp: every EC2NodeClass review with a pinned alias runs it.
func datedRelease(ver string) bool {
	if len(ver) != 9 || ver[0] != 'v' {
		return false
	}
	for _, c := range ver[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	_, err := time.Parse("20060102", ver[1:])
	return err == nil
}
