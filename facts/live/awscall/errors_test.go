package awscall

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	smithy "github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/karpenter-guard/karpenter-guard/facts/cache"
)

// answered is an SDK error as the clients return it: err inside the HTTP answer of status from host.
func answered(status int, host string, err error) error {
	req := &http.Request{URL: &url.URL{Scheme: "https", Host: host, Path: "/"}}
	return fmt.Errorf("operation error: %w", &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status, Request: req}}, Err: err},
		RequestID:     "req-1",
	})
}

// TestClassify: how an SDK error ended a call, the "not available here" answers of an endpoint that
// lacks an API among them; a service's own "not found" is still that, whatever its status.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want Outcome
	}{
		{"success", nil, OutcomeSuccess},
		{"IAM not found (404)", answered(404, "iam.amazonaws.com", &smithy.GenericAPIError{Code: "NoSuchEntity"}), OutcomeNotFound},
		{"KMS not found", answered(400, "kms.us-east-1.amazonaws.com", &smithy.GenericAPIError{Code: "NotFoundException"}), OutcomeNotFound},
		{"Service Quotas without an applied value", answered(400, "servicequotas.us-east-1.amazonaws.com", &smithy.GenericAPIError{Code: "NoSuchResourceException"}), OutcomeNotFound},
		{"EKS not found (404)", answered(404, "eks.us-east-1.amazonaws.com", &smithy.GenericAPIError{Code: "ResourceNotFoundException"}), OutcomeNotFound},
		{"404 without a code", answered(404, "127.0.0.1:4566", &smithy.GenericAPIError{Code: "UnknownError", Message: "UnknownError"}), OutcomeUnavailable},
		{"404 with a body that is not AWS's", answered(404, "127.0.0.1:4566", &smithy.DeserializationError{Err: errors.New("failed to decode response body")}), OutcomeUnavailable},
		{"404 with another AWS code", answered(404, "eks.us-east-1.amazonaws.com", &smithy.GenericAPIError{Code: "InvalidRequestException"}), OutcomeError},
		{"501", answered(501, "127.0.0.1:4566", &smithy.GenericAPIError{Code: "InternalFailure"}), OutcomeUnavailable},
		{"UnknownOperationException", answered(400, "ssm.us-east-1.amazonaws.com", &smithy.GenericAPIError{Code: "UnknownOperationException"}), OutcomeUnavailable},
		{"InvalidAction", answered(400, "ec2.us-east-1.amazonaws.com", &smithy.GenericAPIError{Code: "InvalidAction", Message: "The action DescribeImages is not valid for this web service."}), OutcomeUnavailable},
		{"denied", answered(403, "iam.amazonaws.com", &smithy.GenericAPIError{Code: "AccessDenied"}), OutcomeDenied},
		{"throttled", answered(400, "iam.amazonaws.com", &smithy.GenericAPIError{Code: "Throttling"}), OutcomeThrottled},
		{"server error", answered(500, "iam.amazonaws.com", &smithy.GenericAPIError{Code: "ServiceFailure"}), OutcomeError},
		{"deadline", fmt.Errorf("operation error: %w", context.DeadlineExceeded), OutcomeTimeout},
		{"late", &cache.LateError{Cause: cache.ErrMaxWait}, OutcomeTimeout},
		{"connection refused", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), OutcomeError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err); got != tc.want {
				t.Errorf("Classify(%v) = %s, want %s", tc.err, got, tc.want)
			}
		})
	}
}

// TestReasons: the reasons operators read, "not available here" naming the API and the endpoint, and
// which failures are transient (export again) or lasting (cached like a negative answer).
func TestReasons(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       *CallError
		reason    string
		transient bool
		lasting   bool
	}{
		{"404", &CallError{Action: "eks:ListAccessEntries", Outcome: OutcomeUnavailable, Err: answered(404, "127.0.0.1:4566", &smithy.GenericAPIError{Code: "UnknownError"})},
			"EKS ListAccessEntries is not available at this endpoint (HTTP 404 from 127.0.0.1:4566): an emulator, or a partition without this API", false, true},
		{"a code", &CallError{Action: "ec2:DescribeImages", Outcome: OutcomeUnavailable, Err: answered(400, "ec2.example", &smithy.GenericAPIError{Code: "InvalidAction", Message: "not valid here"})},
			"EC2 DescribeImages is not available at this endpoint (InvalidAction: not valid here from ec2.example): an emulator, or a partition without this API", false, true},
		{"budget", &CallError{Action: "iam:GetRole", Outcome: OutcomeTimeout, Budget: 1e9, Err: cache.ErrLate},
			"no answer from AWS within the 1s budget (iam:GetRole)", true, false},
		{"the run's deadline", &CallError{Action: "iam:GetRole", Outcome: OutcomeTimeout, Budget: 1e9, Cause: errors.New("the run's --deadline of 30s passed"), Err: cache.ErrLate},
			"no answer from AWS in time (iam:GetRole): the run's --deadline of 30s passed", true, false},
		{"throttled", &CallError{Action: "iam:GetRole", Outcome: OutcomeThrottled, Err: errors.New("x")}, "AWS throttled iam:GetRole", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Reason(); got != tc.reason {
				t.Errorf("Reason() = %q\nwant       %q", got, tc.reason)
			}
			if tc.err.Transient() != tc.transient || cache.Lasting(fmt.Errorf("wrapped: %w", tc.err)) != tc.lasting {
				t.Errorf("transient %v, lasting %v; want %v, %v", tc.err.Transient(), cache.Lasting(tc.err), tc.transient, tc.lasting)
			}
			if !strings.HasPrefix(tc.err.Error(), tc.reason) {
				t.Errorf("Error() = %q does not start with the reason", tc.err.Error())
			}
		})
	}
}
