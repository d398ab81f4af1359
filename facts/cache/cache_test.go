package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// source is a fetch that counts its calls and answers what it is told to.
type source struct {
	calls   atomic.Int32
	mu      sync.Mutex
	value   string
	neg     bool
	err     error
	release chan struct{} // when set, fetches wait for it (or their context)
}

func (s *source) fetch(ctx context.Context) (Answer[string], error) {
	s.calls.Add(1)
	s.mu.Lock()
	v, neg, err, rel := s.value, s.neg, s.err, s.release
	s.mu.Unlock()
	if rel != nil {
		select {
		case <-rel:
		case <-ctx.Done():
			return Answer[string]{}, ctx.Err()
		}
	}
	return Answer[string]{Value: v, Negative: neg}, err
}

func (s *source) set(v string, neg bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.value, s.neg, s.err = v, neg, err
}

func (s *source) hang() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.release = make(chan struct{})
	return s.release
}

func newCache(t *testing.T, clk *clock) *Cache[string] {
	c := New[string](Options{TTL: time.Minute, NegativeTTL: 10 * time.Second, ErrorBackoff: 5 * time.Second, FetchTimeout: 2 * time.Second, Now: clk.Now})
	t.Cleanup(c.Close)
	return c
}

func get(t *testing.T, c *Cache[string], ctx context.Context, s *source) (Lookup[string], error) {
	t.Helper()
	return c.Get(ctx, "k", s.fetch)
}

// TestTTLs: a positive answer is kept TTL, a negative one NegativeTTL; then it is fetched again.
func TestTTLs(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		neg  bool
		ttl  time.Duration
	}{{"positive", false, time.Minute}, {"negative", true, 10 * time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			c := newCache(t, clk)
			s := &source{}
			s.set("v1", tc.neg, nil)
			if l, err := get(t, c, ctx, s); err != nil || l.Result != Miss || l.Value != "v1" {
				t.Fatalf("first Get = %+v, %v; want a miss with v1", l, err)
			}
			clk.Advance(tc.ttl - time.Second)
			if l, err := get(t, c, ctx, s); err != nil || l.Result != Hit || l.Age != tc.ttl-time.Second {
				t.Fatalf("Get within TTL = %+v, %v; want a hit aged %v", l, err, tc.ttl-time.Second)
			}
			s.set("v2", tc.neg, nil)
			clk.Advance(time.Second)
			if l, err := get(t, c, ctx, s); err != nil || l.Result != Miss || l.Value != "v2" {
				t.Fatalf("Get after TTL = %+v, %v; want a miss with v2", l, err)
			}
			if n := s.calls.Load(); n != 2 {
				t.Errorf("fetched %d times, want 2", n)
			}
		})
	}
}

// TestGetWithin: an unexpired answer older than the caller's maximum age is fetched again; a younger
// one is a hit; when the new fetch fails, the older answer is served as stale.
func TestGetWithin(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	c := newCache(t, clk)
	s := &source{}
	s.set("v1", false, nil)
	if _, err := c.GetWithin(ctx, "k", 10*time.Second, s.fetch); err != nil {
		t.Fatal(err)
	}
	clk.Advance(9 * time.Second)
	if l, err := c.GetWithin(ctx, "k", 10*time.Second, s.fetch); err != nil || l.Result != Hit {
		t.Fatalf("younger than the maximum age: %+v, %v; want a hit", l, err)
	}
	clk.Advance(2 * time.Second)
	if l, err := c.Get(ctx, "k", s.fetch); err != nil || l.Result != Hit {
		t.Fatalf("Get within TTL: %+v, %v; want a hit", l, err)
	}
	s.set("v2", false, nil)
	if l, err := c.GetWithin(ctx, "k", 10*time.Second, s.fetch); err != nil || l.Result != Miss || l.Value != "v2" {
		t.Fatalf("older than the maximum age: %+v, %v; want a miss with v2", l, err)
	}
	clk.Advance(11 * time.Second)
	s.set("", false, errors.New("throttled"))
	if l, err := c.GetWithin(ctx, "k", 10*time.Second, s.fetch); err != nil || l.Result != Stale || l.Value != "v2" {
		t.Fatalf("refetch failed: %+v, %v; want stale v2", l, err)
	}
}

