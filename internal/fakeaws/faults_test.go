package fakeaws_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

const principal = "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks"

// full is the production snapshot with an instance profile, the controller's Pod Identity association
// and a simulation, so that every operation has something to find.
func full(t *testing.T) *facts.ClusterFacts {
	cf := production(t)
	profiles := []facts.InstanceProfile{{Name: "KarpenterNodeInstanceProfile-prod-eks",
		ARN: "arn:aws:iam::111122223333:instance-profile/KarpenterNodeInstanceProfile-prod-eks", Roles: []string{"KarpenterNodeRole-prod-eks"}}}
	cf.InstanceProfiles = &profiles
	associations := 1
	cf.Cluster.PodIdentityAssociations = &associations
	cf.KarpenterController = &facts.ControllerRole{ServiceAccount: "kube-system/karpenter", RoleARN: controller, Source: facts.CredentialsPodIdentity}
	cf.Simulations = &[]facts.Simulation{{Principal: controller, Action: "iam:PassRole", Resource: principal,
		Context: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}, Decision: facts.DecisionAllowed}}
	found := true
	cf.KMSKeys = &[]facts.KMSKey{{Ref: "alias/karpenter-ebs", Found: &found, ARN: "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
		KeyState: facts.KeyStateEnabled, KeySpec: "SYMMETRIC_DEFAULT", KeyUsage: "ENCRYPT_DECRYPT"}}
	cf.ServiceQuotas = &map[string]int{facts.QuotaSecurityGroupsPerENI: 5}
	cf.CapacityReservations = &[]facts.CapacityReservation{{ID: "cr-0123", InstanceType: "p5.48xlarge", AvailabilityZone: "us-east-1a", State: "active"}}
	cf.InstanceTypes = &[]facts.InstanceType{{InstanceType: "m7g.large", SupportedArchitectures: []string{"arm64"}, Zones: []string{"us-east-1a"}}}
	on := true
	cf.VPC = &facts.VPCAttributes{EnableDNSSupport: &on, EnableDNSHostnames: &on}
	cf.NATGateways = &[]facts.NATGateway{{ID: "nat-0abc", State: "available", ConnectivityType: "public", PublicIPs: []string{"203.0.113.10"}}}
	cf.VPCEndpoints = &[]facts.VPCEndpoint{{ID: "vpce-0ecrapi", ServiceName: "com.amazonaws.us-east-1.ecr.api", Type: "Interface", State: "available", PrivateDNSEnabled: &on}}
	return cf
}

const controller = "arn:aws:iam::111122223333:role/KarpenterController-prod-eks"

// The node role's policy and permissions boundary in full's world (withNodePolicies), which the
// reading of a role's policies returns.
const (
	nodePolicy         = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeInstances","Resource":"*"}]}`
	nodeBoundaryPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:*","Resource":"*"}]}`
	nodeBoundary       = "arn:aws:iam::111122223333:policy/KarpenterNodeRole-prod-eks-boundary"
)

// withNodePolicies gives full's node role a policy and a permissions boundary.
func withNodePolicies() fakeaws.Option {
	return fakeaws.WithPolicies(fakeaws.Policies{principal: {Policies: []string{nodePolicy}, PermissionsBoundary: nodeBoundaryPolicy}})
}

