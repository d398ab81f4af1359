package certs

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestNarrowConfig: through the narrowed configuration, a client's list and watch of the rotator's
// collections ask the API server for the one object by name, as its Role's resourceNames require;
// a Get, a write and the requests of other collections go out unchanged.
func TestNarrowConfig(t *testing.T) {
	var mu sync.Mutex
	var got []string // method path?fieldSelector of each request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.URL.Query().Get("fieldSelector"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			return // an empty watch stream: closed at once
		}
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}`))
	}))
	defer srv.Close()

	cfg := NarrowConfig(&rest.Config{Host: srv.URL}, rotatorCollections(RotatorOptions{
		Namespace: "karpenter-guard", SecretName: "karpenter-guard-cert", ValidatingWebhook: "kg", MutatingWebhook: "kg-mutating"}))
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"list the namespace's Secrets", func() error {
			_, err := kube.CoreV1().Secrets("karpenter-guard").List(ctx, metav1.ListOptions{})
			return err
		}, "GET /api/v1/namespaces/karpenter-guard/secrets metadata.name=karpenter-guard-cert"},
		{"watch the namespace's Secrets", func() error {
			w, err := kube.CoreV1().Secrets("karpenter-guard").Watch(ctx, metav1.ListOptions{})
			if err == nil {
				w.Stop()
			}
			return err
		}, "GET /api/v1/namespaces/karpenter-guard/secrets metadata.name=karpenter-guard-cert"},
		{"a field selector already there is kept", func() error {
			_, err := kube.CoreV1().Secrets("karpenter-guard").List(ctx, metav1.ListOptions{FieldSelector: "type=Opaque"})
			return err
		}, "GET /api/v1/namespaces/karpenter-guard/secrets type=Opaque,metadata.name=karpenter-guard-cert"},
		{"list the validating configurations", func() error {
			_, err := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
			return err
		}, "GET /apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations metadata.name=kg"},
		{"watch the mutating configurations", func() error {
			w, err := kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Watch(ctx, metav1.ListOptions{})
			if err == nil {
				w.Stop()
			}
			return err
		}, "GET /apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations metadata.name=kg-mutating"},
		{"get the Secret", func() error {
			_, err := kube.CoreV1().Secrets("karpenter-guard").Get(ctx, "karpenter-guard-cert", metav1.GetOptions{})
			return err
		}, "GET /api/v1/namespaces/karpenter-guard/secrets/karpenter-guard-cert "},
		{"update the Secret", func() error {
			_, err := kube.CoreV1().Secrets("karpenter-guard").Update(ctx,
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "karpenter-guard-cert", Namespace: "karpenter-guard"}}, metav1.UpdateOptions{})
			return err
		}, "PUT /api/v1/namespaces/karpenter-guard/secrets/karpenter-guard-cert "},
		{"another namespace's Secrets", func() error {
			_, err := kube.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
			return err
		}, "GET /api/v1/namespaces/kube-system/secrets "},
		{"ConfigMaps", func() error {
			_, err := kube.CoreV1().ConfigMaps("karpenter-guard").List(ctx, metav1.ListOptions{})
			return err
		}, "GET /api/v1/namespaces/karpenter-guard/configmaps "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			_ = tc.call() // the fake answers a Status: only the request matters
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("requests %q, want [%q]", got, tc.want)
			}
		})
	}
}

// TestRotatorCollectionsWithoutMutation: without a mutating configuration (components/no-mutation) the
// rotator reads no mutating configuration at all.
func TestRotatorCollectionsWithoutMutation(t *testing.T) {
	c := rotatorCollections(RotatorOptions{Namespace: "ns", SecretName: "s", ValidatingWebhook: "v"})
	want := Collections{"/api/v1/namespaces/ns/secrets": "s", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations": "v"}
	if !maps.Equal(c, want) {
		t.Errorf("collections %v, want %v", c, want)
	}
}
