// Package livetest wires the live facts provider to the in-repo AWS fake for tests: the real
// aws-sdk-go-v2 clients talk HTTP to a fakeaws.Server serving a ClusterFacts snapshot, and aws-auth
// comes from a Kubernetes reader holding the snapshot's awsAuth. The same snapshot through
// facts.NewSnapshot and through Start must give the same findings.
package livetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live"
	"github.com/karpenter-guard/karpenter-guard/facts/live/serviceaccount"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

// Options tune Start.
type Options struct {
	// Budget is aws.timeout (default 2s).
	Budget time.Duration
	// Cache tunes the provider's cache.
	Cache cache.Options
	// Attempts is the retryer's maximum attempts (default 1: faults show at once; the admission
	// retryer's 3 when tests exercise retries).
	Attempts int
	// Metrics, when set, receive the provider's metrics.
	Metrics *live.Metrics
	// Pacer, when set, paces every request as serve does (nil: none, so that each call reaches the
	// fake at once).
	Pacer *live.Pacer
}

// Env is a running fake and a live provider talking to it.
type Env struct {
	Fake     *fakeaws.Server
	URL      string
	Provider *live.Provider
}

// Start serves cf from a new AWS fake and returns a live provider for it. Both stop when the test ends.
func Start(t testing.TB, cf *facts.ClusterFacts, o Options) *Env {
	t.Helper()
	srv := fakeaws.New(cf)
	url := srv.Start(t)
	return &Env{Fake: srv, URL: url, Provider: NewProvider(t, url, cf, o)}
}

