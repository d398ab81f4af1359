// Package fakeaws is a fake of the AWS APIs karpenter-guard reads (docs/design.md §6). It serves a ClusterFacts
// snapshot over the real wire protocols, so that the real aws-sdk-go-v2 clients, pointed at it with
// BaseEndpoint, see exactly the world the snapshot describes:
//
//   - EKS, REST-JSON: DescribeCluster, ListAccessEntries, DescribeAccessEntry (eks.go),
//     ListPodIdentityAssociations, DescribePodIdentityAssociation (podidentity.go);
//   - IAM and STS, query protocol with XML replies: GetRole, GetInstanceProfile,
//     ListInstanceProfilesForRole, GetCallerIdentity (iam.go), SimulatePrincipalPolicy (simulate.go),
//     which answers from the snapshot's simulations or evaluates the identity policies given with
//     WithPolicies (policy.go), and the reading of those policies: ListRolePolicies, GetRolePolicy,
//     ListAttachedRolePolicies, GetPolicy, GetPolicyVersion (rolepolicies.go);
//   - EC2, EC2 query protocol with <item> lists and EC2 filters: DescribeImages, DescribeSubnets,
//     DescribeRouteTables, DescribeSecurityGroups, and the account's EBS encryption by default,
//     GetEbsEncryptionByDefault and GetEbsDefaultKmsKeyId (ec2.go), and DescribeVpcAttribute,
//     DescribeNatGateways and DescribeVpcEndpoints (ec2network.go);
//   - SSM, JSON with X-Amz-Target: GetParameter (ssm.go);
//   - EC2's capacity calls: DescribeInstanceTypes, DescribeInstanceTypeOfferings and
//     DescribeCapacityReservations (ec2capacity.go);
//   - KMS, JSON with X-Amz-Target: DescribeKey (kms.go);
//   - Service Quotas, JSON with X-Amz-Target: GetServiceQuota (servicequotas.go).
//
// That lets one test run every case twice, through the snapshot provider and through the live provider
// talking to this fake, and demand the same findings. Faults (latency, hangs, throttling, 5xx, access
// denied, an operation the endpoint does not serve) can be injected per operation, and every
// operation's calls are counted (faults.go).
//
// A section absent from the snapshot is unknown. The fake answers the operations that read it with the
// service's access-denied error: that is how a live provider learns, for real, that it cannot know
// something, and it keeps "unknown" meaning the same thing on both paths.
//
// The service a request is for is read from its SigV4 credential scope (…/us-east-1/eks/aws4_request);
// signatures are not checked. Unsigned requests (curl in a demo) are recognised by their shape.
package fakeaws

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// Server is the fake. It is an http.Handler; Start and Listen serve it on a loopback port. All methods
// are safe for concurrent use.
type Server struct {
	world  atomic.Pointer[world]
	caller string // caller ARN option; "" derives one from the snapshot's account
	// policies are the identity policies of WithPolicies, parsed.
	policies map[string]*principalPolicies
	log      io.Writer
	logMu    sync.Mutex
	reqSeq   atomic.Uint64

	mu     sync.Mutex
	faults map[string]*injected
	calls  map[string]int
}

// Option configures a Server.
type Option func(*Server)

// WithCallerARN sets the identity the fake reports in GetCallerIdentity and names in access-denied
// messages. The default is arn:<partition>:sts::<account>:assumed-role/karpenter-guard/fakeaws.
func WithCallerARN(arn string) Option { return func(s *Server) { s.caller = arn } }

// WithLog writes one line per request (operation, status, duration) to w.
func WithLog(w io.Writer) Option { return func(s *Server) { s.log = w } }

// New returns a fake serving the snapshot cf. cf is read, never modified; the caller must not modify it
// while the server runs (use SetFacts to change the world).
func New(cf *facts.ClusterFacts, opts ...Option) *Server {
	s := &Server{faults: map[string]*injected{}, calls: map[string]int{}}
	for _, o := range opts {
		o(s)
	}
	s.SetFacts(cf)
	return s
}

// SetFacts replaces the world the fake serves, for tests of caching and of a world that changes.
// Requests in flight finish with the old world.
func (s *Server) SetFacts(cf *facts.ClusterFacts) {
	if cf == nil {
		cf = &facts.ClusterFacts{}
	}
	s.world.Store(newWorld(cf, s.caller, s.policies))
}

// SetWorld replaces the world the fake serves and the principals' identity policies together (SetFacts
// keeps the policies of WithPolicies or of the last SetWorld). A nil p removes them.
func (s *Server) SetWorld(cf *facts.ClusterFacts, p Policies) error {
	compiled, err := p.compile()
	if err != nil {
		return fmt.Errorf("fakeaws: policies: %w", err)
	}
	s.policies = compiled
	s.SetFacts(cf)
	return nil
}

