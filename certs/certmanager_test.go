package certs

// This file builds manifests/overlays/cert-manager/certificates.yaml from cert-manager's API types
// (TestGoldenCertManagerManifest); it is test code so that the webhook binary does not carry them.

import (
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CertManagerObjects returns the cert-manager objects that issue the webhook's serving certificate in
// namespace: a self-signed Issuer that signs a CA Certificate, an Issuer of that CA, and the serving
// Certificate for the Service's in-cluster names (Secret karpenter-guard-serving, which the Deployment
// mounts). cert-manager renews the certificate before it expires; the webhook's certificate watcher
// reloads it.
func CertManagerObjects(namespace, service string) []client.Object {
	labels := map[string]string{"app.kubernetes.io/name": "karpenter-guard"}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels}
	}
	issuer := func(name string, spec cmv1.IssuerConfig) *cmv1.Issuer {
		return &cmv1.Issuer{
			TypeMeta:   metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.IssuerKind},
			ObjectMeta: meta(name),
			Spec:       cmv1.IssuerSpec{IssuerConfig: spec},
		}
	}
	certificate := func(name string, spec cmv1.CertificateSpec) *cmv1.Certificate {
		return &cmv1.Certificate{
			TypeMeta:   metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.CertificateKind},
			ObjectMeta: meta(name),
			Spec:       spec,
		}
	}
	ecdsa := &cmv1.CertificatePrivateKey{Algorithm: cmv1.ECDSAKeyAlgorithm, Size: 256, RotationPolicy: cmv1.RotationPolicyAlways}
	return []client.Object{
		issuer(SelfSignedIssuer, cmv1.IssuerConfig{SelfSigned: &cmv1.SelfSignedIssuer{}}),
		certificate(CAName, cmv1.CertificateSpec{
			IsCA: true, CommonName: CAName, SecretName: CAName, PrivateKey: ecdsa,
			Duration:    &metav1.Duration{Duration: 5 * 365 * 24 * time.Hour},
			IssuerRef:   cmmeta.IssuerReference{Name: SelfSignedIssuer, Kind: cmv1.IssuerKind},
			RenewBefore: &metav1.Duration{Duration: 90 * 24 * time.Hour},
		}),
		issuer(CAName, cmv1.IssuerConfig{CA: &cmv1.CAIssuer{SecretName: CAName}}),
		certificate(ServingName, cmv1.CertificateSpec{
			SecretName: ServingName, PrivateKey: ecdsa,
			DNSNames:    serviceNames(service, namespace)[2:], // the .svc names the API server calls
			Duration:    &metav1.Duration{Duration: 90 * 24 * time.Hour},
			RenewBefore: &metav1.Duration{Duration: 30 * 24 * time.Hour},
			IssuerRef:   cmmeta.IssuerReference{Name: CAName, Kind: cmv1.IssuerKind},
			Usages:      []cmv1.KeyUsage{cmv1.UsageServerAuth, cmv1.UsageDigitalSignature, cmv1.UsageKeyEncipherment},
		}),
	}
}
