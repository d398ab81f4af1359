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
// both (consistency_test.go).
package live

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
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
	var zero T
	if facts.OnlyAtHand(ctx) {
		l, ok, err := p.cache.Cached(action+" "+key, maxAge)
		if !ok {
			return zero, facts.NotAtHand(ctx, fact)
		}
		return answer[T](ctx, p, fact, action, key, l, err)
	}
	l, err := p.cache.GetWithin(ctx, action+" "+key, maxAge, func(fctx context.Context) (cache.Answer[any], error) {
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
	return answer[T](ctx, p, fact, action, key, l, err)
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

// Cluster implements facts.Provider with EKS DescribeCluster. The account and partition come from the
// cluster's ARN: the account whose images `self` means.
func (p *Provider) Cluster(ctx context.Context) (*facts.Cluster, error) {
	name := p.opts.ClusterName
	return lookup(ctx, p, "cluster", "eks:DescribeCluster", name, func(ctx context.Context) (*facts.Cluster, bool, error) {
		out, err := p.opts.Clients.EKS.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})
		if classify(err) == OutcomeNotFound {
			return nil, false, &ClusterNotFoundError{Name: name, Region: p.opts.Region}
		}
		if err != nil {
			return nil, false, err
		}
		c := out.Cluster
		if c == nil {
			return nil, false, errors.New("DescribeCluster answered without a cluster")
		}
		fc := &facts.Cluster{Name: aws.ToString(c.Name), Region: p.opts.Region, Version: aws.ToString(c.Version)}
		if a, err := arn.Parse(aws.ToString(c.Arn)); err == nil {
			fc.Partition, fc.AccountID = a.Partition, a.AccountID
		}
		if c.AccessConfig != nil {
			fc.AuthenticationMode = string(c.AccessConfig.AuthenticationMode)
		}
		if c.ResourcesVpcConfig != nil {
			fc.VPCID = aws.ToString(c.ResourcesVpcConfig.VpcId)
		}
		return fc, false, nil
	})
}

// accessEntryARNs lists the principal ARNs of the cluster's access entries (one paginated call).
func (p *Provider) accessEntryARNs(ctx context.Context, cluster string, maxAge time.Duration) ([]string, error) {
	return lookupWithin(ctx, p, facts.AccessEntries, "eks:ListAccessEntries", cluster, maxAge, func(ctx context.Context) ([]string, bool, error) {
		var arns []string
		pages := eks.NewListAccessEntriesPaginator(p.opts.Clients.EKS, &eks.ListAccessEntriesInput{ClusterName: aws.String(cluster)})
		for pages.HasMorePages() {
			out, err := pages.NextPage(ctx)
			if err != nil {
				return nil, false, err
			}
			arns = append(arns, out.AccessEntries...)
		}
		return arns, false, nil
	})
}

// AccessEntry implements facts.Provider: the list of entries, then DescribeAccessEntry of the role's
// only (none in mode CONFIG_MAP, where EKS reads no entries).
func (p *Provider) AccessEntry(ctx context.Context, role *facts.Role) (*facts.AccessEntry, error) {
	c, err := p.Cluster(ctx)
	if err != nil {
		return nil, unknown(facts.AccessEntries, err)
	}
	if c.AuthenticationMode == facts.ModeConfigMap {
		return nil, nil
	}
	principal, err := p.principalOf(ctx, c.Name, role, 0)
	if err == nil && principal == "" {
		// The list lacks the role: for it, a "no entry" answer, which must be no older than any
		// other "does not exist" (the entry created a minute ago, then the EC2NodeClass applied).
		principal, err = p.principalOf(ctx, c.Name, role, p.cache.NegativeTTL())
	}
	if err != nil || principal == "" {
		return nil, err
	}
	return p.describeAccessEntry(ctx, c.Name, principal)
}

// principalOf returns the principal ARN of role's access entry in the cluster's list no older than
// maxAge, "" when the list has none.
func (p *Provider) principalOf(ctx context.Context, cluster string, role *facts.Role, maxAge time.Duration) (string, error) {
	arns, err := p.accessEntryARNs(ctx, cluster, maxAge)
	if err != nil {
		return "", err
	}
	isPrincipal := role.PrincipalMatcher()
	for _, a := range arns {
		if isPrincipal(a) {
			return a, nil
		}
	}
	return "", nil
}

