// Package live is the facts provider that asks AWS (EKS, IAM, STS, EC2, SSM, KMS and Service Quotas
// through aws-sdk-go-v2) and the Kubernetes API (the kube-system/aws-auth ConfigMap, the
// ServiceAccounts of Karpenter's controller and aws-node) at admission speed: every answer is cached
// with positive and negative TTLs, one call is in flight per question, an expired answer is served
// when its refresh fails or is late (and the evaluation's notes say so), and a question that cannot be
// answered in time comes back as an unknown fact with the reason, for aws.onError to decide upstream.
//
// Deadlines: no caller waits for one question longer than aws.timeout (Options.Budget), nor past its
// context's deadline. The call itself may go on, detached, until twice the budget, so that a question
// first asked late in one review is answered from the cache in the next; nothing is fixed at seconds
// independent of the budget. The provider asks ahead (facts.AsksAhead): the engine runs the rules on
// what is in the cache (facts.AtHandOnly), where a question not cached starts its fetch and the run
// goes on, then runs again once the answers are in, several fetched at a time, so that a cold review
// costs about one round trip per level of dependent questions (cluster, then its access entries; an
// alias's parameter, then its image) rather than one per question; a warm review runs once, from the
// cache.
//
// An endpoint that does not serve an API (an emulator, a partition without EKS access entries)
// answers "not available here": a lasting reason, cached like a "does not exist" answer, never
// "try again".
//
// It gives the same answers as the snapshot provider for the same world: selector terms become EC2
// filters with the semantics of facts.MatchImage and friends, and a test runs every fixture through
// both (TestAnswersMatchSnapshot).
//
// Provider composes one provider per concept, each with its own typed caches, one per kind of answer,
// tuned by Options.Cache (its TTLs, and MaxEntries for each cache): eks (the cluster, its access
// entries and Pod Identity associations), iam (roles, instance profiles, the policy simulator's
// answers), ec2 (images, subnets and their route tables, security groups, the account's EBS
// encryption by default), ssm (parameters), kms (the keys EBS volumes are encrypted with),
// servicequotas (applied quota values), capacityreservation (the region's active reservations),
// instancetype (the region's instance types and their zones, kept long and refreshed in the
// background), awsauth (the ConfigMap) and serviceaccount (the ServiceAccounts of Karpenter's
// controller and aws-node, whose IRSA annotation or Pod Identity association names the role they act
// as). Answers of one kind never evict another's.
// The concept providers share the lookup step, the wording of failed calls and the metrics of
// package awscall.
package live

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awsauth"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/facts/live/capacityreservation"
	"github.com/karpenter-guard/karpenter-guard/facts/live/ec2"
	"github.com/karpenter-guard/karpenter-guard/facts/live/eks"
	"github.com/karpenter-guard/karpenter-guard/facts/live/iam"
	"github.com/karpenter-guard/karpenter-guard/facts/live/instancetype"
	"github.com/karpenter-guard/karpenter-guard/facts/live/kms"
	"github.com/karpenter-guard/karpenter-guard/facts/live/serviceaccount"
	"github.com/karpenter-guard/karpenter-guard/facts/live/servicequotas"
	"github.com/karpenter-guard/karpenter-guard/facts/live/ssm"
)

// Options configure a Provider.
type Options struct {
	// ClusterName is the EKS cluster's name (required).
	ClusterName string
	// Region is the region of the clients, reported as cluster.region.
	Region string
	// Clients are the AWS clients (NewClients).
	Clients Clients
	// Kube reads the aws-auth ConfigMap: the manager's cache-backed client in serve (watching only
	// that ConfigMap), a direct client in the CLI. Nil: aws-auth is unknown.
	Kube client.Reader
	// ServiceAccounts reads the ServiceAccounts of Karpenter's controller and aws-node, one Get each
	// per TTL. It must not be a watch cache: RBAC grants get on those two alone, by name. Nil: Kube.
	ServiceAccounts client.Reader
	// Karpenter is the GuardConfig's karpenter section: the controller's ServiceAccount (default
	// kube-system/karpenter) and the role it names outright, if any.
	Karpenter config.Karpenter
	// Budget is aws.timeout: the longest any caller waits for one question (and the STS identity
	// check), named in the reason of an answer that came too late. A call may go on detached for
	// another budget to warm the cache (Cache.FetchTimeout defaults to twice the budget).
	Budget time.Duration
	// Cache tunes every concept provider's caches (TTL and NegativeTTL from aws.cacheTTL and
	// aws.negativeCacheTTL). FetchTimeout and MaxWait default from Budget.
	Cache cache.Options
	// Metrics, when set, count requests and cache lookups.
	Metrics *Metrics
}

// AWSAuthTTL is how long the provider keeps what it read of kube-system/aws-auth (see awsauth.TTL).
const AWSAuthTTL = awsauth.TTL

