package rules

import (
	"fmt"
	"slices"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// TestNodeRoleRows: the node-role rows are the table's, for each partition, region and state of the VPC
// CNI, written out by hand here.
func TestNodeRoleRows(t *testing.T) {
	yes, no, three := true, false, 3
	cn := &facts.Cluster{Name: "cn-eks", Region: "cn-north-1", Partition: "aws-cn", AccountID: "210987654321"}
	hk := &facts.Cluster{Name: "hk-eks", Region: "ap-east-1", Partition: "aws", AccountID: "111122223333"}
	cnRole := &facts.Role{Name: "nodes", ARN: "arn:aws-cn:iam::210987654321:role/teams/nodes"}
	hkRole := &facts.Role{Name: "nodes", ARN: "arn:aws:iam::111122223333:role/nodes"}
	for _, tc := range []struct {
		name    string
		s       nodeRoleSubject
		join    []string
		runtime []string
	}{
		{"china, aws-node on the node role, associations", nodeRoleSubject{cluster: cn, role: cnRole, describesInstances: true,
			cni: &facts.CNI{Present: &yes, Credentials: facts.CredentialsNodeRole}, podIdentity: &three},
			[]string{"J1 ec2:DescribeInstances *", "J2 ec2:DescribeNetworkInterfaces *"},
			[]string{"W1 ecr:GetAuthorizationToken *",
				"W2 ecr:BatchGetImage arn:aws-cn:ecr:cn-north-1:918309763551:repository/amazon-k8s-cni",
				"W2 ecr:GetDownloadUrlForLayer arn:aws-cn:ecr:cn-north-1:918309763551:repository/amazon-k8s-cni",
				"W3 ec2:CreateNetworkInterface *", "W3 ec2:AttachNetworkInterface *", "W3 ec2:AssignPrivateIpAddresses *",
				"W3 ec2:CreateTags arn:aws-cn:ec2:cn-north-1:210987654321:network-interface/*",
				"W4 eks-auth:AssumeRoleForPodIdentity arn:aws-cn:eks:cn-north-1:210987654321:cluster/cn-eks"}},
		{"opt-in region, aws-node on Pod Identity", nodeRoleSubject{cluster: hk, role: hkRole,
			cni: &facts.CNI{Present: &yes, Credentials: facts.CredentialsPodIdentity}, podIdentity: &three},
			[]string{"J3 eks-auth:AssumeRoleForPodIdentity arn:aws:eks:ap-east-1:111122223333:cluster/hk-eks"},
			[]string{"W1 ecr:GetAuthorizationToken *",
				"W2 ecr:BatchGetImage arn:aws:ecr:ap-east-1:800184023465:repository/amazon-k8s-cni",
				"W2 ecr:GetDownloadUrlForLayer arn:aws:ecr:ap-east-1:800184023465:repository/amazon-k8s-cni"}},
		{"another CNI, no associations", nodeRoleSubject{cluster: hk, role: hkRole, cni: &facts.CNI{Present: &no}, podIdentity: new(int)},
			nil,
			[]string{"W1 ecr:GetAuthorizationToken *",
				"W2 ecr:BatchGetImage arn:aws:ecr:ap-east-1:800184023465:repository/amazon-k8s-cni",
				"W2 ecr:GetDownloadUrlForLayer arn:aws:ecr:ap-east-1:800184023465:repository/amazon-k8s-cni"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				rows nodeRoleRows
				want []string
			}{{joinRows(tc.s), tc.join}, {runtimeRows(tc.s), tc.runtime}} {
				var got []string
				for _, r := range c.rows.rows {
					for _, call := range r.calls() {
						if call.Principal != tc.s.role.ARN || len(call.Context) > 0 {
							t.Errorf("%s: principal %s, context %v; want the node role's ARN and no context", r.ID, call.Principal, call.Context)
						}
						for _, q := range call.Questions() {
							got = append(got, fmt.Sprintf("%s %s %s", r.ID, q.Action, q.Resource))
						}
					}
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("questions:\n  got  %q\n  want %q", got, c.want)
				}
				if len(c.rows.undecided) > 0 {
					t.Errorf("undecided: %q", c.rows.undecided)
				}
			}
		})
	}
}
