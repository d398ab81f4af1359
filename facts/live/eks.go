package live

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

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
