package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live"
)

// liveOptions are the flags that reach AWS and the cluster: check --live, facts export, and later
// serve and audit.
type liveOptions struct {
	clusterName string
	region      string
	endpointURL string
	kubeconfig  string
	kubeContext string
}

func (o *liveOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.clusterName, "cluster-name", "", "EKS cluster name (as in `aws eks list-clusters`)")
	f.StringVar(&o.region, "region", "", "AWS region (default: AWS_REGION, the AWS profile, the kubeconfig's EKS endpoint, the instance metadata)")
	f.StringVar(&o.endpointURL, "aws-endpoint-url", "", "base URL for every AWS API (a VPC endpoint or a test fake); AWS_ENDPOINT_URL_<SERVICE> also work")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig for the cluster's aws-auth ConfigMap (default: KUBECONFIG, ~/.kube/config, in-cluster)")
	f.StringVar(&o.kubeContext, "context", "", "kubeconfig context")
}

// restConfig loads the kubeconfig (explicit, KUBECONFIG, ~/.kube/config, else in-cluster).
func (o *liveOptions) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.kubeContext})
	cfg, err := cc.ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, errors.New("no kubeconfig: give --kubeconfig or set KUBECONFIG")
	}
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}

// kubeClient returns a client reading the cluster, or nil with the reason when there is no kubeconfig.
func (o *liveOptions) kubeClient() (client.Client, *rest.Config, error) {
	rc, err := o.restConfig()
	if err != nil {
		return nil, nil, err
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, nil, err
	}
	c, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("Kubernetes client for %s: %w", rc.Host, err)
	}
	return c, rc, nil
}

// provider builds the live provider for a CLI run. kube may be nil (aws-auth then comes from the
// input only). A missing region or cluster name, no credentials and an unknown cluster fail the run
// at once, with what to do; other AWS trouble leaves facts unknown and the checks that need them not
// evaluated, with the reason.
func (o *liveOptions) provider(ctx context.Context, cfg *config.Config, kube client.Reader, kubeServer string, stderr io.Writer) (*live.Provider, error) {
	p, awsCfg, err := o.newProvider(ctx, cfg, kube, kubeServer, stderr, nil)
	if err != nil {
		return nil, err
	}
	if _, err := awsCfg.Credentials.Retrieve(ctx); err != nil {
		p.Close()
		return nil, fmt.Errorf("no AWS credentials (set AWS_PROFILE or AWS_ACCESS_KEY_ID for a local run; in the cluster, EKS Pod Identity or IRSA for karpenter-guard's service account): %w", err)
	}
	if err := preflight(ctx, p); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// newProvider builds the live provider of every command from the flags and the GuardConfig's aws
// section, with metrics m (nil: none), and returns the AWS configuration it uses.
func (o *liveOptions) newProvider(ctx context.Context, cfg *config.Config, kube client.Reader, kubeServer string, stderr io.Writer, m *live.Metrics) (*live.Provider, aws.Config, error) {
	if o.clusterName == "" {
		return nil, aws.Config{}, errors.New("live facts need --cluster-name (the EKS cluster's name, as in `aws eks list-clusters`)")
	}
	if w := live.EndpointWarning(); w != "" {
		fmt.Fprintln(stderr, "warning:", w)
	}
	awsCfg, err := live.LoadAWSConfig(ctx, live.AWSOptions{Region: o.region, EndpointURL: o.endpointURL, KubeServer: kubeServer, Budget: cfg.AWS.Timeout.Duration})
	if err != nil {
		return nil, aws.Config{}, err
	}
	p, err := live.New(live.Options{
		ClusterName: o.clusterName, Region: awsCfg.Region, Clients: live.NewClients(awsCfg, m), Kube: kube,
		Budget: cfg.AWS.Timeout.Duration, Metrics: m,
		Cache: cache.Options{TTL: cfg.AWS.CacheTTL.Duration, NegativeTTL: cfg.AWS.NegativeCacheTTL.Duration},
	})
	return p, awsCfg, err
}

// preflight fails fast on what no check can survive: credentials that do not work and a cluster that
// does not exist.
func preflight(ctx context.Context, p *live.Provider) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := p.Identity(ctx); err != nil {
		var ce *live.CallError
		if errors.As(err, &ce) && ce.Outcome == live.OutcomeCredentials {
			return fmt.Errorf("%s: %v", ce.Reason(), ce.Err)
		}
	}
	if _, err := p.Cluster(ctx); err != nil {
		var nf *live.ClusterNotFoundError
		if errors.As(err, &nf) {
			return nf
		}
	}
	return nil
}