// Start serves the fake on a new loopback test server and returns its base URL (http://127.0.0.1:PORT).
// The server stops when the test ends; requests still hanging on an injected fault are released first.
func (s *Server) Start(tb testing.TB) string {
	tb.Helper()
	ts := httptest.NewUnstartedServer(s)
	ctx, cancel := context.WithCancel(context.Background())
	ts.Config.BaseContext = func(net.Listener) context.Context { return ctx }
	ts.Start()
	tb.Cleanup(func() {
		cancel() // a hung handler would otherwise keep ts.Close waiting forever
		ts.Close()
	})
	return ts.URL
}

// Running is a fake served by Listen.
type Running struct {
	// URL is the base URL to give the SDK clients as BaseEndpoint.
	URL    string
	srv    *http.Server
	cancel context.CancelFunc
	done   chan error
}

// Listen serves the fake on addr (such as "127.0.0.1:0") until Shutdown. It is the variant of Start for
// programs and for tests that manage the server's life themselves.
func (s *Server) Listen(addr string) (*Running, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fakeaws: listen on %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Running{
		URL:    "http://" + l.Addr().String(),
		srv:    &http.Server{Handler: s, BaseContext: func(net.Listener) context.Context { return ctx }, ReadHeaderTimeout: 10 * time.Second},
		cancel: cancel,
		done:   make(chan error, 1),
	}
	go func() {
		err := r.srv.Serve(l)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		r.done <- err
	}()
	return r, nil
}

// Shutdown releases requests hanging on injected faults, then stops the server gracefully: it waits for
// requests in flight until ctx is done.
func (r *Running) Shutdown(ctx context.Context) error {
	r.cancel()
	if err := r.srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("fakeaws: shutdown: %w", err)
	}
	if err := <-r.done; err != nil {
		return fmt.Errorf("fakeaws: serve: %w", err)
	}
	return nil
}

// Config returns an aws.Config whose clients all talk to the fake at baseURL: static credentials,
// BaseEndpoint, and one attempt per call (the SDK's default retryer backs off for seconds, which hides
// injected faults). region "" means us-east-1. Callers may change any field, such as Retryer.
func Config(baseURL, region string) aws.Config {
	if region == "" {
		region = "us-east-1"
	}
	return aws.Config{
		Region:           region,
		Credentials:      credentials.NewStaticCredentialsProvider("AKIAFAKEAWS000000000", "fakeaws-secret-key", ""),
		BaseEndpoint:     aws.String(baseURL),
		RetryMaxAttempts: 1,
	}
}

// apiError is an AWS error answer: the protocol file writes it in its service's shape.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

// request is one HTTP request as the fake understands it.
type request struct {
	*http.Request
	id  string // request id, echoed in every answer
	svc string // "eks", "iam", "sts", "ec2", "ssm", "kms", "servicequotas"
	op  string // the operation ("DescribeCluster"); "" when the request names none
	// params holds what parse decoded of a body that can be read only once (SSM's, KMS's and Service
	// Quotas' JSON).
	params any
}

// api is one AWS service in its wire protocol.
type api interface {
	// parse names the operation of r (setting r.op even when it is not supported, so that it can be
	// counted) and reads its parameters; an unsupported or malformed request is an *apiError.
	parse(r *request) error
	// serve answers r from the world, writing the response, or returns an *apiError.
	serve(w http.ResponseWriter, r *request, wd *world) error
	// fail writes e in the service's error shape.
	fail(w http.ResponseWriter, r *request, e *apiError)
	// resource names the ARN r acts on, for access-denied messages ("" for actions without one).
	resource(r *request, wd *world) string
}

// Operations lists the operations the fake serves, as "service:Operation": the names Inject and Calls take.
var Operations = []string{
	"eks:DescribeCluster", "eks:ListAccessEntries", "eks:DescribeAccessEntry",
	"eks:ListPodIdentityAssociations", "eks:DescribePodIdentityAssociation",
	"iam:GetRole", "iam:GetInstanceProfile", "iam:ListInstanceProfilesForRole", "iam:SimulatePrincipalPolicy",
	"iam:ListRolePolicies", "iam:GetRolePolicy", "iam:ListAttachedRolePolicies", "iam:GetPolicy", "iam:GetPolicyVersion",
	"sts:GetCallerIdentity",
	"ec2:DescribeImages", "ec2:DescribeSubnets", "ec2:DescribeRouteTables", "ec2:DescribeSecurityGroups",
	"ec2:GetEbsEncryptionByDefault", "ec2:GetEbsDefaultKmsKeyId",
	"ec2:DescribeVpcAttribute", "ec2:DescribeNatGateways", "ec2:DescribeVpcEndpoints",
	"ssm:GetParameter",
	"ec2:DescribeInstanceTypes", "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeCapacityReservations",
	"kms:DescribeKey", "servicequotas:GetServiceQuota",
}

