// Package live is the facts provider that asks AWS (EKS, IAM, STS, EC2, SSM through aws-sdk-go-v2) and
// the Kubernetes API (the kube-system/aws-auth ConfigMap) at admission speed: every answer is cached
// with positive and negative TTLs, one call is in flight per question, an expired answer is served
// when its refresh fails or is late (and the evaluation's notes say so), and a question that cannot be
// answered in time comes back as an unknown fact with the reason, for aws.onError to decide upstream.
//
// Deadlines: no caller waits for one question longer than aws.timeout (Options.Budget), nor past its
// context's deadline. The call itself may go on, detached, until twice the budget, so that a question
// first asked late in one review is answered from the cache in the next; nothing is fixed at seconds
// independent of the budget. The provider asks ahead (facts.AsksAhead): when an evaluation's answers
// are not all in the cache (facts.AtHandOnly tells), the engine asks it every question of the
// evaluation before the rules run, several at a time, so that a cold review costs about one round trip
// per level of dependent questions (cluster, then its access entries; an alias's parameter, then its
// image) rather than one per question; a warm review runs once, from the cache.
//
// An endpoint that does not serve an API (an emulator, a partition without EKS access entries)
// answers "not available here": a lasting reason, cached like a "does not exist" answer, never
// "try again".
//
// It gives the same answers as the snapshot provider for the same world: selector terms become EC2
// filters with the semantics of facts.MatchImage and friends, and a test runs every fixture through
// both (TestAnswersMatchSnapshot).
package live

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
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
	// Budget is aws.timeout: the longest any caller waits for one question (and the STS identity
	// check), named in the reason of an answer that came too late. A call may go on detached for
	// another budget to warm the cache (Cache.FetchTimeout defaults to twice the budget).
	Budget time.Duration
	// Cache tunes the answer cache (TTL and NegativeTTL from aws.cacheTTL and aws.negativeCacheTTL).
	// FetchTimeout and MaxWait default from Budget.
	Cache cache.Options
	// Metrics, when set, count requests and cache lookups.
	Metrics *Metrics
}

// Provider implements facts.Provider. Close it to stop fetches in flight.
type Provider struct {
	opts   Options
	cache  *cache.Cache[any]
	probes map[facts.Fact]probe
}

var _ facts.Provider = (*Provider)(nil)

// New returns a provider. It makes no call: the first question does.
func New(opts Options) (*Provider, error) {
	if opts.ClusterName == "" {
		return nil, errors.New("no EKS cluster name: pass --cluster-name (the name in `aws eks list-clusters`)")
	}
	if opts.Clients.EKS == nil || opts.Clients.IAM == nil || opts.Clients.EC2 == nil || opts.Clients.SSM == nil || opts.Clients.STS == nil {
		return nil, errors.New("live facts need every AWS client (EKS, IAM, STS, EC2, SSM)")
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
	p := &Provider{opts: opts, cache: cache.New[any](opts.Cache)}
	p.probes = newProbes(opts.Clients)
	return p, nil
}

// Close stops the fetches in flight and waits for them.
func (p *Provider) Close() { p.cache.Close() }

// AskAhead implements facts.AheadAsker: every answer may cost an AWS round trip, so the engine asks
// an evaluation's questions ahead, several at a time, and the rules then meet cached answers. In a
// facts.AtHandOnly context every question is answered from the cache or not at all.
func (p *Provider) AskAhead() bool { return true }

// lookup answers one question through the cache: key identifies it, action is the IAM action of the
// call (for metrics and reasons), fact the fact it serves. A stale answer is noted in ctx.
func lookup[T any](ctx context.Context, p *Provider, fact facts.Fact, action, key string, fetch func(context.Context) (T, bool, error)) (T, error) {
	return lookupWithin(ctx, p, fact, action, key, 0, fetch)
}

// lookupWithin is lookup for an answer no older than maxAge (0: any unexpired answer). In a
// facts.AtHandOnly context it answers from the cache only, and asks nothing.
func lookupWithin[T any](ctx context.Context, p *Provider, fact facts.Fact, action, key string, maxAge time.Duration, fetch func(context.Context) (T, bool, error)) (T, error) {
	l, err := p.get(ctx, fact, action+" "+key, maxAge, func(fctx context.Context) (cache.Answer[any], error) {
		v, negative, err := fetch(fctx)
		var ce *CallError
		var nf *ClusterNotFoundError
		if errors.As(err, &ce) || errors.As(err, &nf) {
			return cache.Answer[any]{}, err // already worded
		}
		if err != nil {
			ce := &CallError{Action: action, Outcome: classify(err), Err: err}
			if ce.Outcome == OutcomeTimeout {
				ce.Budget = p.opts.Budget // the call ran out of its (detached) time: worded as a late answer
			}
			return cache.Answer[any]{}, ce
		}
		return cache.Answer[any]{Value: v, Negative: negative}, nil
	})
	if errors.Is(err, facts.ErrNotAtHand) {
		var zero T
		return zero, err
	}
	return answer[T](ctx, p, fact, action, key, l, err)
}

// get answers key through the cache, fetching it when needed; in a facts.AtHandOnly context it asks
// nothing, and a question without an answer at hand is facts.NotAtHand (an error wrapping
// facts.ErrNotAtHand, neither counted nor worded: the engine asks it ahead and runs again).
func (p *Provider) get(ctx context.Context, fact facts.Fact, key string, maxAge time.Duration, fetch cache.Fetch[any]) (cache.Lookup[any], error) {
	if !facts.OnlyAtHand(ctx) {
		return p.cache.GetWithin(ctx, key, maxAge, fetch)
	}
	l, ok, err := p.cache.Cached(key, maxAge)
	if !ok {
		return l, facts.NotAtHand(ctx, fact)
	}
	return l, err
}

// answer turns a cache lookup into lookup's answer: counted, an error worded as an unknown fact, a
// stale answer noted in ctx.
func answer[T any](ctx context.Context, p *Provider, fact facts.Fact, action, key string, l cache.Lookup[any], err error) (T, error) {
	p.opts.Metrics.lookup(string(fact), l.Result)
	var zero T
	if err != nil {
		return zero, unknown(fact, p.late(action, err))
	}
	if l.Result == cache.Stale {
		facts.Note(ctx, fmt.Sprintf("used a cached answer %s old for %s %s: %s", l.Age.Round(time.Second), action, key, reasonOf(p.late(action, l.RefreshErr))))
	}
	v, _ := l.Value.(T)
	return v, nil
}

// late words a cache.LateError as a CallError naming the budget, or what else ended the wait (the
// cause the caller's context was cancelled with, such as the CLI's --deadline).
func (p *Provider) late(action string, err error) error {
	if !errors.Is(err, cache.ErrLate) {
		return err
	}
	ce := &CallError{Action: action, Outcome: OutcomeTimeout, Budget: p.opts.Budget, Err: err}
	var le *cache.LateError
	if errors.As(err, &le) && le.Cause != nil && !errors.Is(le.Cause, context.DeadlineExceeded) && !errors.Is(le.Cause, context.Canceled) {
		ce.Cause = le.Cause
	}
	return ce
}

func reasonOf(err error) string {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Reason()
	}
	return err.Error()
}

