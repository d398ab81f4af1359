// Package eks is the live provider's EKS concept: the cluster's description (its identity, version,
// authentication mode, VPC and network: the endpoint's access, the control plane's groups and subnets,
// the IP family), its access entries and its Pod Identity associations, each kind of answer in a cache
// of its own.
package eks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// API is what the provider calls of EKS: the SDK's client, or anything with its methods.
type API interface {
	DescribeCluster(context.Context, *eks.DescribeClusterInput, ...func(*eks.Options)) (*eks.DescribeClusterOutput, error)
	ListAccessEntries(context.Context, *eks.ListAccessEntriesInput, ...func(*eks.Options)) (*eks.ListAccessEntriesOutput, error)
	DescribeAccessEntry(context.Context, *eks.DescribeAccessEntryInput, ...func(*eks.Options)) (*eks.DescribeAccessEntryOutput, error)
	ListPodIdentityAssociations(context.Context, *eks.ListPodIdentityAssociationsInput, ...func(*eks.Options)) (*eks.ListPodIdentityAssociationsOutput, error)
	DescribePodIdentityAssociation(context.Context, *eks.DescribePodIdentityAssociationInput, ...func(*eks.Options)) (*eks.DescribePodIdentityAssociationOutput, error)
}

// ClusterNotFoundError says the EKS cluster does not exist where the provider looks.
type ClusterNotFoundError struct {
	Name, Region string
}

func (e *ClusterNotFoundError) Error() string {
	return fmt.Sprintf("EKS cluster %q not found in %s (check --cluster-name and --region)", e.Name, e.Region)
}

// Reason is the cause shown to operators (awscall.Worded): the error itself.
func (e *ClusterNotFoundError) Reason() string { return e.Error() }

// Provider answers the cluster's facts, its access entries (facts.AccessEntries) and its Pod Identity
// associations through its own caches. Close it to stop the fetches in flight.
type Provider struct {
	api    API
	name   string
	region string
	caller awscall.Caller

	clusters   *cache.Cache[*facts.Cluster]
	entryLists *cache.Cache[[]string] // the principal ARNs of the cluster's entries
	entries    *cache.Cache[*facts.AccessEntry]

	associationLists *cache.Cache[[]association] // the cluster's, or one ServiceAccount's
	podIdentities    *cache.Cache[*PodIdentity]  // by association id
}

// NewProvider returns a provider for the cluster name in region (the region of api, reported as the
// cluster's) that asks api, caching its answers as opts say. It makes no call.
func NewProvider(api API, name, region string, caller awscall.Caller, opts cache.Options) *Provider {
	return &Provider{
		api: api, name: name, region: region, caller: caller,
		clusters:   cache.New[*facts.Cluster](opts),
		entryLists: cache.New[[]string](opts),
		entries:    cache.New[*facts.AccessEntry](opts),

		associationLists: cache.New[[]association](opts),
		podIdentities:    cache.New[*PodIdentity](opts),
	}
}

// Close stops the fetches in flight and waits for them.
func (p *Provider) Close() {
	p.clusters.Close()
	p.entryLists.Close()
	p.entries.Close()
	p.associationLists.Close()
	p.podIdentities.Close()
}

// Cluster describes the cluster with EKS DescribeCluster. The account and partition come from the
// cluster's ARN: the account whose images `self` means. Its network (the endpoint's access, the control
// plane's groups and subnets, the IP family) comes from resourcesVpcConfig and kubernetesNetworkConfig.
// A cluster EKS does not know is a *ClusterNotFoundError.
func (p *Provider) Cluster(ctx context.Context) (*facts.Cluster, error) {
	q := awscall.Question{Fact: facts.SectionCluster, Action: "eks:DescribeCluster", Key: p.name}
	return awscall.Lookup(ctx, p.caller, p.clusters, q, func(ctx context.Context) (*facts.Cluster, bool, error) {
		out, err := p.api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(p.name)}, withBody)
		if awscall.Classify(err) == awscall.OutcomeNotFound {
			return nil, false, &ClusterNotFoundError{Name: p.name, Region: p.region}
		}
		if err != nil {
			return nil, false, err
		}
		c := out.Cluster
		if c == nil {
			return nil, false, errors.New("DescribeCluster answered without a cluster")
		}
		fc := &facts.Cluster{Name: aws.ToString(c.Name), Region: p.region, Version: aws.ToString(c.Version)}
		if a, err := arn.Parse(aws.ToString(c.Arn)); err == nil {
			fc.Partition, fc.AccountID = a.Partition, a.AccountID
		}
		if c.AccessConfig != nil {
			fc.AuthenticationMode = string(c.AccessConfig.AuthenticationMode)
		}
		if c.ResourcesVpcConfig != nil {
			fc.VPCID = aws.ToString(c.ResourcesVpcConfig.VpcId)
		}
		fc.ClusterNetwork = clusterNetwork(out)
		return fc, false, nil
	})
}

