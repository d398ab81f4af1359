package live

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	awsec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	awskms "github.com/aws/aws-sdk-go-v2/service/kms"
	awsservicequotas "github.com/aws/aws-sdk-go-v2/service/servicequotas"
	awsssm "github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/facts/live/capacityreservation"
	"github.com/karpenter-guard/karpenter-guard/facts/live/ec2"
	"github.com/karpenter-guard/karpenter-guard/facts/live/eks"
	"github.com/karpenter-guard/karpenter-guard/facts/live/iam"
	"github.com/karpenter-guard/karpenter-guard/facts/live/instancetype"
	"github.com/karpenter-guard/karpenter-guard/facts/live/kms"
	"github.com/karpenter-guard/karpenter-guard/facts/live/servicequotas"
	"github.com/karpenter-guard/karpenter-guard/facts/live/ssm"
)

// AWSOptions say where and how to reach AWS.
type AWSOptions struct {
	// Region, when set, wins over the environment, the shared config, the cluster and the instance
	// metadata service.
	Region string
	// EndpointURL, when set, is the base endpoint of every client (a VPC endpoint, a test fake). The SDK
	// also reads AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE>.
	EndpointURL string
	// KubeServer is the cluster's API server URL, from the kubeconfig: an EKS endpoint names its region
	// (https://ABC.gr7.eu-west-1.eks.amazonaws.com).
	KubeServer string
	// Budget is the time budget of one admission request (aws.timeout): retries are tuned to fit in it.
	Budget time.Duration
}

// LoadAWSConfig loads the default credential chain (environment, shared profile, web identity for IRSA,
// the container credentials endpoint of EKS Pod Identity, the instance role) and resolves the region
// from, in order: opts.Region, AWS_REGION/AWS_DEFAULT_REGION and the shared config, the kubeconfig's
// EKS endpoint, the instance metadata service. The retryer is tuned for an admission deadline.
func LoadAWSConfig(ctx context.Context, opts AWSOptions) (aws.Config, error) {
	loadOpts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRetryer(NewRetryer(opts.Budget))}
	if opts.Region != "" {
		loadOpts = append(loadOpts, awsconfig.WithRegion(opts.Region))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration (environment, ~/.aws/config): %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = RegionFromEKSEndpoint(opts.KubeServer)
	}
	if cfg.Region == "" && !strings.EqualFold(os.Getenv("AWS_EC2_METADATA_DISABLED"), "true") {
		ictx, cancel := context.WithTimeout(ctx, time.Second) // off EC2 there is no answer at all
		if out, err := imds.NewFromConfig(cfg).GetRegion(ictx, &imds.GetRegionInput{}); err == nil {
			cfg.Region = out.Region
		}
		cancel()
	}
	if cfg.Region == "" {
		return aws.Config{}, errors.New("no AWS region: pass --region, set AWS_REGION, or use a kubeconfig whose server is the EKS endpoint")
	}
	if opts.EndpointURL != "" {
		if u, err := url.Parse(opts.EndpointURL); err != nil || u.Scheme == "" || u.Host == "" {
			return aws.Config{}, fmt.Errorf("AWS endpoint URL %q: expected a URL such as https://vpce-0123.eks.us-east-1.vpce.amazonaws.com", opts.EndpointURL)
		}
		cfg.BaseEndpoint = aws.String(opts.EndpointURL)
	}
	return cfg, nil
}

// EndpointWarning explains a trap of the SDK's endpoint settings (docs/design.md §6), or returns "".
func EndpointWarning() string {
	if !strings.EqualFold(os.Getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"), "true") {
		return ""
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_ENDPOINT_URL") {
			name, _, _ := strings.Cut(kv, "=")
			return fmt.Sprintf("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true makes the SDK ignore %s: pass --aws-endpoint-url instead", name)
		}
	}
	return ""
}

var eksEndpointRE = regexp.MustCompile(`^[A-Za-z0-9]+\.[a-z0-9]+\.([a-z]{2}(-[a-z]+)+-\d+)\.eks\.amazonaws\.com(\.cn)?$`)

// RegionFromEKSEndpoint returns the region of an EKS API server URL, or "".
func RegionFromEKSEndpoint(server string) string {
	u, err := url.Parse(server)
	if err != nil {
		return ""
	}
	if m := eksEndpointRE.FindStringSubmatch(strings.ToLower(u.Hostname())); m != nil {
		return m[1]
	}
	return ""
}

// NewRetryer returns the SDK's standard retryer tuned for an admission request with the given budget:
// three attempts and back-offs of at most a quarter of the budget, where the SDK's defaults back off
// for up to 20 s. The caller's deadline still ends any wait.
func NewRetryer(budget time.Duration) func() aws.Retryer {
	if budget <= 0 {
		budget = 2 * time.Second
	}
	return func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.MaxBackoff = budget / 4
		})
	}
}

