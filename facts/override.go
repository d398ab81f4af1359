package facts

import "context"

// WithInputAWSAuth returns p with an aws-auth ConfigMap of the CLI's input standing in for aws-auth when
// p does not know it: the cluster's own aws-auth, when known, wins. data nil means the input's
// ConfigMap has no data. The input's aws-auth is what EKS would keep of it (ParseAWSAuth): entries EKS
// drops are missing from it, the others count, as they would in the cluster. unreadable means the
// input cannot be what EKS reads (a data value is not a string, so the API server rejects the
// ConfigMap and the cluster keeps the one it has): aws-auth is unknown then, and aws-auth-malformed
// reports why.
func WithInputAWSAuth(p Provider, data map[string]string, unreadable bool) Provider {
	o := &awsAuthFrom{Provider: p}
	switch {
	case unreadable:
		o.err = Unknown(AWSAuth, "the aws-auth ConfigMap in the input has a data value that is not a string, which the API server rejects")
	case len(data) > 0:
		o.auth = ParseAWSAuth(data)
	}
	return o
}

// WithClusterAWSAuth returns p answering aws-auth with data, the cluster's ConfigMap as just read: the
// audit reads it to judge it, and every rule that asks then gets that same copy, read as EKS reads it,
// instead of p reading it again.
func WithClusterAWSAuth(p Provider, data map[string]string) Provider {
	o := &awsAuthFrom{Provider: p, wins: true, auth: &AWSAuthData{Data: map[string]string{}}}
	if len(data) > 0 {
		o.auth = ParseAWSAuth(data)
	}
	return o
}

// awsAuthFrom answers aws-auth from a ConfigMap given to it: always when wins, else only when the
// provider does not know aws-auth.
type awsAuthFrom struct {
	Provider
	wins bool
	auth *AWSAuthData
	err  error
}

// AskAhead implements AheadAsker for the provider it wraps.
func (o *awsAuthFrom) AskAhead() bool { return AsksAhead(o.Provider) }

// Known implements Provider.
func (o *awsAuthFrom) Known(ctx context.Context, f Fact) error {
	if f != AWSAuth {
		return o.Provider.Known(ctx, f)
	}
	if !o.wins && o.Provider.Known(ctx, f) == nil {
		return nil
	}
	return o.err
}

// AWSAuth implements Provider.
func (o *awsAuthFrom) AWSAuth(ctx context.Context) (*AWSAuthData, error) {
	if !o.wins {
		if auth, err := o.Provider.AWSAuth(ctx); err == nil {
			return auth, nil
		}
	}
	return o.auth, o.err
}

// WithClusterNodeClasses returns p knowing the cluster's EC2NodeClasses and NodePools as known
// reports: the webhook and the audit give the cluster's objects as the evaluation's input, and known
// says whether that input is complete (the watch caches have synced).
func WithClusterNodeClasses(p Provider, known func(context.Context) error) Provider {
	return &clusterNodeClasses{Provider: p, known: known}
}

type clusterNodeClasses struct {
	Provider
	known func(context.Context) error
}

// AskAhead implements AheadAsker for the provider it wraps.
func (c *clusterNodeClasses) AskAhead() bool { return AsksAhead(c.Provider) }

// Known implements Provider.
func (c *clusterNodeClasses) Known(ctx context.Context, f Fact) error {
	if f == ClusterNodeClasses || f == ClusterNodePools {
		return c.known(ctx)
	}
	return c.Provider.Known(ctx, f)
}
