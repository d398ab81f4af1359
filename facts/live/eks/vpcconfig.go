package eks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// The SDK decodes resourcesVpcConfig's endpointPublicAccess and endpointPrivateAccess into plain
// bools, so an answer without them reads as "private only, not public". EKS always sends both; a
// snapshot served by the AWS fake may not, and then the endpoint's access is unknown, not false. No
// SDK option tells a member that was sent from one that was not: keepBody keeps the answer's body and
// endpointAccess reads the two members from it.

// bodyKey is the key of the answer's body in a call's result metadata.
type bodyKey struct{}

// keepBody keeps a copy of a successful answer's body in the call's result metadata. It sits last in
// the deserialize step, next to the transport, and hands the SDK's deserializer an unread body.
var keepBody = middleware.DeserializeMiddlewareFunc("KeepBody", func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleDeserialize(ctx, in)
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if err != nil || !ok || resp.Body == nil || resp.StatusCode != http.StatusOK {
		return out, md, err
	}
	body, rerr := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if rerr != nil {
		// Let the deserializer meet the broken body as it would have.
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{rerr}))
		return out, md, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	md.Set(bodyKey{}, body)
	return out, md, err
})

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// withBody makes a call keep its answer's body (keepBody).
func withBody(o *eks.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		if err := s.Deserialize.Add(keepBody, middleware.After); err != nil {
			return fmt.Errorf("add the KeepBody middleware: %w", err)
		}
		return nil
	})
}

// clusterNetwork is what DescribeCluster says of the cluster's endpoint and control-plane network.
// Empty lists are nil, as in a snapshot.
func clusterNetwork(out *eks.DescribeClusterOutput) facts.ClusterNetwork {
	var n facts.ClusterNetwork
	c := out.Cluster
	if k := c.KubernetesNetworkConfig; k != nil {
		n.IPFamily = string(k.IpFamily)
	}
	v := c.ResourcesVpcConfig
	if v == nil {
		return n
	}
	n.ClusterSecurityGroupID = aws.ToString(v.ClusterSecurityGroupId)
	n.SecurityGroupIDs = nilIfEmpty(v.SecurityGroupIds)
	n.SubnetIDs = nilIfEmpty(v.SubnetIds)
	n.PublicAccessCidrs = nilIfEmpty(v.PublicAccessCidrs)
	n.EndpointPublicAccess, n.EndpointPrivateAccess = endpointAccess(out.ResultMetadata, v)
	return n
}

// endpointAccess returns whether the endpoint is public and private, each nil when the answer did not
// say. Without the answer's body (an API that is not the SDK's client) it trusts the SDK's bools.
func endpointAccess(md middleware.Metadata, v *types.VpcConfigResponse) (public, private *bool) {
	body, ok := md.Get(bodyKey{}).([]byte)
	if !ok {
		return aws.Bool(v.EndpointPublicAccess), aws.Bool(v.EndpointPrivateAccess)
	}
	var doc struct {
		Cluster struct {
			ResourcesVpcConfig struct {
				EndpointPublicAccess  *bool `json:"endpointPublicAccess"`
				EndpointPrivateAccess *bool `json:"endpointPrivateAccess"`
			} `json:"resourcesVpcConfig"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, nil // the SDK read it; nothing here can say more
	}
	return doc.Cluster.ResourcesVpcConfig.EndpointPublicAccess, doc.Cluster.ResourcesVpcConfig.EndpointPrivateAccess
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// networkKnown tells whether the answer holds network fact f: both endpoint flags, the cluster's
// security group and its subnets, the IP family.
func networkKnown(n facts.ClusterNetwork, f facts.Fact) error {
	switch {
	case f == facts.ClusterEndpointAccess && (n.EndpointPublicAccess == nil || n.EndpointPrivateAccess == nil):
		return facts.Unknown(f, "EKS DescribeCluster did not say whether the cluster's endpoint is public and private")
	case f == facts.ClusterControlPlaneNetwork && (n.ClusterSecurityGroupID == "" || len(n.SubnetIDs) == 0):
		return facts.Unknown(f, "EKS DescribeCluster gave no cluster security group or control-plane subnets")
	case f == facts.ClusterIPFamily && n.IPFamily == "":
		return facts.Unknown(f, "EKS DescribeCluster gave no IP family")
	}
	return nil
}
