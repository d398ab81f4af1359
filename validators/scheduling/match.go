package scheduling

import (
	"slices"
	"strconv"
)

// matcher is a judgeable requirement compiled for one prepared Env, so that matching a type's value
// allocates nothing.
type matcher struct {
	req int // position in the requirements Filter was given
	key key
	op  string
	// strs are the values of In and NotIn; nums those of them that are canonical integers (a label
	// written "4" never equals the value "04"); set those of them in the key's vocabulary.
	strs []string
	nums []int
	set  uint64
	// lo and hi are the inclusive bounds of Gt, Lt, Gte and Lte; none means nothing is in bounds.
	lo, hi int
	none   bool
	// inBounds are the members of the key's vocabulary that are integers within the bounds.
	inBounds uint64
}

// compile returns a matcher for each requirement rules may judge in p, and the others.
func compile(reqs []Requirement, p *prepared) (ms []matcher, ignored []Requirement) {
	for i, r := range reqs {
		k, ok := keyOf(r.Key)
		if !ok || !knownOperator(r.Operator) || !p.computable(k) {
			ignored = append(ignored, r)
			continue
		}
		m := matcher{req: i, key: k, op: r.Operator}
		switch r.Operator {
		case OpIn, OpNotIn:
			m.strs = r.Values
			for _, v := range r.Values {
				if n, err := strconv.Atoi(v); err == nil && strconv.Itoa(n) == v {
					m.nums = append(m.nums, n)
				}
			}
			for j, w := range p.vocabulary(k) {
				if slices.Contains(r.Values, w) {
					m.set |= 1 << j
				}
			}
		case OpGt, OpLt, OpGte, OpLte:
			m.lo, m.hi, ok = r.bounds()
			m.none = !ok
			for j, w := range p.vocabulary(k) {
				if n, err := strconv.Atoi(w); err == nil && ok && m.lo <= n && n <= m.hi {
					m.inBounds |= 1 << j
				}
			}
		}
		ms = append(ms, m)
	}
	return ms, ignored
}

// match reports whether a label value satisfies the requirement, as Requirement.Admits decides for
// the value's strings.
func (m *matcher) match(v *value) bool {
	defined := v.kind != kindUndefined && (v.kind != kindSet || v.set != 0)
	switch m.op {
	case OpExists:
		return defined
	case OpDoesNotExist:
		return !defined
	case OpIn:
		return defined && m.has(v)
	case OpNotIn:
		return !defined || m.lacks(v)
	}
	// Gt, Lt, Gte, Lte
	if !defined || m.none {
		return false
	}
	switch v.kind {
	case kindNumber:
		return m.lo <= v.n && v.n <= m.hi
	case kindSet:
		return v.set&m.inBounds != 0
	}
	// a kebab-cased value is an integer exactly when its raw value is
	n, err := strconv.Atoi(v.s)
	return err == nil && m.lo <= n && n <= m.hi
}

// has reports whether the defined value v is one of an In requirement's values.
func (m *matcher) has(v *value) bool {
	switch v.kind {
	case kindText:
		return slices.Contains(m.strs, v.s)
	case kindKebab:
		for _, s := range m.strs {
			if kebabEqual(v.s, s) {
				return true
			}
		}
		return false
	case kindNumber:
		return slices.Contains(m.nums, v.n)
	}
	return v.set&m.set != 0
}

// lacks reports whether the defined value v has a value outside a NotIn requirement's values.
func (m *matcher) lacks(v *value) bool {
	if v.kind == kindSet {
		return v.set&^m.set != 0
	}
	return !m.has(v)
}
