package awsauth_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awsauth"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	nodeRole = "- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n"
	admin    = "- rolearn: arn:aws:iam::111122223333:role/Admin\n  username: admin\n  groups: [system:masters]\n"
)

// counting is a Kubernetes reader that counts its reads.
type counting struct {
	client.Reader
	gets atomic.Int32
	// hold, when set, keeps each read waiting until it is closed, so a test can ask again while the
	// first read is still out.
	hold chan struct{}
}

func (c *counting) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets.Add(1)
	if c.hold != nil {
		<-c.hold
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

func configMap(mapRoles string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "aws-auth"},
		Data:       map[string]string{"mapRoles": mapRoles},
	}
}

// TestTTL: what the provider read of the ConfigMap is kept for awsauth.TTL, whatever the TTL of the
// other caches, and read again after it: an edit counts within seconds.
func TestTTL(t *testing.T) {
	c := livetest.NewClock()
	cm := configMap(nodeRole)
	kube := fake.NewClientBuilder().WithObjects(cm).Build()
	reader := &counting{Reader: kube}
	reg := prometheus.NewRegistry()
	m, err := awscall.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	p := awsauth.NewProvider(reader, m, cache.Options{TTL: 5 * time.Minute, Now: c.Now})
	t.Cleanup(p.Close)
	ctx := context.Background()
	roles := func(wantGets int32) int {
		t.Helper()
		a, err := p.AWSAuth(ctx)
		if err != nil || a == nil {
			t.Fatalf("AWSAuth = %v, %v", a, err)
		}
		if n := reader.gets.Load(); n != wantGets {
			t.Errorf("at %s: %d reads of the ConfigMap, want %d", c.Now().Format(time.TimeOnly), n, wantGets)
		}
		return len(a.Config.MapRoles)
	}
	if n := roles(1); n != 1 {
		t.Fatalf("%d roles mapped, want 1", n)
	}
	cm.Data["mapRoles"] = nodeRole + admin
	if err := kube.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Second)
	if n := roles(1); n != 1 {
		t.Errorf("%d roles mapped 1s after the first read, want the cached 1", n)
	}
	c.Add(awsauth.TTL)
	if n := roles(2); n != 2 {
		t.Errorf("%d roles mapped after the TTL, want the edited 2", n)
	}
	want := `
# HELP karpenter_guard_facts_cache_total Lookups of facts in the live provider's cache, by fact and result (hit, miss, stale, error).
# TYPE karpenter_guard_facts_cache_total counter
karpenter_guard_facts_cache_total{fact="awsAuth",result="hit"} 1
karpenter_guard_facts_cache_total{fact="awsAuth",result="miss"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "karpenter_guard_facts_cache_total"); err != nil {
		t.Error(err)
	}
}

// TestAtHandOnly: in a facts.AtHandOnly context the provider waits for nothing: before a read it says
// the ConfigMap is not at hand and starts the read, once however often it is asked in the round; once
// the round's fetches are in, the ConfigMap is at hand.
func TestAtHandOnly(t *testing.T) {
	reader := &counting{Reader: fake.NewClientBuilder().WithObjects(configMap(nodeRole)).Build(), hold: make(chan struct{})}
	p := awsauth.NewProvider(reader, nil, cache.Options{})
	t.Cleanup(p.Close)
	hctx, round := facts.AtHandOnly(context.Background())
	for range 2 {
		if _, err := p.AWSAuth(hctx); !errors.Is(err, facts.ErrNotAtHand) || !round.Missed() {
			t.Errorf("AWSAuth at hand only, before a read = %v (missed %v); want not at hand", err, round.Missed())
		}
	}
	close(reader.hold)
	round.Wait()
	if n := reader.gets.Load(); n != 1 {
		t.Errorf("%d reads started at hand only; want 1", n)
	}
	hctx, round = facts.AtHandOnly(context.Background())
	if a, err := p.AWSAuth(hctx); err != nil || a == nil || round.Missed() {
		t.Errorf("AWSAuth at hand only, after a read = %v, %v (missed %v); want the ConfigMap", a, err, round.Missed())
	}
	if n := reader.gets.Load(); n != 1 {
		t.Errorf("%d reads; want the one started at hand only", n)
	}
}

// TestAnswers: a missing ConfigMap is no aws-auth; one the provider may not read is unknown with the
// reason, and so is aws-auth without a Kubernetes client. One whose mapRoles EKS cannot parse is known:
// EKS keeps no role entry of it, and still reads the rest.
func TestAnswers(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		kube   client.Reader
		known  bool   // the ConfigMap, without role mappings
		reason string // unknown, with this reason; "" and not known: no aws-auth, no error
	}{
		{"missing", fake.NewClientBuilder().Build(), false, ""},
		{"forbidden", livetest.KubeReader(&facts.ClusterFacts{}), false, "not allowed to read ConfigMap kube-system/aws-auth"},
		{"mapRoles EKS cannot parse", fake.NewClientBuilder().WithObjects(configMap("- rolearn: [")).Build(), true, ""},
		{"no client", nil, false, "no access to the cluster's Kubernetes API"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := awsauth.NewProvider(tc.kube, nil, cache.Options{})
			defer p.Close()
			a, err := p.AWSAuth(ctx)
			switch {
			case tc.known:
				if err != nil || a == nil || len(a.Config.MapRoles) != 0 || a.Data["mapRoles"] != "- rolearn: [" {
					t.Errorf("AWSAuth = %v, %v; want the ConfigMap, without role mappings", a, err)
				}
			case tc.reason == "" && (a != nil || err != nil):
				t.Errorf("AWSAuth = %v, %v; want none", a, err)
			case tc.reason != "" && (!facts.IsUnknown(err) || !strings.Contains(facts.Reason(err), tc.reason)):
				t.Errorf("AWSAuth = %v, %v; want unknown because %q", a, err, tc.reason)
			}
		})
	}
}

// TestReadAsEKS: the provider answers with the mappings EKS's authenticator keeps: a later entry for a
// rolearn replaces an earlier one, groups that parse as one string stay one group, an entry EKS drops
// (no rolearn) costs only itself, and a data key EKS never reads maps nothing.
func TestReadAsEKS(t *testing.T) {
	const arn = "arn:aws:iam::111122223333:role/KarpenterNodeRole"
	cm := configMap(nodeRole + admin +
		"- rolearn: " + arn + "\n  username: system:node:{{EC2PrivateDNSName}}\n  groups:\n    - system:bootstrappers\n     - system:nodes\n" +
		"- username: dropped\n  groups: [system:masters]\n")
	cm.Data["maproles"] = "- rolearn: arn:aws:iam::111122223333:role/Other\n  username: other\n"
	p := awsauth.NewProvider(fake.NewClientBuilder().WithObjects(cm).Build(), nil, cache.Options{})
	defer p.Close()
	a, err := p.AWSAuth(context.Background())
	if err != nil || a == nil {
		t.Fatalf("AWSAuth = %v, %v; want the ConfigMap", a, err)
	}
	m := a.RoleMapping(arn)
	if m == nil || m.Line != 7 || len(m.Groups) != 1 || m.Groups[0] != "system:bootstrappers - system:nodes" {
		t.Errorf("RoleMapping(%s) = %+v; want the entry at line 7, with the one group EKS reads", arn, m)
	}
	if m := a.RoleMapping("arn:aws:iam::111122223333:role/Other"); m != nil || len(a.Config.MapRoles) != 2 {
		t.Errorf("mappings %+v; want the admin and the last node role entry, nothing from maproles", a.Config.MapRoles)
	}
}