func (p *Provider) describeAccessEntry(ctx context.Context, cluster, principal string) (*facts.AccessEntry, error) {
	return lookup(ctx, p, facts.AccessEntries, "eks:DescribeAccessEntry", principal, func(ctx context.Context) (*facts.AccessEntry, bool, error) {
		out, err := p.opts.Clients.EKS.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String(cluster), PrincipalArn: aws.String(principal)})
		if classify(err) == OutcomeNotFound {
			return nil, true, nil // deleted since the list
		}
		if err != nil || out.AccessEntry == nil {
			return nil, false, errors.Join(err, errorIf(out != nil && out.AccessEntry == nil, "DescribeAccessEntry answered without an entry"))
		}
		e := out.AccessEntry
		return &facts.AccessEntry{
			PrincipalARN: aws.ToString(e.PrincipalArn), Type: aws.ToString(e.Type), Username: aws.ToString(e.Username),
			KubernetesGroups: e.KubernetesGroups, CreatedAt: aws.ToTime(e.CreatedAt).UTC(),
		}, false, nil
	})
}

// errorIf returns an error with msg when cond holds.
func errorIf(cond bool, msg string) error {
	if cond {
		return errors.New(msg)
	}
	return nil
}

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
	var l cache.Lookup[any]
	var err error
	if facts.OnlyAtHand(ctx) {
		var ok bool
		if l, ok, err = p.cache.Cached(key, 0); !ok {
			return nil, facts.NotAtHand(ctx, facts.AWSAuth)
		}
	} else {
		l, err = p.cache.Get(ctx, key, func(ctx context.Context) (cache.Answer[any], error) {
			cm, err := p.readAWSAuth(ctx)
			return cache.Answer[any]{Value: cm, TTL: AWSAuthTTL}, err
		})
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

// Role implements facts.Provider with IAM GetRole (NoSuchEntity: nil).
func (p *Provider) Role(ctx context.Context, name string) (*facts.Role, error) {
	return lookup(ctx, p, facts.Roles, "iam:GetRole", strings.ToLower(name), func(ctx context.Context) (*facts.Role, bool, error) {
		out, err := p.opts.Clients.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
		if classify(err) == OutcomeNotFound {
			return nil, true, nil
		}
		if err != nil || out.Role == nil {
			return nil, false, errors.Join(err, errorIf(out != nil && out.Role == nil, "GetRole answered without a role"))
		}
		r := out.Role
		return &facts.Role{Name: aws.ToString(r.RoleName), Path: aws.ToString(r.Path), ARN: aws.ToString(r.Arn), CreateDate: aws.ToTime(r.CreateDate).UTC()}, false, nil
	})
}

// InstanceProfile implements facts.Provider with IAM GetInstanceProfile (NoSuchEntity: nil).
func (p *Provider) InstanceProfile(ctx context.Context, name string) (*facts.InstanceProfile, error) {
	return lookup(ctx, p, facts.InstanceProfiles, "iam:GetInstanceProfile", strings.ToLower(name), func(ctx context.Context) (*facts.InstanceProfile, bool, error) {
		out, err := p.opts.Clients.IAM.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
		if classify(err) == OutcomeNotFound {
			return nil, true, nil
		}
		if err != nil || out.InstanceProfile == nil {
			return nil, false, errors.Join(err, errorIf(out != nil && out.InstanceProfile == nil, "GetInstanceProfile answered without a profile"))
		}
		ip := out.InstanceProfile
		prof := &facts.InstanceProfile{Name: aws.ToString(ip.InstanceProfileName), ARN: aws.ToString(ip.Arn), Roles: []string{}}
		for _, r := range ip.Roles {
			prof.Roles = append(prof.Roles, aws.ToString(r.RoleName))
		}
		return prof, false, nil
	})
}

// SSMParameter implements facts.Provider with SSM GetParameter (ParameterNotFound: absent).
func (p *Provider) SSMParameter(ctx context.Context, name string) (string, bool, error) {
	type param struct {
		value string
		ok    bool
	}
	v, err := lookup(ctx, p, facts.SSMParameters, "ssm:GetParameter", name, func(ctx context.Context) (param, bool, error) {
		out, err := p.opts.Clients.SSM.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
		switch classify(err) {
		case OutcomeNotFound:
			return param{}, true, nil
		case OutcomeDenied:
			if !strings.HasPrefix(name, "/aws/service/") {
				return param{}, false, &CallError{Action: "ssm:GetParameter", Outcome: OutcomeDenied, Err: err,
					Hint: "manifests/iam-policy.json grants the public /aws/service/* parameters only: add " + name + " to its ssm:GetParameter statement"}
			}
		}
		if err != nil || out.Parameter == nil {
			return param{}, false, errors.Join(err, errorIf(out != nil && out.Parameter == nil, "GetParameter answered without a parameter"))
		}
		return param{value: aws.ToString(out.Parameter.Value), ok: true}, false, nil
	})
	return v.value, v.ok, err
}

// Images implements facts.Provider with EC2 DescribeImages: the term's fields become filters (name,
// image-id, tag:KEY or tag-key for "*", state=available) and its owners the Owner parameter, which
// gives EC2 the semantics facts.MatchImage gives a snapshot. An ssmParameter term is resolved first.
func (p *Provider) Images(ctx context.Context, t facts.ImageTerm) ([]facts.Image, error) {
	t, ok, err := facts.ResolveImageTerm(ctx, p, t)
	if err != nil || !ok {
		return nil, err
	}
	owners := t.Owners()
	if owners != nil && len(owners) == 0 {
		return nil, nil // an owner of commas only: no owner, no image
	}
	return lookup(ctx, p, facts.Images, "ec2:DescribeImages", t.String(), func(ctx context.Context) ([]facts.Image, bool, error) {
		var out []facts.Image
		pages := ec2.NewDescribeImagesPaginator(p.opts.Clients.EC2, &ec2.DescribeImagesInput{
			Filters: imageFilters(t), Owners: owners, IncludeDeprecated: aws.Bool(true), MaxResults: aws.Int32(1000),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, false, err
			}
			for _, img := range page.Images {
				out = append(out, facts.Image{
					ID: aws.ToString(img.ImageId), Name: aws.ToString(img.Name), OwnerID: aws.ToString(img.OwnerId),
					OwnerAlias: aws.ToString(img.ImageOwnerAlias), Architecture: string(img.Architecture),
					State: string(img.State), CreationDate: aws.ToString(img.CreationDate), Tags: tagMap(img.Tags),
				})
			}
		}
		return out, len(out) == 0, nil
	})
}

// Subnets implements facts.Provider with EC2 DescribeSubnets; whether each is public comes from the
// route tables of its VPC (DescribeRouteTables).
func (p *Provider) Subnets(ctx context.Context, t facts.SelectorTerm) ([]facts.Subnet, error) {
	subnets, err := lookup(ctx, p, facts.Subnets, "ec2:DescribeSubnets", t.String(), func(ctx context.Context) ([]facts.Subnet, bool, error) {
		var out []facts.Subnet
		pages := ec2.NewDescribeSubnetsPaginator(p.opts.Clients.EC2, &ec2.DescribeSubnetsInput{Filters: subnetFilters(t), MaxResults: aws.Int32(1000)})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, false, err
			}
			for _, s := range page.Subnets {
				out = append(out, facts.Subnet{
					ID: aws.ToString(s.SubnetId), VPCID: aws.ToString(s.VpcId), AvailabilityZone: aws.ToString(s.AvailabilityZone),
					MapPublicIPOnLaunch: aws.ToBool(s.MapPublicIpOnLaunch), Tags: tagMap(s.Tags),
				})
			}
		}
		return out, len(out) == 0, nil
	})
	if err != nil {
		return nil, err
	}
	// Mark public subnets on a copy: the cached list is shared.
	out := make([]facts.Subnet, len(subnets))
	byVPC := map[string]routes{}
	for i, s := range subnets {
		public, ok := byVPC[s.VPCID]
		if !ok {
			if public, err = p.publicSubnets(ctx, s.VPCID); err != nil {
				return nil, unknown(facts.Subnets, err)
			}
			byVPC[s.VPCID] = public
		}
		s.Public = public.isPublic(s.ID)
		out[i] = s
	}
	return out, nil
}