// calls makes one successful call of every operation against the production snapshot.
var calls = map[string]func(context.Context, clients) error{
	"eks:DescribeCluster": func(ctx context.Context, c clients) error {
		_, err := c.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("prod-eks")})
		return err
	},
	"eks:ListAccessEntries": func(ctx context.Context, c clients) error {
		_, err := c.eks.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: aws.String("prod-eks")})
		return err
	},
	"eks:DescribeAccessEntry": func(ctx context.Context, c clients) error {
		_, err := c.eks.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String("prod-eks"), PrincipalArn: aws.String(principal)})
		return err
	},
	"eks:ListPodIdentityAssociations": func(ctx context.Context, c clients) error {
		_, err := c.eks.ListPodIdentityAssociations(ctx, &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String("prod-eks")})
		return err
	},
	"eks:DescribePodIdentityAssociation": func(ctx context.Context, c clients) error {
		_, err := c.eks.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{ClusterName: aws.String("prod-eks"),
			AssociationId: aws.String(fakeaws.AssociationID("prod-eks", "kube-system", "karpenter"))})
		return err
	},
	"iam:ListRolePolicies": func(ctx context.Context, c clients) error {
		out, err := c.iam.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: aws.String("KarpenterNodeRole-prod-eks")})
		if err == nil && (len(out.PolicyNames) != 1 || out.PolicyNames[0] != "policy-1") {
			err = fmt.Errorf("policy names %q, want [policy-1]", out.PolicyNames)
		}
		return err
	},
	"iam:GetRolePolicy": func(ctx context.Context, c clients) error {
		out, err := c.iam.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String("KarpenterNodeRole-prod-eks"), PolicyName: aws.String("policy-1")})
		if err == nil {
			if doc, _ := url.QueryUnescape(aws.ToString(out.PolicyDocument)); doc != nodePolicy {
				err = fmt.Errorf("document %q, want the node role's policy", doc)
			}
		}
		return err
	},
	"iam:ListAttachedRolePolicies": func(ctx context.Context, c clients) error {
		out, err := c.iam.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String("KarpenterNodeRole-prod-eks")})
		if err == nil && len(out.AttachedPolicies) != 0 {
			err = fmt.Errorf("attached policies %v, want none", out.AttachedPolicies)
		}
		return err
	},
	"iam:GetPolicy": func(ctx context.Context, c clients) error {
		out, err := c.iam.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(nodeBoundary)})
		if err == nil && aws.ToString(out.Policy.DefaultVersionId) != "v1" {
			err = fmt.Errorf("default version %q, want v1", aws.ToString(out.Policy.DefaultVersionId))
		}
		return err
	},
	"iam:GetPolicyVersion": func(ctx context.Context, c clients) error {
		out, err := c.iam.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: aws.String(nodeBoundary), VersionId: aws.String("v1")})
		if err == nil {
			if doc, _ := url.QueryUnescape(aws.ToString(out.PolicyVersion.Document)); doc != nodeBoundaryPolicy {
				err = fmt.Errorf("document %q, want the boundary", doc)
			}
		}
		return err
	},
	"iam:SimulatePrincipalPolicy": func(ctx context.Context, c clients) error {
		out, err := c.iam.SimulatePrincipalPolicy(ctx, &iam.SimulatePrincipalPolicyInput{PolicySourceArn: aws.String(controller),
			ActionNames: []string{"iam:PassRole"}, ResourceArns: []string{principal},
			ContextEntries: []iamtypes.ContextEntry{{ContextKeyName: aws.String("iam:PassedToService"), ContextKeyType: iamtypes.ContextKeyTypeEnumString, ContextKeyValues: []string{"ec2.amazonaws.com"}}}})
		if err == nil && out.EvaluationResults[0].EvalDecision != iamtypes.PolicyEvaluationDecisionTypeAllowed {
			err = errors.New("the snapshot's simulation was not the answer")
		}
		return err
	},
	"iam:GetRole": func(ctx context.Context, c clients) error {
		_, err := c.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("KarpenterNodeRole-prod-eks")})
		return err
	},
	"iam:GetInstanceProfile": func(ctx context.Context, c clients) error {
		_, err := c.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("KarpenterNodeInstanceProfile-prod-eks")})
		return err
	},
	"iam:ListInstanceProfilesForRole": func(ctx context.Context, c clients) error {
		_, err := c.iam.ListInstanceProfilesForRole(ctx, &iam.ListInstanceProfilesForRoleInput{RoleName: aws.String("KarpenterNodeRole-prod-eks")})
		return err
	},
	"sts:GetCallerIdentity": func(ctx context.Context, c clients) error {
		_, err := c.sts.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		return err
	},
	"ec2:DescribeImages": func(ctx context.Context, c clients) error {
		_, err := c.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
		return err
	},
	"ec2:DescribeSubnets": func(ctx context.Context, c clients) error {
		_, err := c.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
		return err
	},
	"ec2:DescribeRouteTables": func(ctx context.Context, c clients) error {
		_, err := c.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{})
		return err
	},
	"ec2:DescribeSecurityGroups": func(ctx context.Context, c clients) error {
		_, err := c.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
		return err
	},
	"ec2:GetEbsEncryptionByDefault": func(ctx context.Context, c clients) error {
		_, err := c.ec2.GetEbsEncryptionByDefault(ctx, &ec2.GetEbsEncryptionByDefaultInput{})
		return err
	},
	"ec2:GetEbsDefaultKmsKeyId": func(ctx context.Context, c clients) error {
		_, err := c.ec2.GetEbsDefaultKmsKeyId(ctx, &ec2.GetEbsDefaultKmsKeyIdInput{})
		return err
	},
	"ec2:DescribeVpcAttribute": func(ctx context.Context, c clients) error {
		_, err := c.ec2.DescribeVpcAttribute(ctx, &ec2.DescribeVpcAttributeInput{VpcId: aws.String("vpc-0a1b2c3d"), Attribute: ec2types.VpcAttributeNameEnableDnsSupport})
		return err
	},
	"ec2:DescribeNatGateways": func(ctx context.Context, c clients) error {
		_, err := c.ec2.DescribeNatGateways(ctx, &ec2.DescribeNatGatewaysInput{})
		return err
	},
	"ec2:DescribeVpcEndpoints": func(ctx context.Context, c clients) error {
		_, err := c.ec2.DescribeVpcEndpoints(ctx, &ec2.DescribeVpcEndpointsInput{})
		return err
	},
	"ssm:GetParameter": func(ctx context.Context, c clients) error {
		_, err := c.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.33-v20251112/image_id")})
		return err
	},
	"ec2:DescribeInstanceTypes": func(ctx context.Context, c clients) error {
		_, err := c.ec2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{})
		return err
	},
	"ec2:DescribeInstanceTypeOfferings": func(ctx context.Context, c clients) error {
		_, err := c.ec2.DescribeInstanceTypeOfferings(ctx, &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZone})
		return err
	},
	"ec2:DescribeCapacityReservations": func(ctx context.Context, c clients) error {
		_, err := c.ec2.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{})
		return err
	},
	"kms:DescribeKey": func(ctx context.Context, c clients) error {
		_, err := c.kms.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String("alias/karpenter-ebs")})
		return err
	},
	"servicequotas:GetServiceQuota": func(ctx context.Context, c clients) error {
		_, err := c.sq.GetServiceQuota(ctx, &servicequotas.GetServiceQuotaInput{ServiceCode: aws.String("vpc"), QuotaCode: aws.String("L-2AFB9258")})
		return err
	},
}

