package live_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

// Every test stops its provider and fake: no goroutine may outlive them (hung AWS calls included).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const world = `apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster:
  name: prod-eks
  region: eu-west-1
  partition: aws
  accountID: "111122223333"
  version: "1.33"
  authenticationMode: API_AND_CONFIG_MAP
  vpcID: vpc-0a1b2c3d
  podIdentityAssociations: 3
  endpointPublicAccess: true
  endpointPrivateAccess: true
  publicAccessCidrs: [0.0.0.0/0]
  clusterSecurityGroupID: sg-0cluster
  subnetIDs: [subnet-0private1]
  ipFamily: ipv4
vpc: {enableDnsSupport: true, enableDnsHostnames: true}
natGateways:
  - {id: nat-0abc, state: available, connectivityType: public, publicIps: [203.0.113.10]}
vpcEndpoints:
  - {id: vpce-0s3, serviceName: com.amazonaws.eu-west-1.s3, type: Gateway, state: available, routeTableIDs: [rtb-0priv]}
accessEntries:
  - principalArn: arn:aws:iam::111122223333:role/teams/KarpenterNodeRole
    type: EC2_LINUX
    username: system:node:{{EC2PrivateDNSName}}
    createdAt: "2025-06-01T10:00:00Z"
  - principalArn: arn:aws:iam::111122223333:role/Admin
    type: STANDARD
awsAuth:
  mapRoles: |
    - rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole
      username: system:node:{{EC2PrivateDNSName}}
      groups: [system:bootstrappers, system:nodes]
roles:
  - name: KarpenterNodeRole
    path: /teams/
    arn: arn:aws:iam::111122223333:role/teams/KarpenterNodeRole
    createDate: "2025-05-30T09:00:00Z"
    assumeRolePolicyDocument: '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole","Condition":{"StringEquals":{"aws:SourceAccount":"111122223333","sts:ExternalId":"a+b c/%41"}}}]}'
karpenterController:
  serviceAccount: kube-system/karpenter
  roleArn: arn:aws:iam::111122223333:role/KarpenterController-prod-eks
  source: podIdentity
  sessionPolicy: false
vpcCNI:
  present: true
  credentials: nodeRole
