package fakeaws

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Fault is a failure injected into an operation. Latency delays the answer; then at most one of Hang,
// AccessDenied, Throttle, Status and Unavailable decides it, in that order of precedence. Latency and
// Hang honour the request's context: when the client gives up (its deadline passes) the fake stops and
// closes the connection without an answer. Inject("*", Fault{Latency: d}) makes a slow endpoint: every
// call answers normally after d.
type Fault struct {
	// Latency is added before the answer.
	Latency time.Duration
	// Hang blocks until the client gives up or the server shuts down; then the connection is closed
	// without an answer.
	Hang bool
	// AccessDenied answers with the service's access-denied error, naming the action and resource the
	// way AWS does: AccessDeniedException (EKS 403; SSM, KMS, Service Quotas 400), AccessDenied (IAM,
	// STS 403), UnauthorizedOperation (EC2 403).
	AccessDenied bool
	// Throttle answers with the service's retryable throttling error: ThrottlingException (EKS 429; SSM,
	// KMS 400), Throttling (IAM, STS 400, as those services really answer), RequestLimitExceeded (EC2
	// 503), TooManyRequestsException (Service Quotas 400).
	Throttle bool
	// Status answers with a server error of that 5xx status in the service's shape (500: ServerException,
	// ServiceFailure, InternalFailure, InternalError, InternalServerError; 503: ServiceUnavailable…).
	Status int
	// Unavailable answers as an endpoint that does not serve the operation at all: HTTP 404 with a
	// plain-text body and no AWS error code, what an emulator lacking the API (or a proxy in front of
	// a partition without it) answers. Unlike a service's own "not found" (NoSuchEntity,
	// ResourceNotFoundException), it says nothing about the resource asked for.
	Unavailable bool
	// Malformed answers 200 with a body cut off in the middle, in the service's content type: what a
	// broken proxy or a truncated connection delivers, which the SDK cannot deserialize.
	Malformed bool
	// Count limits the fault to the next Count requests of the operation; 0 means every request until
	// Clear.
	Count int
	// After lets that many requests of the operation through untouched before the fault applies: a
	// permission probe that passes, then a lookup that fails.
	After int
}

// injected is a fault with the number of requests it still applies to (-1: unlimited).
type injected struct {
	f    Fault // its After counts down the requests still to pass
	left int
}

// Inject makes every request of op fail with f (replacing an earlier fault of op). op is
// "service:Operation" from Operations, "service:*" for every operation of a service, or "*" for all; an
// exact name wins over service:*, which wins over *. Inject panics on an op that names no operation the
// fake serves or on an invalid fault, since a typo there would silently test nothing.
func (s *Server) Inject(op string, f Fault) {
	if err := checkFault(op, f); err != nil {
		panic(err)
	}
	left := -1
	if f.Count > 0 {
		left = f.Count
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[op] = &injected{f: f, left: left}
}

// Clear removes the fault of op (as given to Inject); Clear("") removes every fault.
func (s *Server) Clear(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if op == "" {
		clear(s.faults)
		return
	}
	delete(s.faults, op)
}

// Calls returns how many requests named op ("service:Operation"), faulted ones included: what AWS
// would have counted and billed against rate limits. "service:*" sums a service, "*" everything.
func (s *Server) Calls(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if op != "*" && !strings.HasSuffix(op, ":*") {
		return s.calls[op]
	}
	prefix := strings.TrimSuffix(op, "*")
	n := 0
	for k, c := range s.calls {
		if strings.HasPrefix(k, prefix) {
			n += c
		}
	}
	return n
}

// ResetCalls sets every call counter to zero.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.calls)
}

func (s *Server) count(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
}

// takeFault returns the fault that applies to this request of op, using up one of its count.
func (s *Server) takeFault(op string) (Fault, bool) {
	svc, _, _ := strings.Cut(op, ":")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, key := range []string{op, svc + ":*", "*"} {
		in, ok := s.faults[key]
		if !ok {
			continue
		}
		if in.f.After > 0 {
			in.f.After--
			return Fault{}, false
		}
		if in.left > 0 {
			in.left--
			if in.left == 0 {
				delete(s.faults, key)
			}
		}
		return in.f, true
	}
	return Fault{}, false
}

