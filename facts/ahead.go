package facts

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// AheadAsker is implemented by providers whose answers may each cost a round trip, such as the live
// provider's AWS calls. Asked one after another, the questions of one evaluation cost the sum of their
// round trips; asked ahead and together (Ask), about one round trip per level of dependent questions.
// Providers that answer from memory (a snapshot, none) do not implement it: asking them ahead would
// only cost time.
//
// A provider that asks ahead also honours AtHandOnly: in such a context it answers only what it has
// at hand (its cache) and, for anything else, calls NotAtHand instead of asking. That lets an
// evaluation whose every answer is cached run once, without asking anything ahead.
type AheadAsker interface {
	// AskAhead reports whether questions should be asked ahead, concurrently, before the rules run.
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

type atHandKey struct{}

// atHand records whether a question asked in an AtHandOnly context had no answer at hand.
type atHand struct{ missed atomic.Bool }

// AtHandOnly returns a context in which providers that ask ahead answer only from what they have at
// hand, and a function that reports whether any question asked in it had no answer there (its answer,
// an unknown fact wrapping ErrNotAtHand, must then be thrown away). Providers that do not ask ahead
// ignore it: their answers are always at hand.
func AtHandOnly(ctx context.Context) (context.Context, func() bool) {
	h := &atHand{}
	return context.WithValue(ctx, atHandKey{}, h), h.missed.Load
}

// OnlyAtHand reports whether ctx asks for answers at hand only (AtHandOnly).
func OnlyAtHand(ctx context.Context) bool {
	_, ok := ctx.Value(atHandKey{}).(*atHand)
	return ok
}

// NotAtHand records, for a provider asked in an AtHandOnly context, that fact f is not at hand, and
// returns the unknown fact to answer with.
func NotAtHand(ctx context.Context, f Fact) error {
	if h, ok := ctx.Value(atHandKey{}).(*atHand); ok {
		h.missed.Store(true)
	}
	return &UnknownError{Fact: f, Reason: "not at hand", Err: ErrNotAtHand}
}

// AskLimit is how many questions Ask asks at once by default: enough for every independent question
// of one EC2NodeClass (the cluster, the permission probes, its role, AMI terms and selectors) to be on
// the wire together, few enough not to meet AWS's request-rate limits.
const AskLimit = 8

// Ask runs the questions and returns when all have returned. A question asks a provider and keeps no
// answer: it warms the provider's cache, and whoever asks the same question next is answered from it,
// error included. Each question runs first in an AtHandOnly context, which costs no more than the
// cache lookups; only those that then miss an answer run again, at most limit at a time (AskLimit when
// limit <= 0), each on its own goroutine. Each question honours ctx itself (a provider's calls take
// it), so Ask returns by ctx's deadline plus the longest single wait.
//
// A question may itself call Ask, for the questions its answers lead to (a class's role, then the
// role's simulations). Inside a running Ask those join its pool: they run under the same limit, and the
// question that asked them does not wait for them (the outer Ask does), so nesting neither multiplies
// the requests on the wire nor holds a slot while waiting for one.
func Ask(ctx context.Context, limit int, questions ...func(context.Context)) {
	var pending []func(context.Context)
	for _, q := range questions {
		hctx, missed := AtHandOnly(ctx)
		if q(hctx); missed() {
			pending = append(pending, q)
		}
	}
	if len(pending) == 0 {
		return
	}
	if p, ok := ctx.Value(askPoolKey{}).(*askPool); ok {
		for _, q := range pending {
			p.run(ctx, q)
		}
		return
	}
	if limit <= 0 {
		limit = AskLimit
	}
	p := &askPool{limit: limit}
	pctx := context.WithValue(ctx, askPoolKey{}, p)
	for _, q := range pending {
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
