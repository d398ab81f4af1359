package facts

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAtHandOnly: a provider asked in an AtHandOnly context that lacks an answer says so with an
// unknown fact, and the round reports it; other contexts are not at hand only.
func TestAtHandOnly(t *testing.T) {
	if OnlyAtHand(context.Background()) {
		t.Fatal("a plain context asks for answers at hand only")
	}
	ctx, round := AtHandOnly(context.Background())
	if !OnlyAtHand(ctx) || round.Missed() {
		t.Fatalf("OnlyAtHand %v, missed %v before any question; want true, false", OnlyAtHand(ctx), round.Missed())
	}
	err := NotAtHand(ctx, Roles)
	if !round.Missed() || !IsUnknown(err) || !errors.Is(err, ErrNotAtHand) || round.Fetching() {
		t.Errorf("after NotAtHand: missed %v, fetching %v, error %v; want a miss, no fetch and an unknown fact wrapping ErrNotAtHand", round.Missed(), round.Fetching(), err)
	}
	if other, otherRound := AtHandOnly(context.Background()); otherRound.Missed() || !OnlyAtHand(other) {
		t.Errorf("a second AtHandOnly context shares the first one's miss")
	}
}

// overlap measures how many calls of run are under way at once: each waits until want of them are (or
// a few seconds pass), so that peak says how many ran together, on any machine.
type overlap struct {
	want      int32
	full      chan struct{}
	once      sync.Once
	now, peak atomic.Int32
}

func newOverlap(want int) *overlap { return &overlap{want: int32(want), full: make(chan struct{})} }

func (o *overlap) run() {
	n := o.now.Add(1)
	for p := o.peak.Load(); n > p && !o.peak.CompareAndSwap(p, n); p = o.peak.Load() {
	}
	if n >= o.want {
		o.once.Do(func() { close(o.full) })
	}
	select {
	case <-o.full:
	case <-time.After(5 * time.Second): // not run together: the peak says so
	}
	o.now.Add(-1)
}

// caseContext returns the context of a test case, already cancelled when cancelled is set.
func caseContext(t *testing.T, cancelled bool) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if cancelled {
		cancel()
	}
	return ctx
}

// TestFetchNotAtHand: a round fetches each question once however often it is missed, at most
// AskLimit at once, in the caller's context; a fetch that ended without its answer is given up; none
// starts after the context ended.
func TestFetchNotAtHand(t *testing.T) {
	for _, tc := range []struct {
		name      string
		questions int
		late      int // how many of them end without an answer
		cancelled bool
	}{
		{"a few", 3, 0, false},
		{"more than the limit", 3 * AskLimit, 0, false},
		{"one late", 5, 1, false},
		{"past the deadline", 6, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := caseContext(t, tc.cancelled)
			together := newOverlap(min(tc.questions, AskLimit))
			var fetched atomic.Int32
			hctx, round := AtHandOnly(ctx)
			for i := range tc.questions {
				for range 2 { // each question missed twice: fetched once
					err := FetchNotAtHand(hctx, Images, i, func(fctx context.Context) bool {
						if OnlyAtHand(fctx) {
							t.Errorf("a fetch runs in an AtHandOnly context")
						}
						fetched.Add(1)
						together.run()
						return i < tc.late
					})
					if !errors.Is(err, ErrNotAtHand) {
						t.Fatalf("FetchNotAtHand = %v, want not at hand", err)
					}
				}
			}
			for n := 0; round.Fetching() && ctx.Err() == nil; n++ {
				if n > tc.questions {
					t.Fatalf("Wait returned %d times with fetches under way", n)
				}
				round.Wait()
			}
			gaveUp := 0
			for i := range tc.questions {
				if GaveUp(hctx, i) {
					gaveUp++
				}
			}
			want := int32(tc.questions)
			if tc.cancelled {
				want = 0
			}
			if fetched.Load() != want {
				t.Errorf("%d fetches; want %d", fetched.Load(), want)
			}
			if !tc.cancelled && together.peak.Load() != together.want {
				t.Errorf("%d fetches at once; want %d (all, at most AskLimit)", together.peak.Load(), together.want)
			}
			if gaveUp != tc.late {
				t.Errorf("%d questions given up; want the %d late", gaveUp, tc.late)
			}
		})
	}
}

// TestAsk: every question runs, concurrently but never more than the limit at once; none runs after
// the context ended.
func TestAsk(t *testing.T) {
	for _, tc := range []struct {
		name      string
		questions int
		limit     int
		cancelled bool
	}{
		{"fewer than the limit", 5, 0, false},
		{"more than the limit", 20, 3, false},
		{"past the deadline", 6, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := caseContext(t, tc.cancelled)
			limit := tc.limit
			if limit <= 0 {
				limit = AskLimit
			}
			together := newOverlap(min(tc.questions, limit))
			var asked atomic.Int32
			var qs []func(context.Context)
			for range tc.questions {
				qs = append(qs, func(context.Context) {
					asked.Add(1)
					together.run()
				})
			}
			Ask(ctx, tc.limit, qs...)
			want := int32(tc.questions)
			if tc.cancelled {
				want = 0
			}
			if asked.Load() != want {
				t.Errorf("%d asked; want %d", asked.Load(), want)
			}
			if !tc.cancelled && together.peak.Load() != together.want {
				t.Errorf("%d questions at once; want %d (all, at most %d)", together.peak.Load(), together.want, limit)
			}
		})
	}
}

// TestAskNested: questions asked by a question join the running Ask: the limit holds for all of them
// together, the asking question does not wait for them, and Ask returns only when every one has.
func TestAskNested(t *testing.T) {
	const limit, parents, children = 3, 4, 5
	var running, peak, done atomic.Int32
	leaf := func(ctx context.Context) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		running.Add(-1)
		done.Add(1)
	}
	parent := func(ctx context.Context) {
		leaf(ctx)
		qs := make([]func(context.Context), children)
		for i := range qs {
			qs[i] = leaf
		}
		Ask(ctx, limit, qs...)
	}
	qs := make([]func(context.Context), parents)
	for i := range qs {
		qs[i] = parent
	}
	Ask(context.Background(), limit, qs...)
	if got, want := done.Load(), int32(parents*(1+children)); got != want {
		t.Errorf("Ask returned after %d questions, want all %d", got, want)
	}
	if peak.Load() > limit {
		t.Errorf("%d questions ran at once, limit %d", peak.Load(), limit)
	}
}
