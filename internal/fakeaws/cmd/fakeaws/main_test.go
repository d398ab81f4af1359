package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

const production = "../../../../examples/production/cluster-facts.yaml"

func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, outW := io.Pipe()
	var logs strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--facts", production, "--fault", "ec2:DescribeSubnets=denied", "--quiet"}, outW, &logs)
		outW.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL: %v (run: %v)", err, <-done)
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("printed %q, want the base URL", line)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }() // drain anything else

	cfg := fakeaws.Config(url, "us-east-1")
	id, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil || aws.ToString(id.Account) != "111122223333" {
		t.Fatalf("GetCallerIdentity: %+v, %v", id, err)
	}
	_, err = ec2.NewFromConfig(cfg).DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "UnauthorizedOperation" {
		t.Errorf("DescribeSubnets with --fault denied: %v", err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop after its context was cancelled")
	}
	if logs.Len() != 0 {
		t.Errorf("--quiet logged %q", logs.String())
	}
}

// TestRunPolicies: --policies lets SimulatePrincipalPolicy evaluate the controller's policy for a
// snapshot without simulations.
func TestRunPolicies(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--facts", production, "--policies", "../../testdata/karpenter-controller.policies.yaml", "--quiet"}, outW, io.Discard)
		outW.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL: %v (run: %v)", err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	sim, err := iam.NewFromConfig(fakeaws.Config(strings.TrimSpace(line), "")).SimulatePrincipalPolicy(ctx, &iam.SimulatePrincipalPolicyInput{
		PolicySourceArn: aws.String("arn:aws:iam::111122223333:role/KarpenterController-prod-eks"),
		ActionNames:     []string{"iam:PassRole"},
		ResourceArns:    []string{"arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks"},
		ContextEntries: []iamtypes.ContextEntry{{ContextKeyName: aws.String("iam:PassedToService"), ContextKeyType: iamtypes.ContextKeyTypeEnumString,
			ContextKeyValues: []string{"ec2.amazonaws.com"}}},
	})
	if err != nil || sim.EvaluationResults[0].EvalDecision != iamtypes.PolicyEvaluationDecisionTypeAllowed {
		t.Errorf("SimulatePrincipalPolicy: %+v, %v", sim, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run after cancel: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: karpenter-guard.io/v1alpha1\nkind: ClusterFacts\nroles: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badPolicies := filepath.Join(dir, "bad-policies.yaml")
	if err := os.WriteFile(badPolicies, []byte("principals:\n  arn:aws:iam::111122223333:role/R:\n    policies: ['{\"Statement\": 1}']\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--facts is required"},
		{[]string{"--facts", filepath.Join(dir, "missing.yaml")}, "read facts"},
		{[]string{"--facts", bad}, "bad.yaml: line 3"},
		{[]string{"--facts", production, "--fault", "ec2:DescribeImages=slow"}, `unknown kind "slow"`},
		{[]string{"--facts", production, "--addr", "256.0.0.1:1"}, "listen on 256.0.0.1:1"},
		{[]string{"--facts", production, "extra"}, "unexpected arguments"},
		{[]string{"--facts", production, "--policies", filepath.Join(dir, "missing.yaml")}, "read policies"},
		{[]string{"--facts", production, "--policies", badPolicies}, "bad-policies.yaml: line 3: principal arn:aws:iam::111122223333:role/R: policies[0]: Statement[0]: expected a statement object, got 1"},
	} {
		err := run(context.Background(), tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %q: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}