// Provider implements facts.Provider by delegating each question to the provider of its concept.
// Close it to stop fetches in flight.
type Provider struct {
	opts    Options
	eks     *eks.Provider
	iam     *iam.Provider
	ec2     *ec2.Provider
	ssm     *ssm.Provider
	awsAuth *awsauth.Provider

	serviceAccounts *serviceaccount.Provider

	kms                  *kms.Provider
	serviceQuotas        *servicequotas.Provider
	capacityReservations *capacityreservation.Provider
	instanceTypes        *instancetype.Provider
}

var (
	_ facts.Provider   = (*Provider)(nil)
	_ facts.AheadAsker = (*Provider)(nil)
)

// New returns a provider. It makes no call: the first question does.
func New(opts Options) (*Provider, error) {
	if opts.ClusterName == "" {
		return nil, errors.New("no EKS cluster name: pass --cluster-name (the name in `aws eks list-clusters`)")
	}
	if opts.Clients.EKS == nil || opts.Clients.IAM == nil || opts.Clients.EC2 == nil || opts.Clients.SSM == nil || opts.Clients.STS == nil ||
		opts.Clients.KMS == nil || opts.Clients.ServiceQuotas == nil {
		return nil, errors.New("live facts need every AWS client (EKS, IAM, STS, EC2, SSM, KMS, Service Quotas)")
	}
	if opts.Budget > 0 {
		if opts.Cache.MaxWait <= 0 {
			opts.Cache.MaxWait = opts.Budget // per call: nobody waits longer for one answer
		}
		if opts.Cache.FetchTimeout <= 0 {
			// A fetch may outlive the caller that started it by one budget, to warm the cache for
			// the next review (retries included: NewRetryer backs off a quarter budget at most).
			opts.Cache.FetchTimeout = 2 * opts.Budget
		}
	}
	if opts.Metrics == nil {
		opts.Metrics, _ = NewMetrics(nil)
	}
	caller := awscall.Caller{Budget: opts.Budget, Metrics: opts.Metrics}
	saReader := opts.ServiceAccounts
	if saReader == nil {
		saReader = opts.Kube
	}
	return &Provider{
		opts:    opts,
		eks:     eks.NewProvider(opts.Clients.EKS, opts.ClusterName, opts.Region, caller, opts.Cache),
		iam:     iam.NewProvider(opts.Clients.IAM, caller, opts.Cache),
		ec2:     ec2.NewProvider(opts.Clients.EC2, caller, opts.Cache),
		ssm:     ssm.NewProvider(opts.Clients.SSM, caller, opts.Cache),
		awsAuth: awsauth.NewProvider(opts.Kube, opts.Metrics, opts.Cache),

		serviceAccounts: serviceaccount.NewProvider(saReader, opts.Metrics, opts.Cache),

		kms:                  kms.NewProvider(opts.Clients.KMS, caller, opts.Cache),
		serviceQuotas:        servicequotas.NewProvider(opts.Clients.ServiceQuotas, caller, opts.Cache),
		capacityReservations: capacityreservation.NewProvider(opts.Clients.EC2, opts.Region, caller, opts.Cache),
		instanceTypes:        instancetype.NewProvider(opts.Clients.EC2, opts.Region, caller, instancetype.Options{Cache: opts.Cache}),
	}, nil
}

// Close stops the fetches in flight of every concept provider and waits for them.
func (p *Provider) Close() {
	p.eks.Close()
	p.iam.Close()
	p.ec2.Close()
	p.ssm.Close()
	p.awsAuth.Close()
	p.serviceAccounts.Close()
	p.kms.Close()
	p.serviceQuotas.Close()
	p.capacityReservations.Close()
	p.instanceTypes.Close()
}

// AskAhead implements facts.AheadAsker: every answer may cost an AWS round trip, so the engine runs
// the rules on what is cached first. In a facts.AtHandOnly context every question is answered from the
// cache, or starts its fetch and is not at hand; the engine runs again once the answers are in.
func (p *Provider) AskAhead() bool { return true }