// faultShapes is what each fault looks like in each service, as the real services answer.
var faultShapes = map[string]map[string]struct {
	code   string
	status int
}{
	"throttle": {"eks": {"ThrottlingException", 429}, "iam": {"Throttling", 400}, "sts": {"Throttling", 400}, "ec2": {"RequestLimitExceeded", 503}, "ssm": {"ThrottlingException", 400},
		"kms": {"ThrottlingException", 400}, "servicequotas": {"TooManyRequestsException", 400}},
	"denied": {"eks": {"AccessDeniedException", 403}, "iam": {"AccessDenied", 403}, "sts": {"AccessDenied", 403}, "ec2": {"UnauthorizedOperation", 403}, "ssm": {"AccessDeniedException", 400},
		"kms": {"AccessDeniedException", 400}, "servicequotas": {"AccessDeniedException", 400}},
	"500": {"eks": {"ServerException", 500}, "iam": {"ServiceFailure", 500}, "sts": {"InternalFailure", 500}, "ec2": {"InternalError", 500}, "ssm": {"InternalServerError", 500},
		"kms": {"KMSInternalException", 500}, "servicequotas": {"ServiceException", 500}},
	"503": {"eks": {"ServiceUnavailableException", 503}, "iam": {"ServiceUnavailable", 503}, "sts": {"ServiceUnavailable", 503}, "ec2": {"Unavailable", 503}, "ssm": {"ServiceUnavailable", 503},
		"kms": {"ServiceUnavailable", 503}, "servicequotas": {"ServiceUnavailable", 503}},
}

