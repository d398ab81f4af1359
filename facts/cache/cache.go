// Package cache keeps the answers of slow, rate-limited lookups (the live provider's AWS calls) the
// way an admission webhook needs them: positive and negative TTLs, one fetch in flight per key whoever
// asks, stale-while-revalidate, a short back-off after a failure so that an outage or a throttling storm
// is not hammered, and a bound on size.
//
// Fetches run detached from the caller that started them, bounded by their own timeout: a request
// whose deadline passes gets "late" (or the stale answer) at once, while the fetch goes on and warms the
// cache for the next request. Close stops every fetch, so nothing outlives the cache.
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

// LateError is ErrLate with the caller's context error.
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
// concurrent callers of key (Miss); when the fetch fails or ctx ends first, the expired answer if
// there is one (Stale, with the reason), else the error (a *LateError when ctx ended).
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
	if e != nil && e.has && now.Before(e.expires) && (maxAge <= 0 || now.Sub(e.fetched) < maxAge) {
		c.mu.Unlock()
		return Lookup[V]{Value: e.value, Result: Hit, Age: now.Sub(e.fetched)}, nil
	}
	if e != nil && e.failErr != nil && now.Before(e.failTill) {
		// Failed a moment ago: answer without asking again.
		defer c.mu.Unlock()
		return c.fallback(e, now, e.failErr)
	}
	f := c.flights[key]
	if f == nil {
		if c.base.Err() != nil {
			c.mu.Unlock()
			return Lookup[V]{Result: Failed}, errors.New("cache closed")
		}
		f = &flight[V]{done: make(chan struct{})}
		c.flights[key] = f
		c.wg.Add(1)
		go c.run(key, f, fetch)
	}
	c.mu.Unlock()

	select {
	case <-f.done:
		if f.err == nil {
			return Lookup[V]{Value: f.value, Result: Miss}, nil
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.fallback(e, c.opts.Now(), f.err)
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.fallback(e, c.opts.Now(), &LateError{Cause: ctx.Err()})
	}
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
	} else {
		e.failErr, e.failTill = err, now.Add(c.opts.ErrorBackoff)
	}
	c.entries.Add(key, e)
	delete(c.flights, key)
	f.value, f.err = ans.Value, err
	close(f.done)
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
