package validators

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
)

// This file holds the AMI rules that need image or cluster facts, and the resolution of selector terms
// to images they share (also used by ami-selector-missing-owner's fix).

var amiSelectorNoMatch = &Rule{
	ID:            "ami-selector-no-match",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Images},
	MayNeed:       []facts.Fact{facts.SSMParameters, facts.ClusterVersion},
	Summary:       "a term (or the alias for the cluster's version) resolves to no available image",
	Doc: "A selector that matches no available image leaves Karpenter nothing to launch: the EC2NodeClass " +
		"never becomes ready. Aliases are resolved for the cluster's Kubernetes minor version through the " +
		"public SSM parameters, for x86_64 and arm64.",
	Check: func(c *Context, o *objects.Object) []Finding {
		var out []Finding
		resolved := 0
		for i, t := range o.NodeClass.Spec.AMISelectorTerms {
			imgs, desc, err := c.resolveTerm(t)
			if err != nil {
				return c.unknownFact(err)
			}
			if len(imgs) > 0 {
				resolved++
				continue
			}
			out = append(out, Finding{
				Field:   objects.Path("spec", "amiSelectorTerms", i),
				Line:    o.Fields.Line("spec", "amiSelectorTerms", i),
				Message: fmt.Sprintf("AMI term %d (%s) resolves to no available image", i, desc),
				Fix:     c.noMatchFix(t),
			})
		}
		for i := range out {
			if resolved == 0 {
				out[i].Message += ", so Karpenter has nothing to launch"
			} else {
				out[i].Message += ", so it adds nothing: Karpenter launches only what the other terms select"
			}
		}
		return out
	},
}

var amiOwnerNotAllowed = &Rule{
	ID:            "ami-owner-not-allowed",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Images},
	MayNeed:       []facts.Fact{facts.SSMParameters, facts.ClusterVersion},
	Enabled:       func(c *config.Config) bool { return len(c.AMIOwners.Allowed) > 0 },
	Summary:       "a resolved image's owner is not in `amiOwners.allowed` (off when the list is empty)",
	Doc: "With amiOwners.allowed configured, every image a selector resolves to must be owned by an " +
		"allowed account id or alias (amazon, or self for the cluster's account), so nodes never boot an " +
		"image from an unexpected publisher.",
	Check: func(c *Context, o *objects.Object) []Finding {
		account := ""
		var accountErr error = facts.Unknown("cluster.accountID", "not in the facts snapshot")
		if cl, err := c.Facts.Cluster(c); err != nil {
			accountErr = err
		} else {
			account = cl.AccountID
		}
		var out []Finding
		for i, t := range o.NodeClass.Spec.AMISelectorTerms {
			imgs, _, err := c.resolveTerm(t)
			if err != nil {
				return c.unknownFact(err)
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
						return c.unknownFact(accountErr)
					}
				}
			}
			out = append(out, Finding{
				Field:   objects.Path("spec", "amiSelectorTerms", i),
				Line:    o.Fields.Line("spec", "amiSelectorTerms", i),
				Message: fmt.Sprintf("AMI term %d selects images whose owner is not allowed (%s): %s", i, strings.Join(c.Config.AMIOwners.Allowed, ", "), describeImages(bad)),
				Fix:     "add owner: to the term with an allowed owner, or extend amiOwners.allowed if this publisher is trusted",
			})
		}
		return out
	},
}

var amiFamilyMismatch = &Rule{
	ID:            "ami-family-mismatch",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Images},
	MayNeed:       []facts.Fact{facts.SSMParameters},
	Summary:       "a resolved image belongs to another family than `amiFamily`",
	Doc: "Karpenter generates userData for spec.amiFamily. An AL2 image picked by name or id under " +
		"amiFamily AL2023 (karpenter-provider-aws issue 7660), or a Bottlerocket image under AL2023, boots " +
		"with userData it cannot read and never joins.",
	Check: func(c *Context, o *objects.Object) []Finding {
		want := o.NodeClass.Spec.AMIFamily
		if want == "" || want == userdata.FamilyCustom {
			return nil
		}
		var out []Finding
		for i, t := range o.NodeClass.Spec.AMISelectorTerms {
			if t.Alias != "" {
				continue // an alias is its family's own image
			}
			imgs, _, err := c.resolveTerm(t)
			if err != nil {
				return c.unknownFact(err)
			}
			var bad []facts.Image
			var fams []string
			for _, img := range imgs {
				if f := imageFamily(img.Name); f != "" && !sameFamily(f, want) {
					bad = append(bad, img)
					fams = appendUnique(fams, f)
				}
			}
			if len(bad) == 0 {
				continue
			}
			out = append(out, Finding{
				Field:   objects.Path("spec", "amiSelectorTerms", i),
				Line:    o.Fields.Line("spec", "amiSelectorTerms", i),
				Message: fmt.Sprintf("amiFamily is %s but AMI term %d selects %s images, which cannot read %s userData: %s", want, i, strings.Join(fams, "/"), want, describeImages(bad)),
				Fix:     fmt.Sprintf("select %s images (e.g. alias: %s), or set amiFamily to the images' family", want, defaultAlias(want)),
			})
		}
		return out
	},
}