func TestEveryOperationServed(t *testing.T) {
	srv, c := start(t, full(t), withNodePolicies())
	for _, op := range fakeaws.Operations {
		call, ok := calls[op]
		if !ok {
			t.Fatalf("no test call for %s", op)
		}
		if err := call(context.Background(), c); err != nil {
			t.Errorf("%s: %v", op, err)
		}
		if n := srv.Calls(op); n != 1 {
			t.Errorf("%s: counted %d calls, want 1", op, n)
		}
	}
}

func TestFaultShapes(t *testing.T) {
	ctx := context.Background()
	faults := map[string]fakeaws.Fault{"throttle": {Throttle: true}, "denied": {AccessDenied: true}, "500": {Status: 500}, "503": {Status: 503}}
	srv, c := start(t, full(t), withNodePolicies())
	for _, op := range fakeaws.Operations {
		svc, name, _ := strings.Cut(op, ":")
		for kind, f := range faults {
			t.Run(op+"/"+kind, func(t *testing.T) {
				srv.Inject(op, f)
				defer srv.Clear(op)
				want := faultShapes[kind][svc]
				msg := ""
				if kind == "denied" {
					msg = "User: arn:aws:sts::111122223333:assumed-role/karpenter-guard/fakeaws is not authorized to perform: " + op
				}
				err := calls[op](ctx, c)
				wantAPIError(t, err, want.code, want.status, msg)

				// The SDK's standard retryer must see throttling as throttling, server errors as
				// retryable, and access denied as final.
				retryable := retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
				throttle := retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err) == aws.TrueTernary
				if retryable != (kind != "denied") || throttle != (kind == "throttle") {
					t.Errorf("retryable %v, throttle %v for %s %s", retryable, throttle, kind, name)
				}
			})
		}
	}
}

func TestDeniedNamesTheResource(t *testing.T) {
	srv, c := start(t, full(t), withNodePolicies())
	for op, resource := range map[string]string{
		"iam:GetRole":                        " on resource: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks because",
		"iam:GetInstanceProfile":             " on resource: arn:aws:iam::111122223333:instance-profile/KarpenterNodeInstanceProfile-prod-eks because",
		"eks:DescribeCluster":                " on resource: arn:aws:eks:us-east-1:111122223333:cluster/prod-eks because",
		"eks:DescribeAccessEntry":            " on resource: arn:aws:eks:us-east-1:111122223333:access-entry/prod-eks/role/111122223333/KarpenterNodeRole-prod-eks/* because",
		"eks:ListPodIdentityAssociations":    " on resource: arn:aws:eks:us-east-1:111122223333:cluster/prod-eks because",
		"eks:DescribePodIdentityAssociation": " on resource: arn:aws:eks:us-east-1:111122223333:podidentityassociation/prod-eks/" + fakeaws.AssociationID("prod-eks", "kube-system", "karpenter") + " because",
		"iam:SimulatePrincipalPolicy":        " on resource: " + controller + " because",
		"ssm:GetParameter":                   " on resource: arn:aws:ssm:us-east-1::parameter/aws/service/eks/optimized-ami/1.33/",
		"ec2:DescribeImages":                 "perform: ec2:DescribeImages because no identity-based policy allows the ec2:DescribeImages action",
	} {
		srv.Inject(op, fakeaws.Fault{AccessDenied: true, Count: 1})
		err := calls[op](context.Background(), c)
		var ae interface{ ErrorMessage() string }
		if !errors.As(err, &ae) || !strings.Contains(ae.ErrorMessage(), resource) {
			t.Errorf("%s: %v does not contain %q", op, err, resource)
		}
	}
}

