package certs

import (
	"fmt"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// RotatorOptions configure the self-managed certificates of an in-cluster webhook.
type RotatorOptions struct {
	// CertDir is where the webhook server reads tls.crt and tls.key.
	CertDir string
	// Namespace and SecretName name the Secret that keeps the CA and the certificate.
	Namespace, SecretName string
	// Service is the webhook Service's name: the certificate covers its in-cluster names.
	Service string
	// ValidatingWebhook and MutatingWebhook name the webhook configurations whose caBundle is kept
	// current; "" for one that is not deployed (components/no-mutation).
	ValidatingWebhook, MutatingWebhook string
	// ExtraDNSNames are more names the certificate covers (a webhook reached by URL, as in tests).
	ExtraDNSNames []string
	// Ready is closed once certificates are in place; readiness and the webhook server wait for it.
	Ready chan struct{}
}

// AddRotator adds open-policy-agent/cert-controller's rotator to mgr: it creates the CA and serving
// certificate in the Secret, renews them before they expire, writes them into CertDir (the webhook
// server's certificate watcher reloads them) and injects the CA into the webhook configurations.
// o.Ready closes once certificates are in place. The rotator reads only its Secret and its webhook
// configurations, by name (NarrowConfig), so that its Role needs no access to other Secrets.
func AddRotator(mgr manager.Manager, o RotatorOptions) error {
	names := serviceNames(o.Service, o.Namespace)
	var webhooks []rotator.WebhookInfo
	if o.ValidatingWebhook != "" {
		webhooks = append(webhooks, rotator.WebhookInfo{Name: o.ValidatingWebhook, Type: rotator.Validating})
	}
	if o.MutatingWebhook != "" {
		webhooks = append(webhooks, rotator.WebhookInfo{Name: o.MutatingWebhook, Type: rotator.Mutating})
	}
	narrowed, err := narrowManager(mgr, rotatorCollections(o))
	if err != nil {
		return fmt.Errorf("self-managed certificates: %w", err)
	}
	err = rotator.AddRotator(narrowed, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: o.Namespace, Name: o.SecretName},
		CertDir:        o.CertDir,
		CAName:         CAName,
		CAOrganization: "karpenter-guard",
		DNSName:        names[2],
		ExtraDNSNames:  append([]string{names[3], names[1]}, o.ExtraDNSNames...),
		IsReady:        o.Ready,
		Webhooks:       webhooks,
		FieldOwner:     "karpenter-guard",
	})
	if err != nil {
		return fmt.Errorf("self-managed certificates: %w", err)
	}
	return nil
}
