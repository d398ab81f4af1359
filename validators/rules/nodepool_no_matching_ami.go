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
	"github.com/karpenter-guard/karpenter-guard/validators/scheduling"
)

var nodepoolNoMatchingAMI = &validators.Rule{
	ID:            "nodepool-no-matching-ami",
	Kinds:         []string{validators.KindNodePool, validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	// The facts are asked only for a pool to judge: an EC2NodeClass outside an update has none.
	MayNeed: []facts.Fact{facts.Images, facts.SSMParameters, facts.ClusterVersion, facts.ClusterNodePools},
	Summary: "the architectures or OS a NodePool admits match none of its EC2NodeClass's AMIs",
	Doc: "Karpenter launches a type only with an AMI of its architecture, and a Windows family only as " +
		"windows/amd64. A pool that requires kubernetes.io/arch arm64 while the class resolves only x86_64 " +
		"images (or kubernetes.io/os linux on a Windows class) never launches. On an EC2NodeClass update the " +
		"webhook judges the NodePools that use the class, and refuses the change for those it breaks.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		return judgePools(c, o, amiFinding)
	},
}

// amiFinding judges one pool's architectures and OS against its class's images.
func amiFinding(c *validators.Context, o *objects.Object, j poolJudgement) ([]validators.Finding, error) {
	arches, err := classArchitectures(c, j.class)
	if err != nil || len(arches) == 0 {
		return nil, err // no image at all: ami-selector-no-match reports it
	}
	fam := ami.Family(j.class.NodeClass)
	osName := "linux"
	if userdata.IsWindows(fam) {
		osName = "windows"
		if !slices.Contains(arches, "amd64") {
			return nil, nil // a Windows class without amd64 images: the AMI rules report it
		}
		arches = []string{"amd64"}
	}
	if len(scheduling.AdmittedValues(j.reqs, scheduling.LabelOS, []string{osName})) == 0 {
		msg := fmt.Sprintf("the pool admits only %s, but EC2NodeClass %s launches %s nodes (%s), so Karpenter can launch no node for it", requirementsOn(j.reqs, scheduling.LabelOS), j.class.Name, osName, familyOrAMIs(fam))
		return []validators.Finding{poolFinding(o, j, msg, fmt.Sprintf("require kubernetes.io/os In [%s], or use an EC2NodeClass of the OS the pool needs", osName))}, nil
	}
	if len(scheduling.AdmittedValues(j.reqs, scheduling.LabelArch, arches)) > 0 {
		return nil, nil
	}
	msg := fmt.Sprintf("the pool admits only %s, but the AMIs of EC2NodeClass %s serve only %s, so Karpenter can launch no node for it", requirementsOn(j.reqs, scheduling.LabelArch), j.class.Name, strings.Join(arches, ", "))
	return []validators.Finding{poolFinding(o, j, msg, fmt.Sprintf("allow %s in the pool's kubernetes.io/arch requirement, or add amiSelectorTerms for the architecture it needs (an alias serves both)", strings.Join(arches, ", ")))}, nil
}

func familyOrAMIs(fam string) string {
	if fam == "" {
		return "its AMIs"
	}
	return "family " + fam
}