func TestLatencyAndHangHonourTheDeadline(t *testing.T) {
	srv, c := start(t, full(t), withNodePolicies())
	for _, op := range []string{"eks:DescribeCluster", "iam:GetRole", "sts:GetCallerIdentity", "ec2:DescribeImages", "ssm:GetParameter"} {
		for name, f := range map[string]fakeaws.Fault{"hang": {Hang: true}, "latency": {Latency: time.Hour}, "latency then error": {Latency: time.Hour, Throttle: true}} {
			t.Run(op+"/"+name, func(t *testing.T) {
				srv.Inject(op, f)
				defer srv.Clear(op)
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				err := calls[op](ctx, c)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("got %v, want context.DeadlineExceeded", err)
				}
			})
		}
	}

	// A short latency delays the answer and then answers normally (or with the fault's error).
	srv.Inject("ec2:DescribeSubnets", fakeaws.Fault{Latency: 30 * time.Millisecond, Count: 1})
	begin := time.Now()
	if err := calls["ec2:DescribeSubnets"](context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d < 30*time.Millisecond {
		t.Errorf("answered after %v, before the injected latency", d)
	}
	srv.Inject("ec2:DescribeSubnets", fakeaws.Fault{Latency: time.Millisecond, Status: 503, Count: 1})
	wantAPIError(t, calls["ec2:DescribeSubnets"](context.Background(), c), "Unavailable", 503, "")
}

// TestSlowEndpoint: a latency injected for "*" delays every operation of every service, each of which
// then answers normally; a client that gives up first gets its own deadline, not an answer.
func TestSlowEndpoint(t *testing.T) {
	const latency = 40 * time.Millisecond
	srv, c := start(t, full(t), withNodePolicies())
	srv.Inject("*", fakeaws.Fault{Latency: latency})
	for _, op := range fakeaws.Operations {
		t.Run(op, func(t *testing.T) {
			begin := time.Now()
			if err := calls[op](context.Background(), c); err != nil {
				t.Fatalf("slow %s: %v, want its answer", op, err)
			}
			if d := time.Since(begin); d < latency {
				t.Errorf("answered after %v, before the injected latency", d)
			}
			ctx, cancel := context.WithTimeout(context.Background(), latency/4)
			defer cancel()
			if err := calls[op](ctx, c); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s with a deadline under the latency: %v, want context.DeadlineExceeded", op, err)
			}
		})
	}
}

// TestUnavailable: an operation the endpoint does not serve answers HTTP 404 with no AWS error code, in
// every service's protocol; the SDK's retryer does not retry it, and it is no service's "not found".
func TestUnavailable(t *testing.T) {
	srv, c := start(t, full(t), withNodePolicies())
	notFound := []string{"NoSuchEntity", "ResourceNotFoundException", "ParameterNotFound"}
	for _, op := range fakeaws.Operations {
		t.Run(op, func(t *testing.T) {
			srv.Inject(op, fakeaws.Fault{Unavailable: true, Count: 1})
			before := srv.Calls(op)
			err := calls[op](context.Background(), c)
			var re *awshttp.ResponseError
			if !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusNotFound {
				t.Fatalf("got %v, want an HTTP 404 answer", err)
			}
			var ae smithy.APIError
			if errors.As(err, &ae) && slices.Contains(notFound, ae.ErrorCode()) {
				t.Errorf("code %s: the endpoint's 404 reads as the service's own not found", ae.ErrorCode())
			}
			if retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary {
				t.Errorf("the standard retryer retries %v", err)
			}
			if n := srv.Calls(op) - before; n != 1 {
				t.Errorf("%d calls counted, want 1", n)
			}
			if err := calls[op](context.Background(), c); err != nil {
				t.Errorf("after the fault's count: %v", err)
			}
		})
	}
}

func TestShutdownReleasesHangs(t *testing.T) {
	srv := fakeaws.New(full(t))
	run, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := newClients(sdkConfig(), run.URL)
	srv.Inject("iam:GetRole", fakeaws.Fault{Hang: true})
	done := make(chan error, 1)
	go func() { done <- calls["iam:GetRole"](context.Background(), c) }()
	for deadline := time.Now().Add(10 * time.Second); srv.Calls("iam:GetRole") == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the fake")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := run.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := <-done; err == nil {
		t.Error("a hung call released by shutdown succeeded; want a transport error (no answer was sent)")
	}
}

