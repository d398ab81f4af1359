package facts

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// AheadAsker is implemented by providers whose answers may each cost a round trip, such as the live
// provider's AWS calls. Asked one after another, the questions of one evaluation cost the sum of their
// round trips; fetched together, about one round trip per level of dependent questions. Providers
// that answer from memory (a snapshot, none) do not implement it: a run on what is at hand would only
// cost time.
//
// A provider that asks ahead also honours AtHandOnly: in such a context it answers only what it has
// at hand (its cache) and, for anything else, starts its fetch (FetchNotAtHand) and answers "not at
// hand" instead of waiting. The engine thus learns every independent question of an evaluation in one
// run, waits for their answers together, and runs again.
type AheadAsker interface {
	// AskAhead reports whether the engine should run on what is at hand first (see AtHandOnly).
	AskAhead() bool
}

// AsksAhead reports whether p wants its questions asked ahead (see AheadAsker). The providers of this
// package that wrap another (Recorder, WithInputAWSAuth, …) answer for the one they wrap.
func AsksAhead(p Provider) bool {
	a, ok := p.(AheadAsker)
	return ok && a.AskAhead()
}

// ErrNotAtHand is behind the unknown fact a provider answers, in an AtHandOnly context, for a question
// it would have to ask (or wait for).
var ErrNotAtHand = errors.New("not at hand")

type roundKey struct{}

// Round is one run on what is at hand (AtHandOnly): it counts the questions that had no answer there
// and fetches them in the background, at most AskLimit at a time, each once in an evaluation, so that
// a later run finds their answers at hand. The rounds of one evaluation (Next) share their fetches.
type Round struct {
	misses atomic.Int64
	*fetches
}

// fetches are the fetches the rounds of one evaluation started.
type fetches struct {
	// base is the context the fetches run in: the caller's, without AtHandOnly.
	base context.Context

	mu      sync.Mutex
	pool    *askPool
	started map[any]bool
	// gaveUp holds the questions whose fetch ended late (see GaveUp).
	gaveUp map[any]bool
	// queued and running count the fetches waiting for a worker, and not yet returned.
	queued, running int
	// returned is closed, and replaced, each time a fetch returns.
	returned chan struct{}
}

// AtHandOnly returns a context in which providers that ask ahead answer only from what they have at
// hand, starting the fetch of what is not, and the Round that records it. An answer wrapping
// ErrNotAtHand must be thrown away. Providers that do not ask ahead ignore it: their answers are
// always at hand. The fetches run in ctx (its deadline bounds them), not in the returned context.
func AtHandOnly(ctx context.Context) (context.Context, *Round) {
	r := &Round{fetches: &fetches{base: ctx, started: map[any]bool{}, gaveUp: map[any]bool{}, returned: make(chan struct{})}}
	return context.WithValue(ctx, roundKey{}, r), r
}

// Next returns the context and Round of the run that follows r in the same evaluation: it shares r's
// fetches, those in flight included, so that no question is fetched twice, and remembers the
// questions whose fetch ended late (GaveUp), so that one that does not answer within the provider's
// budget holds no later round up.
func (r *Round) Next() (context.Context, *Round) {
	n := &Round{fetches: r.fetches}
	return context.WithValue(r.base, roundKey{}, n), n
}

// OnlyAtHand reports whether ctx asks for answers at hand only (AtHandOnly).
func OnlyAtHand(ctx context.Context) bool {
	_, ok := ctx.Value(roundKey{}).(*Round)
	return ok
}

// NotAtHand records, for a provider asked in an AtHandOnly context, that fact f is not at hand, and
// returns the unknown fact to answer with. A provider that can fetch the answer in the background
// calls FetchNotAtHand instead, so that a later run finds it.
func NotAtHand(ctx context.Context, f Fact) error {
	if r, ok := ctx.Value(roundKey{}).(*Round); ok {
		r.misses.Add(1)
	}
	return &UnknownError{Fact: f, Reason: "not at hand", Err: ErrNotAtHand}
}

// FetchNotAtHand is NotAtHand for a question the provider can fetch: unless a fetch of id (any
// comparable value naming the question, such as its cache and key) was already started in this
// evaluation, it queues fetch to run in the evaluation's context, at most AskLimit at a time, and
// returns at once. fetch waits for the answer (within the provider's own per-call budget) and reports
// whether that wait ended before the answer came (late): the question is then one the evaluation gave
// up (GaveUp).
func FetchNotAtHand(ctx context.Context, f Fact, id any, fetch func(ctx context.Context) (late bool)) error {
	err := NotAtHand(ctx, f)
	r, ok := ctx.Value(roundKey{}).(*Round)
	if !ok {
		return err
	}
	fs := r.fetches
	fs.mu.Lock()
	if fs.started[id] || fs.base.Err() != nil {
		fs.mu.Unlock()
		return err
	}
	if fs.pool == nil {
		fs.pool = &askPool{limit: AskLimit}
	}
	fs.started[id] = true
	fs.queued++
	fs.running++
	fs.mu.Unlock()
	fs.pool.run(fs.base, func(ctx context.Context) {
		fs.mu.Lock()
		fs.queued--
		fs.mu.Unlock()
		late := fetch(ctx)
		fs.mu.Lock()
		defer fs.mu.Unlock()
		if late {
			fs.gaveUp[id] = true
		}
		fs.running--
		close(fs.returned)
		fs.returned = make(chan struct{})
	})
	return err
}

