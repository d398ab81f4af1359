package scheduling

import (
	"math"
	"slices"
	"strconv"

	"github.com/karpenter-guard/karpenter-guard/objects"
)

// Requirement is one requirement of a NodePool's requirement set, its key normalized.
type Requirement struct {
	// Key is the label key, deprecated aliases normalized (see NormalizeKey).
	Key string
	// Written is the key as the NodePool writes it.
	Written  string
	Operator string
	Values   []string
	// MinValues is the requirement's minValues (nil when not set).
	MinValues *int
	// FromLabel is true for a spec.template.metadata.labels entry, which requires In [value].
	FromLabel bool
	// Index is the position in spec.template.spec.requirements; -1 for a label.
	Index int
}

// The requirement operators (core/v1 NodeSelectorOperator, plus Karpenter's Gte and Lte).
const (
	OpIn           = "In"
	OpNotIn        = "NotIn"
	OpExists       = "Exists"
	OpDoesNotExist = "DoesNotExist"
	OpGt           = "Gt"
	OpLt           = "Lt"
	OpGte          = "Gte"
	OpLte          = "Lte"
)

// FromNodePool returns the pool's spec.template.spec.requirements, then In [value] for each
// spec.template.metadata.labels entry in key order, keys normalized as Karpenter does.
func FromNodePool(np *objects.NodePool) []Requirement {
	tpl := &np.Spec.Template
	reqs := make([]Requirement, 0, len(tpl.Spec.Requirements)+len(tpl.Metadata.Labels))
	for i, r := range tpl.Spec.Requirements {
		reqs = append(reqs, Requirement{
			Key: NormalizeKey(r.Key), Written: r.Key, Operator: r.Operator, Values: r.Values,
			MinValues: r.MinValues, Index: i,
		})
	}
	labels := make([]string, 0, len(tpl.Metadata.Labels))
	for k := range tpl.Metadata.Labels {
		labels = append(labels, k)
	}
	slices.Sort(labels)
	for _, k := range labels {
		reqs = append(reqs, Requirement{
			Key: NormalizeKey(k), Written: k, Operator: OpIn, Values: []string{tpl.Metadata.Labels[k]},
			FromLabel: true, Index: -1,
		})
	}
	return reqs
}

// Judgeable reports whether rules may judge the requirement: its key is computable and its operator
// one Karpenter knows. Filter and the Admitted helpers skip the others (a pool Karpenter's CRD would
// refuse is not this package's to judge).
func (r Requirement) Judgeable() bool {
	return Computable(r.Key) && knownOperator(r.Operator)
}

func knownOperator(op string) bool {
	switch op {
	case OpIn, OpNotIn, OpExists, OpDoesNotExist, OpGt, OpLt, OpGte, OpLte:
		return true
	}
	return false
}

// Admits reports whether a label with these values satisfies the requirement. nil or empty values are
// an undefined label; several values are a label with a value set (zones, capacity types), which
// satisfies the requirement when the set intersects it, as Karpenter's Requirements.Intersects
// decides:
//
//   - In: some value is in the list. NotIn: the label is undefined, or some value is not in the list.
//   - Exists: defined. DoesNotExist: undefined.
//   - Gt, Lt, Gte, Lte: defined and some value is an integer within the bound, itself the one integer
//     of the requirement's values (a non-integer value or bound never satisfies).
//
// An unknown operator admits nothing.
func (r Requirement) Admits(values []string) bool {
	switch r.Operator {
	case OpIn:
		for _, v := range values {
			if slices.Contains(r.Values, v) {
				return true
			}
		}
		return false
	case OpNotIn:
		if len(values) == 0 {
			return true
		}
		for _, v := range values {
			if !slices.Contains(r.Values, v) {
				return true
			}
		}
		return false
	case OpExists:
		return len(values) > 0
	case OpDoesNotExist:
		return len(values) == 0
	case OpGt, OpLt, OpGte, OpLte:
		lo, hi, ok := r.bounds()
		if !ok {
			return false
		}
		for _, v := range values {
			if n, err := strconv.Atoi(v); err == nil && lo <= n && n <= hi {
				return true
			}
		}
	}
	return false
}

// bounds returns the inclusive integer range a Gt, Lt, Gte or Lte requirement admits, or false when
// its values are not one integer or nothing is in range (Gt the largest integer).
func (r Requirement) bounds() (lo, hi int, ok bool) {
	if len(r.Values) != 1 {
		return 0, 0, false
	}
	n, err := strconv.Atoi(r.Values[0])
	if err != nil {
		return 0, 0, false
	}
	lo, hi = math.MinInt, math.MaxInt
	switch r.Operator {
	case OpGt:
		if n == math.MaxInt {
			return 0, 0, false
		}
		lo = n + 1
	case OpLt:
		if n == math.MinInt {
			return 0, 0, false
		}
		hi = n - 1
	case OpGte:
		lo = n
	case OpLte:
		hi = n
	default:
		return 0, 0, false
	}
	return lo, hi, true
}

// AdmittedValues returns the candidates that every judgeable requirement on key admits, each taken as
// a single-valued label: the architectures (amd64, arm64) or operating systems a pool allows.
func AdmittedValues(reqs []Requirement, key string, candidates []string) []string {
	var out []string
	for _, c := range candidates {
		if admitsAll(reqs, key, c) {
			out = append(out, c)
		}
	}
	return out
}

// AdmittedZones returns the zones of env that the requirements admit: every judgeable zone requirement
// admits the zone's name, and every judgeable zone-ID requirement its ID (a zone whose ID is unknown is
// not judged by them).
func AdmittedZones(reqs []Requirement, env Env) []Zone {
	var out []Zone
	for _, z := range env.Zones {
		if admitsAll(reqs, LabelZone, z.Name) && (z.ID == "" || admitsAll(reqs, LabelZoneID, z.ID)) {
			out = append(out, z)
		}
	}
	return out
}

// admitsAll reports whether every judgeable requirement on key admits the single value v.
func admitsAll(reqs []Requirement, key, v string) bool {
	for _, r := range reqs {
		if r.Key == key && r.Judgeable() && !r.Admits([]string{v}) {
			return false
		}
	}
	return true
}