func TestFaultCountAndRetries(t *testing.T) {
	ctx := context.Background()
	srv, c := start(t, full(t), withNodePolicies())

	// Count: the first N requests fail, then the operation recovers.
	srv.Inject("iam:GetRole", fakeaws.Fault{Throttle: true, Count: 2})
	for i, wantErr := range []bool{true, true, false, false} {
		if err := calls["iam:GetRole"](ctx, c); (err != nil) != wantErr {
			t.Errorf("call %d: %v", i+1, err)
		}
	}
	if n := srv.Calls("iam:GetRole"); n != 4 {
		t.Errorf("counted %d calls, want 4", n)
	}

	// After: the first N requests pass, then the fault applies (for Count requests).
	srv.Inject("iam:GetRole", fakeaws.Fault{AccessDenied: true, After: 1, Count: 1})
	for i, wantErr := range []bool{false, true, false} {
		if err := calls["iam:GetRole"](ctx, c); (err != nil) != wantErr {
			t.Errorf("after: call %d: %v", i+1, err)
		}
	}

	// The SDK's standard retryer (without its back-off) retries throttling and 5xx through to success,
	// and gives up at once on access denied; the counter sees every attempt.
	cfg := sdkConfig()
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		})
	}
	url := srv.Start(t)
	rc := newClients(cfg, url)
	for _, tc := range []struct {
		op    string
		fault fakeaws.Fault
		ok    bool
		calls int
	}{
		{"ec2:DescribeImages", fakeaws.Fault{Throttle: true, Count: 2}, true, 3},
		{"eks:DescribeCluster", fakeaws.Fault{Throttle: true, Count: 2}, true, 3},
		{"ssm:GetParameter", fakeaws.Fault{Status: 503, Count: 2}, true, 3},
		{"sts:GetCallerIdentity", fakeaws.Fault{Status: 500, Count: 3}, false, 3},
		{"iam:GetInstanceProfile", fakeaws.Fault{AccessDenied: true, Count: 2}, false, 1},
	} {
		srv.ResetCalls()
		srv.Inject(tc.op, tc.fault)
		err := calls[tc.op](ctx, rc)
		if (err == nil) != tc.ok || srv.Calls(tc.op) != tc.calls {
			t.Errorf("%s %+v: error %v after %d calls; want success %v after %d", tc.op, tc.fault, err, srv.Calls(tc.op), tc.ok, tc.calls)
		}
		srv.Clear(tc.op)
	}
}

func TestFaultPrecedenceAndClear(t *testing.T) {
	ctx := context.Background()
	srv, c := start(t, full(t), withNodePolicies())
	srv.Inject("*", fakeaws.Fault{AccessDenied: true})
	srv.Inject("ec2:*", fakeaws.Fault{Throttle: true})
	srv.Inject("ec2:DescribeImages", fakeaws.Fault{Status: 500})
	wantAPIError(t, calls["ec2:DescribeImages"](ctx, c), "InternalError", 500, "")
	wantAPIError(t, calls["ec2:DescribeSubnets"](ctx, c), "RequestLimitExceeded", 503, "")
	wantAPIError(t, calls["iam:GetRole"](ctx, c), "AccessDenied", 403, "iam:GetRole")
	srv.Clear("ec2:DescribeImages")
	wantAPIError(t, calls["ec2:DescribeImages"](ctx, c), "RequestLimitExceeded", 503, "")
	srv.Clear("")
	for op, call := range calls {
		if err := call(ctx, c); err != nil {
			t.Errorf("%s after Clear: %v", op, err)
		}
	}
}

