package facts

import "context"

// WithInputAWSAuth returns p with an aws-auth ConfigMap of the CLI's input standing in for aws-auth when
// p does not know it, as Snapshot.WithAWSAuth does for a snapshot: the cluster's own aws-auth, when
// known, wins. data nil means the input's ConfigMap has no data; malformed makes aws-auth unknown (EKS
// ignores a malformed ConfigMap whole, and aws-auth-malformed reports it).
func WithInputAWSAuth(p Provider, data map[string]string, malformed bool) Provider {
	o := &inputAWSAuth{Provider: p}
	switch {
	case malformed:
		o.err = Unknown(AWSAuth, "the aws-auth ConfigMap in the input is malformed")
	case len(data) > 0:
		o.auth, o.err = ParseAWSAuth(data, "the aws-auth ConfigMap in the input")
	}
	return o
}

type inputAWSAuth struct {
	Provider
	auth *AWSAuthData
	err  error
}

// Known implements Provider.
func (o *inputAWSAuth) Known(ctx context.Context, f Fact) error {
	if f == AWSAuth && o.Provider.Known(ctx, f) != nil {
		return o.err
	}
	return o.Provider.Known(ctx, f)
}

// AWSAuth implements Provider.
func (o *inputAWSAuth) AWSAuth(ctx context.Context) (*AWSAuthData, error) {
	if auth, err := o.Provider.AWSAuth(ctx); err == nil {
		return auth, nil
	}
	return o.auth, o.err
}

// WithClusterNodeClasses returns p knowing the cluster's EC2NodeClasses as known reports: the webhook
// and the audit give the cluster's objects as the evaluation's input, and known says whether that
// input is complete (the watch caches have synced).
func WithClusterNodeClasses(p Provider, known func(context.Context) error) Provider {
	return &clusterNodeClasses{Provider: p, known: known}
}

type clusterNodeClasses struct {
	Provider
	known func(context.Context) error
}

// Known implements Provider.
func (c *clusterNodeClasses) Known(ctx context.Context, f Fact) error {
	if f == ClusterNodeClasses {
		return c.known(ctx)
	}
	return c.Provider.Known(ctx, f)
}
