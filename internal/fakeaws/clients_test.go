package fakeaws_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

// clients are the real SDK clients, each pointed at the fake with BaseEndpoint.
type clients struct {
	eks *eks.Client
	iam *iam.Client
	sts *sts.Client
	ec2 *ec2.Client
	ssm *ssm.Client
	kms *kms.Client
	sq  *servicequotas.Client
}

// sdkConfig is what a live provider would build: a region, static credentials, and (here) no retries,
// so that every injected fault reaches the test.
func sdkConfig() aws.Config {
	return aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
		// As the live provider does: see live.SafeRequestBodies for the race it avoids.
		HTTPClient: live.SafeRequestBodies(awshttp.NewBuildableClient()),
	}
}

func newClients(cfg aws.Config, url string) clients {
	return clients{
		eks: eks.NewFromConfig(cfg, func(o *eks.Options) { o.BaseEndpoint = aws.String(url) }),
		iam: iam.NewFromConfig(cfg, func(o *iam.Options) { o.BaseEndpoint = aws.String(url) }),
		sts: sts.NewFromConfig(cfg, func(o *sts.Options) { o.BaseEndpoint = aws.String(url) }),
		ec2: ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint = aws.String(url) }),
		ssm: ssm.NewFromConfig(cfg, func(o *ssm.Options) { o.BaseEndpoint = aws.String(url) }),
		kms: kms.NewFromConfig(cfg, func(o *kms.Options) { o.BaseEndpoint = aws.String(url) }),
		sq:  servicequotas.NewFromConfig(cfg, func(o *servicequotas.Options) { o.BaseEndpoint = aws.String(url) }),
	}
}

// start serves cf and returns the fake and SDK clients talking to it.
func start(t *testing.T, cf *facts.ClusterFacts, opts ...fakeaws.Option) (*fakeaws.Server, clients) {
	t.Helper()
	srv := fakeaws.New(cf, opts...)
	return srv, newClients(sdkConfig(), srv.Start(t))
}

// recorder remembers the raw request URIs the SDK sent, to check what went over the wire.
type recorder struct {
	mu   sync.Mutex
	uris []string
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.uris = append(rec.uris, r.RequestURI)
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (rec *recorder) all() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.uris...)
}

// startRecorded is start with the raw request URIs recorded.
func startRecorded(t *testing.T, cf *facts.ClusterFacts) (*recorder, clients) {
	t.Helper()
	rec := &recorder{}
	ts := httptest.NewServer(rec.wrap(fakeaws.New(cf)))
	t.Cleanup(ts.Close)
	return rec, newClients(sdkConfig(), ts.URL)
}

// snapshot decodes an inline ClusterFacts document.
func snapshot(t *testing.T, doc string) *facts.ClusterFacts {
	t.Helper()
	cf, err := facts.DecodeSnapshotFile([]byte(doc))
	if err != nil {
		t.Fatalf("inline snapshot: %v", err)
	}
	return cf
}

// production is the example production snapshot.
func production(t *testing.T) *facts.ClusterFacts {
	t.Helper()
	data, err := os.ReadFile("../../examples/production/cluster-facts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cf, err := facts.DecodeSnapshotFile(data)
	if err != nil {
		t.Fatalf("production snapshot: %v", err)
	}
	return cf
}

const header = "apiVersion: karpenter-guard.io/v1alpha1\nkind: ClusterFacts\n"

// wantAPIError checks that err is an AWS API error with code and HTTP status, and a message containing
// msg; it returns the error for further checks.
func wantAPIError(t *testing.T, err error, code string, status int, msg string) smithy.APIError {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("got %T %v, want an API error %s", err, err, code)
	}
	if ae.ErrorCode() != code {
		t.Errorf("error code %q (%v), want %q", ae.ErrorCode(), err, code)
	}
	var re *awshttp.ResponseError
	if !errors.As(err, &re) {
		t.Errorf("error %v carries no HTTP response", err)
	} else if re.HTTPStatusCode() != status {
		t.Errorf("HTTP status %d for %s, want %d", re.HTTPStatusCode(), code, status)
	}
	if !strings.Contains(ae.ErrorMessage(), msg) {
		t.Errorf("message %q does not contain %q", ae.ErrorMessage(), msg)
	}
	return ae
}

// wantTyped checks that err unwraps to the SDK's typed error T.
func wantTyped[T error](t *testing.T, err error) T {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("got %T %v, want %T", err, err, target)
	}
	return target
}
