package live_test

import (
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

// start serves cf from a new AWS fake and returns a live provider for it that also knows what cf says
// of the cluster's Kubernetes side (kubeOf) and of the GuardConfig's karpenter section (karpenterOf):
// livetest.Start, with the identity facts. Both stop when the test ends.
func start(t testing.TB, cf *facts.ClusterFacts, o livetest.Options) *livetest.Env {
	t.Helper()
	srv := fakeaws.New(cf)
	url := srv.Start(t)
	return &livetest.Env{Fake: srv, URL: url, Provider: newProvider(t, url, cf, o)}
}

// newProvider returns a live provider for the fake at url serving cf, as livetest.NewProvider does,
// with cf's ServiceAccounts and karpenter section. It is closed when the test ends.
func newProvider(t testing.TB, url string, cf *facts.ClusterFacts, o livetest.Options) *live.Provider {
	t.Helper()
	if o.Budget <= 0 {
		o.Budget = 2 * time.Second
	}
	region, name := fakeaws.DefaultRegion, "unknown-cluster"
	if c := cf.Cluster; c != nil {
		if c.Region != "" {
			region = c.Region
		}
		if c.Name != "" {
			name = c.Name
		}
	}
	p, err := live.New(live.Options{
		ClusterName: name, Region: region, Clients: livetest.NewClients(url, region, o),
		Kube: kubeOf(cf), Karpenter: karpenterOf(cf), Budget: o.Budget, Cache: o.Cache, Metrics: o.Metrics,
	})
	if err != nil {
		t.Fatalf("live provider: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// karpenterOf is the GuardConfig karpenter section of the world cf describes (livetest.KarpenterConfig).
func karpenterOf(cf *facts.ClusterFacts) config.Karpenter { return livetest.KarpenterConfig(cf) }

// kubeOf returns a Kubernetes reader holding what cf says of the cluster (livetest.KubeReader).
func kubeOf(cf *facts.ClusterFacts) client.Reader { return livetest.KubeReader(cf) }
