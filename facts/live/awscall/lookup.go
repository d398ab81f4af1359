// Package awscall is what the live provider's concept providers (eks, iam, ec2, ssm, awsauth) share
// about asking AWS: the cached lookup of one question, which answers from a typed cache or fetches
// once for every caller, serves a stale answer with a note, and never waits longer than the budget;
// the wording of a call that gave no answer (CallError, Unknown), by how it ended (Classify); and the
// metrics of requests and lookups.
//
// Each concept provider keeps its own caches, one per kind of answer; awscall holds none.
package awscall

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
)

// Caller is how a concept provider asks: the budget a lookup is bounded by and named in the reason of
// a late answer, and the metrics that count lookups.
type Caller struct {
	// Budget is aws.timeout, the longest any caller waits for one question. The caches' MaxWait
	// enforces it; Caller only names it.
	Budget time.Duration
	// Metrics count lookups (nil: not counted).
	Metrics *Metrics
}

// Question is one question asked through a cache.
type Question struct {
	// Fact is the fact the answer serves, as metrics and unknown facts name it.
	Fact facts.Fact
	// Action is the IAM action of the call ("iam:GetRole"), named in reasons and notes.
	Action string
	// Key says what is asked about (a role's name, a selector term). The cache key is Action and Key.
	Key string
	// Name, when set, names what is asked about in notes, for a Key that is not for reading (a
	// simulation row's digest); else Key. It is a function because notes are rare and a name can cost
	// more to build than the lookup it names.
	Name func() string
	// MaxAge, when set, refuses an answer older than that, although it has not expired.
	MaxAge time.Duration
	// TTL, when set, keeps a positive answer that long instead of the cache's TTL: for answers whose
	// key changes when what they depend on changes (a simulation keyed by the policies' digest).
	TTL time.Duration
}

// Fetch asks AWS a question: its answer, whether that says "does not exist" (kept for the negative
// TTL), or why there is none. ctx carries the fetch's own deadline, not the caller's.
type Fetch[T any] func(ctx context.Context) (v T, negative bool, err error)

// Lookup answers q through answers, fetching it when needed. A failed fetch is worded as a CallError
// (unless the fetch worded it: Worded) and answered as the unknown fact q.Fact; a stale answer is
// noted in ctx (facts.Note). Every lookup is counted in c.Metrics, except in a facts.AtHandOnly
// context a question without an answer at hand, which asks nothing and answers facts.NotAtHand.
func Lookup[T any](ctx context.Context, c Caller, answers *cache.Cache[T], q Question, fetch Fetch[T]) (T, error) {
	var zero T
	action, budget, ttl := q.Action, c.Budget, q.TTL // all the fetch needs: a small closure, made on every lookup
	l, err := Get(ctx, answers, c.Metrics, q.Fact, q.Action+" "+q.Key, q.MaxAge, func(ctx context.Context) (cache.Answer[T], error) {
		v, negative, err := fetch(ctx)
		if err == nil {
			a := cache.Answer[T]{Value: v, Negative: negative}
			if !negative {
				a.TTL = ttl
			}
			return a, nil
		}
		var w Worded
		if !errors.As(err, &w) {
			// A timeout here is the call running out of its own (detached) time: worded as a late answer.
			err = NewCallError(action, err, budget)
		}
		return cache.Answer[T]{}, err
	})
	if errors.Is(err, facts.ErrNotAtHand) {
		return zero, err
	}
	c.Metrics.CountLookup(q.Fact, l.Result)
	if err != nil {
		return zero, Unknown(q.Fact, c.late(q.Action, err))
	}
	if l.Result == cache.Stale {
		name := q.Key
		if q.Name != nil {
			name = q.Name()
		}
		facts.Note(ctx, fmt.Sprintf("used a cached answer %s old for %s %s: %s", l.Age.Round(time.Second), q.Action, name, reasonOf(c.late(q.Action, l.RefreshErr))))
	}
	return l.Value, nil
}

