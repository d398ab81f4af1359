package live

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
)

// AWSAuthTTL is how long the provider keeps what it read of kube-system/aws-auth: short, since an
// edit must count soon, but long enough that a burst of reviews reads it once (a direct client in the
// CLI makes one API request per read; the webhook's watch-backed cache copies the object).
const AWSAuthTTL = 2 * time.Second

// AWSAuth implements facts.Provider from the Kubernetes API, parsed once per version of the ConfigMap.
func (p *Provider) AWSAuth(ctx context.Context) (*facts.AWSAuthData, error) {
	if p.opts.Kube == nil {
		return nil, facts.Unknown(facts.AWSAuth, "no access to the cluster's Kubernetes API (give a kubeconfig)")
	}
	const key = "kube:aws-auth"
	l, err := p.get(ctx, facts.AWSAuth, key, 0, func(ctx context.Context) (cache.Answer[any], error) {
		cm, err := p.readAWSAuth(ctx)
		return cache.Answer[any]{Value: cm, TTL: AWSAuthTTL}, err
	})
	if errors.Is(err, facts.ErrNotAtHand) {
		return nil, err
	}
	p.opts.Metrics.lookup(string(facts.AWSAuth), l.Result)
	if err != nil {
		var u *facts.UnknownError
		if errors.As(err, &u) {
			return nil, err
		}
		return nil, facts.Unknown(facts.AWSAuth, fmt.Sprintf("reading ConfigMap kube-system/aws-auth: %v", err))
	}
	a, _ := l.Value.(parsedAWSAuth)
	return a.auth, a.err
}

// parsedAWSAuth is what the ConfigMap says: a malformed one is an answer too (EKS ignores it whole,
// so aws-auth is unknown), never replaced by an older, well-formed copy.
type parsedAWSAuth struct {
	auth *facts.AWSAuthData
	err  error
}

// readAWSAuth reads and parses the ConfigMap.
func (p *Provider) readAWSAuth(ctx context.Context) (parsedAWSAuth, error) {
	var cm corev1.ConfigMap
	err := p.opts.Kube.Get(ctx, types.NamespacedName{Namespace: "kube-system", Name: "aws-auth"}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return parsedAWSAuth{}, nil
	case apierrors.IsForbidden(err):
		return parsedAWSAuth{}, facts.Unknown(facts.AWSAuth, "not allowed to read ConfigMap kube-system/aws-auth (RBAC: get, list and watch on configmaps, resourceNames aws-auth)")
	case err != nil:
		return parsedAWSAuth{}, facts.Unknown(facts.AWSAuth, fmt.Sprintf("reading ConfigMap kube-system/aws-auth: %v", err))
	}
	if len(cm.Data) == 0 {
		return parsedAWSAuth{auth: &facts.AWSAuthData{Data: map[string]string{}}}, nil
	}
	auth, err := facts.ParseAWSAuth(cm.Data, "the aws-auth ConfigMap in the cluster")
	return parsedAWSAuth{auth: auth, err: err}, nil
}