func TestCallCounter(t *testing.T) {
	ctx := context.Background()
	srv, c := start(t, full(t), withNodePolicies())
	for range 3 {
		_ = calls["ec2:DescribeImages"](ctx, c)
	}
	_ = calls["ec2:DescribeSubnets"](ctx, c)
	_ = calls["iam:GetRole"](ctx, c)
	_, _ = c.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{}) // unsupported, still a call
	for op, want := range map[string]int{"ec2:DescribeImages": 3, "ec2:DescribeSubnets": 1, "ec2:DescribeInstances": 1, "ec2:*": 5, "iam:GetRole": 1, "iam:*": 1, "ssm:*": 0, "*": 6} {
		if got := srv.Calls(op); got != want {
			t.Errorf("Calls(%q) = %d, want %d", op, got, want)
		}
	}
	srv.ResetCalls()
	if n := srv.Calls("*"); n != 0 {
		t.Errorf("after ResetCalls: %d", n)
	}
}

func TestConcurrentFaultsAndCounts(t *testing.T) {
	ctx := context.Background()
	srv, c := start(t, full(t), withNodePolicies())
	srv.Inject("iam:GetRole", fakeaws.Fault{Throttle: true, Count: 10})
	var wg sync.WaitGroup
	var mu sync.Mutex
	throttled, other := 0, 0
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := calls["iam:GetRole"](ctx, c)
			var ae interface{ ErrorCode() string }
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.As(err, &ae) && ae.ErrorCode() == "Throttling":
				throttled++
			case err != nil:
				other++
			}
		}()
		_ = calls["ssm:GetParameter"](ctx, c)
	}
	wg.Wait()
	if throttled != 10 || other != 0 || srv.Calls("iam:GetRole") != 40 || srv.Calls("ssm:GetParameter") != 40 {
		t.Errorf("throttled %d, other errors %d, calls %d and %d; want 10, 0, 40, 40", throttled, other, srv.Calls("iam:GetRole"), srv.Calls("ssm:GetParameter"))
	}
}

func TestInjectRefusesNonsense(t *testing.T) {
	srv := fakeaws.New(full(t))
	for _, tc := range []struct {
		op string
		f  fakeaws.Fault
	}{
		{"ec2:DescribeImage", fakeaws.Fault{Throttle: true}},
		{"s3:*", fakeaws.Fault{Throttle: true}},
		{"iam:GetRole", fakeaws.Fault{Status: 404}},
		{"iam:GetRole", fakeaws.Fault{Count: 3}},
		{"iam:GetRole", fakeaws.Fault{Latency: -time.Second}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Inject(%q, %+v) did not panic", tc.op, tc.f)
				}
			}()
			srv.Inject(tc.op, tc.f)
		}()
	}
}

func TestParseFault(t *testing.T) {
	for _, tc := range []struct {
		spec string
		op   string
		f    fakeaws.Fault
		err  string
	}{
		{spec: "ec2:DescribeImages=latency:2s", op: "ec2:DescribeImages", f: fakeaws.Fault{Latency: 2 * time.Second}},
		{spec: "iam:GetRole=throttle,count:2", op: "iam:GetRole", f: fakeaws.Fault{Throttle: true, Count: 2}},
		{spec: "iam:GetRole=denied,after:1", op: "iam:GetRole", f: fakeaws.Fault{AccessDenied: true, After: 1}},
		{spec: "iam:GetRole=denied,after:-1", err: "negative latency, count or after"},
		{spec: "iam:GetRole=after:1", err: "does nothing"},
		{spec: "ssm:*=status:503", op: "ssm:*", f: fakeaws.Fault{Status: 503}},
		{spec: "eks:ListAccessEntries=unavailable", op: "eks:ListAccessEntries", f: fakeaws.Fault{Unavailable: true}},
		{spec: "*=latency:5s", op: "*", f: fakeaws.Fault{Latency: 5 * time.Second}},
		{spec: "*=denied", op: "*", f: fakeaws.Fault{AccessDenied: true}},
		{spec: "eks:DescribeCluster=latency:100ms, hang", op: "eks:DescribeCluster", f: fakeaws.Fault{Latency: 100 * time.Millisecond, Hang: true}},
		{spec: "ec2:DescribeImages", err: "expected op=kind"},
		{spec: "ec2:DescribeImages=slow", err: `unknown kind "slow"`},
		{spec: "ec2:DescribeImages=latency", err: "latency needs a valid argument"},
		{spec: "ec2:DescribeImages=status:teapot", err: "status needs a valid argument"},
		{spec: "ec2:DescribeImages=status:418", err: "expected a 5xx status"},
		{spec: "ec2:Nope=hang", err: `no operation "ec2:Nope"`},
	} {
		op, f, err := fakeaws.ParseFault(tc.spec)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseFault(%q) error %v, want %q", tc.spec, err, tc.err)
		case tc.err == "" && (err != nil || op != tc.op || f != tc.f):
			t.Errorf("ParseFault(%q) = %q, %+v, %v; want %q, %+v", tc.spec, op, f, err, tc.op, tc.f)
		}
	}
}