// Pacer keeps every client polite to AWS: a rate limit per service, a backoff shared by every call
// of a service after AWS throttles one, and an audit's call budget (see awscall.Pacer).
type Pacer = awscall.Pacer

// NewPacer returns the pacer of the GuardConfig's aws section: aws.requestsPerSecond per service,
// each with a burst of config.BurstSeconds of its rate, and metrics m (nil: none).
func NewPacer(c config.AWS, m *Metrics) *Pacer {
	limits := map[string]awscall.Limit{}
	for svc, r := range c.RequestsPerSecond.ByService() {
		limits[svc] = awscall.Limit{PerSecond: r, Burst: max(1, int(math.Ceil(r*config.BurstSeconds)))}
	}
	return awscall.NewPacer(awscall.PacerOptions{Limits: limits, Metrics: m})
}

// Clients are the AWS API clients the live provider calls: the SDK's own clients, or anything with
// their methods.
type Clients struct {
	EKS EKSAPI
	IAM IAMAPI
	STS STSAPI
	EC2 EC2API
	SSM SSMAPI
	KMS KMSAPI
	// ServiceQuotas is named as its IAM service prefix is (servicequotas:GetServiceQuota).
	ServiceQuotas ServiceQuotasAPI
}

// NewClients builds every client from cfg, with request bodies made safe (SafeRequestBodies), every
// request attempt paced by pacer (nil: not paced, as in tests that count every call), metrics on
// every request sent and the endpoint override of --aws-endpoint-url (cfg.BaseEndpoint) set on each
// client: the SDK lets AWS_ENDPOINT_URL_<SERVICE> win over cfg's, and the flag must win over both.
func NewClients(cfg aws.Config, m *Metrics, pacer *Pacer) Clients {
	cfg.HTTPClient = SafeRequestBodies(cfg.HTTPClient)
	cfg.APIOptions = slices.Clone(cfg.APIOptions) // every client copies them
	if pacer != nil {
		cfg.APIOptions = append(cfg.APIOptions, pacer.Install) // before the metrics: what it refuses is never sent
	}
	if m != nil {
		cfg.APIOptions = append(cfg.APIOptions, m.Instrument)
	}
	base := cfg.BaseEndpoint
	return Clients{
		EKS: awseks.NewFromConfig(cfg, func(o *awseks.Options) { override(&o.BaseEndpoint, base) }),
		IAM: awsiam.NewFromConfig(cfg, func(o *awsiam.Options) { override(&o.BaseEndpoint, base) }),
		STS: sts.NewFromConfig(cfg, func(o *sts.Options) { override(&o.BaseEndpoint, base) }),
		EC2: awsec2.NewFromConfig(cfg, func(o *awsec2.Options) { override(&o.BaseEndpoint, base) }),
		SSM: awsssm.NewFromConfig(cfg, func(o *awsssm.Options) { override(&o.BaseEndpoint, base) }),
		KMS: awskms.NewFromConfig(cfg, func(o *awskms.Options) { override(&o.BaseEndpoint, base) }),
		ServiceQuotas: awsservicequotas.NewFromConfig(cfg, func(o *awsservicequotas.Options) {
			override(&o.BaseEndpoint, base)
		}),
	}
}

// override sets a client's endpoint to base when one was given; without, it keeps what the SDK
// resolved (AWS_ENDPOINT_URL_<SERVICE>, the shared config), which a nil would erase.
func override(endpoint **string, base *string) {
	if base != nil {
		*endpoint = base
	}
}

// EKSAPI is what the provider calls of EKS: what its eks concept provider calls (eks.API).
type EKSAPI = eks.API

// IAMAPI is what the provider calls of IAM: what its iam concept provider calls (iam.API).
type IAMAPI = iam.API

// STSAPI is what the provider calls of STS.
type STSAPI interface {
	GetCallerIdentity(context.Context, *sts.GetCallerIdentityInput, ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error)
}

// EC2API is what the provider calls of EC2: what its ec2, capacityreservation and instancetype
// concept providers call.
type EC2API interface {
	ec2.API
	capacityreservation.API
	instancetype.API
}

// SSMAPI is what the provider calls of SSM: what its ssm concept provider calls (ssm.API).
type SSMAPI = ssm.API

// KMSAPI is what the provider calls of KMS: what its kms concept provider calls (kms.API).
type KMSAPI = kms.API

// ServiceQuotasAPI is what the provider calls of Service Quotas: what its servicequotas concept
// provider calls (servicequotas.API).
type ServiceQuotasAPI = servicequotas.API
