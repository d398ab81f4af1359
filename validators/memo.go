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
	st := c.state()
	if m, ok := st.memos[key]; ok {
		if m.missed {
			st.tainted++ // the result came from answers not at hand: so does the verdict that uses it
		}
		return m.value.(V)
	}
	before := c.misses()
	v := compute()
	if st.memos == nil {
		st.memos = map[memoKey]memo{}
	}
	st.memos[key] = memo{value: v, missed: c.misses() != before}
	return v
}

// memo is a remembered result, and whether computing it met answers not at hand (see Context.misses).
type memo struct {
	value  any
	missed bool
}

// Resource names a value that a catalog keeps across its evaluations, made on first use: a cache
// whose entries outlive one evaluation, where Memo's last one run. Declare each resource once, as a
// package-level variable; New makes its value, which must be safe for concurrent use, since a
// catalog's evaluations run concurrently (admission reviews).
type Resource[T any] struct {
	// Name says what the resource holds ("parsed userData"), for people reading the code.
	Name string
	New  func() T
}

// Shared returns the value of r that c's catalog keeps, made with r.New the first time any evaluation
// of the catalog (or of its Subsets) asks. Outside an evaluation (no catalog) it returns a fresh value.
func Shared[T any](c *Context, r *Resource[T]) T {
	cat := c.state().catalog
	if cat == nil {
		return r.New()
	}
	if v, ok := cat.shared.Load(r); ok {
		return v.(T)
	}
	v, _ := cat.shared.LoadOrStore(r, r.New())
	return v.(T)
}
