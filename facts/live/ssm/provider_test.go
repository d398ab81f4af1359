package ssm_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/facts/live/ssm"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	world = `apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster: {name: prod-eks, region: eu-west-1, partition: aws, accountID: "111122223333"}
ssmParameters:
  /aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id: ami-0al2023x86
`
	param   = "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id"
	missing = "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/recommended/image_id"
)

// start serves world from the AWS fake and returns an SSM provider talking to it through the real SDK
// client, its caches tuned by opts.
func start(t *testing.T, opts cache.Options) (*fakeaws.Server, *ssm.Provider) {
	t.Helper()
	srv, clients := livetest.Serve(t, world)
	p := ssm.NewProvider(clients.SSM, awscall.Caller{Budget: 2 * time.Second}, opts)
	t.Cleanup(p.Close)
	return srv, p
}

// TestCachesAreItsOwn: parameters and the permission probe are kept in caches of their own, so that
// one never evicts the other, even when each cache holds a single answer.
func TestCachesAreItsOwn(t *testing.T) {
	srv, p := start(t, cache.Options{MaxEntries: 1})
	ctx := context.Background()
	for round := range 3 {
		if v, ok, err := p.Parameter(ctx, param); err != nil || !ok || v != "ami-0al2023x86" {
			t.Fatalf("round %d: Parameter = %q, %v, %v", round, v, ok, err)
		}
		if err := p.Known(ctx, facts.SSMParameters); err != nil {
			t.Fatalf("round %d: Known(ssmParameters) = %v", round, err)
		}
	}
	if n := srv.Calls("ssm:GetParameter"); n != 2 {
		t.Errorf("%d GetParameter requests in 3 rounds, want 2 (the parameter, the probe)", n)
	}
	if err := p.Known(ctx, facts.Roles); err != nil {
		t.Errorf("Known(roles) = %v; not SSM's to say", err)
	}
}

// TestTTLs: a parameter is kept for the TTL, a "no such parameter" for the negative TTL.
func TestTTLs(t *testing.T) {
	c := livetest.NewClock()
	srv, p := start(t, cache.Options{TTL: 5 * time.Minute, NegativeTTL: 30 * time.Second, Now: c.Now})
	ctx := context.Background()
	ask := func(wantCalls int) {
		t.Helper()
		if _, ok, err := p.Parameter(ctx, param); err != nil || !ok {
			t.Fatalf("Parameter(%s) = %v, %v", param, ok, err)
		}
		if v, ok, err := p.Parameter(ctx, missing); err != nil || ok {
			t.Fatalf("Parameter(%s) = %q, %v, %v; want none", missing, v, ok, err)
		}
		if n := srv.Calls("ssm:GetParameter"); n != wantCalls {
			t.Errorf("at %s: %d GetParameter requests, want %d", c.Now().Format(time.TimeOnly), n, wantCalls)
		}
	}
	ask(2)
	c.Add(20 * time.Second)
	ask(2) // both within their TTL
	c.Add(20 * time.Second)
	ask(3) // "no such parameter" expired, the parameter not
	c.Add(5 * time.Minute)
	ask(5) // both expired
}
