package live_test

import (
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

// start serves cf from a new AWS fake and returns a live provider for it that also knows what cf says
// of the cluster's Kubernetes side and of the GuardConfig's karpenter section (livetest.Start).
func start(t testing.TB, cf *facts.ClusterFacts, o livetest.Options) *livetest.Env {
	t.Helper()
	return livetest.Start(t, cf, o)
}

// newProvider returns a live provider for the fake at url serving cf (livetest.NewProvider).
func newProvider(t testing.TB, url string, cf *facts.ClusterFacts, o livetest.Options) *live.Provider {
	t.Helper()
	return livetest.NewProvider(t, url, cf, o)
}
