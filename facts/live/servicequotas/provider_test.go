package servicequotas_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/facts/live/servicequotas"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	header = `apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster: {name: prod-eks, region: eu-west-1, partition: aws, accountID: "111122223333"}
`
	world = header + `serviceQuotas:
  vpc/L-2AFB9258: 16
  ec2/L-1216C47A: 640
`
)

// start serves doc from the AWS fake and returns a Service Quotas provider talking to it through the
// real SDK client, its caches tuned by opts.
func start(t *testing.T, doc string, opts cache.Options) (*fakeaws.Server, *servicequotas.Provider) {
	t.Helper()
	srv, clients := livetest.Serve(t, doc)
	p := servicequotas.NewProvider(clients.ServiceQuotas, awscall.Caller{Budget: 2 * time.Second}, opts)
	t.Cleanup(p.Close)
	return srv, p
}

// TestQuota: an applied value is answered as the snapshot holds it; a quota without one (Service
// Quotas' NoSuchResourceException) is unknown, saying its default applies; a name that is not
// service/quota-code is unknown without a call.
func TestQuota(t *testing.T) {
	srv, p := start(t, world, cache.Options{})
	ctx := context.Background()
	for code, want := range map[string]int{"vpc/L-2AFB9258": 16, "ec2/L-1216C47A": 640} {
		if got, err := p.Quota(ctx, code); err != nil || got != want {
			t.Errorf("Quota(%s) = %d, %v; want %d", code, got, err, want)
		}
	}
	_, err := p.Quota(ctx, "vpc/L-0EA8095F")
	if want := "Service Quotas has no applied value of vpc/L-0EA8095F (NoSuchResourceException): its AWS default applies, which the guard does not assume"; !facts.IsUnknown(err) || facts.Reason(err) != want {
		t.Errorf("Quota without a value = %v; want unknown because %q", err, want)
	}
	before := srv.Calls("servicequotas:GetServiceQuota")
	for _, bad := range []string{"L-2AFB9258", "vpc/", "/L-2AFB9258"} {
		if _, err := p.Quota(ctx, bad); !facts.IsUnknown(err) || !strings.Contains(facts.Reason(err), "names no quota") {
			t.Errorf("Quota(%q) = %v; want unknown: not a quota", bad, err)
		}
	}
	if n := srv.Calls("servicequotas:GetServiceQuota") - before; n != 0 {
		t.Errorf("%d calls for names that are no quota", n)
	}
}

// TestKnown: the probe asks for the quota the rules read; an applied value or none both say the call
// is granted. Without the section the fake denies it.
func TestKnown(t *testing.T) {
	ctx := context.Background()
	for _, doc := range []string{world, header + "serviceQuotas: {}\n"} {
		_, p := start(t, doc, cache.Options{})
		if err := p.Known(ctx, facts.ServiceQuotas); err != nil {
			t.Errorf("Known(serviceQuotas) = %v\n%s", err, doc)
		}
		if err := p.Known(ctx, facts.KMSKeys); err != nil {
			t.Errorf("Known(kmsKeys) = %v; not Service Quotas' to say", err)
		}
	}
	_, p := start(t, header, cache.Options{})
	err := p.Known(ctx, facts.ServiceQuotas)
	if want := "AWS denied servicequotas:GetServiceQuota (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"; facts.Reason(err) != want {
		t.Errorf("Known(serviceQuotas) without the section = %v; want unknown because %q", err, want)
	}
}

// TestFaults: throttling leaves a quota unknown, worded as every AWS call is.
func TestFaults(t *testing.T) {
	srv, p := start(t, world, cache.Options{})
	srv.Inject("servicequotas:GetServiceQuota", fakeaws.Fault{Throttle: true, Count: 1})
	if _, err := p.Quota(context.Background(), "vpc/L-2AFB9258"); facts.Reason(err) != "AWS throttled servicequotas:GetServiceQuota" {
		t.Errorf("throttled Quota = %v", err)
	}
}

// TestTTLs: a value is kept for the TTL, "no applied value" for the negative TTL.
func TestTTLs(t *testing.T) {
	ctx := context.Background()
	c := livetest.NewClock()
	srv, p := start(t, world, cache.Options{TTL: 5 * time.Minute, NegativeTTL: 30 * time.Second, Now: c.Now})
	ask := func(wantCalls int) {
		t.Helper()
		if _, err := p.Quota(ctx, "ec2/L-1216C47A"); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Quota(ctx, "vpc/L-0EA8095F"); !facts.IsUnknown(err) {
			t.Fatalf("Quota without a value = %v", err)
		}
		if n := srv.Calls("servicequotas:GetServiceQuota"); n != wantCalls {
			t.Errorf("at %s: %d GetServiceQuota requests, want %d", c.Now().Format(time.TimeOnly), n, wantCalls)
		}
	}
	ask(2)
	c.Add(20 * time.Second)
	ask(2)
	c.Add(20 * time.Second)
	ask(3) // "no applied value" expired, the value not
	c.Add(5 * time.Minute)
	ask(5)
}

// TestCachesAreItsOwn: quotas and the permission probe are kept in caches of their own, so that one
// never evicts the other, even when each cache holds a single answer.
func TestCachesAreItsOwn(t *testing.T) {
	srv, p := start(t, world, cache.Options{MaxEntries: 1})
	ctx := context.Background()
	for round := range 3 {
		if v, err := p.Quota(ctx, "ec2/L-1216C47A"); err != nil || v != 640 {
			t.Fatalf("round %d: Quota = %d, %v", round, v, err)
		}
		if err := p.Known(ctx, facts.ServiceQuotas); err != nil {
			t.Fatalf("round %d: Known = %v", round, err)
		}
	}
	if n := srv.Calls("servicequotas:GetServiceQuota"); n != 2 {
		t.Errorf("%d GetServiceQuota requests in 3 rounds, want 2 (the quota, the probe)", n)
	}
}
