package certs

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the generated manifests")

// TestGoldenCertManagerManifest: manifests/overlays/cert-manager/certificates.yaml is what
// CertManagerObjects builds from cert-manager's API types (`make readme` rewrites it).
func TestGoldenCertManagerManifest(t *testing.T) {
	var docs []string
	for _, o := range CertManagerObjects("karpenter-guard", "karpenter-guard") {
		b, err := sigsyaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, strings.NewReplacer("  creationTimestamp: null\n", "", "status: {}\n", "").Replace(string(b)))
	}
	got := "# Generated from cert-manager's API types by certs.CertManagerObjects; do not edit.\n" + strings.Join(docs, "---\n")
	golden.Compare(t, filepath.Join("..", "manifests", "overlays", "cert-manager", "certificates.yaml"), got, *update)
}

// TestEnsureSelfSigned: the generated certificate is served for every host, is signed by ca.crt, and
// is kept on a second call.
func TestEnsureSelfSigned(t *testing.T) {
	dir := t.TempDir()
	hosts := Hosts("karpenter-guard", "karpenter-guard")
	generated, err := EnsureSelfSigned(dir, hosts, 24*time.Hour)
	if err != nil || !generated {
		t.Fatalf("EnsureSelfSigned = %v, %v", generated, err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	for _, h := range hosts {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: h}); err != nil {
			t.Errorf("certificate not valid for %s: %v", h, err)
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, KeyFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v", fi.Mode())
	}
	before, _ := os.ReadFile(filepath.Join(dir, CertFile))
	if generated, err := EnsureSelfSigned(dir, hosts, 24*time.Hour); generated || err != nil {
		t.Errorf("second call generated=%v err=%v; want the certificate kept", generated, err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, CertFile))
	if string(before) != string(after) {
		t.Errorf("the certificate changed")
	}
}

// TestEnsureSelfSignedReplacesUnusable: a certificate that has expired, or does not name the Service,
// is replaced rather than served to an API server that would refuse it.
func TestEnsureSelfSignedReplacesUnusable(t *testing.T) {
	hosts := Hosts("karpenter-guard", "karpenter-guard")
	for _, tc := range []struct {
		name   string
		hosts  []string
		maxAge time.Duration
	}{
		{"expired", hosts, 30 * time.Minute}, // valid from an hour ago for 30 minutes
		{"lacks the Service's names", Hosts("", ""), 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Generate(dir, tc.hosts, tc.maxAge); err != nil {
				t.Fatal(err)
			}
			generated, err := EnsureSelfSigned(dir, hosts, 24*time.Hour)
			if err != nil || !generated {
				t.Fatalf("EnsureSelfSigned = %v, %v; want a new certificate", generated, err)
			}
			if !usable(filepath.Join(dir, CertFile), hosts, time.Now().Add(time.Hour)) {
				t.Errorf("the new certificate is not usable")
			}
		})
	}
}