// Known implements facts.Provider. Cluster facts and access entries are asked for. Whether the facts
// asked per item (roles, images, …) can be had is learnt from a probe: a question about something
// that does not exist, which AWS answers with "not found" when the permission is there and "access
// denied" when it is not (once per TTL, like every answer). The engine then reports the rules that
// need a fact AWS denies as not evaluated before running them, exactly as for a snapshot without
// that section.
func (p *Provider) Known(ctx context.Context, f facts.Fact) error {
	if probe, ok := p.probes[f]; ok {
		_, err := lookup(ctx, p, f, probe.action, "permission probe", func(ctx context.Context) (bool, bool, error) {
			err := probe.ask(ctx)
			if err == nil || classify(err) == OutcomeNotFound {
				return true, false, nil
			}
			return false, false, err
		})
		return err
	}
	switch f {
	case facts.ClusterAuthenticationMode, facts.ClusterVersion, facts.ClusterVPCID:
		c, err := p.Cluster(ctx)
		if err != nil {
			return unknown(f, err)
		}
		value := c.AuthenticationMode
		switch f {
		case facts.ClusterVersion:
			value = c.Version
		case facts.ClusterVPCID:
			value = c.VPCID
		}
		if value == "" {
			return facts.Unknown(f, "EKS DescribeCluster gave no value")
		}
	case facts.AccessEntries:
		c, err := p.Cluster(ctx)
		if err != nil {
			return unknown(f, err)
		}
		if c.AuthenticationMode == facts.ModeConfigMap {
			return nil
		}
		if _, err := p.accessEntryARNs(ctx, c.Name, 0); err != nil {
			return err
		}
	case facts.AWSAuth:
		_, err := p.AWSAuth(ctx)
		return err
	case facts.ClusterNodeClasses:
		return facts.Unknown(f, "the live provider does not list EC2NodeClasses")
	}
	return nil
}

// probeName names nothing that exists, inside the resources the shipped IAM policy scopes to.
const (
	probeName  = "karpenter-guard-permission-probe"
	probeParam = "/aws/service/karpenter-guard/permission-probe"
)

type probe struct {
	action string
	ask    func(context.Context) error
}

// newProbes returns the questions that tell whether a per-item fact can be had. Subnets need both the
// subnets and their route tables.
func newProbes(c Clients) map[facts.Fact]probe {
	none := func(name, value string) []ec2types.Filter { return []ec2types.Filter{filter(name, value)} }
	return map[facts.Fact]probe{
		facts.Roles: {"iam:GetRole", func(ctx context.Context) error {
			_, err := c.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(probeName)})
			return err
		}},
		facts.InstanceProfiles: {"iam:GetInstanceProfile", func(ctx context.Context) error {
			_, err := c.IAM.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(probeName)})
			return err
		}},
		facts.SSMParameters: {"ssm:GetParameter", func(ctx context.Context) error {
			_, err := c.SSM.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(probeParam)})
			return err
		}},
		facts.Images: {"ec2:DescribeImages", func(ctx context.Context) error {
			_, err := c.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"self"}, Filters: none("image-id", "ami-00000000000000000")})
			return err
		}},
		facts.Subnets: {"ec2:DescribeSubnets", func(ctx context.Context) error {
			if _, err := c.EC2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: none("subnet-id", "subnet-00000000000000000")}); err != nil {
				return err
			}
			_, err := c.EC2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: none("route-table-id", "rtb-00000000000000000")})
			if err != nil {
				return &CallError{Action: "ec2:DescribeRouteTables", Outcome: classify(err), Err: err}
			}
			return nil
		}},
		facts.SecurityGroups: {"ec2:DescribeSecurityGroups", func(ctx context.Context) error {
			_, err := c.EC2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: none("group-id", "sg-00000000000000000")})
			return err
		}},
	}
}

// errorIf returns an error with msg when cond holds.
func errorIf(cond bool, msg string) error {
	if cond {
		return errors.New(msg)
	}
	return nil
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
		ce := &CallError{Action: "sts:GetCallerIdentity", Outcome: classify(err), Err: err}
		if ce.Outcome == OutcomeTimeout {
			ce.Budget = p.opts.Budget
		}
		return "", ce
	}
	return aws.ToString(out.Arn), nil
}
