package awscall

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	smithy "github.com/aws/smithy-go"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
)

// Outcome classifies how an AWS call ended, as the aws_requests_total metric labels it and as the
// reason of an unknown fact tells it.
type Outcome string

// Outcomes.
const (
	OutcomeSuccess     Outcome = "success"
	OutcomeNotFound    Outcome = "not_found"
	OutcomeDenied      Outcome = "denied"
	OutcomeThrottled   Outcome = "throttled"
	OutcomeTimeout     Outcome = "timeout"
	OutcomeCredentials Outcome = "no_credentials"
	// OutcomeUnavailable is an endpoint that does not serve the operation at all (HTTP 404 without an
	// AWS error code, UnknownOperationException, InvalidAction, HTTP 501): an emulator that lacks
	// it, or a partition or VPC endpoint without that API. Asking again will not change it.
	OutcomeUnavailable Outcome = "not_available"
	// OutcomeBudget is a call of an audit that was not sent because the audit's call budget is spent
	// (BudgetError): the next audit asks it.
	OutcomeBudget Outcome = "budget_spent"
	OutcomeError  Outcome = "error"
)

// notFoundCodes are the error codes that answer "does not exist": a known, negative answer.
var notFoundCodes = map[string]bool{
	"NoSuchEntity":              true, // IAM
	"ResourceNotFoundException": true, // EKS
	"ParameterNotFound":         true, // SSM
	"NotFoundException":         true, // KMS
	"NoSuchResourceException":   true, // Service Quotas: no applied value
}

// unavailableCodes are the error codes that say the endpoint does not serve the operation.
var unavailableCodes = map[string]bool{
	"UnknownOperationException":     true, // JSON protocols (SSM, EKS behind some proxies)
	"UnknownOperation":              true,
	"InvalidAction":                 true, // query protocols (IAM, STS, EC2)
	"UnsupportedOperation":          true, // EC2
	"UnsupportedOperationException": true,
	"NotImplemented":                true,
}

// Classify tells how an SDK error ended a call.
func Classify(err error) Outcome {
	if err == nil {
		return OutcomeSuccess
	}
	var signing *v4.SigningError
	if errors.As(err, &signing) || strings.Contains(err.Error(), "get identity: get credentials: ") {
		// The SDK's identity resolution wraps credential failures in plain errors ("get identity: get
		// credentials: failed to refresh cached credentials, …"): only their words tell them apart.
		return OutcomeCredentials
	}
	var throttled *ThrottledError
	if errors.As(err, &throttled) {
		return OutcomeThrottled // AWS throttled it, or the Pacer's backoff kept it from being sent
	}
	var budget *BudgetError
	if errors.As(err, &budget) {
		return OutcomeBudget
	}
	var quota ratelimit.QuotaExceededError
	if errors.As(err, &quota) {
		return OutcomeThrottled // the client's own retry budget, spent by a throttling storm
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		code := api.ErrorCode()
		switch {
		case notFoundCodes[code]:
			return OutcomeNotFound
		case code == "AccessDenied" || code == "AccessDeniedException" || code == "UnauthorizedOperation" ||
			strings.HasPrefix(code, "UnauthorizedAccess"):
			return OutcomeDenied
		case code == "Throttling" || code == "ThrottlingException" || code == "RequestLimitExceeded" ||
			code == "TooManyRequestsException" || code == "RequestThrottled" || code == "ThrottledException":
			return OutcomeThrottled
		case code == "InvalidClientTokenId" || code == "ExpiredToken" || code == "ExpiredTokenException" ||
			code == "UnrecognizedClientException" || code == "AuthFailure" || code == "SignatureDoesNotMatch":
			return OutcomeCredentials
		case unavailableCodes[code]:
			return OutcomeUnavailable
		}
	}
	if status := httpStatus(err); status == http.StatusNotImplemented ||
		status == http.StatusNotFound && (!errors.As(err, &api) || api.ErrorCode() == "" || api.ErrorCode() == "UnknownError") {
		// A 404 that carries no AWS error code comes from the endpoint, not from the service: a real
		// "does not exist" has its code (NoSuchEntity, ResourceNotFoundException), matched above.
		return OutcomeUnavailable
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, cache.ErrLate) {
		return OutcomeTimeout
	}
	return OutcomeError
}

// httpStatus returns the HTTP status of the answer behind an SDK error, or 0 when there was none.
func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// endpointHost returns the host that answered the call behind an SDK error, or "".
func endpointHost(err error) string {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.Response != nil && re.Response.Response != nil && re.Response.Request != nil && re.Response.Request.URL != nil {
		return re.Response.Request.URL.Host
	}
	return ""
}

// CallError is an AWS call that gave no answer, worded for the operator who reads why a check was not
// evaluated. Its Reason names the action (the IAM action to grant, when denied) but no resource, so
// that one missing permission reads as one cause across every role and image.
type CallError struct {
	// Action is the IAM action of the call ("iam:GetRole").
	Action  string
	Outcome Outcome
	// Budget is the time budget of the request that gave up waiting (timeouts only).
	Budget time.Duration
	// Cause, for a timeout, is what ended the wait when it was neither the budget nor a plain
	// cancellation: the cause a caller's context was cancelled with (the CLI's --deadline).
	Cause error
	// Hint, when set, replaces the general advice of a denied call (a parameter outside the policy's
	// resources needs the policy extended, not the action granted).
	Hint string
	Err  error
}

