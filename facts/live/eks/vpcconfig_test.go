package eks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	liveeks "github.com/karpenter-guard/karpenter-guard/facts/live/eks"
)

// TestClusterNetwork: the cluster's endpoint flags, control plane and IP family come from DescribeCluster
// as EKS sends them, and a flag the answer leaves out is unknown, not false.
func TestClusterNetwork(t *testing.T) {
	ctx := context.Background()
	full := strings.Replace(world, "  vpcID: vpc-0a1b2c3d\n", `  vpcID: vpc-0a1b2c3d
  endpointPublicAccess: false
  endpointPrivateAccess: true
  publicAccessCidrs: [203.0.113.0/24]
  clusterSecurityGroupID: sg-0cluster
  securityGroupIDs: [sg-0extra]
  subnetIDs: [subnet-0cp1, subnet-0cp2]
  ipFamily: ipv6
`, 1)
	_, p := start(t, full, "prod-eks", cache.Options{})
	c, err := p.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := c.ClusterNetwork
	if n.EndpointPublicAccess == nil || *n.EndpointPublicAccess || n.EndpointPrivateAccess == nil || !*n.EndpointPrivateAccess ||
		n.ClusterSecurityGroupID != "sg-0cluster" || strings.Join(n.SecurityGroupIDs, ",") != "sg-0extra" ||
		strings.Join(n.SubnetIDs, ",") != "subnet-0cp1,subnet-0cp2" || strings.Join(n.PublicAccessCidrs, ",") != "203.0.113.0/24" || n.IPFamily != "ipv6" {
		t.Errorf("cluster network %+v", n)
	}
	for _, f := range []facts.Fact{facts.ClusterEndpointAccess, facts.ClusterControlPlaneNetwork, facts.ClusterIPFamily} {
		if err := p.Known(ctx, f); err != nil {
			t.Errorf("Known(%s) = %v", f, err)
		}
	}

	onlyPublic := strings.Replace(world, "  vpcID: vpc-0a1b2c3d\n", "  vpcID: vpc-0a1b2c3d\n  endpointPublicAccess: true\n", 1)
	_, p = start(t, onlyPublic, "prod-eks", cache.Options{})
	c, err = p.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := c.ClusterNetwork; n.EndpointPublicAccess == nil || !*n.EndpointPublicAccess || n.EndpointPrivateAccess != nil || n.SubnetIDs != nil || n.SecurityGroupIDs != nil {
		t.Errorf("cluster network %+v; want public only, the rest unknown", n)
	}
	if err := p.Known(ctx, facts.ClusterEndpointAccess); facts.Reason(err) != "EKS DescribeCluster did not say whether the cluster's endpoint is public and private" {
		t.Errorf("Known(endpoint access) = %v", err)
	}
}

// sdkless is an EKS API that answers DescribeCluster as the SDK's types hold it, without the answer's
// body: a test double, or a client wrapped by another.
type sdkless struct{ liveeks.API }

func (sdkless) DescribeCluster(context.Context, *eks.DescribeClusterInput, ...func(*eks.Options)) (*eks.DescribeClusterOutput, error) {
	return &eks.DescribeClusterOutput{Cluster: &ekstypes.Cluster{
		Name: aws.String("prod-eks"), Arn: aws.String("arn:aws:eks:eu-west-1:111122223333:cluster/prod-eks"),
		ResourcesVpcConfig: &ekstypes.VpcConfigResponse{VpcId: aws.String("vpc-0a1b2c3d"), EndpointPrivateAccess: true, SubnetIds: []string{}},
	}}, nil
}

// TestClusterNetworkWithoutBody: an API whose answers carry no body gives the endpoint flags as the
// SDK decoded them, and empty lists as none.
func TestClusterNetworkWithoutBody(t *testing.T) {
	p := liveeks.NewProvider(sdkless{}, "prod-eks", "eu-west-1", awscall.Caller{Budget: time.Second}, cache.Options{})
	t.Cleanup(p.Close)
	c, err := p.Cluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := c.ClusterNetwork; n.EndpointPublicAccess == nil || *n.EndpointPublicAccess || n.EndpointPrivateAccess == nil || !*n.EndpointPrivateAccess || n.SubnetIDs != nil {
		t.Errorf("cluster network %+v", n)
	}
}
