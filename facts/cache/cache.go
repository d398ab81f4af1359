// Package cache keeps the answers of slow, rate-limited lookups (the live provider's AWS calls) the
// way an admission webhook needs them: positive and negative TTLs, one fetch in flight per key whoever
// asks, stale-while-revalidate, a short back-off after a failure so that an outage or a throttling storm
// is not hammered, and a bound on size.
//
// Fetches run detached from the caller that started them, bounded by their own timeout: a request
// whose deadline passes (or that has waited MaxWait) gets "late" (or the stale answer) at once, while
// the fetch goes on and warms the cache for the next request. A caller whose context has already
// ended starts no fetch: nobody would wait for it. Close stops every fetch, so nothing outlives the
// cache.
//
// Written here rather than taken from a library: golang.org/x/sync/singleflight and the LRU of
// hashicorp/golang-lru (used below) each do one part, but none serves the stale answer when a refresh
// fails or is late, which is what keeps an AWS hiccup from becoming a blocked deploy.
package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Result says where an answer came from, as the facts_cache_total metric counts it.
type Result string

// Results.
const (
	// Hit is a fresh answer from the cache.
	Hit Result = "hit"
	// Miss is an answer fetched for this call (or joined while another caller fetched it).
	Miss Result = "miss"
	// Stale is an expired answer served because the refresh failed or was late.
	Stale Result = "stale"
	// Failed is no answer: the fetch failed or was late and nothing was cached.
	Failed Result = "error"
)

// Options tune a Cache. Zero values take the defaults named on each field.
type Options struct {
	// TTL keeps positive answers (default 5m).
	TTL time.Duration
	// NegativeTTL keeps "does not exist" answers (default 30s): a role being created now should be
	// seen soon.
	NegativeTTL time.Duration
	// ErrorBackoff is how long a failed fetch's error (or the stale answer) is served before the key
	// is fetched again (default 5s).
	ErrorBackoff time.Duration
	// FetchTimeout bounds one fetch, whoever waits for it (default 10s).
	FetchTimeout time.Duration
	// MaxWait bounds how long one Get waits for a fetch, whatever its context allows (0: as long as
	// the context): the live provider's per-call budget (aws.timeout). The fetch itself may go on
	// until FetchTimeout, to warm the cache.
	MaxWait time.Duration
	// MaxEntries bounds the number of keys kept; the least recently used go first (default 10,000).
	MaxEntries int
	// Now is the clock (default time.Now); tests move it.
	Now func() time.Time
}

// Answer is what a fetch returns: a value, and whether it says "does not exist" (kept NegativeTTL).
type Answer[V any] struct {
	Value    V
	Negative bool
	// TTL, when set, keeps this answer that long instead of TTL or NegativeTTL.
	TTL time.Duration
}

// Fetch asks the source. ctx carries the fetch's own deadline, not the caller's.
type Fetch[V any] func(ctx context.Context) (Answer[V], error)

// Lookup is a Get's answer with how it was had.
type Lookup[V any] struct {
	Value  V
	Result Result
	// Age is how old the answer is (zero for a fresh fetch).
	Age time.Duration
	// RefreshErr, for a Stale answer, is why it was not refreshed (the fetch's error, or ErrLate).
	RefreshErr error
}

// ErrLate is the error of a Get whose context ended before the fetch answered.
var ErrLate = errors.New("no answer within the time budget")

// ErrMaxWait is the cause of a LateError whose Get waited Options.MaxWait: it wraps
// context.DeadlineExceeded, as a per-call deadline would.
var ErrMaxWait = fmt.Errorf("waited the longest a lookup may wait: %w", context.DeadlineExceeded)

// LateError is ErrLate with why the wait ended: the caller's context's cause (context.Cause: its
// error, or the cause it was cancelled with), or ErrMaxWait.
type LateError struct{ Cause error }

func (e *LateError) Error() string { return fmt.Sprintf("%v (%v)", ErrLate, e.Cause) }

// Unwrap lets errors.Is find ErrLate and the context error.
func (e *LateError) Unwrap() []error { return []error{ErrLate, e.Cause} }