// Get answers key through answers, fetching it when needed (no older than maxAge, when set). In a
// facts.AtHandOnly context it waits for nothing: a question without an answer at hand starts its fetch
// in the background (facts.FetchNotAtHand, once per round) and is facts.NotAtHand for fact f (an error
// wrapping facts.ErrNotAtHand, neither counted nor worded: the engine runs again once the answer is in);
// the fetch's lookup is counted in m (nil: not counted). A question whose fetch already ended late in
// the evaluation (facts.GaveUp) is answered at once as late, or with the stale answer.
func Get[T any](ctx context.Context, answers *cache.Cache[T], m *Metrics, f facts.Fact, key string, maxAge time.Duration, fetch cache.Fetch[T]) (cache.Lookup[T], error) {
	if !facts.OnlyAtHand(ctx) {
		return answers.GetWithin(ctx, key, maxAge, chargeTo(facts.CallBudgetFrom(ctx), fetch))
	}
	l, ok, err := answers.Cached(key, maxAge)
	if ok {
		return l, err
	}
	id := inFlight{answers, key}
	if facts.GaveUp(ctx, id) {
		// Its wait already ended in this evaluation: answered as a wait that ends now would be (the
		// stale answer, else late), without fetching.
		done, cancel := context.WithCancelCause(ctx)
		cancel(cache.ErrMaxWait)
		return answers.GetWithin(done, key, maxAge, fetch)
	}
	charged := chargeTo(facts.CallBudgetFrom(ctx), fetch) // the round's fetch is the audit's too
	return l, facts.FetchNotAtHand(ctx, f, id, func(ctx context.Context) bool {
		l, err := answers.GetWithin(ctx, key, maxAge, charged)
		m.CountLookup(f, l.Result)
		return errors.Is(err, cache.ErrLate) || (l.Result == cache.Stale && errors.Is(l.RefreshErr, cache.ErrLate))
	})
}

// inFlight names one question in a round (facts.FetchNotAtHand): its cache and key.
type inFlight struct {
	answers any
	key     string
}

// chargeTo returns fetch charging its requests to budget: the cache runs a fetch detached from the
// caller that started it, and the caller's budget must still reach the requests (nil: fetch as is).
func chargeTo[T any](budget *facts.CallBudget, fetch cache.Fetch[T]) cache.Fetch[T] {
	if budget == nil {
		return fetch
	}
	return func(ctx context.Context) (cache.Answer[T], error) {
		return fetch(facts.WithCallBudget(ctx, budget))
	}
}

// Probe is a question about something that does not exist, which AWS answers with "not found" when
// the permission to call Action is granted and "access denied" when it is not: it tells whether a fact
// asked per item (roles, images, …) can be had at all. A concept provider builds its probes once.
type Probe struct {
	// Action is the IAM action the probe needs ("iam:GetRole").
	Action string
	// Ask asks AWS; nil or a "not found" error means the permission is granted.
	Ask func(ctx context.Context) error
}

// Known returns nil when fact f can be had, else the unknown fact f with the reason. The probe's
// answer is cached in answers under its action, like any other answer, so it is asked once per TTL.
func (p Probe) Known(ctx context.Context, c Caller, answers *cache.Cache[bool], f facts.Fact) error {
	_, err := Lookup(ctx, c, answers, Question{Fact: f, Action: p.Action, Key: "permission probe"}, func(ctx context.Context) (bool, bool, error) {
		err := p.Ask(ctx)
		if err == nil || Classify(err) == OutcomeNotFound {
			return true, false, nil
		}
		return false, false, err
	})
	return err
}

// late words a cache.LateError as a CallError naming the budget, or what else ended the wait (the
// cause the caller's context was cancelled with, such as the CLI's --deadline).
func (c Caller) late(action string, err error) error {
	if !errors.Is(err, cache.ErrLate) {
		return err
	}
	ce := &CallError{Action: action, Outcome: OutcomeTimeout, Budget: c.Budget, Err: err}
	var le *cache.LateError
	if errors.As(err, &le) && le.Cause != nil && !errors.Is(le.Cause, context.DeadlineExceeded) && !errors.Is(le.Cause, context.Canceled) {
		ce.Cause = le.Cause
	}
	return ce
}

// reasonOf is the reason a note gives for a stale answer.
func reasonOf(err error) string {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Reason()
	}
	return err.Error()
}