// routes is what a VPC's route tables say about reaching the internet.
type routes struct {
	mainPublic bool            // the main table routes to an internet gateway
	explicit   map[string]bool // subnet id → its explicitly associated table routes to one
}

func (r routes) isPublic(subnet string) bool {
	if pub, ok := r.explicit[subnet]; ok {
		return pub
	}
	return r.mainPublic
}

// publicSubnets reads a VPC's route tables once per TTL: a subnet is public when its table (the one
// explicitly associated with it, else the VPC's main table) has a route to an igw- gateway.
func (p *Provider) publicSubnets(ctx context.Context, vpc string) (routes, error) {
	return lookup(ctx, p, facts.Subnets, "ec2:DescribeRouteTables", vpc, func(ctx context.Context) (routes, bool, error) {
		r := routes{explicit: map[string]bool{}}
		pages := ec2.NewDescribeRouteTablesPaginator(p.opts.Clients.EC2, &ec2.DescribeRouteTablesInput{
			Filters: []ec2types.Filter{filter("vpc-id", vpc)}, MaxResults: aws.Int32(100),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return routes{}, false, err
			}
			for _, rt := range page.RouteTables {
				igw := false
				for _, route := range rt.Routes {
					igw = igw || strings.HasPrefix(aws.ToString(route.GatewayId), "igw-")
				}
				for _, a := range rt.Associations {
					if aws.ToBool(a.Main) {
						r.mainPublic = igw
					}
					if id := aws.ToString(a.SubnetId); id != "" {
						r.explicit[id] = igw
					}
				}
			}
		}
		return r, false, nil
	})
}

