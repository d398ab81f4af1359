package certs

// Names of the cert-manager objects; the webhook configurations' cert-manager.io/inject-ca-from
// annotation names the serving Certificate.
const (
	SelfSignedIssuer = "karpenter-guard-selfsigned"
	CAName           = "karpenter-guard-ca"
	ServingName      = "karpenter-guard-serving"
)

// serviceNames are the in-cluster names of a Service: name, name.namespace, name.namespace.svc and
// name.namespace.svc.cluster.local.
func serviceNames(service, namespace string) []string {
	ns := service + "." + namespace
	return []string{service, ns, ns + ".svc", ns + ".svc.cluster.local"}
}