// AccessEntry returns role's access entry: the list of entries, then DescribeAccessEntry of the
// role's only; nil when it has none, and in mode CONFIG_MAP, where EKS reads no entries.
func (p *Provider) AccessEntry(ctx context.Context, role *facts.Role) (*facts.AccessEntry, error) {
	c, err := p.Cluster(ctx)
	if err != nil {
		return nil, awscall.Unknown(facts.AccessEntries, err)
	}
	if c.AuthenticationMode == facts.ModeConfigMap {
		return nil, nil
	}
	principal, err := p.principalOf(ctx, c.Name, role, 0)
	if err == nil && principal == "" {
		// The list lacks the role: for it, a "no entry" answer, which must be no older than any
		// other "does not exist" (the entry created a minute ago, then the EC2NodeClass applied).
		principal, err = p.principalOf(ctx, c.Name, role, p.entryLists.NegativeTTL())
	}
	if err != nil || principal == "" {
		return nil, err
	}
	return p.describeAccessEntry(ctx, c.Name, principal)
}

// Known tells whether the cluster's facts, its access entries and its count of Pod Identity
// associations can be had, by asking for them. A fact of the cluster's network is known when the
// answer holds it as a snapshot must (facts.Snapshot.Known). It returns nil for any other fact: those
// are not this provider's.
func (p *Provider) Known(ctx context.Context, f facts.Fact) error {
	switch f {
	case facts.ClusterEndpointAccess, facts.ClusterControlPlaneNetwork, facts.ClusterIPFamily:
		c, err := p.Cluster(ctx)
		if err != nil {
			return awscall.Unknown(f, err)
		}
		return networkKnown(c.ClusterNetwork, f)
	case facts.ClusterAuthenticationMode, facts.ClusterVersion, facts.ClusterVPCID:
		c, err := p.Cluster(ctx)
		if err != nil {
			return awscall.Unknown(f, err)
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
			return awscall.Unknown(f, err)
		}
		if c.AuthenticationMode == facts.ModeConfigMap {
			return nil
		}
		_, err = p.accessEntryARNs(ctx, c.Name, 0)
		return err
	case facts.ClusterPodIdentityAssociations:
		_, err := p.PodIdentityAssociations(ctx)
		return err
	}
	return nil
}

// accessEntryARNs lists the principal ARNs of the cluster's access entries (one paginated call), no
// older than maxAge when set.
func (p *Provider) accessEntryARNs(ctx context.Context, cluster string, maxAge time.Duration) ([]string, error) {
	q := awscall.Question{Fact: facts.AccessEntries, Action: "eks:ListAccessEntries", Key: cluster, MaxAge: maxAge}
	return awscall.Lookup(ctx, p.caller, p.entryLists, q, func(ctx context.Context) ([]string, bool, error) {
		var arns []string
		pages := eks.NewListAccessEntriesPaginator(p.api, &eks.ListAccessEntriesInput{ClusterName: aws.String(cluster)})
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

// describeAccessEntry describes the entry of principal; nil when it was deleted since the list.
func (p *Provider) describeAccessEntry(ctx context.Context, cluster, principal string) (*facts.AccessEntry, error) {
	q := awscall.Question{Fact: facts.AccessEntries, Action: "eks:DescribeAccessEntry", Key: principal}
	return awscall.Lookup(ctx, p.caller, p.entries, q, func(ctx context.Context) (*facts.AccessEntry, bool, error) {
		out, err := p.api.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String(cluster), PrincipalArn: aws.String(principal)})
		if awscall.Classify(err) == awscall.OutcomeNotFound {
			return nil, true, nil // deleted since the list
		}
		if err != nil {
			return nil, false, err
		}
		if out.AccessEntry == nil {
			return nil, false, errors.New("DescribeAccessEntry answered without an entry")
		}
		e := out.AccessEntry
		return &facts.AccessEntry{
			PrincipalARN: aws.ToString(e.PrincipalArn), Type: aws.ToString(e.Type), Username: aws.ToString(e.Username),
			KubernetesGroups: e.KubernetesGroups, CreatedAt: aws.ToTime(e.CreatedAt).UTC(),
		}, false, nil
	})
}
