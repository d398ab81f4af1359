package rules

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
	"github.com/karpenter-guard/karpenter-guard/validators/scheduling"
)

var nodepoolRequirementsUnsatisfiable = &validators.Rule{
	ID:            "nodepool-requirements-unsatisfiable",
	Kinds:         []string{validators.KindNodePool, validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	// The facts are asked only for a pool to judge: an EC2NodeClass outside an update has none.
	MayNeed: []facts.Fact{facts.InstanceTypes, facts.Subnets, facts.Images, facts.SSMParameters, facts.ClusterVersion, facts.CapacityReservations, facts.ClusterNodePools},
	Summary: "no instance type of the region satisfies a NodePool's requirements with its EC2NodeClass, or a minValues cannot be met",
	Doc: "Karpenter launches only instance types that satisfy every requirement of the pool, are offered in " +
		"a zone of the class's subnets, run the class's AMIs and have a capacity type the pool allows. A typo " +
		"(instance-family In [m9]) or requirements that exclude each other leave none, and Karpenter says " +
		"\"no instance type met the scheduling requirements\" only once pods are pending. With " +
		"karpenter.minValuesPolicy Strict (Karpenter's default), a requirement whose minValues exceeds the " +
		"distinct values left also stops launches. The message counts, per requirement key, the types it " +
		"eliminated and names the nearest real values. Keys the guard cannot compute are ignored.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		return judgePools(c, o, requirementsFinding)
	},
}

// requirementsFinding judges one pool's requirements over the region's instance types.
func requirementsFinding(c *validators.Context, o *objects.Object, j poolJudgement) ([]validators.Finding, error) {
	// The zone and AMI rules report their own cause; this one would only repeat it.
	if f, err := zonesFinding(c, o, j); err != nil || len(f) > 0 {
		return nil, err
	}
	if f, err := amiFinding(c, o, j); err != nil || len(f) > 0 {
		return nil, err
	}
	zones, _, err := classZones(c, j.class)
	if err != nil || len(zones) == 0 {
		return nil, err
	}
	arches, err := classArchitectures(c, j.class)
	if err != nil || len(arches) == 0 {
		return nil, err
	}
	types, err := c.Facts.InstanceTypes(c)
	if err != nil {
		return nil, err
	}
	env := scheduling.Env{Architectures: arches, AMIFamily: ami.Family(j.class.NodeClass), Zones: zones}
	if cl, err := c.Facts.Cluster(c); err == nil {
		env.Region = cl.Region
	}
	if len(j.class.NodeClass.Spec.CapacityReservationSelectorTerms) > 0 && len(scheduling.AdmittedValues(j.reqs, scheduling.LabelCapacityType, []string{"reserved"})) > 0 {
		rs, err := matchedReservations(c, j.class)
		if err != nil {
			return nil, err
		}
		env.Reservations = map[string][]string{}
		for _, r := range rs {
			env.Reservations[r.InstanceType] = append(env.Reservations[r.InstanceType], r.AvailabilityZone)
		}
	}
	res := scheduling.Filter(types, env, j.reqs)
	if len(res.Types) == 0 {
		return []validators.Finding{noTypeFinding(o, j, types, env, res)}, nil
	}
	if c.Config.Karpenter.MinValuesPolicy == config.MinValuesBestEffort {
		return nil, nil
	}
	var out []validators.Finding
	for _, mv := range res.MinValues {
		if mv.Satisfied() {
			continue
		}
		r := mv.Requirement
		msg := fmt.Sprintf("requirement %s has minValues %d, but the %d instance types that satisfy the pool's requirements with EC2NodeClass %s have only %d distinct values of it, so with minValuesPolicy Strict Karpenter launches nothing",
			r.Written, *r.MinValues, len(res.Types), j.class.Name, mv.Distinct)
		f := poolFinding(o, j, msg, fmt.Sprintf("lower minValues of %s to at most %d, or widen the requirements", r.Written, mv.Distinct))
		if o.NodePool != nil && r.Index >= 0 {
			f.Field, f.Line = fmt.Sprintf("spec.template.spec.requirements[%d].minValues", r.Index), o.Fields.Line("spec", "template", "spec", "requirements", r.Index)
		}
		out = append(out, f)
	}
	return out, nil
}

// noTypeFinding reports that no type is left, with what eliminated them.
func noTypeFinding(o *objects.Object, j poolJudgement, types []facts.InstanceType, env scheduling.Env, res scheduling.Result) validators.Finding {
	if res.Usable == 0 {
		var why []string
		for _, u := range sortedUnusable(res.Unusable) {
			why = append(why, fmt.Sprintf("%d by %s", res.Unusable[u], unusableWords[u]))
		}
		msg := fmt.Sprintf("none of the region's %d instance types can launch with EC2NodeClass %s (%s), so Karpenter can launch no node for the pool", len(types), j.class.Name, strings.Join(why, ", "))
		return poolFinding(o, j, msg, "select subnets in zones that offer the types, or AMIs of their architecture")
	}
	keys := make([]string, 0, len(res.Eliminated))
	for k := range res.Eliminated {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if res.Eliminated[keys[a]] != res.Eliminated[keys[b]] {
			return res.Eliminated[keys[a]] > res.Eliminated[keys[b]]
		}
		return keys[a] < keys[b]
	})
	var counts []string
	for _, k := range keys {
		counts = append(counts, fmt.Sprintf("%s eliminates %d", k, res.Eliminated[k]))
	}
	// The requirement that eliminated the most types, and the nearest real values of an In on it.
	worst := -1
	for i, n := range res.Rejected {
		if worst < 0 || n > res.Rejected[worst] {
			worst = i
		}
	}
	msg := fmt.Sprintf("no instance type satisfies the pool's requirements with EC2NodeClass %s (of %d types usable with the class, %s), so Karpenter can launch no node for it (\"no instance type met the scheduling requirements\" once pods are pending)",
		j.class.Name, res.Usable, strings.Join(counts, ", "))
	fix := "widen the requirements"
	f := poolFinding(o, j, msg, fix)
	if worst >= 0 {
		r := j.reqs[worst]
		fix = "change " + requirementsOn([]scheduling.Requirement{r}, r.Key)
		if r.Operator == scheduling.OpIn {
			var near []string
			for _, v := range r.Values {
				ns := scheduling.Nearest(types, env, r.Key, v, 3)
				if slices.Contains(ns, v) {
					continue // the value exists: other requirements exclude it
				}
				for _, n := range ns {
					if !slices.Contains(near, n) {
						near = append(near, n)
					}
				}
			}
			if len(near) > 0 {
				f.Message += fmt.Sprintf("; the nearest real values of %s are %s", r.Written, strings.Join(near, ", "))
				fix += " to values that exist, such as " + strings.Join(near, ", ")
			}
		}
		f.Fix = fix
		if o.NodePool != nil && r.Index >= 0 {
			f.Field, f.Line = fmt.Sprintf("spec.template.spec.requirements[%d]", r.Index), o.Fields.Line("spec", "template", "spec", "requirements", r.Index)
		}
	}
	return f
}

var unusableWords = map[scheduling.Unusable]string{
	scheduling.UnusableArchitecture:  "architecture (no AMI of the class serves it)",
	scheduling.UnusableAMIFamily:     "AMI family",
	scheduling.UnusableZones:         "zone (not offered where the class has subnets)",
	scheduling.UnusableCapacityTypes: "capacity type",
}

func sortedUnusable(m map[scheduling.Unusable]int) []scheduling.Unusable {
	out := make([]scheduling.Unusable, 0, len(m))
	for u := range m {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