// SecurityGroups implements facts.Provider with EC2 DescribeSecurityGroups.
func (p *Provider) SecurityGroups(ctx context.Context, t facts.SelectorTerm) ([]facts.SecurityGroup, error) {
	return lookup(ctx, p, facts.SecurityGroups, "ec2:DescribeSecurityGroups", t.String(), func(ctx context.Context) ([]facts.SecurityGroup, bool, error) {
		var out []facts.SecurityGroup
		pages := ec2.NewDescribeSecurityGroupsPaginator(p.opts.Clients.EC2, &ec2.DescribeSecurityGroupsInput{Filters: groupFilters(t), MaxResults: aws.Int32(1000)})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, false, err
			}
			for _, g := range page.SecurityGroups {
				out = append(out, facts.SecurityGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName), VPCID: aws.ToString(g.VpcId), Tags: tagMap(g.Tags)})
			}
		}
		return out, len(out) == 0, nil
	})
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

func filter(name string, values ...string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String(name), Values: values}
}

// imageFilters are the EC2 filters of an AMI term (its owners go in the Owner parameter): built in the
// fetch, so that a cached answer costs nothing.
func imageFilters(t facts.ImageTerm) []ec2types.Filter {
	filters := []ec2types.Filter{filter("state", "available")}
	if t.ID != "" {
		filters = append(filters, filter("image-id", t.ID))
	}
	if t.Name != "" {
		filters = append(filters, filter("name", t.Name))
	}
	return append(filters, tagFilters(t.Tags)...)
}

// subnetFilters are the EC2 filters of a subnet term: an id selects alone, as in Karpenter.
func subnetFilters(t facts.SelectorTerm) []ec2types.Filter {
	if t.ID != "" {
		return []ec2types.Filter{filter("subnet-id", t.ID)}
	}
	return tagFilters(t.Tags)
}

// groupFilters are the EC2 filters of a security-group term: an id selects alone.
func groupFilters(t facts.SelectorTerm) []ec2types.Filter {
	if t.ID != "" {
		return []ec2types.Filter{filter("group-id", t.ID)}
	}
	var filters []ec2types.Filter
	if t.Name != "" {
		filters = append(filters, filter("group-name", t.Name))
	}
	return append(filters, tagFilters(t.Tags)...)
}

// tagFilters turns selector tags into EC2 filters: tag:KEY=pattern, or tag-key=KEY for "*" (any value).
func tagFilters(tags map[string]string) []ec2types.Filter {
	var out []ec2types.Filter
	for _, k := range sortedKeys(tags) {
		if tags[k] == "*" {
			out = append(out, filter("tag-key", k))
		} else {
			out = append(out, filter("tag:"+k, tags[k]))
		}
	}
	return out
}

func tagMap(tags []ec2types.Tag) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