// TestFetchPanics: a fetch that panics is that fetch's error, for every caller waiting on it, and the
// cache goes on working.
func TestFetchPanics(t *testing.T) {
	c := newCache(t, newClock())
	_, err := c.Get(context.Background(), "k", func(context.Context) (Answer[string], error) { panic("nil map") })
	if err == nil || err.Error() != `fetch of "k" panicked: nil map` {
		t.Errorf("Get = %v; want the panic as the error", err)
	}
	s := &source{}
	s.set("v", false, nil)
	if l, err := c.Get(context.Background(), "other", s.fetch); err != nil || l.Value != "v" {
		t.Errorf("after a panic: %+v, %v", l, err)
	}
}

// TestOneFetchInFlight: concurrent callers of one key share one fetch.
func TestOneFetchInFlight(t *testing.T) {
	c := newCache(t, newClock())
	s := &source{}
	s.set("v", false, nil)
	rel := s.hang()
	var wg sync.WaitGroup
	results := make(chan Lookup[string], 50)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := c.Get(context.Background(), "k", s.fetch)
			if err != nil {
				t.Errorf("Get: %v", err)
			}
			results <- l
		}()
	}
	for s.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(rel)
	wg.Wait()
	close(results)
	for l := range results {
		// A caller that arrived after the fetch ended gets a hit; every other one joined the fetch.
		if l.Value != "v" || (l.Result != Miss && l.Result != Hit) {
			t.Errorf("a caller got %+v, want v", l)
		}
	}
	if n := s.calls.Load(); n != 1 {
		t.Errorf("50 concurrent callers made %d fetches, want 1", n)
	}
}

// TestStaleWhenRefreshFails: an expired answer is served, marked stale with the reason, when the
// refresh fails; during the back-off the source is not asked again.
func TestStaleWhenRefreshFails(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	c := newCache(t, clk)
	s := &source{}
	s.set("old", false, nil)
	if _, err := get(t, c, ctx, s); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Minute)
	throttled := errors.New("ThrottlingException: rate exceeded")
	s.set("", false, throttled)
	l, err := get(t, c, ctx, s)
	if err != nil || l.Result != Stale || l.Value != "old" || !errors.Is(l.RefreshErr, throttled) || l.Age != 2*time.Minute {
		t.Fatalf("Get with failing refresh = %+v, %v; want stale old, aged 2m, because throttled", l, err)
	}
	calls := s.calls.Load()
	clk.Advance(4 * time.Second)
	if l, err := get(t, c, ctx, s); err != nil || l.Result != Stale || !errors.Is(l.RefreshErr, throttled) {
		t.Fatalf("Get in back-off = %+v, %v; want stale", l, err)
	}
	if s.calls.Load() != calls {
		t.Errorf("the source was asked again during the back-off")
	}
	clk.Advance(2 * time.Second)
	s.set("new", false, nil)
	if l, err := get(t, c, ctx, s); err != nil || l.Result != Miss || l.Value != "new" {
		t.Fatalf("Get after back-off = %+v, %v; want the refreshed answer", l, err)
	}
}

// TestFailureWithoutAnswer: with nothing cached, a failure is the error, and the back-off answers it
// without asking again.
func TestFailureWithoutAnswer(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	c := newCache(t, clk)
	s := &source{}
	denied := errors.New("AccessDenied")
	s.set("", false, denied)
	for i := 0; i < 3; i++ {
		if l, err := get(t, c, ctx, s); !errors.Is(err, denied) || l.Result != Failed {
			t.Fatalf("Get %d = %+v, %v; want the error", i, l, err)
		}
	}
	if n := s.calls.Load(); n != 1 {
		t.Errorf("fetched %d times within the back-off, want 1", n)
	}
}