var amiFamilyEOL = &Rule{
	ID:            "ami-family-eol",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.ClusterVersion},
	MayNeed:       []facts.Fact{facts.Images},
	Summary:       "AL2 on Kubernetes 1.33 or later; `windows2025@` below 1.35",
	Doc: "EKS published no AL2 AMIs after Kubernetes 1.32, so AL2 (amiFamily, al2@ alias, or an AL2 image) " +
		"has nothing to run on 1.33 and later; windows2025 needs 1.35. Move to the al2023@latest alias.",
	Check: func(c *Context, o *objects.Object) []Finding {
		cl, err := c.Facts.Cluster(c)
		if err != nil {
			return c.unknownFact(err)
		}
		minor := cl.Minor()
		nc := o.NodeClass
		fam, _, hasAlias := alias(nc)
		switch {
		case minor >= 33 && (nc.Spec.AMIFamily == userdata.FamilyAL2 || fam == "al2"):
			field, line := "spec.amiFamily", o.Fields.Line("spec", "amiFamily")
			if fam == "al2" {
				field, line = aliasField(o)
			}
			return []Finding{{Field: field, Line: line,
				Message: fmt.Sprintf("cluster %s runs Kubernetes %s, and EKS publishes no AL2 AMIs after 1.32 (AL2 support ended 2025-11-26)", cl.Name, cl.Version),
				Fix:     "amiSelectorTerms: [{alias: al2023@latest}] (and amiFamily: AL2023 or none; move any userData to a NodeConfig)"}}
		case minor >= 0 && minor < 35 && hasAlias && fam == "windows2025":
			field, line := aliasField(o)
			return []Finding{{Field: field, Line: line,
				Message: fmt.Sprintf("alias windows2025@ needs Kubernetes 1.35 or later; cluster %s runs %s", cl.Name, cl.Version),
				Fix:     "alias: windows2022@latest"}}
		case minor >= 33:
			// Only an AL2 image chosen by name or id is left to find: a term other than an alias with
			// images unknown leaves the rule not evaluated (resolveTerm's error), never passed.
			for i, t := range nc.Spec.AMISelectorTerms {
				if t.Alias != "" {
					continue
				}
				imgs, _, err := c.resolveTerm(t)
				if err != nil {
					return c.unknownFact(err)
				}
				var al2 []facts.Image
				for _, img := range imgs {
					if imageFamily(img.Name) == userdata.FamilyAL2 {
						al2 = append(al2, img)
					}
				}
				if len(al2) > 0 {
					return []Finding{{Field: objects.Path("spec", "amiSelectorTerms", i), Line: o.Fields.Line("spec", "amiSelectorTerms", i),
						Message: fmt.Sprintf("AMI term %d selects AL2 images on Kubernetes %s, where AL2 is no longer supported: %s", i, cl.Version, describeImages(al2)),
						Fix:     "amiSelectorTerms: [{alias: al2023@latest}]"}}
				}
			}
		}
		return nil
	},
}

func aliasField(o *objects.Object) (string, int) {
	for i, t := range o.NodeClass.Spec.AMISelectorTerms {
		if t.Alias != "" {
			return objects.Path("spec", "amiSelectorTerms", i, "alias"), o.Fields.Line("spec", "amiSelectorTerms", i, "alias")
		}
	}
	return "spec.amiSelectorTerms", o.Fields.Line("spec", "amiSelectorTerms")
}