simulations:
  - principal: arn:aws:iam::111122223333:role/KarpenterController-prod-eks
    action: iam:PassRole
    resource: arn:aws:iam::111122223333:role/teams/KarpenterNodeRole
    context: {iam:PassedToService: [ec2.amazonaws.com]}
    decision: allowed
  - principal: arn:aws:iam::111122223333:role/KarpenterController-prod-eks
    action: ec2:CreateFleet
    resource: arn:aws:ec2:eu-west-1:111122223333:launch-template/*
    context: {aws:RequestedRegion: [eu-west-1], aws:RequestTag/eks:eks-cluster-name: [prod-eks], aws:TagKeys: [karpenter.sh/nodepool, eks:eks-cluster-name]}
    decision: implicitDeny
    missingContextValues: [ec2:CreateAction]
  - principal: arn:aws:iam::111122223333:role/KarpenterController-prod-eks
    action: ec2:RunInstances
    resource: arn:aws:ec2:eu-west-1:111122223333:launch-template/*
    context: {aws:RequestedRegion: [eu-west-1], aws:RequestTag/eks:eks-cluster-name: [prod-eks], aws:TagKeys: [karpenter.sh/nodepool, eks:eks-cluster-name]}
    decision: explicitDeny
  - principal: arn:aws:iam::111122223333:role/KarpenterController-prod-eks
    action: ec2:CreateFleet
    resource: arn:aws:ec2:eu-west-1:111122223333:fleet/*
    context: {aws:RequestedRegion: [eu-west-1], aws:RequestTag/eks:eks-cluster-name: [prod-eks], aws:TagKeys: [karpenter.sh/nodepool, eks:eks-cluster-name]}
    decision: allowed
  - principal: arn:aws:iam::111122223333:role/KarpenterController-prod-eks
    action: ec2:RunInstances
    resource: arn:aws:ec2:eu-west-1:111122223333:fleet/*
    context: {aws:RequestedRegion: [eu-west-1], aws:RequestTag/eks:eks-cluster-name: [prod-eks], aws:TagKeys: [karpenter.sh/nodepool, eks:eks-cluster-name]}
    decision: implicitDeny
  - principal: arn:aws:iam::111122223333:role/teams/KarpenterNodeRole
    action: ec2:DescribeInstances
    resource: "*"
    decision: allowed
instanceProfiles:
  - name: KarpenterNodeInstanceProfile
    arn: arn:aws:iam::111122223333:instance-profile/KarpenterNodeInstanceProfile
    roles: [KarpenterNodeRole]
  - name: Empty
    arn: arn:aws:iam::111122223333:instance-profile/Empty
    roles: []
images:
  - {id: ami-0al2023x86, name: amazon-eks-node-al2023-x86_64-standard-1.33-v20251112, ownerID: "602401143452", ownerAlias: amazon, architecture: x86_64, state: available}
  - {id: ami-0al2023arm, name: amazon-eks-node-al2023-arm64-standard-1.33-v20251112, ownerID: "602401143452", ownerAlias: amazon, architecture: arm64, state: available}
  - {id: ami-0lookalike, name: amazon-eks-node-al2023-x86_64-standard-1.33-v20990101, ownerID: "111122223333", architecture: x86_64, state: available}
  - {id: ami-0pending, name: team-base-pending, ownerID: "111122223333", architecture: x86_64, state: pending}
  - {id: ami-0team, name: team-base-2025.11, ownerID: "111122223333", architecture: x86_64, state: available, tags: {team: platform, stage: prod}}
  - {id: ami-0vendor, name: vendor-base-1, ownerID: "444455556666", architecture: x86_64, state: available, tags: {team: platform}}
ssmParameters:
  /aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id: ami-0al2023x86
subnets:
  - {id: subnet-0private1, vpcID: vpc-0a1b2c3d, availabilityZone: eu-west-1a, mapPublicIpOnLaunch: false, public: false, tags: {karpenter.sh/discovery: prod-eks, Name: private-a},
     availabilityZoneID: euw1-az1, cidrBlock: 10.0.32.0/19, availableIpAddressCount: 4011, routeTableID: rtb-0priv,
     routes: [{destination: 0.0.0.0/0, target: nat-0abc, state: active}, {destination: pl-6da54004, target: vpce-0s3, state: active}]}
  - {id: subnet-0public1, vpcID: vpc-0a1b2c3d, availabilityZone: eu-west-1b, mapPublicIpOnLaunch: true, public: true, tags: {karpenter.sh/discovery: prod-eks, Name: public-b},
     availabilityZoneID: euw1-az2, cidrBlock: 10.0.0.0/24, availableIpAddressCount: 250, routeTableID: rtb-0pub,
     routes: [{destination: 0.0.0.0/0, target: igw-0abc, state: active}]}
  - {id: subnet-0other, vpcID: vpc-0ffee, availabilityZone: eu-west-1a, mapPublicIpOnLaunch: false, public: true, tags: {Name: other},
     routeTableID: rtb-0other, routes: [{destination: 0.0.0.0/0, target: igw-0ffee}, {destination: 10.9.0.0/16, target: pcx-0peer, state: blackhole}]}
securityGroups:
  - id: sg-0node
    name: eks-node
    vpcID: vpc-0a1b2c3d
    tags: {karpenter.sh/discovery: prod-eks}
    ingress:
      - {protocol: "-1", groupIDs: [sg-0node]}
      - {protocol: tcp, fromPort: 10250, toPort: 10250, groupIDs: [sg-0cluster]}
    egress:
      - {protocol: "-1", cidrs: [0.0.0.0/0], ipv6Cidrs: ["::/0"]}
  - {id: sg-0default, name: default, vpcID: vpc-0a1b2c3d, ingress: [{protocol: tcp, fromPort: 443, toPort: 443, prefixListIDs: [pl-0corp]}], egress: []}
  - id: sg-0cluster
    name: eks-cluster-sg-prod-eks
    vpcID: vpc-0a1b2c3d
    ingress:
      - {protocol: "-1", groupIDs: [sg-0cluster]}
      - {protocol: tcp, fromPort: 443, toPort: 443, groupIDs: [sg-0node]}
    egress:
      - {protocol: "-1", cidrs: [0.0.0.0/0]}
ebsDefaults:
  encryptionByDefault: true
  kmsKeyID: arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab
kmsKeys:
  - {ref: "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab", found: true,
     arn: "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab", keyState: Enabled,
     keySpec: SYMMETRIC_DEFAULT, keyUsage: ENCRYPT_DECRYPT}
capacityReservations: []
`

func decode(t *testing.T, doc string) *facts.ClusterFacts {
	t.Helper()
	cf, err := facts.DecodeSnapshotFile([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

// TestAnswersMatchSnapshot asks the live provider (real SDK clients, the AWS fake on the wire) and the
// snapshot provider the same questions, including EC2's selector semantics (wildcards, owners, tag
// "*", pending images, an id that selects alone), the public-subnet route tables, the trust policy
// GetRole sends URL-encoded, the controller's and aws-node's roles and the simulations (keyed alike
// however a row spells its actions and context), and demands the same answers.
func TestAnswersMatchSnapshot(t *testing.T) {
	ctx := context.Background()
	cf := decode(t, world)
	snap := facts.NewSnapshot(cf)
	// AWS lists images, subnets and groups in no stated order: the fake serves them in the reverse of
	// the snapshot's, and both providers must still answer alike.
	lp := start(t, reversedLists(t, world), livetest.Options{}).Provider

	same := func(name string, get func(p facts.Provider) (any, error)) {
		t.Helper()
		want, werr := get(snap)
		got, gerr := get(lp)
		if werr != nil || gerr != nil {
			t.Errorf("%s: snapshot error %v, live error %v", name, werr, gerr)
			return
		}
		if ws, gs := fmtAny(want), fmtAny(got); ws != gs {
			t.Errorf("%s:\nsnapshot %s\nlive     %s", name, ws, gs)
		}
	}
	same("cluster", func(p facts.Provider) (any, error) {
		c, err := p.Cluster(ctx)
		if c == nil {
			return nil, err
		}
		without := *c
		without.PodIdentityAssociations = nil // DescribeCluster does not say: PodIdentityAssociations asks
		return without, err
	})
	for _, name := range []string{"KarpenterNodeRole", "karpenternoderole", "Missing"} {
		same("role "+name, func(p facts.Provider) (any, error) { return p.Role(ctx, name) })
	}
	for _, name := range []string{"KarpenterNodeInstanceProfile", "Empty", "Missing"} {
		same("profile "+name, func(p facts.Provider) (any, error) { return p.InstanceProfile(ctx, name) })
	}
	roles := []*facts.Role{
		{Name: "KarpenterNodeRole", Path: "/teams/", ARN: "arn:aws:iam::111122223333:role/teams/KarpenterNodeRole"},
		{Name: "Admin", Path: "/", ARN: "arn:aws:iam::111122223333:role/Admin"},
		{Name: "Nobody", Path: "/", ARN: "arn:aws:iam::111122223333:role/Nobody"},
	}
	for _, r := range roles {
		same("access entry of "+r.Name, func(p facts.Provider) (any, error) { return p.AccessEntry(ctx, r) })
	}
	same("aws-auth", func(p facts.Provider) (any, error) {
		a, err := p.AWSAuth(ctx)
		if a == nil {
			return nil, err
		}
		return a.Config, err
	})
	for _, term := range []facts.ImageTerm{
		{Name: "amazon-eks-node-al2023-*-standard-1.33-*"},                  // owners self and amazon: the look-alike too
		{Name: "amazon-eks-node-al2023-*-standard-1.33-*", Owner: "amazon"}, // the EKS images only
		{Name: "amazon-eks-node-al2023-x86_64-standard-1.33-v2025111?", Owner: "602401143452"},
		{Name: "team-base-*", Owner: "self"}, // the pending image is not selected
		{Tags: map[string]string{"team": "platform"}},
		{Tags: map[string]string{"team": "platform", "stage": "*"}},
		{Tags: map[string]string{"stage": "*"}, Owner: "444455556666"},
		{ID: "ami-0vendor"},
		{ID: "ami-0pending"},
		{ID: "ami-0missing"},
		{SSMParameter: "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id"},
		{SSMParameter: "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/recommended/image_id"},
		{Name: "team-base-*", Owner: ",,"},
	} {
		same("images "+term.String(), func(p facts.Provider) (any, error) { return p.Images(ctx, term) })
	}
	for _, name := range []string{"/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id", "/aws/service/missing"} {
		same("ssm "+name, func(p facts.Provider) (any, error) {
			v, ok, err := p.SSMParameter(ctx, name)
			return []any{v, ok}, err
		})
	}
	for _, term := range []facts.SelectorTerm{
		{Tags: map[string]string{"karpenter.sh/discovery": "prod-eks"}},
		{Tags: map[string]string{"Name": "p*-?"}},
		{Tags: map[string]string{"Name": "*"}},
		{ID: "subnet-0other"},
		{ID: "subnet-0private1", Tags: map[string]string{"Name": "public-*"}}, // the id selects alone
		{ID: "subnet-0missing"},
	} {
		same("subnets "+term.String(), func(p facts.Provider) (any, error) { return p.Subnets(ctx, term) })
	}
	for _, term := range []facts.SelectorTerm{
		{Tags: map[string]string{"karpenter.sh/discovery": "prod-eks"}},
		{Name: "eks-*"},
		{Name: "default", Tags: map[string]string{"karpenter.sh/discovery": "prod-eks"}},
		{ID: "sg-0default", Name: "eks-node"},
	} {
		same("groups "+term.String(), func(p facts.Provider) (any, error) { return p.SecurityGroups(ctx, term) })
	}
	same("ebs defaults", func(p facts.Provider) (any, error) { return p.EBSDefaults(ctx) })
	same("pod identity associations", func(p facts.Provider) (any, error) { return p.PodIdentityAssociations(ctx) })
	same("karpenter controller", func(p facts.Provider) (any, error) { return p.KarpenterController(ctx) })
	same("vpc cni", func(p facts.Provider) (any, error) { return p.VPCCNI(ctx) })
	for _, row := range worldRows {
		same(fmt.Sprintf("simulations %v", row), func(p facts.Provider) (any, error) { return p.Simulate(ctx, row) })
	}
	for _, f := range []facts.Fact{facts.ClusterAuthenticationMode, facts.ClusterVersion, facts.ClusterVPCID, facts.AccessEntries,
		facts.AWSAuth, facts.Roles, facts.InstanceProfiles, facts.Images, facts.SSMParameters, facts.Subnets, facts.SecurityGroups, facts.EBSDefaults,
		facts.ClusterPodIdentityAssociations, facts.KarpenterController, facts.VPCCNI, facts.Simulations} {
		if err := lp.Known(ctx, f); err != nil {
			t.Errorf("Known(%s) = %v; the fake serves it", f, err)
		}
	}
}

// TestUnknownSectionsAreDenied: a section the snapshot lacks is one the fake denies, and the live
// provider then knows it as unknown, naming the IAM action to grant.
func TestUnknownSectionsAreDenied(t *testing.T) {
	ctx := context.Background()
	lp := livetest.Start(t, decode(t, "apiVersion: karpenter-guard.io/v1alpha1\nkind: ClusterFacts\ncluster: {name: c, region: us-east-1, partition: aws, accountID: \"111122223333\", authenticationMode: API}\n"), livetest.Options{}).Provider
	for f, action := range map[facts.Fact]string{
		facts.Roles: "iam:GetRole", facts.InstanceProfiles: "iam:GetInstanceProfile", facts.Images: "ec2:DescribeImages",
		facts.SSMParameters: "ssm:GetParameter", facts.Subnets: "ec2:DescribeSubnets", facts.SecurityGroups: "ec2:DescribeSecurityGroups",
		facts.AccessEntries: "eks:ListAccessEntries", facts.EBSDefaults: "ec2:GetEbsEncryptionByDefault",
		facts.Simulations: "iam:SimulatePrincipalPolicy", facts.ClusterPodIdentityAssociations: "eks:ListPodIdentityAssociations",
	} {
		err := lp.Known(ctx, f)
		var u *facts.UnknownError
		if !errors.As(err, &u) || u.Fact != f || !strings.Contains(u.Reason, "AWS denied "+action) || !strings.Contains(u.Reason, "manifests/iam-policy.json") {
			t.Errorf("Known(%s) = %v; want unknown because AWS denied %s", f, err, action)
		}
	}
	if err := lp.Known(ctx, facts.ClusterVersion); err == nil || !strings.Contains(err.Error(), "DescribeCluster gave no value") {
		t.Errorf("Known(cluster.version) = %v; want unknown: the cluster has no version", err)
	}
	if err := lp.Known(ctx, facts.AWSAuth); err == nil || !strings.Contains(err.Error(), "not allowed to read ConfigMap kube-system/aws-auth") {
		t.Errorf("Known(awsAuth) = %v; want unknown for want of RBAC", err)
	}
	for f, sa := range map[facts.Fact]string{facts.KarpenterController: "karpenter", facts.VPCCNI: "aws-node"} {
		want := fmt.Sprintf("not allowed to read ServiceAccount kube-system/%s (RBAC: get on serviceaccounts in kube-system, resourceNames %s)", sa, sa)
		if err := lp.Known(ctx, f); facts.Reason(err) != want {
			t.Errorf("Known(%s) = %v; want unknown because %q", f, err, want)
		}
	}
}

// TestConceptCachesAreSeparate: each concept keeps each kind of answer in a cache of its own, so that
// answers of one kind never evict another's: with room for a single answer per cache, a second round
// of one question of every kind is answered from the caches.
func TestConceptCachesAreSeparate(t *testing.T) {
	env := start(t, decode(t, world), livetest.Options{Cache: cache.Options{MaxEntries: 1}})
	ctx := context.Background()
	// The controller's role and the count of Pod Identity associations are one kind of answer each
	// (lists of associations, then the controller's): one of them is asked here.
	questions := map[string]func(context.Context, facts.Provider) error{
		"cluster":                        askCluster,
		"access entry":                   askEntry,
		"role":                           askRole,
		"instance profile":               askProfile,
		"images of an alias's parameter": askSSMImages,
		"subnets":                        askSubnets,
		"security groups":                askGroups,
		"EBS defaults":                   askEBSDefaults,
		"aws-auth":                       askAWSAuth,
		"roles probe":                    func(ctx context.Context, p facts.Provider) error { return p.Known(ctx, facts.Roles) },
		"simulation":                     askSimulate,
		"karpenter controller":           askController,
	}
	for round := range 2 {
		for name, ask := range questions {
			if err := ask(ctx, env.Provider); err != nil {
				t.Fatalf("round %d, %s: %v", round, name, err)
			}
		}
		if round == 0 {
			env.Fake.ResetCalls()
		}
	}
	if n := env.Fake.Calls("*"); n != 0 {
		var asked []string
		for _, op := range fakeaws.Operations {
			if c := env.Fake.Calls(op); c > 0 {
				asked = append(asked, op)
			}
		}
		t.Errorf("%d requests in the second round (%s); want every answer from the caches", n, strings.Join(asked, ", "))
	}
}

// TestFaults: every way AWS fails ends in an unknown fact whose reason says what happened, within the
// budget, never in a panic or a hang.
func TestFaults(t *testing.T) {
	const budget = 300 * time.Millisecond
	cases := []struct {
		name   string
		op     string
		fault  fakeaws.Fault
		ask    func(context.Context, facts.Provider) error
		reason string
	}{
		{"access denied", "iam:GetRole", fakeaws.Fault{AccessDenied: true}, askRole, "AWS denied iam:GetRole (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"},
		{"throttled", "ec2:DescribeImages", fakeaws.Fault{Throttle: true}, askImages, "AWS throttled ec2:DescribeImages"},
		{"hang", "eks:DescribeCluster", fakeaws.Fault{Hang: true}, askCluster, "no answer from AWS within the 300ms budget (eks:DescribeCluster)"},
		{"slower than the budget", "ssm:GetParameter", fakeaws.Fault{Latency: 2 * time.Second}, askSSM, "no answer from AWS within the 300ms budget (ssm:GetParameter)"},
		{"server error", "ec2:DescribeSubnets", fakeaws.Fault{Status: 500}, askSubnets, "ec2:DescribeSubnets failed (InternalError: An internal error has occurred.)"},
		{"unavailable", "iam:GetInstanceProfile", fakeaws.Fault{Status: 503}, askProfile, "iam:GetInstanceProfile failed (ServiceUnavailable: Service is unavailable.)"},
		{"malformed answer", "ec2:DescribeSecurityGroups", fakeaws.Fault{Malformed: true}, askGroups, "ec2:DescribeSecurityGroups failed ("},
		{"malformed JSON", "eks:DescribeCluster", fakeaws.Fault{Malformed: true}, askCluster, "eks:DescribeCluster failed ("},
		{"route tables denied", "ec2:DescribeRouteTables", fakeaws.Fault{AccessDenied: true}, askSubnets, "AWS denied ec2:DescribeRouteTables"},
		{"own parameter denied", "ssm:GetParameter", fakeaws.Fault{AccessDenied: true}, askOwnSSM,
			"AWS denied ssm:GetParameter (manifests/iam-policy.json grants the public /aws/service/* parameters only: add /platform/ami/golden to its ssm:GetParameter statement)"},
		{"access entries not available", "eks:ListAccessEntries", fakeaws.Fault{Unavailable: true}, askEntries,
			"EKS ListAccessEntries is not available at this endpoint (HTTP 404 from 127.0.0.1:"},
		{"roles not available", "iam:GetRole", fakeaws.Fault{Unavailable: true}, askRole,
			"IAM GetRole is not available at this endpoint (HTTP 404 from 127.0.0.1:"},
		{"cluster not available", "eks:DescribeCluster", fakeaws.Fault{Unavailable: true}, askCluster,
			"EKS DescribeCluster is not available at this endpoint (HTTP 404 from 127.0.0.1:"},
		{"EBS encryption denied", "ec2:GetEbsEncryptionByDefault", fakeaws.Fault{AccessDenied: true}, askEBSDefaults,
			"AWS denied ec2:GetEbsEncryptionByDefault (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"},
		{"EBS key denied", "ec2:GetEbsDefaultKmsKeyId", fakeaws.Fault{AccessDenied: true}, askEBSDefaults,
			"AWS denied ec2:GetEbsDefaultKmsKeyId (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"},
		{"EBS encryption throttled", "ec2:GetEbsEncryptionByDefault", fakeaws.Fault{Throttle: true}, askEBSDefaults, "AWS throttled ec2:GetEbsEncryptionByDefault"},
		{"EBS key hangs", "ec2:GetEbsDefaultKmsKeyId", fakeaws.Fault{Hang: true}, askEBSDefaults,
			"no answer from AWS within the 300ms budget (ec2:GetEbsEncryptionByDefault)"},
		{"EBS encryption malformed", "ec2:GetEbsEncryptionByDefault", fakeaws.Fault{Malformed: true}, askEBSDefaults, "ec2:GetEbsEncryptionByDefault failed ("},
		{"EBS defaults probed through Known", "ec2:GetEbsEncryptionByDefault", fakeaws.Fault{AccessDenied: true},
			func(ctx context.Context, p facts.Provider) error { return p.Known(ctx, facts.EBSDefaults) }, "AWS denied ec2:GetEbsEncryptionByDefault"},
		{"simulation denied", "iam:SimulatePrincipalPolicy", fakeaws.Fault{AccessDenied: true}, askSimulate,
			"AWS denied iam:SimulatePrincipalPolicy (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"},
		{"simulation throttled", "iam:SimulatePrincipalPolicy", fakeaws.Fault{Throttle: true}, askSimulate, "AWS throttled iam:SimulatePrincipalPolicy"},
		{"simulation hangs", "iam:SimulatePrincipalPolicy", fakeaws.Fault{Hang: true}, askSimulate,
			"no answer from AWS within the 300ms budget (iam:SimulatePrincipalPolicy)"},
		{"simulation server error", "iam:SimulatePrincipalPolicy", fakeaws.Fault{Status: 500}, askSimulate, "iam:SimulatePrincipalPolicy failed (ServiceFailure: "},
		{"simulations probed through Known", "iam:SimulatePrincipalPolicy", fakeaws.Fault{Throttle: true},
			func(ctx context.Context, p facts.Provider) error { return p.Known(ctx, facts.Simulations) }, "AWS throttled iam:SimulatePrincipalPolicy"},
		{"associations denied", "eks:ListPodIdentityAssociations", fakeaws.Fault{AccessDenied: true}, askPodIdentityAssociations,
			"AWS denied eks:ListPodIdentityAssociations (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"},
		{"associations throttled", "eks:ListPodIdentityAssociations", fakeaws.Fault{Throttle: true}, askController, "AWS throttled eks:ListPodIdentityAssociations"},
		{"association denied", "eks:DescribePodIdentityAssociation", fakeaws.Fault{AccessDenied: true}, askController,
			"AWS denied eks:DescribePodIdentityAssociation (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"},
		{"association hangs", "eks:DescribePodIdentityAssociation", fakeaws.Fault{Hang: true}, askController,
			"no answer from AWS within the 300ms budget (eks:DescribePodIdentityAssociation)"},
		{"aws-node's associations denied", "eks:ListPodIdentityAssociations", fakeaws.Fault{AccessDenied: true}, askCNI,
			"AWS denied eks:ListPodIdentityAssociations (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"},
		{"associations not available", "eks:ListPodIdentityAssociations", fakeaws.Fault{Unavailable: true}, askPodIdentityAssociations,
			"EKS ListPodIdentityAssociations is not available at this endpoint (HTTP 404 from 127.0.0.1:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := start(t, decode(t, world), livetest.Options{Budget: budget, Attempts: 3})
			env.Fake.Inject(tc.op, tc.fault)
			ctx, cancel := context.WithTimeout(context.Background(), budget)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- tc.ask(ctx, env.Provider) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * budget): // far past the budget: the call did not honour it
				t.Fatalf("no answer 20 budgets after the call")
			}
			var u *facts.UnknownError
			if !errors.As(err, &u) || !strings.Contains(u.Reason, tc.reason) {
				t.Fatalf("error = %v; want an unknown fact because %q", err, tc.reason)
			}
		})
	}
}

func askEntries(ctx context.Context, p facts.Provider) error {
	return p.Known(ctx, facts.AccessEntries)
}

func askEntry(ctx context.Context, p facts.Provider) error {
	_, err := p.AccessEntry(ctx, &facts.Role{Name: "KarpenterNodeRole", Path: "/teams/", ARN: "arn:aws:iam::111122223333:role/teams/KarpenterNodeRole"})
	return err
}

func askAWSAuth(ctx context.Context, p facts.Provider) error {
	_, err := p.AWSAuth(ctx)
	return err
}

func askRole(ctx context.Context, p facts.Provider) error {
	_, err := p.Role(ctx, "KarpenterNodeRole")
	return err
}

func askProfile(ctx context.Context, p facts.Provider) error {
	_, err := p.InstanceProfile(ctx, "KarpenterNodeInstanceProfile")
	return err
}

func askImages(ctx context.Context, p facts.Provider) error {
	_, err := p.Images(ctx, facts.ImageTerm{Name: "amazon-eks-node-*", Owner: "amazon"})
	return err
}

func askCluster(ctx context.Context, p facts.Provider) error {
	_, err := p.Cluster(ctx)
	return err
}

func askSSM(ctx context.Context, p facts.Provider) error {
	_, _, err := p.SSMParameter(ctx, "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id")
	return err
}

func askSSMImages(ctx context.Context, p facts.Provider) error {
	_, err := p.Images(ctx, facts.ImageTerm{SSMParameter: "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id"})
	return err
}

func askOwnSSM(ctx context.Context, p facts.Provider) error {
	_, _, err := p.SSMParameter(ctx, "/platform/ami/golden")
	return err
}

func askSubnets(ctx context.Context, p facts.Provider) error {
	_, err := p.Subnets(ctx, facts.SelectorTerm{Tags: map[string]string{"karpenter.sh/discovery": "prod-eks"}})
	return err
}

func askEBSDefaults(ctx context.Context, p facts.Provider) error {
	_, err := p.EBSDefaults(ctx)
	return err
}

func askGroups(ctx context.Context, p facts.Provider) error {
	_, err := p.SecurityGroups(ctx, facts.SelectorTerm{Tags: map[string]string{"karpenter.sh/discovery": "prod-eks"}})
	return err
}

// TestPerCallBudget: a question waits at most aws.timeout for its answer even when its context has no
// deadline (a CLI run), and says so; asked again while the call goes on, and once the call has run out
// of its own time (twice the budget), it gives the same reason.
func TestPerCallBudget(t *testing.T) {
	const budget = 100 * time.Millisecond
	env := start(t, decode(t, world), livetest.Options{Budget: budget})
	env.Fake.Inject("*", fakeaws.Fault{Latency: time.Hour})
	for _, tc := range []struct {
		name   string
		ask    func(context.Context, facts.Provider) error
		action string
	}{
		{"cluster", askCluster, "eks:DescribeCluster"},
		{"role", askRole, "iam:GetRole"},
		{"instance profile", askProfile, "iam:GetInstanceProfile"},
		{"images", askImages, "ec2:DescribeImages"},
		{"parameter", askSSM, "ssm:GetParameter"},
		{"subnets", askSubnets, "ec2:DescribeSubnets"},
		{"security groups", askGroups, "ec2:DescribeSecurityGroups"},
		{"EBS defaults", askEBSDefaults, "ec2:GetEbsEncryptionByDefault"},
		{"roles probe", func(ctx context.Context, p facts.Provider) error { return p.Known(ctx, facts.Roles) }, "iam:GetRole"},
		{"simulation", askSimulate, "iam:SimulatePrincipalPolicy"},
		{"pod identity associations", askPodIdentityAssociations, "eks:ListPodIdentityAssociations"},
		{"karpenter controller", askController, "eks:ListPodIdentityAssociations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := "no answer from AWS within the 100ms budget (" + tc.action + ")"
			for _, attempt := range []string{"first", "while the call goes on", "after the call gave up"} {
				if attempt == "after the call gave up" {
					time.Sleep(2 * budget) // the call's own time (Cache.FetchTimeout) has passed
				}
				// The fake never answers: only the budget ends the question (a hang is go test's timeout).
				err := tc.ask(context.Background(), env.Provider)
				if got := facts.Reason(err); got != want {
					t.Errorf("%s question: reason %q, want %q", attempt, got, want)
				}
			}
		})
	}
}

// TestDeadlineCause: a question cut short by its context's own cause (the CLI's --deadline) names that
// cause, not the budget; once the context has ended, a question that is not cached asks nothing.
func TestDeadlineCause(t *testing.T) {
	env := livetest.Start(t, decode(t, world), livetest.Options{Budget: 5 * time.Second})
	env.Fake.Inject("*", fakeaws.Fault{Latency: time.Hour})
	ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, errors.New("the run's --deadline of 50ms passed"))
	defer cancel()
	if err := askRole(ctx, env.Provider); facts.Reason(err) != "no answer from AWS in time (iam:GetRole): the run's --deadline of 50ms passed" {
		t.Errorf("Role = %v; want the run's deadline as the reason", err)
	}
	<-ctx.Done()
	if err := askImages(ctx, env.Provider); facts.Reason(err) != "no answer from AWS in time (ec2:DescribeImages): the run's --deadline of 50ms passed" {
		t.Errorf("Images after the deadline = %v; want the run's deadline as the reason", err)
	}
	if n := env.Fake.Calls("ec2:DescribeImages"); n != 0 {
		t.Errorf("%d DescribeImages requests after the deadline; want none", n)
	}
}

// TestNotAvailableIsLasting: an API the endpoint does not serve is kept like a "does not exist" answer
// (the negative TTL), not asked again after the short back-off of a passing failure.
func TestNotAvailableIsLasting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault fakeaws.Fault
		// calls are the GetRole requests after a question, then the same 10 s later (past the error
		// back-off), then 40 s later (past the negative TTL).
		calls [3]int
	}{
		{"not available", fakeaws.Fault{Unavailable: true}, [3]int{1, 1, 2}},
		{"server error", fakeaws.Fault{Status: 503}, [3]int{1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			var mu sync.Mutex
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			env := livetest.Start(t, decode(t, world), livetest.Options{Cache: cache.Options{NegativeTTL: 30 * time.Second, ErrorBackoff: 5 * time.Second, Now: clock}})
			env.Fake.Inject("iam:GetRole", tc.fault)
			for i, wait := range []time.Duration{0, 10 * time.Second, 30 * time.Second} {
				mu.Lock()
				now = now.Add(wait)
				mu.Unlock()
				if err := askRole(context.Background(), env.Provider); !facts.IsUnknown(err) {
					t.Fatalf("question %d: %v; want unknown", i, err)
				}
				if n := env.Fake.Calls("iam:GetRole"); n != tc.calls[i] {
					t.Errorf("after question %d: %d GetRole requests, want %d", i, n, tc.calls[i])
				}
			}
		})
	}
}

// TestThrottlingStormRetriesBriefly: under throttling the retryer makes its three attempts with short
// back-offs (not the SDK default's up to 20 s), then the fact is unknown; the failure is remembered for
// the back-off, so a storm of questions makes no further calls.
func TestThrottlingStormRetriesBriefly(t *testing.T) {
	env := livetest.Start(t, decode(t, world), livetest.Options{Budget: 2 * time.Second, Attempts: 3})
	env.Fake.Inject("iam:*", fakeaws.Fault{Throttle: true})
	for i := 0; i < 20; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := askRole(ctx, env.Provider)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "AWS throttled iam:GetRole") {
			t.Fatalf("question %d: %v; want throttled", i, err)
		}
	}
	if n := env.Fake.Calls("iam:GetRole"); n != 3 {
		t.Errorf("20 questions in a throttling storm made %d GetRole requests, want 3 (one question, three attempts)", n)
	}
}

// TestStaleWhileRevalidate: when an answer's TTL has passed and the refresh fails, the last answer is
// served and the evaluation's notes say so; when AWS recovers, the refresh lands.
func TestStaleWhileRevalidate(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	env := livetest.Start(t, decode(t, world), livetest.Options{Cache: cache.Options{TTL: time.Minute, Now: clock}})
	ctx := context.Background()
	if r, err := env.Provider.Role(ctx, "KarpenterNodeRole"); err != nil || r == nil {
		t.Fatalf("Role = %v, %v", r, err)
	}
	now = now.Add(2 * time.Minute)
	env.Fake.Inject("iam:GetRole", fakeaws.Fault{Throttle: true})
	notes := &facts.Notes{}
	r, err := env.Provider.Role(facts.WithNotes(ctx, notes), "KarpenterNodeRole")
	if err != nil || r == nil || r.Name != "KarpenterNodeRole" {
		t.Fatalf("Role with a failing refresh = %v, %v; want the cached role", r, err)
	}
	if got := notes.List(); len(got) != 1 || !strings.Contains(got[0], "used a cached answer 2m0s old for iam:GetRole karpenternoderole: AWS throttled iam:GetRole") {
		t.Errorf("notes = %q; want one saying the answer is 2m old because AWS throttled", got)
	}
	// A selector term is named in the note as it is written, not as the cache keys it.
	term := facts.ImageTerm{Name: "team-base-*", Owner: "self", Tags: map[string]string{"team": "platform"}}
	if _, err := env.Provider.Images(ctx, term); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	env.Fake.Inject("ec2:DescribeImages", fakeaws.Fault{Throttle: true})
	notes = &facts.Notes{}
	if _, err := env.Provider.Images(facts.WithNotes(ctx, notes), term); err != nil {
		t.Fatal(err)
	}
	if got := notes.List(); len(got) != 1 || !strings.Contains(got[0], `for ec2:DescribeImages {name: "team-base-*", owner: "self", tags: {"team": "platform"}}: AWS throttled`) {
		t.Errorf("notes = %q; want the term as written", got)
	}
	env.Fake.Clear("")
	now = now.Add(10 * time.Second) // past the error back-off
	env.Fake.SetFacts(decode(t, strings.Replace(world, "path: /teams/", "path: /moved/", 1)))
	r, err = env.Provider.Role(ctx, "KarpenterNodeRole")
	if err != nil || r == nil || r.Path != "/moved/" {
		t.Errorf("Role after recovery = %+v, %v; want the refreshed role", r, err)
	}
}

// TestUnknownCluster: a cluster name EKS does not know is said plainly, as the ClusterNotFoundError
// the CLI's preflight looks for.
func TestUnknownCluster(t *testing.T) {
	cf := decode(t, world)
	env := livetest.Start(t, cf, livetest.Options{})
	other := *cf.Cluster
	other.Name = "prod-ekss"
	p := livetest.NewProvider(t, env.URL, &facts.ClusterFacts{Cluster: &other}, livetest.Options{})
	_, err := p.Cluster(context.Background())
	var nf *live.ClusterNotFoundError
	if !errors.As(err, &nf) || err.Error() != `EKS cluster "prod-ekss" not found in eu-west-1 (check --cluster-name and --region): cluster` {
		t.Errorf("Cluster = %v; want cluster not found", err)
	}
}

// TestMetrics: requests are counted per attempt with their outcome, cache lookups by result.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := live.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	env := livetest.Start(t, decode(t, world), livetest.Options{Metrics: m, Attempts: 3})
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		_ = askRole(ctx, env.Provider)
	}
	env.Fake.Inject("ec2:DescribeImages", fakeaws.Fault{AccessDenied: true})
	_ = askImages(ctx, env.Provider)
	want := `
# HELP karpenter_guard_aws_requests_total HTTP requests to AWS APIs (each retry counts), by service, operation and outcome.
# TYPE karpenter_guard_aws_requests_total counter
karpenter_guard_aws_requests_total{operation="DescribeImages",outcome="denied",service="ec2"} 1
karpenter_guard_aws_requests_total{operation="GetRole",outcome="success",service="iam"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "karpenter_guard_aws_requests_total"); err != nil {
		t.Error(err)
	}
	wantCache := `
# HELP karpenter_guard_facts_cache_total Lookups of facts in the live provider's cache, by fact and result (hit, miss, stale, error).
# TYPE karpenter_guard_facts_cache_total counter
karpenter_guard_facts_cache_total{fact="images",result="error"} 1
karpenter_guard_facts_cache_total{fact="roles",result="hit"} 2
karpenter_guard_facts_cache_total{fact="roles",result="miss"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(wantCache), "karpenter_guard_facts_cache_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "karpenter_guard_aws_request_duration_seconds"); n != 2 {
		t.Errorf("%d duration series, want 2 (GetRole, DescribeImages)", n)
	}
}

// fmtAny renders an answer for comparison: pointers followed, nil and empty lists alike.
// reversedLists decodes a world with its images, subnets and security groups in reverse order.
func reversedLists(t *testing.T, doc string) *facts.ClusterFacts {
	t.Helper()
	cf := decode(t, doc)
	if cf.Images == nil || len(*cf.Images) < 2 || cf.Subnets == nil || len(*cf.Subnets) < 2 || cf.SecurityGroups == nil || len(*cf.SecurityGroups) < 2 {
		t.Fatal("the world needs several images, subnets and groups for their order to matter")
	}
	slices.Reverse(*cf.Images)
	slices.Reverse(*cf.Subnets)
	slices.Reverse(*cf.SecurityGroups)
	return cf
}

func fmtAny(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	s := string(b)
	if s == "[]" {
		return "null"
	}
	return s
}

// TestNoCredentials: when the credential chain finds nothing, every fact is unknown and the reason
// says how to give karpenter-guard credentials.
func TestNoCredentials(t *testing.T) {
	cf := decode(t, world)
	env := livetest.Start(t, cf, livetest.Options{})
	cfg := fakeaws.Config(env.URL, "eu-west-1")
	cfg.Credentials = aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{}, errors.New("no EC2 IMDS role found")
	}))
	p, err := live.New(live.Options{ClusterName: "prod-eks", Region: "eu-west-1", Clients: live.NewClients(cfg, nil, nil), Budget: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Role(context.Background(), "KarpenterNodeRole")
	if err == nil || !strings.Contains(err.Error(), "no valid AWS credentials for iam:GetRole (set up EKS Pod Identity or IRSA") {
		t.Errorf("Role = %v; want unknown for want of credentials", err)
	}
	if n := env.Fake.Calls("*"); n != 0 {
		t.Errorf("%d requests reached AWS without credentials", n)
	}
}

// TestServiceEndpointFromEnvironment: AWS_ENDPOINT_URL_<SERVICE> (a VPC endpoint for one service) is
// honoured when --aws-endpoint-url is not given; the flag, when given, wins for every service.
func TestServiceEndpointFromEnvironment(t *testing.T) {
	cf := decode(t, world)
	env := livetest.Start(t, cf, livetest.Options{})
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_ENDPOINT_URL_EKS", env.URL)
	ctx := context.Background()

	cfg, err := live.LoadAWSConfig(ctx, live.AWSOptions{Region: "eu-west-1", Budget: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p, err := live.New(live.Options{ClusterName: "prod-eks", Region: "eu-west-1", Clients: live.NewClients(cfg, nil, nil), Budget: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Cluster(ctx); err != nil {
		t.Fatalf("Cluster via AWS_ENDPOINT_URL_EKS: %v", err)
	}
	if n := env.Fake.Calls("eks:DescribeCluster"); n != 1 {
		t.Errorf("eks:DescribeCluster reached the fake %d times; want 1", n)
	}

	// The flag wins over the per-service variable.
	t.Setenv("AWS_ENDPOINT_URL_EKS", "http://127.0.0.1:1")
	cfg, err = live.LoadAWSConfig(ctx, live.AWSOptions{Region: "eu-west-1", Budget: time.Second, EndpointURL: env.URL})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := live.New(live.Options{ClusterName: "prod-eks", Region: "eu-west-1", Clients: live.NewClients(cfg, nil, nil), Budget: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if _, err := p2.Cluster(ctx); err != nil {
		t.Fatalf("Cluster via --aws-endpoint-url: %v", err)
	}
}
