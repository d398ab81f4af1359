// Package serviceaccount is the live provider's ServiceAccount concept: the ServiceAccounts whose AWS
// credentials the identity facts depend on (Karpenter's controller, aws-node), each read with a Get
// through a controller-runtime client.Reader, in a cache of their own.
package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// RoleARNAnnotation is the IRSA annotation: the role whose web identity credentials EKS gives the
// ServiceAccount's pods.
const RoleARNAnnotation = "eks.amazonaws.com/role-arn"

// Account is a ServiceAccount as far as its AWS credentials go.
type Account struct {
	Namespace, Name string
	// RoleARN is the role of its IRSA annotation ("" when it has none).
	RoleARN string
}

// Provider answers ServiceAccounts from the Kubernetes API through its own cache: an account for the
// TTL, a missing one for the negative TTL. Close it to stop the reads in flight.
type Provider struct {
	kube    client.Reader
	metrics *awscall.Metrics
	answers *cache.Cache[*Account]
}

// NewProvider returns a provider that reads ServiceAccounts with kube (nil: every one is unknown),
// counting lookups in metrics (nil: not counted) and caching as opts say. It makes no call.
func NewProvider(kube client.Reader, metrics *awscall.Metrics, opts cache.Options) *Provider {
	return &Provider{kube: kube, metrics: metrics, answers: cache.New[*Account](opts)}
}

// Close stops the reads in flight and waits for them.
func (p *Provider) Close() { p.answers.Close() }

// Get returns the ServiceAccount namespace/name, asked for fact f; nil when it does not exist. One the
// provider may not read, or could not read in time, is the unknown fact f with the reason.
func (p *Provider) Get(ctx context.Context, f facts.Fact, namespace, name string) (*Account, error) {
	if p.kube == nil {
		return nil, facts.Unknown(f, "no access to the cluster's Kubernetes API (give a kubeconfig)")
	}
	key := namespace + "/" + name
	l, err := awscall.Get(ctx, p.answers, p.metrics, f, key, 0, func(ctx context.Context) (cache.Answer[*Account], error) {
		a, err := p.read(ctx, namespace, name)
		return cache.Answer[*Account]{Value: a, Negative: a == nil}, err
	})
	if errors.Is(err, facts.ErrNotAtHand) {
		return nil, err
	}
	p.metrics.CountLookup(f, l.Result)
	if err != nil {
		return nil, awscall.Unknown(f, worded(key, err))
	}
	if l.Result == cache.Stale {
		facts.Note(ctx, fmt.Sprintf("used a cached answer %s old for ServiceAccount %s: %s", l.Age.Round(time.Second), key, worded(key, l.RefreshErr).Reason()))
	}
	return l.Value, nil
}

// read gets the ServiceAccount; nil when it does not exist.
func (p *Provider) read(ctx context.Context, namespace, name string) (*Account, error) {
	var sa corev1.ServiceAccount
	err := p.kube.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &sa)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case apierrors.IsForbidden(err):
		return nil, &readError{reason: fmt.Sprintf("not allowed to read ServiceAccount %s/%s (RBAC: get on serviceaccounts in %s, resourceNames %s)", namespace, name, namespace, name), err: err}
	case err != nil:
		return nil, err
	}
	return &Account{Namespace: namespace, Name: name, RoleARN: sa.Annotations[RoleARNAnnotation]}, nil
}

// readError is a read that gave no answer, worded for the operator (awscall.Worded).
type readError struct {
	reason string
	err    error
}

func (e *readError) Error() string  { return e.reason + ": " + e.err.Error() }
func (e *readError) Reason() string { return e.reason }
func (e *readError) Unwrap() error  { return e.err }

// worded words err, the failure to read the ServiceAccount key, unless it is worded already.
func worded(key string, err error) awscall.Worded {
	var w awscall.Worded
	if errors.As(err, &w) {
		return w
	}
	if errors.Is(err, cache.ErrLate) {
		return &readError{reason: fmt.Sprintf("no answer from the Kubernetes API in time (ServiceAccount %s)", key), err: err}
	}
	return &readError{reason: fmt.Sprintf("reading ServiceAccount %s: %v", key, err), err: err}
}
