package live_test

import (
	"context"
	"strings"
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
	"github.com/karpenter-guard/karpenter-guard/facts/live"
	"github.com/karpenter-guard/karpenter-guard/facts/live/serviceaccount"
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

// karpenterOf is the GuardConfig karpenter section of the world cf describes: the controller's
// ServiceAccount, and its role when the snapshot says the GuardConfig names it.
func karpenterOf(cf *facts.ClusterFacts) config.Karpenter {
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

// kubeOf returns a Kubernetes reader holding what cf says of the cluster: aws-auth as
// livetest.KubeReader holds it, and the ServiceAccounts of Karpenter's controller and aws-node that
// karpenterController and vpcCNI imply: annotated for IRSA, bare for Pod Identity (whose association
// the AWS fake serves) and for the node's role, none for vpcCNI.present false. A ServiceAccount the
// snapshot says nothing about cannot be read (Forbidden), so that the live provider knows exactly
// what the snapshot knows.
func kubeOf(cf *facts.ClusterFacts) client.Reader {
	r := worldReader{awsAuth: livetest.KubeReader(cf), known: map[string]bool{}}
	b := fake.NewClientBuilder()
	add := func(namespace, name, role string) {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		if role != "" {
			sa.Annotations = map[string]string{serviceaccount.RoleARNAnnotation: role}
		}
		b = b.WithObjects(sa)
	}
	if kc := cf.KarpenterController; kc != nil {
		sa := karpenterOf(cf).ServiceAccount
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