// TestLate: a caller whose context ends first gets the stale answer or a LateError at once; the fetch
// goes on and its answer serves the next caller.
func TestLate(t *testing.T) {
	clk := newClock()
	c := newCache(t, clk)
	s := &source{}
	s.set("v", false, nil)
	rel := s.hang()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	l, err := get(t, c, ctx, s)
	var late *LateError
	if !errors.As(err, &late) || !errors.Is(err, ErrLate) || !errors.Is(err, context.DeadlineExceeded) || l.Result != Failed {
		t.Fatalf("Get past its deadline = %+v, %v; want a LateError", l, err)
	}
	close(rel)
	for c.Len() == 0 || func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.flights) > 0 }() {
		time.Sleep(time.Millisecond)
	}
	if l, err := get(t, c, context.Background(), s); err != nil || l.Result != Hit || l.Value != "v" {
		t.Fatalf("next Get = %+v, %v; want a hit from the fetch that went on", l, err)
	}

	// Expired, and the refresh hangs: the late caller gets the stale answer.
	clk.Advance(2 * time.Minute)
	rel = s.hang()
	defer close(rel)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	l, err = get(t, c, ctx2, s)
	if err != nil || l.Result != Stale || l.Value != "v" || !errors.Is(l.RefreshErr, ErrLate) {
		t.Fatalf("Get with a late refresh = %+v, %v; want stale v because late", l, err)
	}
}

// TestFetchTimeout: a fetch that hangs ends at FetchTimeout, as a failure.
func TestFetchTimeout(t *testing.T) {
	c := New[string](Options{FetchTimeout: 30 * time.Millisecond})
	defer c.Close()
	s := &source{}
	rel := s.hang()
	defer close(rel)
	_, err := get(t, c, context.Background(), s)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get of a hanging fetch = %v; want the fetch's deadline", err)
	}
}

// TestBounded: at most MaxEntries keys are kept, the least recently used evicted.
func TestBounded(t *testing.T) {
	c := New[string](Options{MaxEntries: 3})
	defer c.Close()
	s := &source{}
	s.set("v", false, nil)
	for i := 0; i < 10; i++ {
		if _, err := c.Get(context.Background(), fmt.Sprint(i), s.fetch); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.Len(); n != 3 {
		t.Errorf("Len = %d after 10 keys, want 3", n)
	}
	calls := s.calls.Load()
	if l, _ := c.Get(context.Background(), "9", s.fetch); l.Result != Hit {
		t.Errorf("the most recent key was evicted")
	}
	if l, _ := c.Get(context.Background(), "0", s.fetch); l.Result != Miss || s.calls.Load() != calls+1 {
		t.Errorf("the oldest key was kept")
	}
}

// TestCloseStopsFetches: Close ends hanging fetches and returns; Get after Close fails. goleak (in
// TestMain) proves no goroutine is left.
func TestCloseStopsFetches(t *testing.T) {
	c := New[string](Options{FetchTimeout: time.Hour})
	s := &source{}
	s.hang() // never released: only Close can end the fetch
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := get(t, c, ctx, s); !errors.Is(err, ErrLate) {
		t.Fatalf("Get = %v, want late", err)
	}
	c.Close()
	if _, err := get(t, c, context.Background(), s); err == nil {
		t.Errorf("Get after Close succeeded")
	}
}

// TestMaxWait: a Get waits at most MaxWait for a fetch whatever its context allows, and the fetch goes
// on: its answer serves the next caller.
func TestMaxWait(t *testing.T) {
	c := New[string](Options{MaxWait: 20 * time.Millisecond, FetchTimeout: time.Minute})
	defer c.Close()
	s := &source{}
	s.set("v", false, nil)
	rel := s.hang()
	l, err := get(t, c, context.Background(), s)
	var late *LateError
	if !errors.As(err, &late) || !errors.Is(err, ErrLate) || !errors.Is(err, ErrMaxWait) || !errors.Is(err, context.DeadlineExceeded) || l.Result != Failed {
		t.Fatalf("Get past MaxWait = %+v, %v; want a LateError because of MaxWait", l, err)
	}
	close(rel)
	for c.Len() == 0 || func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.flights) > 0 }() {
		time.Sleep(time.Millisecond)
	}
	if l, err := get(t, c, context.Background(), s); err != nil || l.Result != Hit || l.Value != "v" {
		t.Fatalf("next Get = %+v, %v; want a hit from the fetch that went on", l, err)
	}
}