// GaveUp reports whether, in an AtHandOnly context, a fetch of the question id ended late in this
// evaluation (see FetchNotAtHand): the provider then answers it as late, as a question asked outside
// such a context would be once its wait ended, instead of missing it again.
func GaveUp(ctx context.Context, id any) bool {
	r, ok := ctx.Value(roundKey{}).(*Round)
	if !ok {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gaveUp[id]
}

// Missed reports whether a question asked in the round had no answer at hand.
func (r *Round) Missed() bool { return r.misses.Load() > 0 }

// Misses counts the questions asked in the round that had no answer at hand, so far.
func (r *Round) Misses() int64 { return r.misses.Load() }

// Fetching reports whether a fetch of the evaluation has not returned yet: when none has, a run
// that follows would miss the same answers.
func (r *Round) Fetching() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running > 0
}

// Wait returns when there is something new to run on: when every fetch of the evaluation has
// returned, or, once one has, when none waits for a worker any longer (the answers of a level are
// in but for the slowest, whose dependent questions should not wait for it), or when the context has
// ended. Each fetch is bounded by the context and the provider's per-call budget; those still queued
// when the context ends are dropped.
func (r *Round) Wait() {
	r.mu.Lock()
	returned := r.returned
	running := r.running
	r.mu.Unlock()
	if running == 0 {
		return
	}
	for {
		select {
		case <-returned:
		case <-r.base.Done():
			return
		}
		r.mu.Lock()
		if r.running == 0 || r.queued == 0 {
			r.mu.Unlock()
			return
		}
		returned = r.returned
		r.mu.Unlock()
	}
}

// AskLimit is how many fetches the rounds of an evaluation, or Ask, run at once by default: enough for every independent
// question of one EC2NodeClass (the cluster, the permission probes, its role, AMI terms and selectors)
// to be on the wire together, few enough not to meet AWS's request-rate limits, and a bound on the
// goroutines and requests an audit of thousands of objects starts.
const AskLimit = 8

// Ask runs the questions and returns when all have returned. A question asks a provider and keeps no
// answer: it warms the provider's cache, and whoever asks the same question next is answered from it,
// error included. The questions run at most limit at a time (AskLimit when limit <= 0), on a few
// goroutines; each honours ctx itself (a provider's calls take it), so Ask returns by ctx's deadline
// plus the longest single wait.
//
// A question may itself call Ask, for the questions its answers lead to. Inside a running Ask those
// join its pool: they run under the same limit, and the question that asked them does not wait for
// them (the outer Ask does), so nesting neither multiplies the requests on the wire nor holds a slot
// while waiting for one.
func Ask(ctx context.Context, limit int, questions ...func(context.Context)) {
	if len(questions) == 0 {
		return
	}
	if p, ok := ctx.Value(askPoolKey{}).(*askPool); ok {
		for _, q := range questions {
			p.run(ctx, q)
		}
		return
	}
	if limit <= 0 {
		limit = AskLimit
	}
	p := &askPool{limit: limit}
	pctx := context.WithValue(ctx, askPoolKey{}, p)
	for _, q := range questions {
		p.run(pctx, q)
	}
	p.wg.Wait() // the questions return no errors: their answers and failures are in the cache
}

type askPoolKey struct{}

// askPool runs the questions of one Ask, nested ones included, on at most limit goroutines: a queue
// and workers, not a goroutine per question, since an audit asks hundreds of thousands.
type askPool struct {
	limit int
	wg    sync.WaitGroup // questions queued or running

	mu      sync.Mutex
	queue   []func()
	workers int
}

// run queues q; a worker runs it unless ctx has ended by then (it would only be late).
func (p *askPool) run(ctx context.Context, q func(context.Context)) {
	if ctx.Err() != nil {
		return
	}
	p.wg.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queue = append(p.queue, func() {
		if ctx.Err() == nil {
			q(ctx)
		}
	})
	if p.workers < p.limit {
		p.workers++
		go p.work()
	}
}

// work runs queued questions until the queue is empty.
func (p *askPool) work() {
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.workers--
			p.mu.Unlock()
			return
		}
		q := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.mu.Unlock()
		q()
		p.wg.Done()
	}
}
