package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Elected runs a runnable on one replica at a time: while this replica holds a Lease. It exists
// because the manager's own leader election ends the process when the lease is lost (an API server
// hiccup longer than the renew deadline), and with it the webhook, which every replica must keep
// serving. Losing the lease here stops the runnable and campaigns again.
type Elected struct {
	// Lock is the Lease (controller-runtime's leaderelection.NewResourceLock).
	Lock resourcelock.Interface
	// Runnable runs while the lease is held; its context ends when the lease is lost.
	Runnable manager.Runnable
	// LeaseDuration, RenewDeadline and RetryPeriod default to 15s, 10s and 2s, as the manager's.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	Log                                       logr.Logger
}

var _ manager.LeaderElectionRunnable = (*Elected)(nil)

// NeedLeaderElection implements manager.LeaderElectionRunnable: Elected holds its own lease.
func (e *Elected) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable: it campaigns until ctx ends, running Runnable for each term it
// wins, and returns once the runnable has stopped.
func (e *Elected) Start(ctx context.Context) error {
	lease, renew, retry := e.LeaseDuration, e.RenewDeadline, e.RetryPeriod
	if lease <= 0 {
		lease = 15 * time.Second
	}
	if renew <= 0 {
		renew = 10 * time.Second
	}
	if retry <= 0 {
		retry = 2 * time.Second
	}
	// Terms are run one after the other by one worker, so that a new term never overlaps the end of
	// the last (client-go starts OnStartedLeading on a goroutine of its own and does not wait for it).
	terms := make(chan context.Context)
	worker := make(chan struct{})
	wctx, stopWorker := context.WithCancel(ctx)
	go func() {
		defer close(worker)
		for {
			select {
			case <-wctx.Done():
				return
			case term := <-terms:
				if term.Err() != nil {
					continue // lost while it waited for the last term to end
				}
				e.Log.Info("holding the lease: starting", "lease", e.Lock.Describe())
				if err := e.Runnable.Start(term); err != nil {
					e.Log.Error(err, "stopped with an error")
				}
			}
		}
	}()
	defer func() {
		stopWorker()
		<-worker
	}()
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: e.Lock, LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry, ReleaseOnCancel: true,
			Name: e.Lock.Describe(),
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(term context.Context) {
					select {
					case terms <- term:
					case <-term.Done():
					case <-wctx.Done():
					}
				},
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			return fmt.Errorf("leader election: %w", err)
		}
		le.Run(ctx)
		if ctx.Err() == nil {
			e.Log.Info("lost the lease: stopped, campaigning again", "lease", e.Lock.Describe())
		}
	}
	return nil
}
