// Package awsauth is the live provider's aws-auth concept: the kube-system/aws-auth ConfigMap, read
// through a controller-runtime client.Reader and parsed once per read, in a cache of its own with a
// short TTL.
package awsauth

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

// TTL is how long the provider keeps what it read of kube-system/aws-auth: short, since an edit must
// count soon, but long enough that a burst of reviews reads it once (a direct client in the CLI makes
// one API request per read; the webhook's watch-backed cache copies the object).
const TTL = 2 * time.Second

// key is the cache key of the one answer the provider keeps.
const key = "kube:aws-auth"

// Provider answers facts.AWSAuth from the Kubernetes API through its own cache. Close it to stop the
// read in flight.
type Provider struct {
	kube    client.Reader
	metrics *awscall.Metrics
	answers *cache.Cache[parsed]
}

// parsed is what the ConfigMap says, read as EKS reads it (facts.ParseAWSAuth, as the snapshot does):
// one with entries EKS drops is an answer too, the mappings EKS keeps, never replaced by an older copy.
type parsed struct {
	auth *facts.AWSAuthData
}

// NewProvider returns a provider that reads the ConfigMap with kube (nil: aws-auth is unknown),
// counting lookups in metrics (nil: not counted) and caching as opts say, every answer for TTL. It
// makes no call.
func NewProvider(kube client.Reader, metrics *awscall.Metrics, opts cache.Options) *Provider {
	return &Provider{kube: kube, metrics: metrics, answers: cache.New[parsed](opts)}
}

// Close stops the read in flight and waits for it.
func (p *Provider) Close() { p.answers.Close() }

// AWSAuth returns kube-system/aws-auth, read as EKS reads it; nil when the ConfigMap does not exist.
// One the provider may not read is an unknown fact; one with entries EKS drops is not: EKS keeps the
// others, and so does the answer.
func (p *Provider) AWSAuth(ctx context.Context) (*facts.AWSAuthData, error) {
	if p.kube == nil {
		return nil, facts.Unknown(facts.AWSAuth, "no access to the cluster's Kubernetes API (give a kubeconfig)")
	}
	l, err := awscall.Get(ctx, p.answers, p.metrics, facts.AWSAuth, key, 0, func(ctx context.Context) (cache.Answer[parsed], error) {
		a, err := p.read(ctx)
		return cache.Answer[parsed]{Value: a, TTL: TTL}, err
	})
	if errors.Is(err, facts.ErrNotAtHand) {
		return nil, err
	}
	p.metrics.CountLookup(facts.AWSAuth, l.Result)
	if err != nil {
		var u *facts.UnknownError
		if errors.As(err, &u) {
			return nil, err
		}
		return nil, facts.Unknown(facts.AWSAuth, fmt.Sprintf("reading ConfigMap kube-system/aws-auth: %v", err))
	}
	return l.Value.auth, nil
}

// read reads and parses the ConfigMap.
func (p *Provider) read(ctx context.Context) (parsed, error) {
	var cm corev1.ConfigMap
	err := p.kube.Get(ctx, types.NamespacedName{Namespace: "kube-system", Name: "aws-auth"}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return parsed{}, nil
	case apierrors.IsForbidden(err):
		return parsed{}, facts.Unknown(facts.AWSAuth, "not allowed to read ConfigMap kube-system/aws-auth (RBAC: get, list and watch on configmaps, resourceNames aws-auth)")
	case err != nil:
		return parsed{}, facts.Unknown(facts.AWSAuth, fmt.Sprintf("reading ConfigMap kube-system/aws-auth: %v", err))
	}
	if len(cm.Data) == 0 {
		return parsed{auth: &facts.AWSAuthData{Data: map[string]string{}}}, nil
	}
	return parsed{auth: facts.ParseAWSAuth(cm.Data)}, nil
}
