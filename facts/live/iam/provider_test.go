package iam_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/facts/live/iam"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const world = `apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster: {name: prod-eks, region: eu-west-1, partition: aws, accountID: "111122223333"}
roles:
  - name: KarpenterNodeRole
    path: /teams/
    arn: arn:aws:iam::111122223333:role/teams/KarpenterNodeRole
instanceProfiles:
  - name: KarpenterNodeInstanceProfile
    arn: arn:aws:iam::111122223333:instance-profile/KarpenterNodeInstanceProfile
    roles: [KarpenterNodeRole]
`

// start serves world from the AWS fake and returns an IAM provider talking to it through the real SDK
// client, its caches tuned by opts.
func start(t *testing.T, opts cache.Options) (*fakeaws.Server, *iam.Provider) {
	t.Helper()
	srv, clients := livetest.Serve(t, world)
	p := iam.NewProvider(clients.IAM, awscall.Caller{Budget: 2 * time.Second}, opts)
	t.Cleanup(p.Close)
	return srv, p
}

// TestCachesAreItsOwn: roles, instance profiles and permission probes are kept in caches of their
// own, so that one kind of answer never evicts another, even when each cache holds a single answer
// (the two probes, one kind of answer, share theirs: one is asked here).
func TestCachesAreItsOwn(t *testing.T) {
	srv, p := start(t, cache.Options{MaxEntries: 1})
	ctx := context.Background()
	for round := range 3 {
		if r, err := p.Role(ctx, "KarpenterNodeRole"); err != nil || r == nil || r.Path != "/teams/" {
			t.Fatalf("round %d: Role = %+v, %v", round, r, err)
		}
		if ip, err := p.InstanceProfile(ctx, "KarpenterNodeInstanceProfile"); err != nil || ip == nil || len(ip.Roles) != 1 {
			t.Fatalf("round %d: InstanceProfile = %+v, %v", round, ip, err)
		}
		if err := p.Known(ctx, facts.Roles); err != nil {
			t.Fatalf("round %d: Known(roles) = %v", round, err)
		}
	}
	if n := srv.Calls("iam:GetRole"); n != 2 {
		t.Errorf("%d GetRole requests in 3 rounds, want 2 (the role, the probe)", n)
	}
	if n := srv.Calls("iam:GetInstanceProfile"); n != 1 {
		t.Errorf("%d GetInstanceProfile requests in 3 rounds, want 1", n)
	}
	if err := p.Known(ctx, facts.Images); err != nil {
		t.Errorf("Known(images) = %v; not IAM's to say", err)
	}
}

// TestTTLs: a role is kept for the TTL, a "no such role" for the negative TTL; names are
// case-insensitive, as IAM's.
func TestTTLs(t *testing.T) {
	c := livetest.NewClock()
	srv, p := start(t, cache.Options{TTL: 5 * time.Minute, NegativeTTL: 30 * time.Second, Now: c.Now})
	ctx := context.Background()
	ask := func(wantCalls int) {
		t.Helper()
		if r, err := p.Role(ctx, "karpenternoderole"); err != nil || r == nil {
			t.Fatalf("Role = %v, %v", r, err)
		}
		if r, err := p.Role(ctx, "Missing"); err != nil || r != nil {
			t.Fatalf("Role(Missing) = %v, %v; want none", r, err)
		}
		if n := srv.Calls("iam:GetRole"); n != wantCalls {
			t.Errorf("at %s: %d GetRole requests, want %d", c.Now().Format(time.TimeOnly), n, wantCalls)
		}
	}
	ask(2)
	if _, err := p.Role(ctx, "KarpenterNodeRole"); err != nil || srv.Calls("iam:GetRole") != 2 {
		t.Errorf("Role(KarpenterNodeRole) after Role(karpenternoderole): %v, %d requests; want the cached role", err, srv.Calls("iam:GetRole"))
	}
	c.Add(20 * time.Second)
	ask(2) // both within their TTL
	c.Add(20 * time.Second)
	ask(3) // "no such role" expired, the role not
	c.Add(5 * time.Minute)
	ask(5) // both expired
}
