package rules

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
)

var amiSelectorNoMatch = &validators.Rule{
	ID:            "ami-selector-no-match",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Images},
	MayNeed:       []facts.Fact{facts.SSMParameters, facts.ClusterVersion},
	Summary:       "a term (or the alias for the cluster's version) resolves to no available image",
	Doc: "A selector that matches no available image leaves Karpenter nothing to launch: the EC2NodeClass " +
		"never becomes ready. Aliases are resolved for the cluster's Kubernetes minor version through the " +
		"public SSM parameters, for x86_64 and arm64.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		var out []validators.Finding
		resolved := 0
		for i, t := range o.NodeClass.Spec.AMISelectorTerms {
			imgs, desc, err := ami.ResolveTerm(c, t)
			if err != nil {
				return nil, err
			}
			if len(imgs) > 0 {
				resolved++
				continue
			}
			out = append(out, validators.Finding{
				Field:   objects.Path("spec", "amiSelectorTerms", i),
				Line:    o.Fields.Line("spec", "amiSelectorTerms", i),
				Message: fmt.Sprintf("AMI term %d (%s) resolves to no available image", i, desc),
				Fix:     noMatchFix(c, t),
			})
		}
		for i := range out {
			if resolved == 0 {
				out[i].Message += ", so Karpenter has nothing to launch"
			} else {
				out[i].Message += ", so it adds nothing: Karpenter launches only what the other terms select"
			}
		}
		return out, nil
	},
}

// noMatchFix is the fix of ami-selector-no-match: the command that lists what the term could select.
func noMatchFix(c *validators.Context, t objects.AMISelectorTerm) string {
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
