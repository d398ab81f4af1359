package scheduling

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// Nearest returns up to n values that key has over the types usable in env, closest to v first, for
// messages ("m9" → m8g, m8i, m5…): by edit distance, or by numeric distance when v and the value are
// both integers; ties go to the value more types have, then to the lesser string. A key that is not
// computable in env has no values.
func Nearest(types []facts.InstanceType, env Env, key, v string, n int) []string {
	k, ok := keyOf(key)
	p := prepare(&env)
	if !ok || n <= 0 || !p.computable(k) {
		return nil
	}
	counts := map[string]int{}
	for i := range types {
		t := &types[i]
		b, why := inspect(t, p)
		if why != Usable {
			continue
		}
		for _, s := range valueOf(t, p, &b, k).labelValues(p, k) {
			counts[s]++
		}
	}
	type candidate struct {
		value    string
		distance int
		count    int
	}
	vn, vErr := strconv.Atoi(v)
	cands := make([]candidate, 0, len(counts))
	for s, c := range counts {
		d := editDistance(v, s)
		if sn, err := strconv.Atoi(s); err == nil && vErr == nil {
			d = absDiff(vn, sn)
		}
		cands = append(cands, candidate{s, d, c})
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.distance, b.distance), cmp.Compare(b.count, a.count), cmp.Compare(a.value, b.value))
	})
	out := make([]string, 0, min(n, len(cands)))
	for _, c := range cands[:min(n, len(cands))] {
		out = append(out, c.value)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, by bytes (label values are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// absDiff is |a-b|, saturating instead of overflowing.
func absDiff(a, b int) int {
	if a < b {
		a, b = b, a
	}
	if d := a - b; d >= 0 {
		return d
	}
	return int(^uint(0) >> 1)
}
