package main

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/manifest"
)

// inputAccounts reads the ServiceAccounts of the CLI's input, for a live run without cluster access:
// the Karpenter controller's and aws-node's, kept in a repository beside the manifests, tell whose
// permissions to check. A ServiceAccount the input lacks is unknown (an error), never "does not
// exist": the input is not the whole cluster. It is filled once the input is read, before any
// question about ServiceAccounts.
type inputAccounts struct {
	mu       sync.Mutex
	accounts map[client.ObjectKey]manifest.ServiceAccount
}

// set replaces the input's ServiceAccounts.
func (r *inputAccounts) set(sas []manifest.ServiceAccount) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.accounts = map[client.ObjectKey]manifest.ServiceAccount{}
	for _, sa := range sas {
		r.accounts[client.ObjectKey{Namespace: sa.Namespace, Name: sa.Name}] = sa
	}
}

// Get implements client.Reader for ServiceAccounts.
func (r *inputAccounts) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	out, ok := obj.(*corev1.ServiceAccount)
	if !ok {
		return fmt.Errorf("the input answers only ServiceAccounts, not %T", obj)
	}
	r.mu.Lock()
	sa, found := r.accounts[key]
	r.mu.Unlock()
	if !found {
		return fmt.Errorf("no cluster access and no ServiceAccount %s in the input (give a kubeconfig, or add the ServiceAccount's manifest to the input)", key)
	}
	out.Namespace, out.Name, out.Annotations = sa.Namespace, sa.Name, sa.Annotations
	return nil
}

// List implements client.Reader; nothing lists through it.
func (r *inputAccounts) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return fmt.Errorf("the input's ServiceAccounts cannot be listed")
}