// apis maps a SigV4 service name to its protocol.
var apis = map[string]api{
	"eks": eksAPI{},
	"iam": iamAPI{},
	"sts": stsAPI{},
	"ec2": ec2API{},
	"ssm": ssmAPI{},

	"kms":           kmsAPI{},
	"servicequotas": serviceQuotasAPI{},
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	start := time.Now()
	r := &request{Request: hr, id: s.requestID()}
	sw := &statusWriter{ResponseWriter: w}
	defer func() { s.logRequest(r, sw.status, time.Since(start)) }()

	r.svc = serviceOf(hr)
	a, ok := apis[r.svc]
	if !ok {
		http.Error(sw, fmt.Sprintf("fakeaws: cannot tell which AWS service this request is for (credential scope service %q); it serves eks, iam, sts, ec2, ssm, kms and servicequotas", r.svc), http.StatusBadRequest)
		return
	}
	wd := s.world.Load()
	perr := a.parse(r)
	if r.op == "" {
		a.fail(sw, r, asAPIError(perr))
		return
	}
	op := r.svc + ":" + r.op
	s.count(op)
	if f, ok := s.takeFault(op); ok {
		e, proceed := s.apply(r, wd, f)
		if !proceed {
			// The client gave up or the server is shutting down. Returning would send an empty 200,
			// which the SDK could take for an empty answer: abort the connection instead.
			panic(http.ErrAbortHandler)
		}
		if e != nil {
			a.fail(sw, r, e)
			return
		}
		if f.Unavailable {
			writeUnavailable(sw, r)
			return
		}
		if f.Malformed {
			writeMalformed(sw, r)
			return
		}
	}
	if perr != nil {
		a.fail(sw, r, asAPIError(perr))
		return
	}
	if err := a.serve(sw, r, wd); err != nil && sw.status == 0 {
		a.fail(sw, r, asAPIError(err)) // (an error after the answer began is a client gone away)
	}
}

// asAPIError turns any error into an AWS error; errors other than *apiError are the fake's own bugs.
func asAPIError(err error) *apiError {
	var e *apiError
	if errors.As(err, &e) {
		return e
	}
	msg := "fakeaws internal error"
	if err != nil {
		msg += ": " + err.Error()
	}
	return &apiError{status: http.StatusInternalServerError, code: "InternalFailure", message: msg}
}

// serviceOf names the AWS service a request is for: the service of its SigV4 credential scope, else a
// guess from the request's shape for unsigned requests.
func serviceOf(r *http.Request) string {
	if svc := scopeService(r.Header.Get("Authorization")); svc != "" {
		return svc
	}
	if svc := scopeService("Credential=" + r.URL.Query().Get("X-Amz-Credential")); svc != "" {
		return svc // presigned URL
	}
	switch {
	case strings.HasPrefix(r.Header.Get("X-Amz-Target"), "AmazonSSM."):
		return "ssm"
	case strings.HasPrefix(r.Header.Get("X-Amz-Target"), "TrentService."):
		return "kms"
	case strings.HasPrefix(r.Header.Get("X-Amz-Target"), "ServiceQuotasV20190624."):
		return "servicequotas"
	case r.URL.Path == "/clusters" || strings.HasPrefix(r.URL.Path, "/clusters/"):
		return "eks"
	}
	if err := r.ParseForm(); err == nil {
		switch r.Form.Get("Version") {
		case iamVersion:
			return "iam"
		case stsVersion:
			return "sts"
		case ec2Version:
			return "ec2"
		}
	}
	return ""
}

// scopeService returns the service of a SigV4 Authorization header: "AWS4-HMAC-SHA256
// Credential=AKID/20250101/us-east-1/eks/aws4_request, SignedHeaders=…, Signature=…" gives "eks". SigV4a
// scopes (no region) work too.
func scopeService(auth string) string {
	i := strings.Index(auth, "Credential=")
	if i < 0 {
		return ""
	}
	cred := auth[i+len("Credential="):]
	if j := strings.IndexAny(cred, ", "); j >= 0 {
		cred = cred[:j]
	}
	parts := strings.Split(cred, "/")
	if len(parts) < 4 || parts[len(parts)-1] != "aws4_request" {
		return ""
	}
	return parts[len(parts)-2]
}

// requestID returns a fresh request id shaped like AWS's (a UUID).
func (s *Server) requestID() string {
	n := s.reqSeq.Add(1)
	return fmt.Sprintf("fa4e0000-0000-4000-8000-%012x", n)
}

// logRequest writes one line per request when a log is configured.
func (s *Server) logRequest(r *request, status int, d time.Duration) {
	if s.log == nil {
		return
	}
	op := r.svc + ":" + r.op
	if r.op == "" {
		op = r.svc + ":? " + r.Method + " " + r.URL.Path
	}
	result := fmt.Sprint(status)
	if status == 0 {
		result = "no answer (client gone or server stopping)"
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.log, "fakeaws: %s %s %s %s\n", r.id, op, result, d.Round(time.Millisecond))
}

// statusWriter remembers the status of the answer for the log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	if err != nil {
		return n, fmt.Errorf("fakeaws: write answer: %w", err)
	}
	return n, nil
}

// formValues parses a query-protocol request's form (POST body, or the URL query of a GET).
func formValues(r *request) (url.Values, error) {
	if err := r.ParseForm(); err != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: "MalformedQueryString", message: "cannot parse the request's form: " + err.Error()}
	}
	return r.Form, nil
}