// resolveTerm returns the available images a term selects and a short description of the term, once
// per evaluation (several rules ask). An alias is resolved through the SSM parameters for the cluster's
// version and both architectures.
func (c *Context) resolveTerm(t objects.AMISelectorTerm) ([]facts.Image, string, error) {
	key := t.Alias + "\x00" + facts.ImageTerm{ID: t.ID, Name: t.Name, Owner: t.Owner, SSMParameter: t.SSMParameter, Tags: t.Tags}.String()
	if r, ok := c.terms.get(key); ok {
		return r.images, r.desc, r.err
	}
	imgs, desc, err := c.resolveTermUncached(t)
	c.terms.put(key, termResult{imgs, desc, err})
	return imgs, desc, err
}

type termResult struct {
	images []facts.Image
	desc   string
	err    error
}

func (c *Context) resolveTermUncached(t objects.AMISelectorTerm) ([]facts.Image, string, error) {
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

// describeImages lists images as id (name, owner), at most five.
func describeImages(imgs []facts.Image) string {
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

// imageFamily recognises the EKS-optimized name patterns of docs/design.md §4 ("" for other images).
func imageFamily(name string) string {
	switch {
	case strings.HasPrefix(name, "amazon-eks-node-al2023-"):
		return userdata.FamilyAL2023
	case strings.HasPrefix(name, "amazon-eks-node-"), strings.HasPrefix(name, "amazon-eks-arm64-node-"), strings.HasPrefix(name, "amazon-eks-gpu-node-"):
		return userdata.FamilyAL2
	case strings.HasPrefix(name, "bottlerocket-aws-k8s-"):
		return userdata.FamilyBottlerocket
	case strings.HasPrefix(name, "Windows_Server-") && strings.Contains(name, "EKS_Optimized"):
		return "Windows"
	}
	return ""
}

func sameFamily(imageFam, amiFamily string) bool {
	if imageFam == "Windows" {
		return userdata.IsWindows(amiFamily)
	}
	return imageFam == amiFamily
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// noMatchFix is the fix of ami-selector-no-match: the command that lists what the term could select.
func (c *Context) noMatchFix(t objects.AMISelectorTerm) string {
	region := ""
	cl, err := c.Facts.Cluster(c)
	if err == nil && cl.Region != "" {
		region = " --region " + cl.Region
	}
	switch {
	case t.Alias != "" && err == nil:
		fam, ver, _ := strings.Cut(t.Alias, "@")
		fam = strings.ToLower(fam)
		params := facts.AliasParameters(fam, ver, cl.Version)
		p, ok := params["x86_64"]
		if !ok {
			p = params["arm64"]
		}
		if p == "" {
			return "use an alias family Karpenter knows (al2023, bottlerocket, windows2022, …)"
		}
		if id, found, err := c.Facts.SSMParameter(c, p); err == nil && found {
			return fmt.Sprintf("the SSM parameter %s names %s, which is not an available image; `aws ec2 describe-images%s --image-ids %s` shows its state", p, id, region, id)
		}
		if ver != "latest" {
			return fmt.Sprintf("use alias: %s@latest or a published version; `aws ssm get-parameters-by-path%s --path %s --recursive --query 'Parameters[].Name'` lists them",
				fam, region, path.Dir(path.Dir(p)))
		}
		fix := fmt.Sprintf("EKS publishes no %s images for Kubernetes %s (no SSM parameter %s): choose a family published for it", fam, cl.Version, p)
		if fam != "al2023" {
			fix += ", e.g. alias: al2023@latest"
		}
		return fix
	case t.SSMParameter != "":
		return fmt.Sprintf("correct the parameter; `aws ssm get-parameter%s --name %s` shows whether it exists", region, t.SSMParameter)
	}
	args := []string{"aws ec2 describe-images" + region}
	if t.ID != "" {
		args = append(args, "--image-ids "+t.ID)
	}
	if owners := (facts.ImageTerm{Name: t.Name, Owner: t.Owner}).Owners(); len(owners) > 0 {
		args = append(args, "--owners "+strings.Join(owners, " "))
	}
	var filters []string
	if t.Name != "" {
		filters = append(filters, "'Name=name,Values="+t.Name+"'")
	}
	var ks []string
	for k := range t.Tags {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		if v := t.Tags[k]; v == "*" {
			filters = append(filters, "'Name=tag-key,Values="+k+"'")
		} else {
			filters = append(filters, "'Name=tag:"+k+",Values="+v+"'")
		}
	}
	if len(filters) > 0 {
		args = append(args, "--filters "+strings.Join(filters, " "))
	}
	return "correct the term; `" + strings.Join(args, " ") + "` lists the images it can select (only state available counts)"
}
