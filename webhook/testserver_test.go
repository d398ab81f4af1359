package webhook_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/certs"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
	"github.com/karpenter-guard/karpenter-guard/webhook"
)

// fixedCluster is a cluster whose EC2NodeClasses (and NodePools) are given.
type fixedCluster struct{ classes, pools []*objects.Object }

func (c fixedCluster) NodeClasses() []*objects.Object { return c.classes }
func (c fixedCluster) NodePools() []*objects.Object   { return c.pools }
func (fixedCluster) Synced(context.Context) error     { return nil }

func (c fixedCluster) NodeClass(name string) *objects.Object {
	for _, o := range c.classes {
		if o.Name == name {
			return o
		}
	}
	return nil
}

func (c fixedCluster) FetchNodeClass(_ context.Context, name string) (*objects.Object, error) {
	return nil, nil // everything the cluster holds is in classes
}

// server is karpenter-guard's webhook on controller-runtime's TLS server, in-process on loopback.
type server struct {
	url     string
	client  *http.Client
	certDir string
	stop    func()
}

// startServer serves r (and a bare allow-all handler at /allow) over TLS with a self-signed
// certificate; it stops when the test ends.
func startServer(t testing.TB, r *webhook.Reviewer, limits webhook.Limits) *server {
	t.Helper()
	dir := t.TempDir()
	if _, err := certs.EnsureSelfSigned(dir, certs.Hosts("", ""), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	srv := ctrlwebhook.NewServer(ctrlwebhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.MinVersion = tls.VersionTLS12 }}})
	webhook.Register(srv, r, limits)
	srv.Register("/allow", webhook.Guard(&ctrlwebhook.Admission{Handler: allowAll{}}, limits))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	s := &server{url: fmt.Sprintf("https://127.0.0.1:%d", port), client: tlsClient(t, dir), certDir: dir}
	var once bool
	s.stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("webhook server: %v", err)
		}
	}
	t.Cleanup(s.stop)
	deadline := time.Now().Add(20 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, s.url+"/healthz", nil)
		if err := srv.StartedChecker()(req); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s
}

type allowAll struct{}

// Handle allows everything: the bare handler the load figures compare against.
func (allowAll) Handle(context.Context, admission.Request) admission.Response {
	return admission.Allowed("")
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// tlsClient trusts the CA in dir.
func tlsClient(t testing.TB, dir string) *http.Client {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(dir, certs.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("bad CA")
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}, MaxIdleConnsPerHost: 128,
	}}
}

// reviewOf builds an AdmissionReview of a manifest (YAML or JSON) for op; old is "" or the stored object.
func reviewOf(t testing.TB, op admissionv1.Operation, doc, old string, dryRun bool) *admissionv1.AdmissionReview {
	t.Helper()
	raw := func(d string) runtime.RawExtension {
		if d == "" {
			return runtime.RawExtension{}
		}
		j, err := sigsyaml.YAMLToJSON([]byte(d))
		if err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
		return runtime.RawExtension{Raw: j}
	}
	src := doc
	if src == "" {
		src = old
	}
	var head struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   metav1.ObjectMeta `json:"metadata"`
	}
	if err := sigsyaml.Unmarshal([]byte(src), &head); err != nil {
		t.Fatal(err)
	}
	gv, err := schemaParse(head.APIVersion)
	if err != nil {
		t.Fatal(err)
	}
	req := &admissionv1.AdmissionRequest{
		UID:       types.UID(fmt.Sprintf("uid-%d", time.Now().UnixNano())),
		Kind:      metav1.GroupVersionKind{Group: gv[0], Version: gv[1], Kind: head.Kind},
		Resource:  metav1.GroupVersionResource{Group: gv[0], Version: gv[1], Resource: strings.ToLower(head.Kind) + "s"},
		Name:      head.Metadata.Name,
		Namespace: head.Metadata.Namespace,
		Operation: op,
		Object:    raw(doc),
		OldObject: raw(old),
		DryRun:    &dryRun,
		UserInfo:  authenticationv1.UserInfo{Username: "kubernetes-admin", Groups: []string{"system:masters"}},
	}
	return &admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req}
}

func schemaParse(apiVersion string) ([2]string, error) {
	g, v, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return [2]string{"", g}, nil
	}
	if v == "" {
		return [2]string{}, errors.New("bad apiVersion " + apiVersion)
	}
	return [2]string{g, v}, nil
}

// post sends a review to path and returns the response.
func (s *server) post(t testing.TB, path string, ar *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
	t.Helper()
	body, err := json.Marshal(ar)
	if err != nil {
		t.Fatal(err)
	}
	code, out := s.postRaw(t, path, body)
	if code != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, code, out)
	}
	var resp admissionv1.AdmissionReview
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if resp.Response == nil || resp.Response.UID != ar.Request.UID {
		t.Fatalf("response without the request's UID: %s", out)
	}
	return resp.Response
}

func (s *server) postRaw(t testing.TB, path string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, out
}

// reviewer builds a reviewer on a snapshot (nil: no facts) with cfg (nil: the defaults).
func reviewer(t testing.TB, p facts.Provider, cfg *config.Config, cluster webhook.Cluster) *webhook.Reviewer {
	t.Helper()
	if cfg == nil {
		cfg = config.Default()
	}
	if p == nil {
		p = facts.None{}
	}
	return webhook.NewReviewer(rules.Default(), cfg, p, cluster, nil, logr.Discard())
}

func parseConfig(t testing.TB, body string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte("apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\n"+body), rules.Default().IDs())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readDir reads a directory of manifests.
func readDir(t testing.TB, dir string) *manifest.Set {
	t.Helper()
	set := (&manifest.Reader{MaxFileSize: manifest.DefaultMaxFileSize}).Read(context.Background(), []string{dir})
	if len(set.Errors) > 0 {
		t.Fatalf("%s: %v", dir, set.Errors)
	}
	return set
}

// rulesOf returns the rule IDs named in brackets at the start of a denial's lines or of warnings.
func rulesOf(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimPrefix(l, "karpenter-guard: ")
		if i := strings.Index(l, " denied: ["); i >= 0 {
			l = l[i+len(" denied: "):]
		}
		if strings.HasPrefix(l, "[") && !strings.HasPrefix(l, "[karpenter-guard]") {
			if end := strings.IndexByte(l, ']'); end > 0 {
				out = append(out, l[1:end])
			}
		}
	}
	return out
}
