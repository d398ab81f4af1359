package validators

// Analysis names a computation that several rules share, such as the parsed userData of an
// EC2NodeClass or what its subnet terms select, so that Memo computes it once per evaluation: K is
// what it is computed for (an object, a selector term), V its result. Declare each analysis once, as a
// package-level variable: analyses are told apart by that variable, never by Name.
type Analysis[K comparable, V any] struct {
	// Name says what the analysis computes ("userData"), for people reading the code.
	Name string
}

// memoKey identifies one remembered result: the analysis (an *Analysis[K, V]) and what it was
// computed for (a K).
type memoKey struct {
	analysis any
	key      any
}

// Memo returns analysis a of k in c's evaluation: what compute returns the first time a is asked about
// k, and that same value every time after, until the evaluation's next run over its objects. Rules that
// share an analysis thus compute it, and ask its facts, once per key whichever of them runs first;
// the Context needs no field per analysis. compute may use other analyses, not a of k itself. The
// value is shared by every rule that asks: read it, never modify it.
func Memo[K comparable, V any](c *Context, a *Analysis[K, V], k K, compute func() V) V {
	key := memoKey{a, k}
	if v, ok := c.memos[key]; ok {
		return v.(V)
	}
	v := compute()
	if c.memos == nil {
		c.memos = map[memoKey]any{}
	}
	c.memos[key] = v
	return v
}