// apply carries out a fault: it returns the error to answer with (nil: answer normally, or as
// f.Unavailable or f.Malformed say), and proceed=false when the request's context ended first and
// nothing must be written.
func (s *Server) apply(r *request, wd *world, f Fault) (e *apiError, proceed bool) {
	ctx := r.Context()
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, false
		}
	}
	switch {
	case f.Hang:
		<-ctx.Done()
		return nil, false
	case f.AccessDenied:
		return denied(r, wd), true
	case f.Throttle:
		return throttled(r.svc), true
	case f.Status != 0:
		return serverError(r.svc, f.Status), true
	}
	return nil, true
}

// denied is the access-denied error of r's service, worded like AWS's: "User: arn:aws:sts::…:assumed-
// role/… is not authorized to perform: iam:GetRole on resource: arn:aws:iam::…:role/… because no
// identity-based policy allows the iam:GetRole action". The fake also answers it for an operation whose
// snapshot section is absent (unknown).
func denied(r *request, wd *world) *apiError {
	action := r.svc + ":" + r.op
	msg := "User: " + wd.caller + " is not authorized to perform: " + action
	if res := apis[r.svc].resource(r, wd); res != "" {
		msg += " on resource: " + res
	}
	msg += " because no identity-based policy allows the " + action + " action"
	switch r.svc {
	case "eks":
		return &apiError{status: http.StatusForbidden, code: "AccessDeniedException", message: msg}
	case "ssm", "kms", "servicequotas":
		return &apiError{status: http.StatusBadRequest, code: "AccessDeniedException", message: msg}
	case "ec2":
		return &apiError{status: http.StatusForbidden, code: "UnauthorizedOperation", message: "You are not authorized to perform this operation. " + msg}
	default: // iam, sts
		return &apiError{status: http.StatusForbidden, code: "AccessDenied", message: msg}
	}
}

// throttled is the throttling error of a service: a code the SDK's retryer treats as throttling.
func throttled(svc string) *apiError {
	switch svc {
	case "eks":
		return &apiError{status: http.StatusTooManyRequests, code: "ThrottlingException", message: "Rate exceeded"}
	case "ssm", "kms":
		return &apiError{status: http.StatusBadRequest, code: "ThrottlingException", message: "Rate exceeded"}
	case "servicequotas":
		return &apiError{status: http.StatusBadRequest, code: "TooManyRequestsException", message: "Rate exceeded"}
	case "ec2":
		return &apiError{status: http.StatusServiceUnavailable, code: "RequestLimitExceeded", message: "Request limit exceeded."}
	default: // iam, sts
		return &apiError{status: http.StatusBadRequest, code: "Throttling", message: "Rate exceeded"}
	}
}

// serverError is a 5xx error of a service, with the codes the services model or really send.
func serverError(svc string, status int) *apiError {
	unavailable := status == http.StatusServiceUnavailable
	code, msg := "InternalFailure", "The request processing has failed because of an unknown error, exception or failure."
	switch svc {
	case "eks":
		code, msg = "ServerException", "An internal error occurred. Please try again."
		if unavailable {
			code, msg = "ServiceUnavailableException", "The service is unavailable. Please try again."
		}
	case "iam":
		code, msg = "ServiceFailure", "The request processing has failed because of an unknown error, exception or failure."
		if unavailable {
			code, msg = "ServiceUnavailable", "Service is unavailable."
		}
	case "sts":
		if unavailable {
			code, msg = "ServiceUnavailable", "Service is unavailable."
		}
	case "ec2":
		code, msg = "InternalError", "An internal error has occurred."
		if unavailable {
			code, msg = "Unavailable", "The server is overloaded and can't handle the request."
		}
	case "ssm":
		code, msg = "InternalServerError", "An error occurred on the server side."
		if unavailable {
			code, msg = "ServiceUnavailable", "Service is unavailable."
		}
	case "kms":
		code, msg = "KMSInternalException", "The request was rejected because an internal exception occurred."
		if unavailable {
			code, msg = "ServiceUnavailable", "Service is unavailable."
		}
	case "servicequotas":
		code, msg = "ServiceException", "Something went wrong."
		if unavailable {
			code, msg = "ServiceUnavailable", "Service is unavailable."
		}
	}
	return &apiError{status: status, code: code, message: msg}
}

