package serviceaccount_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/serviceaccount"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counting counts the reads that reach the reader it wraps, and fails them with err when set.
type counting struct {
	client.Reader
	gets atomic.Int32
	err  error
	// hold, when set, keeps each read waiting until it is closed, so a test can ask again while the
	// first read is still out.
	hold chan struct{}
}

func (c *counting) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets.Add(1)
	if c.hold != nil {
		<-c.hold
	}
	if c.err != nil {
		return c.err
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

func accounts() client.Reader {
	return fake.NewClientBuilder().WithObjects(
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "karpenter",
			Annotations: map[string]string{serviceaccount.RoleARNAnnotation: "arn:aws:iam::111122223333:role/KarpenterController"}}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "aws-node"}},
	).Build()
}

// TestGet: a ServiceAccount's IRSA annotation, none for one without, nil for one that does not exist;
// each read once per TTL (a missing one once per negative TTL).
func TestGet(t *testing.T) {
	clock := &clock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	kube := &counting{Reader: accounts()}
	p := serviceaccount.NewProvider(kube, nil, cache.Options{TTL: 5 * time.Minute, NegativeTTL: 30 * time.Second, Now: clock.Now})
	defer p.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		namespace, name string
		want            *serviceaccount.Account
	}{
		{"kube-system", "karpenter", &serviceaccount.Account{Namespace: "kube-system", Name: "karpenter", RoleARN: "arn:aws:iam::111122223333:role/KarpenterController"}},
		{"kube-system", "aws-node", &serviceaccount.Account{Namespace: "kube-system", Name: "aws-node"}},
		{"karpenter", "karpenter", nil},
	} {
		for range 3 {
			got, err := p.Get(ctx, facts.KarpenterController, tc.namespace, tc.name)
			if err != nil || (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("Get(%s/%s) = %+v, %v; want %+v", tc.namespace, tc.name, got, err, tc.want)
			}
		}
	}
	if n := kube.gets.Load(); n != 3 {
		t.Errorf("%d reads for 3 ServiceAccounts asked 3 times each; want 3", n)
	}
	clock.Add(time.Minute) // past the negative TTL, within the TTL
	for _, name := range []string{"karpenter", "aws-node"} {
		if _, err := p.Get(ctx, facts.VPCCNI, "kube-system", name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Get(ctx, facts.KarpenterController, "karpenter", "karpenter"); err != nil {
		t.Fatal(err)
	}
	if n := kube.gets.Load(); n != 4 {
		t.Errorf("%d reads a minute later; want 4 (the missing ServiceAccount asked again)", n)
	}
}

// TestUnknown: no reader, RBAC that refuses, a failing or slow API server: the fact asked for is
// unknown, and the reason says what to do.
func TestUnknown(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, "aws-node", errors.New("no grant"))
	for _, tc := range []struct {
		name   string
		kube   client.Reader
		reason string
	}{
		{"no reader", nil, "no access to the cluster's Kubernetes API (give a kubeconfig)"},
		{"forbidden", &counting{Reader: accounts(), err: forbidden}, "not allowed to read ServiceAccount kube-system/aws-node (RBAC: get on serviceaccounts in kube-system, resourceNames aws-node)"},
		{"failing", &counting{Reader: accounts(), err: errors.New("connection refused")}, "reading ServiceAccount kube-system/aws-node: connection refused"},
		{"slow", slow{}, "no answer from the Kubernetes API in time (ServiceAccount kube-system/aws-node)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := serviceaccount.NewProvider(tc.kube, nil, cache.Options{MaxWait: 50 * time.Millisecond, FetchTimeout: 100 * time.Millisecond})
			defer p.Close()
			got, err := p.Get(context.Background(), facts.VPCCNI, "kube-system", "aws-node")
			var u *facts.UnknownError
			if got != nil || !errors.As(err, &u) || u.Fact != facts.VPCCNI || u.Reason != tc.reason {
				t.Errorf("Get = %+v, %v; want the unknown fact vpcCNI because %q", got, err, tc.reason)
			}
		})
	}
}

// TestAtHandOnly: in a facts.AtHandOnly context nothing is waited for: a ServiceAccount not cached is
// not at hand and its read starts, once per round; once the round's reads are in, it is at hand.
func TestAtHandOnly(t *testing.T) {
	kube := &counting{Reader: accounts(), hold: make(chan struct{})}
	p := serviceaccount.NewProvider(kube, nil, cache.Options{})
	defer p.Close()
	hctx, round := facts.AtHandOnly(context.Background())
	for range 2 {
		if _, err := p.Get(hctx, facts.VPCCNI, "kube-system", "aws-node"); !errors.Is(err, facts.ErrNotAtHand) || !round.Missed() {
			close(kube.hold)
			t.Fatalf("at hand only, nothing cached: %v (missed %v); want not at hand", err, round.Missed())
		}
	}
	close(kube.hold)
	if round.Wait(); round.Fetching() || kube.gets.Load() != 1 {
		t.Fatalf("after the round: reading %v, %d reads; want the one read started at hand only, returned", round.Fetching(), kube.gets.Load())
	}
	hctx, round = facts.AtHandOnly(context.Background())
	if a, err := p.Get(hctx, facts.VPCCNI, "kube-system", "aws-node"); a == nil || err != nil || round.Missed() || kube.gets.Load() != 1 {
		t.Errorf("at hand only, cached: %+v, %v (missed %v, %d reads); want the cached account", a, err, round.Missed(), kube.gets.Load())
	}
}

// slow is an API server that answers only when the read is given up.
type slow struct{ client.Reader }

func (slow) Get(ctx context.Context, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	<-ctx.Done()
	return ctx.Err()
}

// clock is a cache clock the test moves by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