func (e *CallError) Error() string { return e.Reason() + ": " + e.Err.Error() }

// Transient reports whether asking again later may succeed: throttling, a timeout, a server error,
// an audit's spent call budget; not a denial, missing credentials, "not found" or an API the endpoint
// does not serve.
func (e *CallError) Transient() bool {
	return e.Outcome == OutcomeThrottled || e.Outcome == OutcomeTimeout || e.Outcome == OutcomeError || e.Outcome == OutcomeBudget
}

// Lasting reports whether the failure will not pass soon (an API the endpoint does not serve): the
// cache keeps it like a "does not exist" answer (cache.Lasting) instead of asking again in seconds.
func (e *CallError) Lasting() bool { return e.Outcome == OutcomeUnavailable }

// Unwrap returns the SDK's error.
func (e *CallError) Unwrap() error { return e.Err }

// Reason is the cause shown to operators.
func (e *CallError) Reason() string {
	switch e.Outcome {
	case OutcomeDenied:
		if e.Hint != "" {
			return fmt.Sprintf("AWS denied %s (%s)", e.Action, e.Hint)
		}
		return fmt.Sprintf("AWS denied %s (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)", e.Action)
	case OutcomeThrottled:
		var t *ThrottledError
		if errors.As(e.Err, &t) {
			// One wording for the throttled call and for every call the backoff kept back, without
			// the backoff's length: the checks they cost read as one cause.
			return fmt.Sprintf("AWS throttled %s; karpenter-guard backs off every %s call until AWS answers again", e.Action, strings.ToUpper(t.Service))
		}
		return fmt.Sprintf("AWS throttled %s", e.Action)
	case OutcomeBudget:
		var b *BudgetError
		if errors.As(e.Err, &b) {
			return fmt.Sprintf("the audit's budget of %d AWS calls is spent; the next audit asks the rest", b.Limit)
		}
		return "the audit's budget of AWS calls is spent; the next audit asks the rest"
	case OutcomeTimeout:
		if e.Cause != nil {
			return fmt.Sprintf("no answer from AWS in time (%s): %v", e.Action, e.Cause)
		}
		if e.Budget > 0 {
			return fmt.Sprintf("no answer from AWS within the %v budget (%s)", e.Budget, e.Action)
		}
		return fmt.Sprintf("no answer from AWS in time (%s)", e.Action)
	case OutcomeCredentials:
		return fmt.Sprintf("no valid AWS credentials for %s (set up EKS Pod Identity or IRSA for karpenter-guard's service account, or AWS_PROFILE for a local run)", e.Action)
	case OutcomeUnavailable:
		return fmt.Sprintf("%s is not available at this endpoint (%s): an emulator, or a partition without this API", apiName(e.Action), e.unavailableDetail())
	}
	msg := e.Err.Error()
	var api smithy.APIError
	if errors.As(e.Err, &api) {
		msg = api.ErrorCode() + ": " + api.ErrorMessage()
	}
	return fmt.Sprintf("%s failed (%s)", e.Action, msg)
}

// unavailableDetail says how the endpoint answered a call it does not serve: "HTTP 404 from
// 127.0.0.1:4566", "InvalidAction from ec2.us-east-1.amazonaws.com: …".
func (e *CallError) unavailableDetail() string {
	what := fmt.Sprintf("HTTP %d", httpStatus(e.Err))
	var api smithy.APIError
	if errors.As(e.Err, &api) && api.ErrorCode() != "" && api.ErrorCode() != "UnknownError" {
		what = api.ErrorCode()
		if msg := api.ErrorMessage(); msg != "" && msg != api.ErrorCode() {
			what += ": " + msg
		}
	}
	if host := endpointHost(e.Err); host != "" {
		what += " from " + host
	}
	return what
}

// apiName writes an IAM action as its service and operation: "eks:ListAccessEntries" is "EKS
// ListAccessEntries".
func apiName(action string) string {
	svc, op, ok := strings.Cut(action, ":")
	if !ok {
		return action
	}
	return strings.ToUpper(svc) + " " + op
}

// NewCallError words err, the error of the call action, by how the call ended; a timeout names
// budget, the time the caller was given.
func NewCallError(action string, err error, budget time.Duration) *CallError {
	ce := &CallError{Action: action, Outcome: Classify(err), Err: err}
	if ce.Outcome == OutcomeTimeout {
		ce.Budget = budget
	}
	return ce
}

// Worded is an error that already says, for the operator, why a question has no answer: a
// *CallError, or an answer such as "this cluster does not exist". Lookup keeps it as a fetch returns
// it, and Unknown takes the unknown fact's reason from it.
type Worded interface {
	error
	Reason() string
}

// Unknown turns a failed call into the unknown fact f, with the call's reason.
func Unknown(f facts.Fact, err error) error {
	var w Worded
	if errors.As(err, &w) {
		return &facts.UnknownError{Fact: f, Reason: w.Reason(), Err: err}
	}
	var u *facts.UnknownError
	if errors.As(err, &u) {
		return &facts.UnknownError{Fact: f, Reason: u.Reason, Err: err}
	}
	return &facts.UnknownError{Fact: f, Reason: err.Error(), Err: err}
}
