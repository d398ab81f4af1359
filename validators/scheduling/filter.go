package scheduling

import (
	"math/bits"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// Result is what Filter found.
type Result struct {
	// Types are the usable types that satisfy every judged requirement, in input order.
	Types []*facts.InstanceType
	// Usable is how many types are usable in the Env, before the requirements.
	Usable int
	// Unusable counts the other types by the first reason they are unusable.
	Unusable map[Unusable]int
	// Eliminated counts, per requirement key, the usable types its requirements reject (a type
	// rejected by two keys counts under both).
	Eliminated map[string]int
	// Rejected counts, per requirement in the order given, the usable types it rejects.
	Rejected []int
	// MinValues holds one verdict per judged requirement with minValues, in the order given.
	MinValues []MinValues
	// Ignored are the requirements not judged: key not computable (or region and zone ID when the
	// Env does not know them), or an unknown operator.
	Ignored []Requirement
}

// MinValues is the verdict on one requirement with minValues, as Karpenter's SatisfiesMinValues
// decides: the distinct values of its key over the surviving types (the union of each type's values)
// must number at least minValues.
type MinValues struct {
	Requirement Requirement
	// Distinct is how many distinct values the key has over Result.Types.
	Distinct int
}

// Satisfied reports whether the key has at least minValues distinct values.
func (m MinValues) Satisfied() bool { return m.Distinct >= *m.Requirement.MinValues }

// Filter returns the types usable in env that satisfy every judgeable requirement, with per key and
// per requirement counts of the usable types each eliminated, and the minValues verdicts. It
// allocates little and computes only the labels the requirements name, so that rules can call it per
// NodePool over a whole region's types.
func Filter(types []facts.InstanceType, env Env, reqs []Requirement) Result {
	p := prepare(&env)
	ms, ignored := compile(reqs, p)
	res := Result{
		Types:      make([]*facts.InstanceType, 0, len(types)),
		Unusable:   map[Unusable]int{},
		Eliminated: map[string]int{},
		Rejected:   make([]int, len(reqs)),
		Ignored:    ignored,
	}
	var eliminated [numKeys]int
	for i := range types {
		t := &types[i]
		b, why := inspect(t, p)
		if why != Usable {
			res.Unusable[why]++
			continue
		}
		res.Usable++
		var rejected uint64 // keys
		var v value
		for j := range ms {
			m := &ms[j]
			if v.fill(t, p, &b, m.key); !m.match(&v) {
				rejected |= 1 << m.key
				res.Rejected[m.req]++
			}
		}
		if rejected == 0 {
			res.Types = append(res.Types, t)
			continue
		}
		for ; rejected != 0; rejected &= rejected - 1 {
			eliminated[bits.TrailingZeros64(rejected)]++
		}
	}
	for k, n := range eliminated {
		if n > 0 {
			res.Eliminated[key(k).name()] = n
		}
	}
	for j := range ms {
		if r := reqs[ms[j].req]; r.MinValues != nil {
			res.MinValues = append(res.MinValues, MinValues{Requirement: r, Distinct: distinct(res.Types, p, ms[j].key)})
		}
	}
	return res
}

// distinct counts the distinct values of key k over types.
func distinct(types []*facts.InstanceType, p *prepared, k key) int {
	var union uint64
	nums := map[int]struct{}{}
	strs := map[string]struct{}{}
	var b basics
	var v value
	for _, t := range types {
		if k.needsBasics() {
			b, _ = inspect(t, p)
		}
		v.fill(t, p, &b, k)
		switch v.kind {
		case kindSet:
			union |= v.set
		case kindNumber:
			nums[v.n] = struct{}{}
		case kindText:
			strs[v.s] = struct{}{}
		case kindKebab:
			strs[kebabCase(v.s)] = struct{}{}
		}
	}
	return bits.OnesCount64(union) + len(nums) + len(strs)
}