// TestLateCallerStartsNothing: a caller whose context has already ended gets its context's cause, or
// the stale answer, and starts no fetch; a fetch already in flight is not disturbed.
func TestLateCallerStartsNothing(t *testing.T) {
	clk := newClock()
	c := newCache(t, clk)
	s := &source{}
	s.set("v", false, nil)
	cause := errors.New("the run's deadline passed")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if l, err := get(t, c, ctx, s); !errors.Is(err, ErrLate) || !errors.Is(err, cause) || l.Result != Failed {
		t.Fatalf("Get with an ended context = %+v, %v; want late, with the context's cause", l, err)
	}
	if n := s.calls.Load(); n != 0 {
		t.Fatalf("%d fetches for a caller that could not wait; want none", n)
	}
	if _, err := get(t, c, context.Background(), s); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Minute) // expired: a late caller gets the stale answer, still without a fetch
	if l, err := get(t, c, ctx, s); err != nil || l.Result != Stale || l.Value != "v" || !errors.Is(l.RefreshErr, cause) {
		t.Fatalf("Get with an ended context after expiry = %+v, %v; want stale v", l, err)
	}
	if n := s.calls.Load(); n != 1 {
		t.Errorf("%d fetches; want the one of the caller that could wait", n)
	}
}

// lasting is an error that says asking again soon will not change it.
type lasting struct{}

func (lasting) Error() string { return "not served here" }
func (lasting) Lasting() bool { return true }

// TestLastingErrorKeptLikeNegative: a fetch error that is Lasting is kept NegativeTTL, like a "does
// not exist" answer; another error only ErrorBackoff.
func TestLastingErrorKeptLikeNegative(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		// calls after a Get, one 6 s later (past ErrorBackoff), and one 11 s later (past NegativeTTL).
		calls [3]int32
	}{
		{"lasting", fmt.Errorf("wrapped: %w", lasting{}), [3]int32{1, 1, 2}},
		{"passing", errors.New("throttled"), [3]int32{1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			c := newCache(t, clk)
			s := &source{}
			s.set("", false, tc.err)
			for i, wait := range []time.Duration{0, 6 * time.Second, 5 * time.Second} {
				clk.Advance(wait)
				if _, err := get(t, c, context.Background(), s); !errors.Is(err, tc.err) {
					t.Fatalf("Get %d = %v; want the fetch's error", i, err)
				}
				if n := s.calls.Load(); n != tc.calls[i] {
					t.Errorf("after Get %d: %d fetches, want %d", i, n, tc.calls[i])
				}
			}
		})
	}
	if Lasting(errors.New("x")) || !Lasting(fmt.Errorf("w: %w", lasting{})) {
		t.Errorf("Lasting does not tell a lasting error from another")
	}
}

// TestCached: Cached answers what Get would without fetching (a fresh answer, a recent failure with
// its stale answer or error) and reports the rest as not at hand, a fetch in flight included.
func TestCached(t *testing.T) {
	clk := newClock()
	c := newCache(t, clk)
	s := &source{}
	if _, ok, _ := c.Cached("k", 0); ok {
		t.Fatalf("an unknown key is at hand")
	}
	s.set("v", false, nil)
	if _, err := get(t, c, context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if l, ok, err := c.Cached("k", 0); !ok || err != nil || l.Result != Hit || l.Value != "v" {
		t.Fatalf("Cached of a fresh answer = %+v, %v, %v; want a hit", l, ok, err)
	}
	clk.Advance(time.Second)
	if _, ok, _ := c.Cached("k", time.Second); ok {
		t.Errorf("an answer older than the maximum age is at hand")
	}
	clk.Advance(2 * time.Minute)
	if _, ok, _ := c.Cached("k", 0); ok {
		t.Errorf("an expired answer is at hand")
	}
	s.set("", false, errors.New("throttled"))
	if _, err := get(t, c, context.Background(), s); err != nil {
		t.Fatalf("refresh failed: %v; want the stale answer", err)
	}
	if l, ok, err := c.Cached("k", 0); !ok || err != nil || l.Result != Stale || l.Value != "v" {
		t.Errorf("Cached after a failed refresh = %+v, %v, %v; want stale v, as Get answers within the back-off", l, ok, err)
	}
	rel := s.hang()
	defer close(rel)
	clk.Advance(10 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, _ = get(t, c, ctx, s) // leaves a fetch in flight
	if _, ok, _ := c.Cached("k", 0); ok {
		t.Errorf("a key whose fetch is in flight is at hand")
	}
	if n := s.calls.Load(); n != 3 {
		t.Errorf("%d fetches; Cached must fetch nothing", n)
	}
}
