package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
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
	// deadline bounds a one-shot run's questions in all (addDeadlineFlag).
	deadline time.Duration
	// inputAccounts, when set, answers ServiceAccount reads of a run without cluster access.
	inputAccounts *inputAccounts
}

// defaultDeadline is --deadline's default: a slow or unreachable AWS costs a CI job half a minute at
// most, while a healthy account answers a large run's questions well within it.
const defaultDeadline = 30 * time.Second

func (o *liveOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.clusterName, "cluster-name", "", "EKS cluster name (aws eks list-clusters lists them)")
	f.StringVar(&o.region, "region", "", "AWS region (default: AWS_REGION, the AWS profile, the kubeconfig's EKS endpoint, the instance metadata)")
	f.StringVar(&o.endpointURL, "aws-endpoint-url", "", "base URL for every AWS API (a VPC endpoint or a test fake); AWS_ENDPOINT_URL_<SERVICE> also work")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig for the cluster's aws-auth ConfigMap (default: KUBECONFIG, ~/.kube/config, in-cluster)")
	f.StringVar(&o.kubeContext, "context", "", "kubeconfig context")
}

// addDeadlineFlag adds --deadline, for the commands that ask AWS once and end (check --live, facts
// export); serve and audit run on, each review or audit bounded by aws.timeout.
func (o *liveOptions) addDeadlineFlag(f *pflag.FlagSet) {
	f.DurationVar(&o.deadline, "deadline", defaultDeadline, "with live facts, the longest the run waits for AWS and the cluster in all (0: no limit); "+
		"each AWS call waits at most aws.timeout, and what has no answer by then is reported unknown, with the reason")
}

// withDeadline returns ctx bounded by --deadline, cancelled with a cause that the reasons of the questions
// it cuts short name ("the run's --deadline of 30s passed").
func (o *liveOptions) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.deadline <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, o.deadline, fmt.Errorf("the run's --deadline of %v passed", o.deadline))
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

// withInputAccounts makes a live run without cluster access read the ServiceAccounts of the input
// (filled with inputAccounts.set once it is read), and returns them.
func (o *liveOptions) withInputAccounts() *inputAccounts {
	o.inputAccounts = &inputAccounts{}
	return o.inputAccounts
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
	// ServiceAccounts are read with direct Gets, never through serve's watch cache: RBAC grants get on
	// two of them, by name, and the cache would watch every one.
	// Without a direct client they stay unknown, with the reason.
	var serviceAccounts client.Reader
	switch {
	case kube != nil:
		if c, _, err := o.kubeClient(); err == nil {
			serviceAccounts = c
		}
	case o.inputAccounts != nil:
		serviceAccounts = o.inputAccounts // no cluster: the input's ServiceAccounts, if any
	}
	p, err := live.New(live.Options{
		ClusterName: o.clusterName, Region: awsCfg.Region, Clients: live.NewClients(awsCfg, m, live.NewPacer(cfg.AWS, m)), Kube: kube,
		ServiceAccounts: serviceAccounts, Karpenter: cfg.Karpenter,
		Budget: cfg.AWS.Timeout.Duration, Metrics: m,
		Cache: cache.Options{TTL: cfg.AWS.CacheTTL.Duration, NegativeTTL: cfg.AWS.NegativeCacheTTL.Duration},
	})
	return p, awsCfg, err
}

// preflight fails fast on what no check can survive: credentials that do not work and a cluster that
// does not exist. The two questions are asked together, each within aws.timeout; the cluster's answer
// (or failure) stays in the provider's cache for the checks.
func preflight(ctx context.Context, p *live.Provider) error {
	var idErr, clusterErr error
	var wg sync.WaitGroup
	wg.Go(func() { _, idErr = p.Identity(ctx) })
	wg.Go(func() { _, clusterErr = p.Cluster(ctx) })
	wg.Wait()
	var ce *live.CallError
	if errors.As(idErr, &ce) && ce.Outcome == live.OutcomeCredentials {
		return fmt.Errorf("%s: %v", ce.Reason(), ce.Err)
	}
	var nf *live.ClusterNotFoundError
	if errors.As(clusterErr, &nf) {
		return nf
	}
	return nil
}
