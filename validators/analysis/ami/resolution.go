package ami

import (
	"fmt"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// This file holds the resolution of amiSelectorTerms to the available images they select, which the
// AMI rules share (and ami-selector-missing-owner's fix), and how findings describe terms and images.

// ResolveTerm returns the available images a term selects and a short description of the term, once
// per evaluation (several rules ask). An alias is resolved through the SSM parameters for the cluster's
// version and both architectures.
func ResolveTerm(c *validators.Context, t objects.AMISelectorTerm) ([]facts.Image, string, error) {
	key := t.Alias + "\x00" + facts.ImageTerm{ID: t.ID, Name: t.Name, Owner: t.Owner, SSMParameter: t.SSMParameter, Tags: t.Tags}.String()
	r := validators.Memo(c, termResolutions, key, func() termResult {
		imgs, desc, err := resolveTermUncached(c, t)
		return termResult{imgs, desc, err}
	})
	return r.images, r.desc, r.err
}

// termResolutions are the resolutions of one evaluation, by the term's alias and image term.
var termResolutions = &validators.Analysis[string, termResult]{Name: "AMI term resolution"}

// termResult is the outcome of resolveTermUncached.
type termResult struct {
	images []facts.Image
	desc   string
	err    error
}

// resolveTermUncached is ResolveTerm without the memo.
func resolveTermUncached(c *validators.Context, t objects.AMISelectorTerm) ([]facts.Image, string, error) {
	if t.Alias != "" {
		fam, ver, _ := strings.Cut(t.Alias, "@")
		cl, err := c.Facts.Cluster(c)
		if err != nil {
			return nil, "", err
		}
		if cl.Version == "" {
			return nil, "", facts.Unknown(facts.ClusterVersion, "not in the facts snapshot")
		}
		params := facts.AliasParameters(strings.ToLower(fam), ver, cl.Version)
		var out []facts.Image
		for _, arch := range []string{"x86_64", "arm64"} {
			p, ok := params[arch]
			if !ok {
				continue
			}
			id, found, err := c.Facts.SSMParameter(c, p)
			if err != nil {
				return nil, "", err
			}
			if !found {
				continue
			}
			imgs, err := c.Facts.Images(c, facts.ImageTerm{ID: id})
			if err != nil {
				return nil, "", err
			}
			out = append(out, imgs...)
		}
		return out, fmt.Sprintf("alias %s on Kubernetes %s", t.Alias, cl.Version), nil
	}
	it := facts.ImageTerm{ID: t.ID, Name: t.Name, Owner: t.Owner, SSMParameter: t.SSMParameter, Tags: t.Tags}
	// Owner self (explicit, or implied by a name term) is the cluster's account: without it a snapshot
	// cannot tell this account's images, and "no image" would be a guess.
	for _, owner := range it.Owners() {
		if owner != "self" {
			continue
		}
		cl, err := c.Facts.Cluster(c)
		if err != nil {
			return nil, "", err
		}
		if cl.AccountID == "" {
			return nil, "", facts.Unknown("cluster.accountID", "not in the facts snapshot")
		}
	}
	imgs, err := c.Facts.Images(c, it)
	return imgs, describeTerm(t), err
}

// describeTerm describes a term other than an alias: "name \"…\", owner amazon".
func describeTerm(t objects.AMISelectorTerm) string {
	var parts []string
	if t.ID != "" {
		parts = append(parts, "id "+t.ID)
	}
	if t.Name != "" {
		parts = append(parts, fmt.Sprintf("name %q", t.Name))
	}
	if t.Owner != "" {
		parts = append(parts, "owner "+t.Owner)
	}
	if t.SSMParameter != "" {
		parts = append(parts, "ssmParameter "+t.SSMParameter)
	}
	if len(t.Tags) > 0 {
		var ks []string
		for k, v := range t.Tags {
			ks = append(ks, k+"="+v)
		}
		sort.Strings(ks)
		parts = append(parts, "tags "+strings.Join(ks, ","))
	}
	return strings.Join(parts, ", ")
}

// DescribeImages lists images as id (name, owner), at most five.
func DescribeImages(imgs []facts.Image) string {
	var parts []string
	for i, img := range imgs {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(imgs)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s, owner %s)", img.ID, img.Name, img.Owner()))
	}
	return strings.Join(parts, ", ")
}
