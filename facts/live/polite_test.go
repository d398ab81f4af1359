package live_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

// TestThrottledIAMBacksOff: through the real SDK clients paced as serve paces them (three attempts
// allowed), with the AWS fake throttling every IAM call, 300 distinct roles asked one after another
// cost one GetRole on the wire: the SDK does not retry it, and the backoff keeps every later call
// home. Each role is unknown with the throttling and the backoff named, none is kept as an answer,
// and once IAM answers again and the backoff has passed, each is answered.
func TestThrottledIAMBacksOff(t *testing.T) {
	clock := livetest.NewClock()
	pacer := awscall.NewPacer(awscall.PacerOptions{Now: clock.Now})
	env := livetest.Start(t, decode(t, world), livetest.Options{Attempts: 3, Pacer: pacer, Cache: cache.Options{Now: clock.Now}})
	env.Fake.Inject("iam:*", fakeaws.Fault{Throttle: true})
	ctx := context.Background()
	const want = "AWS throttled iam:GetRole; karpenter-guard backs off every IAM call until AWS answers again"
	roles := []string{"KarpenterNodeRole"}
	for i := 1; i < 300; i++ {
		roles = append(roles, fmt.Sprintf("team-%d-node", i))
	}
	for _, name := range roles {
		r, err := env.Provider.Role(ctx, name)
		if r != nil || facts.Reason(err) != want {
			t.Fatalf("Role(%s) while IAM throttles = %v, %q; want unknown: %q", name, r, facts.Reason(err), want)
		}
	}
	if n := env.Fake.Calls("iam:*"); n != 1 {
		t.Fatalf("300 distinct roles while IAM throttles made %d IAM requests; want 1", n)
	}

	// The fault is lifted, but the backoff has not passed: still nothing is sent.
	env.Fake.Clear("")
	if _, err := env.Provider.Role(ctx, "KarpenterNodeRole"); facts.Reason(err) != want {
		t.Fatalf("during the backoff: %q, want %q", facts.Reason(err), want)
	}
	if n := env.Fake.Calls("iam:*"); n != 1 {
		t.Fatalf("%d IAM requests during the backoff; want still 1", n)
	}

	clock.Add(time.Minute) // past the backoff (at most 2s) and the cache's memory of a failure (5s)
	for _, name := range roles {
		r, err := env.Provider.Role(ctx, name)
		if err != nil || (name == "KarpenterNodeRole") != (r != nil) {
			t.Fatalf("Role(%s) once IAM answers = %v, %v; want the role, or none for those that do not exist", name, r, err)
		}
	}
	if n := env.Fake.Calls("iam:GetRole"); n != 301 {
		t.Errorf("%d GetRole requests in all; want 301 (the throttled one, then each role once)", n)
	}
}

// TestThrottledIAMBurstIsBounded: 300 distinct roles asked at once while IAM throttles send at most
// the rate limit's burst; what would have to wait past its deadline is late, not queued.
func TestThrottledIAMBurstIsBounded(t *testing.T) {
	clock := livetest.NewClock()
	pacer := awscall.NewPacer(awscall.PacerOptions{Now: clock.Now, Limits: map[string]awscall.Limit{"iam": {PerSecond: 0.01, Burst: 5}}})
	env := livetest.Start(t, decode(t, world), livetest.Options{Pacer: pacer, Cache: cache.Options{Now: clock.Now}})
	env.Fake.Inject("iam:*", fakeaws.Fault{Throttle: true})
	var wg sync.WaitGroup
	var mu sync.Mutex
	reasons := map[string]int{}
	for i := 0; i < 300; i++ {
		wg.Go(func() {
			r, err := env.Provider.Role(context.Background(), fmt.Sprintf("team-%d-node", i))
			mu.Lock()
			defer mu.Unlock()
			if r != nil || err == nil {
				t.Errorf("role %d answered while IAM throttles", i)
				return
			}
			reasons[strings.SplitN(facts.Reason(err), " (", 2)[0]]++
		})
	}
	wg.Wait()
	if n := env.Fake.Calls("iam:*"); n > 5 {
		t.Errorf("300 roles at once while IAM throttles made %d IAM requests; want at most the burst of 5 (reasons %v)", n, reasons)
	}
}