func TestSetFacts(t *testing.T) {
	ctx := context.Background()
	srv, c := start(t, snapshot(t, identity))
	_, err := c.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("Later")})
	wantAPIError(t, err, "NoSuchEntity", 404, "Later")
	srv.SetFacts(snapshot(t, header+"roles: [{name: Later, arn: \"arn:aws:iam::111122223333:role/Later\"}]\n"))
	if _, err := c.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("Later")}); err != nil {
		t.Errorf("after SetFacts: %v", err)
	}
}

func TestConfigHelper(t *testing.T) {
	srv := fakeaws.New(full(t))
	cfg := fakeaws.Config(srv.Start(t), "")
	out, err := sts.NewFromConfig(cfg).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	if err != nil || aws.ToString(out.Account) != "111122223333" {
		t.Fatalf("GetCallerIdentity through Config: %+v, %v", out, err)
	}
	// One attempt per call: a 503 is not retried behind the caller's back.
	srv.Inject("ec2:DescribeSubnets", fakeaws.Fault{Status: 503})
	_, err = ec2.NewFromConfig(cfg).DescribeSubnets(context.Background(), &ec2.DescribeSubnetsInput{})
	wantAPIError(t, err, "Unavailable", 503, "")
	if n := srv.Calls("ec2:DescribeSubnets"); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
}

func TestUnsignedRequests(t *testing.T) {
	srv := fakeaws.New(full(t))
	base := srv.Start(t)
	for _, tc := range []struct {
		name   string
		req    func() (*http.Response, error)
		status int
		body   string
	}{
		{"EC2 by Version", func() (*http.Response, error) {
			return http.PostForm(base, url.Values{"Action": {"DescribeSubnets"}, "Version": {"2016-11-15"}, "SubnetId.1": {"subnet-0public1"}})
		}, 200, "<subnetId>subnet-0public1</subnetId>"},
		{"IAM by Version", func() (*http.Response, error) {
			return http.PostForm(base, url.Values{"Action": {"GetRole"}, "Version": {"2010-05-08"}, "RoleName": {"nope"}})
		}, 404, "<Code>NoSuchEntity</Code>"},
		{"EKS by path", func() (*http.Response, error) { return http.Get(base + "/clusters/prod-eks") }, 200, `"authenticationMode":"API_AND_CONFIG_MAP"`},
		{"SSM by target", func() (*http.Response, error) {
			req, _ := http.NewRequest(http.MethodPost, base, strings.NewReader(`{"Name":"nope"}`))
			req.Header.Set("X-Amz-Target", "AmazonSSM.GetParameter")
			return http.DefaultClient.Do(req)
		}, 400, `"__type":"ParameterNotFound"`},
		{"unknown service", func() (*http.Response, error) { return http.Get(base + "/bucket/key") }, 400, "cannot tell which AWS service"},
		{"signed for another service", func() (*http.Response, error) {
			req, _ := http.NewRequest(http.MethodGet, base+"/clusters/prod-eks", nil)
			req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKID/20250101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00")
			return http.DefaultClient.Do(req)
		}, 400, `service "s3"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := tc.req()
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.body) {
				t.Errorf("status %d body %s; want %d with %q", resp.StatusCode, body, tc.status, tc.body)
			}
		})
	}
}
