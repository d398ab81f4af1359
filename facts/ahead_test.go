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
// unknown fact, and the context's function reports it; other contexts are not at hand only.
func TestAtHandOnly(t *testing.T) {
	if OnlyAtHand(context.Background()) {
		t.Fatal("a plain context asks for answers at hand only")
	}
	ctx, missed := AtHandOnly(context.Background())
	if !OnlyAtHand(ctx) || missed() {
		t.Fatalf("OnlyAtHand %v, missed %v before any question; want true, false", OnlyAtHand(ctx), missed())
	}
	err := NotAtHand(ctx, Roles)
	if !missed() || !IsUnknown(err) || !errors.Is(err, ErrNotAtHand) {
		t.Errorf("after NotAtHand: missed %v, error %v; want a miss and an unknown fact wrapping ErrNotAtHand", missed(), err)
	}
	if other, missedOther := AtHandOnly(context.Background()); missedOther() || !OnlyAtHand(other) {
		t.Errorf("a second AtHandOnly context shares the first one's miss")
	}
}

// TestAsk: questions answered at hand run once, inline; the others run again with the caller's
// context, concurrently but never more than the limit at once; none runs after the context ended.
func TestAsk(t *testing.T) {
	for _, tc := range []struct {
		name      string
		questions int
		missing   int // how many of them have no answer at hand
		limit     int
		cancelled bool
	}{
		{"all at hand", 12, 0, 0, false},
		{"some to ask", 12, 5, 0, false},
		{"more to ask than the limit", 20, 20, 3, false},
		{"past the deadline", 6, 6, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelled {
				cancel()
			}
			limit := tc.limit
			if limit <= 0 {
				limit = AskLimit
			}
			// Each question asked waits until as many as Ask may run together are running (or a few
			// seconds have passed), so that the peak says how many it ran at once, on any machine.
			together := min(tc.missing, limit)
			full := make(chan struct{})
			var once sync.Once
			var inline, asked, now, peak atomic.Int32
			var mu sync.Mutex
			var qs []func(context.Context)
			for i := range tc.questions {
				qs = append(qs, func(ctx context.Context) {
					if OnlyAtHand(ctx) {
						inline.Add(1)
						if i < tc.missing {
							_ = NotAtHand(ctx, Images)
						}
						return
					}
					asked.Add(1)
					n := now.Add(1)
					mu.Lock()
					peak.Store(max(peak.Load(), n))
					mu.Unlock()
					if int(n) >= together {
						once.Do(func() { close(full) })
					}
					select {
					case <-full:
					case <-time.After(5 * time.Second): // not run together: the peak says so
					}
					now.Add(-1)
				})
			}
			Ask(ctx, tc.limit, qs...)
			wantAsked := int32(tc.missing)
			if tc.cancelled {
				wantAsked = 0
			}
			if inline.Load() != int32(tc.questions) || asked.Load() != wantAsked {
				t.Errorf("%d asked at hand, %d asked again; want %d and %d", inline.Load(), asked.Load(), tc.questions, wantAsked)
			}
			if want := int32(together); !tc.cancelled && peak.Load() != want {
				t.Errorf("%d questions at once; want %d (all that miss an answer, at most %d)", peak.Load(), want, limit)
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
		if OnlyAtHand(ctx) {
			_ = NotAtHand(ctx, Simulations)
			return
		}
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
		if OnlyAtHand(ctx) {
			_ = NotAtHand(ctx, Roles)
			return
		}
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
