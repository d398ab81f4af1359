package audit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/karpenter-guard/karpenter-guard/audit"
)

// term counts a runnable's terms and whether one is running.
type term struct {
	started atomic.Int32
	running atomic.Bool
}

func (r *term) Start(ctx context.Context) error {
	r.started.Add(1)
	r.running.Store(true)
	<-ctx.Done()
	r.running.Store(false)
	return nil
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestElectedSurvivesLosingTheLease: of two replicas one runs the audit; when the leader cannot renew
// its lease (the API server unreachable for it), its audit stops but Start does not return (the
// process, and its webhook, go on), the other replica takes over, and the first campaigns again.
func TestElectedSurvivesLosingTheLease(t *testing.T) {
	client := fake.NewClientset()
	var partitioned atomic.Bool
	client.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		if partitioned.Load() && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "a" {
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	replicas := map[string]*term{"a": {}, "b": {}}
	returned := map[string]*atomic.Bool{"a": {}, "b": {}}
	start := func(id string) {
		lock, err := resourcelock.New(resourcelock.LeasesResourceLock, "karpenter-guard", "karpenter-guard-audit",
			client.CoreV1(), client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
		if err != nil {
			t.Fatal(err)
		}
		e := &audit.Elected{Lock: lock, Runnable: replicas[id], LeaseDuration: 4 * time.Second, RenewDeadline: 2 * time.Second,
			RetryPeriod: 200 * time.Millisecond, Log: logr.Discard()}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.Start(ctx); err != nil {
				t.Errorf("%s: %v", id, err)
			}
			returned[id].Store(true)
		}()
	}
	start("a")
	waitFor(t, "a leading", replicas["a"].running.Load)
	start("b")
	time.Sleep(1500 * time.Millisecond)
	if replicas["b"].started.Load() != 0 {
		t.Fatalf("b audits while a holds the lease")
	}

	partitioned.Store(true)
	waitFor(t, "a stopping", func() bool { return !replicas["a"].running.Load() })
	waitFor(t, "b taking over", replicas["b"].running.Load)
	if returned["a"].Load() {
		t.Fatalf("a's Start returned on losing the lease; the process would stop")
	}
	if replicas["a"].running.Load() {
		t.Errorf("a and b audit at once")
	}

	cancel()
	wg.Wait()
	if replicas["a"].running.Load() || replicas["b"].running.Load() {
		t.Errorf("an audit runs after Start returned")
	}
}

// TestElectedInvalidTimings: timings client-go refuses are Start's error, at once.
func TestElectedInvalidTimings(t *testing.T) {
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, "karpenter-guard", "karpenter-guard-audit",
		fake.NewClientset().CoreV1(), fake.NewClientset().CoordinationV1(), resourcelock.ResourceLockConfig{Identity: "a"})
	if err != nil {
		t.Fatal(err)
	}
	e := &audit.Elected{Lock: lock, Runnable: &term{}, LeaseDuration: 5 * time.Second, Log: logr.Discard()} // renew deadline 10s > lease
	done := make(chan error, 1)
	go func() { done <- e.Start(context.Background()) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "leader election") {
			t.Errorf("Start = %v; want the timings refused", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return the error")
	}
}