// Known implements facts.Provider. Cluster facts, access entries, the EBS defaults, the count of Pod
// Identity associations and the roles of Karpenter's controller and aws-node are asked for. Whether the
// facts asked per item (roles, images, simulations, …) can be had is learnt from a probe: a question
// about something that does not exist, which AWS answers with "not found" when the permission is
// there and "access denied" when it is not (once per TTL, like every answer). The engine then reports
// the rules that need a fact AWS denies as not evaluated before running them, exactly as for a
// snapshot without that section.
func (p *Provider) Known(ctx context.Context, f facts.Fact) error {
	switch f {
	case facts.ClusterAuthenticationMode, facts.ClusterVersion, facts.ClusterVPCID, facts.AccessEntries, facts.ClusterPodIdentityAssociations,
		facts.ClusterEndpointAccess, facts.ClusterControlPlaneNetwork, facts.ClusterIPFamily:
		return p.eks.Known(ctx, f)
	case facts.Roles, facts.InstanceProfiles:
		return p.iam.Known(ctx, f)
	case facts.Simulations:
		return p.simulationsKnown(ctx)
	case facts.KarpenterController:
		_, err := p.KarpenterController(ctx)
		return err
	case facts.VPCCNI:
		_, err := p.VPCCNI(ctx)
		return err
	case facts.Images, facts.Subnets, facts.SecurityGroups, facts.EBSDefaults:
		return p.ec2.Known(ctx, f)
	case facts.SSMParameters:
		return p.ssm.Known(ctx, f)
	case facts.AWSAuth:
		_, err := p.awsAuth.AWSAuth(ctx)
		return err
	case facts.ClusterNodeClasses:
		return facts.Unknown(f, "the live provider does not list EC2NodeClasses")
	case facts.ClusterNodePools:
		return facts.Unknown(f, "the live provider does not list NodePools")
	case facts.VPC, facts.NATGateways, facts.VPCEndpoints:
		return p.networkKnown(ctx, f)
	case facts.KMSKeys, facts.ServiceQuotas, facts.CapacityReservations, facts.InstanceTypes:
		return p.capacityKnown(ctx, f)
	}
	return nil
}

// Cluster implements facts.Provider with EKS DescribeCluster. The account and partition come from the
// cluster's ARN: the account whose images `self` means.
func (p *Provider) Cluster(ctx context.Context) (*facts.Cluster, error) { return p.eks.Cluster(ctx) }

// AccessEntry implements facts.Provider: the list of entries, then DescribeAccessEntry of the role's
// only (none in mode CONFIG_MAP, where EKS reads no entries).
func (p *Provider) AccessEntry(ctx context.Context, role *facts.Role) (*facts.AccessEntry, error) {
	return p.eks.AccessEntry(ctx, role)
}

// AWSAuth implements facts.Provider from the Kubernetes API, parsed once per read of the ConfigMap.
func (p *Provider) AWSAuth(ctx context.Context) (*facts.AWSAuthData, error) {
	return p.awsAuth.AWSAuth(ctx)
}

// Role implements facts.Provider with IAM GetRole (NoSuchEntity: nil).
func (p *Provider) Role(ctx context.Context, name string) (*facts.Role, error) {
	return p.iam.Role(ctx, name)
}

// InstanceProfile implements facts.Provider with IAM GetInstanceProfile (NoSuchEntity: nil).
func (p *Provider) InstanceProfile(ctx context.Context, name string) (*facts.InstanceProfile, error) {
	return p.iam.InstanceProfile(ctx, name)
}

// Images implements facts.Provider with EC2 DescribeImages. An ssmParameter term is resolved first,
// with SSM GetParameter (facts.ResolveImageTerm): the image is EC2's, the parameter SSM's.
func (p *Provider) Images(ctx context.Context, t facts.ImageTerm) ([]facts.Image, error) {
	t, ok, err := facts.ResolveImageTerm(ctx, p, t)
	if err != nil || !ok {
		return nil, err
	}
	return p.ec2.Images(ctx, t)
}

// SSMParameter implements facts.Provider with SSM GetParameter (ParameterNotFound: absent).
func (p *Provider) SSMParameter(ctx context.Context, name string) (string, bool, error) {
	return p.ssm.Parameter(ctx, name)
}

// Subnets implements facts.Provider with EC2 DescribeSubnets; whether each is public comes from the
// route tables of its VPC (DescribeRouteTables).
func (p *Provider) Subnets(ctx context.Context, t facts.SelectorTerm) ([]facts.Subnet, error) {
	return p.ec2.Subnets(ctx, t)
}

// SecurityGroups implements facts.Provider with EC2 DescribeSecurityGroups.
func (p *Provider) SecurityGroups(ctx context.Context, t facts.SelectorTerm) ([]facts.SecurityGroup, error) {
	return p.ec2.SecurityGroups(ctx, t)
}

// EBSDefaults implements facts.Provider with EC2 GetEbsEncryptionByDefault and GetEbsDefaultKmsKeyId,
// in the clients' region (the cluster's).
func (p *Provider) EBSDefaults(ctx context.Context) (*facts.EBSEncryption, error) {
	return p.ec2.EBSDefaults(ctx)
}

// Identity returns the ARN AWS knows the caller as (STS GetCallerIdentity): the start-up check that
// credentials work, and the principal to grant missing permissions to. It waits at most the budget.
func (p *Provider) Identity(ctx context.Context) (string, error) {
	if p.opts.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.opts.Budget)
		defer cancel()
	}
	out, err := p.opts.Clients.STS.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", awscall.NewCallError("sts:GetCallerIdentity", err, p.opts.Budget)
	}
	return aws.ToString(out.Arn), nil
}
