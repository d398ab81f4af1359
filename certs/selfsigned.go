// Package certs provides the webhook's serving certificates in the three ways it is deployed:
// self-signed files for local runs and tests (EnsureSelfSigned), a self-managed CA and certificate kept
// in a Secret and rotated in the cluster (AddRotator, with open-policy-agent/cert-controller), and
// cert-manager objects built from cert-manager's API types (CertManagerObjects).
package certs

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/cert"
)

// File names in a certificate directory, as controller-runtime's webhook server and cert-manager's
// Secrets name them.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// Hosts returns the names a serving certificate must cover: loopback, and the Service's in-cluster
// names when service and namespace are set.
func Hosts(service, namespace string) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if service != "" && namespace != "" {
		hosts = append(hosts, service, service+"."+namespace, service+"."+namespace+".svc", service+"."+namespace+".svc.cluster.local")
	}
	return hosts
}

// EnsureSelfSigned makes sure dir holds a usable serving certificate: when tls.crt or tls.key is
// missing, or the certificate cannot be read, has expired or expires within the hour, or does not cover
// one of hosts, it generates a CA and a certificate signed by it for hosts (valid for maxAge from an
// hour ago, to allow for clock skew), and writes tls.crt (certificate and CA), tls.key and ca.crt
// (the CA, for the webhook configurations' caBundle). Files are replaced atomically, so a server
// watching them never reads half a certificate. It reports whether it generated them.
func EnsureSelfSigned(dir string, hosts []string, maxAge time.Duration) (bool, error) {
	if len(hosts) == 0 {
		return false, errors.New("self-signed certificate: no host names")
	}
	_, errKey := os.Stat(filepath.Join(dir, KeyFile))
	if errKey == nil && usable(filepath.Join(dir, CertFile), hosts, time.Now().Add(time.Hour)) {
		return false, nil
	}
	if err := Generate(dir, hosts, maxAge); err != nil {
		return false, err
	}
	return true, nil
}

// usable reports whether the first certificate of file is still valid at until and covers hosts.
func usable(file string, hosts []string, until time.Time) bool {
	data, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return false
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil || until.After(c.NotAfter) {
		return false
	}
	for _, h := range hosts {
		if c.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// Generate writes a new CA and serving certificate into dir, replacing what is there.
func Generate(dir string, hosts []string, maxAge time.Duration) error {
	var ips []net.IP
	var names []string
	for _, h := range hosts[1:] {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else {
			names = append(names, h)
		}
	}
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKeyWithOptions(cert.SelfSignedCertKeyOptions{
		Host: hosts[0], AlternateIPs: ips, AlternateDNS: names, MaxAge: maxAge,
	})
	if err != nil {
		return fmt.Errorf("generate self-signed certificate: %w", err)
	}
	caPEM, err := lastCertificate(certPEM)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("certificate directory: %w", err)
	}
	// The key first: a watcher that sees a new certificate must find its key.
	for _, f := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{{KeyFile, keyPEM, 0o600}, {CertFile, certPEM, 0o644}, {CAFile, caPEM, 0o644}} {
		if err := writeAtomic(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}

// lastCertificate returns the last certificate of a PEM chain: the CA that
// GenerateSelfSignedCertKeyWithOptions appends after the serving certificate.
func lastCertificate(chain []byte) ([]byte, error) {
	var last *pem.Block
	for rest := chain; ; {
		b, r := pem.Decode(rest)
		if b == nil {
			break
		}
		last, rest = b, r
	}
	if last == nil {
		return nil, errors.New("generated certificate chain holds no certificate")
	}
	if _, err := x509.ParseCertificate(last.Bytes); err != nil {
		return nil, fmt.Errorf("generated CA certificate: %w", err)
	}
	var buf bytes.Buffer
	if err := pem.Encode(&buf, last); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
