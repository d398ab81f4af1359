package awscall

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	smithy "github.com/aws/smithy-go"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
)

// worded is an error a fetch words itself.
type worded struct{}

func (worded) Error() string  { return "the thing asked about is gone" }
func (worded) Reason() string { return "the thing asked about is gone" }

// TestLookupWording: a fetch's error is worded as a CallError naming the action, unless the fetch
// worded it; a wait that ends first names the budget; either is the unknown fact of the question.
func TestLookupWording(t *testing.T) {
	const budget = 50 * time.Millisecond
	c := Caller{Budget: budget}
	q := Question{Fact: facts.Roles, Action: "iam:GetRole", Key: "node"}
	for _, tc := range []struct {
		name   string
		fetch  Fetch[string]
		reason string
	}{
		{"denied", func(context.Context) (string, bool, error) {
			return "", false, &smithy.GenericAPIError{Code: "AccessDenied"}
		}, "AWS denied iam:GetRole (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"},
		{"worded by the fetch", func(context.Context) (string, bool, error) { return "", false, worded{} }, "the thing asked about is gone"},
		{"late", func(ctx context.Context) (string, bool, error) {
			<-ctx.Done()
			return "", false, ctx.Err()
		}, "no answer from AWS within the 50ms budget (iam:GetRole)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers := cache.New[string](cache.Options{MaxWait: budget, FetchTimeout: 2 * budget})
			defer answers.Close()
			_, err := Lookup(context.Background(), c, answers, q, tc.fetch)
			var u *facts.UnknownError
			if !errors.As(err, &u) || u.Fact != facts.Roles || u.Reason != tc.reason {
				t.Errorf("Lookup = %v; want the unknown fact roles because %q", err, tc.reason)
			}
		})
	}
}

// TestLookupAtHandOnly: in a facts.AtHandOnly context a question without an answer at hand waits for
// nothing and is not at hand; its fetch starts in the background, once however often it is asked in
// the round, and is counted when it answers; then the answer is at hand.
func TestLookupAtHandOnly(t *testing.T) {
	answers := cache.New[string](cache.Options{})
	defer answers.Close()
	metrics, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := Caller{Metrics: metrics}
	q := Question{Fact: facts.SSMParameters, Action: "ssm:GetParameter", Key: "/p"}
	var fetches atomic.Int32
	// The fetch answers only once the round's questions are all asked, so each of them finds it out.
	hold := make(chan struct{})
	fetch := func(context.Context) (string, bool, error) { fetches.Add(1); <-hold; return "v", false, nil }
	hctx, round := facts.AtHandOnly(context.Background())
	for range 3 {
		if _, err := Lookup(hctx, c, answers, q, fetch); !errors.Is(err, facts.ErrNotAtHand) || !round.Missed() {
			t.Errorf("at hand only, nothing cached: %v (missed %v); want not at hand", err, round.Missed())
		}
	}
	close(hold)
	if round.Wait(); round.Fetching() || fetches.Load() != 1 {
		t.Fatalf("after the round: fetching %v, %d fetches; want the one fetch started at hand only, returned", round.Fetching(), fetches.Load())
	}
	if got := testutil.ToFloat64(metrics.lookups.WithLabelValues(string(facts.SSMParameters), string(cache.Miss))); got != 1 {
		t.Errorf("%v misses counted; want the fetch's", got)
	}
	hctx, round = facts.AtHandOnly(context.Background())
	if v, err := Lookup(hctx, c, answers, q, fetch); v != "v" || err != nil || round.Missed() || fetches.Load() != 1 {
		t.Errorf("at hand only, cached: %q, %v (missed %v, %d fetches); want the cached answer", v, err, round.Missed(), fetches.Load())
	}
}

// TestLookupStaleNoted: an expired answer whose refresh fails is served, and the notes say how old it
// is and why it was not refreshed.
func TestLookupStaleNoted(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	answers := cache.New[string](cache.Options{TTL: time.Minute, Now: func() time.Time { return now }})
	defer answers.Close()
	q := Question{Fact: facts.Images, Action: "ec2:DescribeImages", Key: `{name: "x"}`}
	if _, err := Lookup(context.Background(), Caller{}, answers, q, func(context.Context) (string, bool, error) { return "old", false, nil }); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	notes := &facts.Notes{}
	v, err := Lookup(facts.WithNotes(context.Background(), notes), Caller{}, answers, q, func(context.Context) (string, bool, error) {
		return "", false, &smithy.GenericAPIError{Code: "Throttling"}
	})
	if v != "old" || err != nil {
		t.Fatalf("Lookup with a failing refresh = %q, %v; want the stale answer", v, err)
	}
	if got := notes.List(); len(got) != 1 || !strings.Contains(got[0], `used a cached answer 2m0s old for ec2:DescribeImages {name: "x"}: AWS throttled ec2:DescribeImages`) {
		t.Errorf("notes = %q", got)
	}
}