// Cache is safe for concurrent use.
type Cache[V any] struct {
	opts Options

	mu      sync.Mutex
	entries *simplelru.LRU[string, *entry[V]]
	flights map[string]*flight[V]

	base   context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type entry[V any] struct {
	has      bool // a value was ever fetched
	value    V
	fetched  time.Time
	expires  time.Time
	failErr  error // the last fetch's error, until failUntil
	failTill time.Time
}

type flight[V any] struct {
	done  chan struct{}
	value V
	err   error
}

// New returns a cache.
func New[V any](opts Options) *Cache[V] {
	if opts.TTL <= 0 {
		opts.TTL = 5 * time.Minute
	}
	if opts.NegativeTTL <= 0 {
		opts.NegativeTTL = 30 * time.Second
	}
	if opts.ErrorBackoff <= 0 {
		opts.ErrorBackoff = 5 * time.Second
	}
	if opts.FetchTimeout <= 0 {
		opts.FetchTimeout = 10 * time.Second
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 10_000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	lru, err := simplelru.NewLRU[string, *entry[V]](opts.MaxEntries, nil)
	if err != nil {
		panic(err) // only for a non-positive size, excluded above
	}
	base, cancel := context.WithCancel(context.Background())
	return &Cache[V]{opts: opts, entries: lru, flights: map[string]*flight[V]{}, base: base, cancel: cancel}
}

// Get returns the answer for key: fresh from the cache (Hit); else from fetch, started once for all
// concurrent callers of key (Miss); when the fetch fails or ctx ends first (or MaxWait passes), the
// expired answer if there is one (Stale, with the reason), else the error (a *LateError when the
// wait ended first).
func (c *Cache[V]) Get(ctx context.Context, key string, fetch Fetch[V]) (Lookup[V], error) {
	return c.GetWithin(ctx, key, 0, fetch)
}

// GetWithin is Get for a caller that cannot use an answer older than maxAge (0: any unexpired
// answer), although it has not expired: a list that lacks the item asked about is, for that item, a
// "does not exist" answer, and should be no older than NegativeTTL.
func (c *Cache[V]) GetWithin(ctx context.Context, key string, maxAge time.Duration, fetch Fetch[V]) (Lookup[V], error) {
	c.mu.Lock()
	now := c.opts.Now()
	e, _ := c.entries.Get(key)
	if l, ok, err := c.atHand(e, now, maxAge); ok {
		c.mu.Unlock()
		return l, err
	}
	f := c.flights[key]
	if f == nil {
		if c.base.Err() != nil {
			c.mu.Unlock()
			return Lookup[V]{Result: Failed}, errors.New("cache closed")
		}
		if ctx.Err() != nil {
			// The caller can no longer wait: asking now would only load the source (a run past its
			// deadline would otherwise start every question it still meets).
			defer c.mu.Unlock()
			return c.fallback(e, now, &LateError{Cause: context.Cause(ctx)})
		}
		f = &flight[V]{done: make(chan struct{})}
		c.flights[key] = f
		c.wg.Add(1)
		go c.run(key, f, fetch)
	}
	c.mu.Unlock()

	var bound <-chan time.Time
	if c.opts.MaxWait > 0 {
		t := time.NewTimer(c.opts.MaxWait)
		defer t.Stop()
		bound = t.C
	}
	var late error
	select {
	case <-f.done:
		if f.err == nil {
			return Lookup[V]{Value: f.value, Result: Miss}, nil
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.fallback(e, c.opts.Now(), f.err)
	case <-ctx.Done():
		late = &LateError{Cause: context.Cause(ctx)}
	case <-bound:
		late = &LateError{Cause: ErrMaxWait}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fallback(e, c.opts.Now(), late)
}

// Cached returns what GetWithin would answer without fetching or waiting for a fetch: a fresh answer,
// or the answer of a fetch that failed within ErrorBackoff (the stale value, else the error). ok is
// false when GetWithin would have to fetch key or join a fetch in flight. It counts as a use of key
// for the least-recently-used order, as Get does.
func (c *Cache[V]) Cached(key string, maxAge time.Duration) (l Lookup[V], ok bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, _ := c.entries.Get(key)
	return c.atHand(e, c.opts.Now(), maxAge)
}

// atHand answers from e when no fetch is needed: e is fresh (and no older than maxAge), or its last
// fetch failed within the back-off. Callers hold c.mu.
func (c *Cache[V]) atHand(e *entry[V], now time.Time, maxAge time.Duration) (Lookup[V], bool, error) {
	if e != nil && e.has && now.Before(e.expires) && (maxAge <= 0 || now.Sub(e.fetched) < maxAge) {
		return Lookup[V]{Value: e.value, Result: Hit, Age: now.Sub(e.fetched)}, true, nil
	}
	if e != nil && e.failErr != nil && now.Before(e.failTill) {
		// Failed a moment ago: answer without asking again.
		l, err := c.fallback(e, now, e.failErr)
		return l, true, err
	}
	return Lookup[V]{}, false, nil
}

// fallback answers with e's stale value when it has one, else with err. Callers hold c.mu.
func (c *Cache[V]) fallback(e *entry[V], now time.Time, err error) (Lookup[V], error) {
	if e != nil && e.has {
		return Lookup[V]{Value: e.value, Result: Stale, Age: now.Sub(e.fetched), RefreshErr: err}, nil
	}
	return Lookup[V]{Result: Failed}, err
}

// run fetches key and stores the outcome.
func (c *Cache[V]) run(key string, f *flight[V], fetch Fetch[V]) {
	defer c.wg.Done()
	ctx, cancel := context.WithTimeout(c.base, c.opts.FetchTimeout)
	defer cancel()
	ans, err := c.fetch(ctx, key, fetch)

	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.opts.Now()
	e, ok := c.entries.Peek(key)
	if !ok {
		e = &entry[V]{}
	}
	if err == nil {
		ttl := c.opts.TTL
		switch {
		case ans.TTL > 0:
			ttl = ans.TTL
		case ans.Negative:
			ttl = c.opts.NegativeTTL
		}
		*e = entry[V]{has: true, value: ans.Value, fetched: now, expires: now.Add(ttl)}
	} else if !Fleeting(err) {
		backoff := c.opts.ErrorBackoff
		if Lasting(err) {
			backoff = max(backoff, c.opts.NegativeTTL)
		}
		e.failErr, e.failTill = err, now.Add(backoff)
	}
	c.entries.Add(key, e)
	delete(c.flights, key)
	f.value, f.err = ans.Value, err
	close(f.done)
}

// Lasting reports whether a fetch's error says something that asking again soon will not change: an
// error in its chain has a Lasting method that returns true (the live provider's "this endpoint does not
// serve that API"). The cache keeps such an error for NegativeTTL, like a "does not exist" answer,
// instead of ErrorBackoff: a failure that will not pass must not be asked again every few seconds.
func Lasting(err error) bool {
	var l interface{ Lasting() bool }
	return errors.As(err, &l) && l.Lasting()
}

// Fleeting reports whether a fetch's error says nothing about the key, only about the caller that
// started the fetch: an error in its chain has a Fleeting method that returns true (an audit's spent
// call budget). The cache does not keep it: the next caller asks again.
func Fleeting(err error) bool {
	var f interface{ Fleeting() bool }
	return errors.As(err, &f) && f.Fleeting()
}

// fetch calls fetch, turning a panic into the fetch's error: it runs on a goroutine of its own, where
// a panic would end the process, and every caller waiting for the key would otherwise wait forever.
func (c *Cache[V]) fetch(ctx context.Context, key string, fetch Fetch[V]) (ans Answer[V], err error) {
	defer func() {
		if r := recover(); r != nil {
			ans, err = Answer[V]{}, fmt.Errorf("fetch of %q panicked: %v", key, r)
		}
	}()
	return fetch(ctx)
}

// NegativeTTL is how long "does not exist" answers are kept.
func (c *Cache[V]) NegativeTTL() time.Duration { return c.opts.NegativeTTL }

// Len returns the number of keys kept.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Len()
}

// Close cancels fetches in flight and waits for them to end. Gets after Close fail.
func (c *Cache[V]) Close() {
	c.cancel()
	c.wg.Wait()
}