// NewProvider returns a live provider for the fake at url, which serves cf (read for the cluster name,
// the region and awsAuth). It is closed when the test ends.
func NewProvider(t testing.TB, url string, cf *facts.ClusterFacts, o Options) *live.Provider {
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
		ClusterName: name, Region: region, Clients: NewClients(url, region, o),
		Kube: KubeReader(cf), Karpenter: KarpenterConfig(cf), Budget: o.Budget, Cache: o.Cache, Metrics: o.Metrics,
	})
	if err != nil {
		t.Fatalf("live provider: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// NewClients returns the AWS clients of a live provider for the fake at url: the real SDK clients, as
// live.NewClients builds them, with the retryer of o. Tests of one concept provider (facts/live/iam,
// …) build it with the client it calls.
func NewClients(url, region string, o Options) live.Clients {
	cfg := fakeaws.Config(url, region)
	cfg.Retryer = live.NewRetryer(o.Budget)
	cfg.RetryMaxAttempts = max(o.Attempts, 1)
	return live.NewClients(cfg, o.Metrics, o.Pacer)
}

// Serve serves the ClusterFacts document doc from a new AWS fake and returns the fake (to count its
// calls and inject faults) with the real SDK clients pointed at it, in the document's region: what
// each concept provider's tests start from.
func Serve(t testing.TB, doc string) (*fakeaws.Server, live.Clients) {
	t.Helper()
	cf, err := facts.DecodeSnapshotFile([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	region := "us-east-1"
	if cf.Cluster != nil && cf.Cluster.Region != "" {
		region = cf.Cluster.Region
	}
	srv := fakeaws.New(cf)
	return srv, NewClients(srv.Start(t), region, Options{})
}

// KubeReader returns a Kubernetes reader holding what cf says of the cluster. aws-auth: the ConfigMap
// with its data, none for awsAuth: {}, and a Forbidden answer when the snapshot does not know awsAuth
// (the cluster does not let us read it). The ServiceAccounts of Karpenter's controller and aws-node
// that karpenterController and vpcCNI imply: annotated for IRSA, bare for Pod Identity (whose
// association the AWS fake serves) and for the node's role, none for vpcCNI.present false; one the
// snapshot says nothing about cannot be read (Forbidden). So the live provider knows exactly what the
// snapshot knows.
func KubeReader(cf *facts.ClusterFacts) client.Reader {
	r := worldReader{awsAuth: awsAuthReader(cf), known: map[string]bool{}}
	b := fake.NewClientBuilder()
	add := func(namespace, name, role string) {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		if role != "" {
			sa.Annotations = map[string]string{serviceaccount.RoleARNAnnotation: role}
		}
		b = b.WithObjects(sa)
	}
	if kc := cf.KarpenterController; kc != nil {
		sa := KarpenterConfig(cf).ServiceAccount
		r.known[sa] = true
		if ns, name, ok := strings.Cut(sa, "/"); ok && kc.Source != facts.CredentialsConfig {
			role := ""
			if kc.Source == facts.CredentialsIRSA {
				role = kc.RoleARN
			}
			add(ns, name, role)
		}
	}
	if cni := cf.VPCCNI; cni != nil {
		r.known["kube-system/aws-node"] = true
		if cni.Present == nil || *cni.Present {
			role := ""
			if cni.Credentials == facts.CredentialsIRSA {
				role = cni.RoleARN
			}
			add("kube-system", "aws-node", role)
		}
	}
	r.accounts = b.Build()
	return r
}

// KarpenterConfig is the GuardConfig karpenter section of the world cf describes: the controller's
// ServiceAccount, and its role when the snapshot says the GuardConfig names it.
func KarpenterConfig(cf *facts.ClusterFacts) config.Karpenter {
	k := config.Karpenter{ServiceAccount: config.DefaultKarpenterServiceAccount}
	if kc := cf.KarpenterController; kc != nil {
		if kc.ServiceAccount != "" {
			k.ServiceAccount = kc.ServiceAccount
		}
		if kc.Source == facts.CredentialsConfig {
			k.ControllerRoleARN = kc.RoleARN
		}
	}
	return k
}

// worldReader reads ConfigMaps from awsAuth and the ServiceAccounts the snapshot knows from accounts.
type worldReader struct {
	awsAuth  client.Reader
	accounts client.Reader
	known    map[string]bool // namespace/name of the ServiceAccounts the snapshot knows
}

func (r worldReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.ServiceAccount); !ok {
		return r.awsAuth.Get(ctx, key, obj, opts...)
	}
	if !r.known[key.String()] {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, key.Name, nil)
	}
	return r.accounts.Get(ctx, key, obj, opts...)
}

func (r worldReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.awsAuth.List(ctx, list, opts...)
}

// awsAuthReader holds the snapshot's aws-auth (see KubeReader).
func awsAuthReader(cf *facts.ClusterFacts) client.Reader {
	if cf.AWSAuth == nil {
		return forbidden{}
	}
	b := fake.NewClientBuilder()
	if len(*cf.AWSAuth) > 0 {
		b = b.WithObjects(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "aws-auth"},
			Data:       *cf.AWSAuth,
		})
	}
	return b.Build()
}

// forbidden answers every read as RBAC does without a grant.
type forbidden struct{}

func (forbidden) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, key.Name, nil)
}

func (forbidden) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", nil)
}

// Expressible returns nil when the live provider can know exactly what cf knows, else why not: a
// cluster's name, region, partition and account always come with DescribeCluster (its ARN), so a
// snapshot that leaves one of them out describes a world the live provider never sees.
func Expressible(cf *facts.ClusterFacts) error {
	c := cf.Cluster
	if c == nil {
		return nil
	}
	for field, v := range map[string]string{"name": c.Name, "region": c.Region, "partition": c.Partition, "accountID": c.AccountID} {
		if v == "" {
			return fmt.Errorf("the snapshot's cluster has no %s, which DescribeCluster always gives", field)
		}
	}
	return nil
}

// Clock is a clock for cache.Options.Now that a test moves by hand. It is safe for concurrent use: the
// caches read it from their fetches' goroutines.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock at a fixed instant.
func NewClock() *Clock { return &Clock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock forward by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
