package rules

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/network"
	"github.com/karpenter-guard/karpenter-guard/validators/scheduling"
)

// This file holds what the three NodePool rules share: the pool's requirement set and what its
// EC2NodeClass gives an instance type (zones, architectures, family), and how they run on an
// EC2NodeClass update for the pools that use it.

// poolJudgement is one NodePool judged against one EC2NodeClass.
type poolJudgement struct {
	pool  *objects.Object
	class *objects.Object
	reqs  []scheduling.Requirement
}

// poolsToJudge returns what a NodePool rule judges for o: a NodePool against the EC2NodeClass it
// references (none when it references none: nodepool-nodeclass-missing reports that), or, on an
// EC2NodeClass UPDATE in the webhook, every NodePool that uses the class against its new spec (an
// unknown fact when the cluster's NodePools are not all known yet).
func poolsToJudge(c *validators.Context, o *objects.Object) ([]poolJudgement, error) {
	if o.NodePool != nil {
		ref := o.NodePool.Spec.Template.Spec.NodeClassRef
		if ref == nil || (ref.Kind != "" && ref.Kind != objects.KindEC2NodeClass) {
			return nil, nil
		}
		class := c.NodeClass(ref.Name)
		if class == nil || class.NodeClass == nil {
			return nil, nil
		}
		return []poolJudgement{{pool: o, class: class, reqs: scheduling.FromNodePool(o.NodePool)}}, nil
	}
	if o.NodeClass == nil || c.Scope != validators.ScopeAdmission || c.Operation != validators.OperationUpdate {
		return nil, nil
	}
	if err := c.Facts.Known(c, facts.ClusterNodePools); err != nil {
		return nil, err
	}
	var out []poolJudgement
	for _, p := range c.NodePoolsOf(o.Name) {
		out = append(out, poolJudgement{pool: p, class: o, reqs: scheduling.FromNodePool(p.NodePool)})
	}
	return out, nil
}

// judgePools runs judge on each pool poolsToJudge gives for o, and returns every finding. On an
// EC2NodeClass update a pool that could not launch with the class as it was is left out: the change
// did not break it, and the pool's own review says what is wrong, so an unrelated edit of the class is
// not refused for it.
func judgePools(c *validators.Context, o *objects.Object, judge func(*validators.Context, *objects.Object, poolJudgement) ([]validators.Finding, error)) ([]validators.Finding, error) {
	pools, err := poolsToJudge(c, o)
	if err != nil {
		return nil, err
	}
	var out []validators.Finding
	for _, j := range pools {
		f, err := judge(c, o, j)
		if err != nil {
			return nil, err
		}
		if len(f) > 0 && o.NodeClass != nil && c.Old != nil && c.Old.NodeClass != nil {
			if before, err := judge(c, o, poolJudgement{pool: j.pool, class: c.Old, reqs: j.reqs}); err == nil && len(before) > 0 {
				continue
			}
		}
		out = append(out, f...)
	}
	return out, nil
}

// classZones returns the zones of the class's subnets, with their zone IDs.
func classZones(c *validators.Context, class *objects.Object) ([]scheduling.Zone, []facts.Subnet, error) {
	r := validators.Memo(c, zonesOfClasses, class, func() classZonesResult {
		z, s, err := readClassZones(c, class)
		return classZonesResult{z, s, err}
	})
	return r.zones, r.subnets, r.err
}

// zonesOfClasses and archesOfClasses are what each class gives the NodePool rules, once per
// evaluation: three rules, and every pool of a class, read them.
var (
	zonesOfClasses  = &validators.Analysis[*objects.Object, classZonesResult]{Name: "class zones"}
	archesOfClasses = &validators.Analysis[*objects.Object, classArchesResult]{Name: "class architectures"}
)

type classZonesResult struct {
	zones   []scheduling.Zone
	subnets []facts.Subnet
	err     error
}

type classArchesResult struct {
	arches []string
	err    error
}

// readClassZones is classZones without the memo.
func readClassZones(c *validators.Context, class *objects.Object) ([]scheduling.Zone, []facts.Subnet, error) {
	subnets, err := network.SelectedSubnets(c, class)
	if err != nil {
		return nil, nil, err
	}
	var zones []scheduling.Zone
	for _, s := range subnets {
		if !slices.ContainsFunc(zones, func(z scheduling.Zone) bool { return z.Name == s.AvailabilityZone }) {
			zones = append(zones, scheduling.Zone{Name: s.AvailabilityZone, ID: s.AvailabilityZoneID})
		}
	}
	sort.Slice(zones, func(i, j int) bool { return zones[i].Name < zones[j].Name })
	return zones, subnets, nil
}

// classArchitectures returns the architectures (amd64, arm64) the class's AMIs serve: an alias each
// architecture whose SSM parameter resolves (Karpenter picks the image by it), another term the
// architectures of the images it selects.
func classArchitectures(c *validators.Context, class *objects.Object) ([]string, error) {
	r := validators.Memo(c, archesOfClasses, class, func() classArchesResult {
		a, err := readClassArchitectures(c, class)
		return classArchesResult{a, err}
	})
	return r.arches, r.err
}

// readClassArchitectures is classArchitectures without the memo.
func readClassArchitectures(c *validators.Context, class *objects.Object) ([]string, error) {
	var out []string
	add := func(arch string) {
		a := ""
		switch arch {
		case "x86_64":
			a = "amd64"
		case "arm64":
			a = "arm64"
		}
		if a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	for _, t := range class.NodeClass.Spec.AMISelectorTerms {
		if t.Alias != "" {
			cl, err := c.Facts.Cluster(c)
			if err != nil {
				return nil, err
			}
			if cl.Version == "" {
				return nil, facts.Unknown(facts.ClusterVersion, "not in the facts snapshot")
			}
			fam, ver, _ := strings.Cut(t.Alias, "@")
			for arch, p := range facts.AliasParameters(strings.ToLower(fam), ver, cl.Version) {
				if _, found, err := c.Facts.SSMParameter(c, p); err != nil {
					return nil, err
				} else if found {
					add(arch)
				}
			}
			continue
		}
		imgs, _, err := ami.ResolveTerm(c, t)
		if err != nil {
			return nil, err
		}
		for _, img := range imgs {
			add(img.Architecture)
		}
	}
	sort.Strings(out)
	return out, nil
}

// requirementsOn describes the requirements on keys, for messages: "topology.kubernetes.io/zone In [us-east-1c]".
func requirementsOn(reqs []scheduling.Requirement, keys ...string) string {
	var out []string
	for _, r := range reqs {
		if !slices.Contains(keys, r.Key) {
			continue
		}
		if r.FromLabel {
			out = append(out, fmt.Sprintf("label %s=%s", r.Written, r.Values[0]))
			continue
		}
		d := r.Written + " " + r.Operator
		if len(r.Values) > 0 {
			d += " [" + strings.Join(r.Values, ", ") + "]"
		}
		out = append(out, d)
	}
	return strings.Join(out, " and ")
}

// poolFinding places a NodePool rule's finding: on the pool's requirements, or on an EC2NodeClass
// under update, naming the pool.
func poolFinding(o *objects.Object, j poolJudgement, msg, fix string) validators.Finding {
	if o.NodePool != nil {
		return validators.Finding{Field: "spec.template.spec.requirements", Line: o.Fields.Line("spec", "template", "spec", "requirements"), Message: msg, Fix: fix}
	}
	return validators.Finding{Field: "spec", Line: o.Fields.Line("spec"),
		Message: fmt.Sprintf("with this change NodePool %s cannot launch: %s", j.pool.Name, msg), Fix: fix}
}