// checkFault validates an Inject call.
func checkFault(op string, f Fault) error {
	svc, name, ok := strings.Cut(op, ":")
	switch {
	case op == "*":
	case ok && name == "*" && apis[svc] != nil:
	case !slices.Contains(Operations, op):
		return fmt.Errorf("fakeaws: no operation %q: expected one of %s, service:* or *", op, strings.Join(Operations, ", "))
	}
	if f.Status != 0 && (f.Status < 500 || f.Status > 599) {
		return fmt.Errorf("fakeaws: fault status %d for %s: expected a 5xx status", f.Status, op)
	}
	if f.Latency < 0 || f.Count < 0 || f.After < 0 {
		return fmt.Errorf("fakeaws: fault for %s: negative latency, count or after", op)
	}
	if f == (Fault{Count: f.Count, After: f.After}) {
		return fmt.Errorf("fakeaws: fault for %s does nothing: set Latency, Hang, AccessDenied, Throttle, Status, Unavailable or Malformed", op)
	}
	return nil
}

// ParseFault parses the command's fault syntax: "op=kind[:arg][,kind[:arg]…]" where kind is
// latency:DURATION, hang, throttle, denied, status:CODE, unavailable, malformed, count:N or after:N,
// e.g. "ec2:DescribeImages=latency:2s", "iam:GetRole=throttle,count:2,after:1", "ssm:*=status:503",
// "eks:ListAccessEntries=unavailable".
func ParseFault(spec string) (string, Fault, error) {
	op, kinds, ok := strings.Cut(spec, "=")
	if !ok || op == "" || kinds == "" {
		return "", Fault{}, fmt.Errorf("fault %q: expected op=kind[:arg][,kind[:arg]…]", spec)
	}
	var f Fault
	for _, k := range strings.Split(kinds, ",") {
		kind, arg, hasArg := strings.Cut(strings.TrimSpace(k), ":")
		var err error
		switch kind {
		case "latency":
			f.Latency, err = time.ParseDuration(arg)
		case "hang":
			f.Hang = true
		case "throttle":
			f.Throttle = true
		case "denied":
			f.AccessDenied = true
		case "status":
			f.Status, err = strconv.Atoi(arg)
		case "unavailable":
			f.Unavailable = true
		case "malformed":
			f.Malformed = true
		case "count":
			f.Count, err = strconv.Atoi(arg)
		case "after":
			f.After, err = strconv.Atoi(arg)
		default:
			return "", Fault{}, fmt.Errorf("fault %q: unknown kind %q: expected latency:DURATION, hang, throttle, denied, status:CODE, unavailable, malformed, count:N or after:N", spec, kind)
		}
		if err != nil || (!hasArg && (kind == "latency" || kind == "status" || kind == "count" || kind == "after")) {
			return "", Fault{}, fmt.Errorf("fault %q: %s needs a valid argument (latency:2s, status:503, count:2, after:1)", spec, kind)
		}
	}
	if err := checkFault(op, f); err != nil {
		return "", Fault{}, fmt.Errorf("fault %q: %w", spec, err)
	}
	return op, f, nil
}

// writeUnavailable answers as an HTTP server that has no such route: 404, text/plain, no AWS error
// code in any header or body.
func writeUnavailable(w http.ResponseWriter, r *request) {
	w.Header().Set("X-Amzn-RequestId", r.id)
	http.Error(w, "404 page not found", http.StatusNotFound)
}

// writeMalformed answers 200 with half an answer in r's protocol.
func writeMalformed(w http.ResponseWriter, r *request) {
	body, contentType := `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<`+r.op+`Response xmlns="https://fakeaws/"><`+r.op+`Result><Ro`, "text/xml"
	switch r.svc {
	case "eks":
		body, contentType = `{"cluster": {"name": "`, "application/json"
	case "ssm":
		body, contentType = `{"Parameter": {"Name": `, ssmContentType
	case "kms":
		body, contentType = `{"KeyMetadata": {"KeyId": `, kmsContentType
	case "servicequotas":
		body, contentType = `{"Quota": {"Value": `, serviceQuotasContentType
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Amzn-RequestId", r.id)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(body))
}
