package facts

import "context"

// WithAWSAuth returns p with its aws-auth answer replaced by an aws-auth ConfigMap's data (nil: the
// ConfigMap does not exist). A malformed one makes aws-auth unknown, as EKS ignores it whole. The CLI
// uses it when the manifests it checks carry aws-auth: they are what will be applied, so they win over
// what the cluster holds now.
func WithAWSAuth(p Provider, data map[string]string, source string) Provider {
	o := &awsAuthOverride{Provider: p}
	if len(data) > 0 {
		o.auth, o.err = ParseAWSAuth(data, source)
	}
	return o
}

type awsAuthOverride struct {
	Provider
	auth *AWSAuthData
	err  error
}

func (o *awsAuthOverride) Known(ctx context.Context, f Fact) error {
	if f == AWSAuth {
		return o.err
	}
	return o.Provider.Known(ctx, f)
}

func (o *awsAuthOverride) AWSAuth(context.Context) (*AWSAuthData, error) { return o.auth, o.err }
