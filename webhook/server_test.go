package webhook_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpenter-guard/karpenter-guard/certs"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
	"github.com/karpenter-guard/karpenter-guard/webhook"
)

// TestBadRequests: what is not a review the webhook can answer gets a clear status or answer, and the
// server keeps serving.
func TestBadRequests(t *testing.T) {
	limits := webhook.Limits{MaxRequestBytes: 64 << 10, BodyReadTimeout: 300 * time.Millisecond}
	srv := startServer(t, reviewer(t, nil, nil, nil), limits)
	review := func(mod func(*admissionv1.AdmissionReview)) []byte {
		ar := reviewOf(t, admissionv1.Create, classWithProblems, "", false)
		mod(ar)
		b, _ := json.Marshal(ar)
		return b
	}
	cases := []struct {
		name string
		body []byte
		code int
		want string // in the body (the AdmissionReview's status message, or the HTTP error)
	}{
		{"not JSON", []byte("{not json"), 200, `"code":400`},
		{"empty body", []byte{}, 200, "request body is empty"},
		{"no object", review(func(ar *admissionv1.AdmissionReview) { ar.Request.Object.Raw = nil }), 200, "the AdmissionReview has no request.object"},
		{"undecodable object", review(func(ar *admissionv1.AdmissionReview) {
			ar.Request.Object.Raw = []byte(`{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"x"},"spec":{"role":["a","b"]}}`)
		}), 200, `denied: cannot read the object: spec.role: expected a string, found a list`},
		{"a kind it does not review", review(func(ar *admissionv1.AdmissionReview) { ar.Request.Kind.Kind = "Pod"; ar.Request.Kind.Group = "" }), 200, `karpenter-guard does not review Pod`},
		{"another ConfigMap", review(func(ar *admissionv1.AdmissionReview) {
			ar.Request.Kind.Kind, ar.Request.Kind.Group, ar.Request.Name, ar.Request.Namespace = "ConfigMap", "", "coredns", "kube-system"
		}), 200, `"allowed":true`},
		{"a status update", review(func(ar *admissionv1.AdmissionReview) { ar.Request.SubResource = "status" }), 200, "does not review subresource status"},
		{"too large", bytes.Repeat([]byte(" "), 65<<10), 413, "larger than the 65536 bytes it accepts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out := srv.postRaw(t, webhook.ValidatePath, tc.body)
			if code != tc.code || !strings.Contains(string(out), tc.want) {
				t.Errorf("status %d body %s; want %d with %q", code, out, tc.code, tc.want)
			}
		})
	}
	t.Run("v1beta1 AdmissionReview", func(t *testing.T) {
		ar := reviewOf(t, admissionv1.Create, classWithProblems, "", false)
		ar.APIVersion = "admission.k8s.io/v1beta1"
		b, _ := json.Marshal(ar)
		code, out := srv.postRaw(t, webhook.ValidatePath, b)
		if code != 200 || !strings.Contains(string(out), `"apiVersion":"admission.k8s.io/v1beta1"`) || !strings.Contains(string(out), "[instance-profile-arn]") {
			t.Errorf("%d %s", code, out)
		}
	})
	t.Run("a client that sends slowly", func(t *testing.T) {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(srv.url, "https://"), srv.client.Transport.(*http.Transport).TLSClientConfig)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, _ = conn.Write([]byte("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"))
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		buf := make([]byte, 512)
		n, _ := conn.Read(buf)
		if !strings.Contains(string(buf[:n]), "408") || !strings.Contains(string(buf[:n]), "did not arrive within 300ms") {
			t.Errorf("answer to a stalled body: %q", buf[:n])
		}
	})
	// Still serving after all that.
	if resp := srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Create, classWithProblems, "", false)); resp.Allowed {
		t.Errorf("the server no longer denies")
	}
}

// TestTLS12Minimum: a client offering only TLS 1.1 is refused.
func TestTLS12Minimum(t *testing.T) {
	srv := startServer(t, reviewer(t, nil, nil, nil), webhook.DefaultLimits())
	cfg := srv.client.Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	if conn, err := tls.Dial("tcp", strings.TrimPrefix(srv.url, "https://"), cfg); err == nil {
		conn.Close()
		t.Fatal("a TLS 1.1 handshake succeeded")
	}
}

// TestCertificateReload: certificates replaced on disk while serving are picked up without a
// restart: a client trusting only the new CA gets through.
func TestCertificateReload(t *testing.T) {
	srv := startServer(t, reviewer(t, nil, nil, nil), webhook.DefaultLimits())
	ar := reviewOf(t, admissionv1.Create, classWithProblems, "", false)
	srv.post(t, webhook.ValidatePath, ar)
	if err := certs.Generate(srv.certDir, certs.Hosts("", ""), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	fresh := &server{url: srv.url, client: tlsClient(t, srv.certDir)}
	body, _ := json.Marshal(ar)
	deadline := time.Now().Add(60 * time.Second) // certwatcher polls every 10 s besides fsnotify
	for {
		req, _ := http.NewRequest(http.MethodPost, fresh.url+webhook.ValidatePath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := fresh.client.Do(req)
		if err == nil {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new certificate was not served: %v", err)
		}
		fresh.client.CloseIdleConnections()
		time.Sleep(100 * time.Millisecond)
	}
}

// TestGracefulShutdown: a review in flight when the server stops is still answered.
func TestGracefulShutdown(t *testing.T) {
	cf, err := facts.DecodeSnapshotFile([]byte("apiVersion: karpenter-guard.io/v1alpha1\nkind: ClusterFacts\ncluster: {name: c, region: us-east-1, partition: aws, accountID: \"111122223333\", version: \"1.33\", authenticationMode: API}\nroles: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	env := livetest.Start(t, cf, livetest.Options{Budget: 5 * time.Second})
	env.Fake.Inject("iam:GetRole", fakeaws.Fault{Latency: 700 * time.Millisecond})
	cfg := parseConfig(t, "aws:\n  timeout: 5s\n")
	srv := startServer(t, reviewer(t, env.Provider, cfg, nil), webhook.DefaultLimits())
	done := make(chan *admissionv1.AdmissionResponse, 1)
	go func() {
		done <- srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Create, strings.Replace(classWithProblems, "instanceProfile: arn:aws:iam::111122223333:instance-profile/KarpenterNodeInstanceProfile", "role: Missing", 1), "", false))
	}()
	for env.Fake.Calls("iam:GetRole") == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	srv.stop() // while GetRole is answered slowly
	resp := <-done
	if resp.Allowed || !strings.Contains(resp.Result.Message, "[node-role-not-found]") {
		t.Errorf("the review in flight was not answered in full: %+v", resp.Result)
	}
}

// TestAWSFaultsFollowOnError: AWS throttling, hanging or denying is answered within the budget with the
// verdict aws.onError prescribes, saying what could not be verified.
func TestAWSFaultsFollowOnError(t *testing.T) {
	cf, err := facts.DecodeSnapshotFile([]byte(`apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster: {name: prod-eks, region: us-east-1, partition: aws, accountID: "111122223333", version: "1.33", authenticationMode: API, vpcID: vpc-1}
accessEntries: [{principalArn: "arn:aws:iam::111122223333:role/KarpenterNodeRole", type: EC2_LINUX}]
awsAuth: {}
roles: [{name: KarpenterNodeRole, arn: "arn:aws:iam::111122223333:role/KarpenterNodeRole"}]
instanceProfiles: []
images: [{id: ami-1, name: amazon-eks-node-al2023-x86_64-standard-1.33-v20251112, ownerID: "602401143452", ownerAlias: amazon, architecture: x86_64, state: available}]
ssmParameters: {/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id: ami-1}
subnets: [{id: subnet-1, vpcID: vpc-1, availabilityZone: us-east-1a, tags: {karpenter.sh/discovery: prod-eks}}]
securityGroups: [{id: sg-1, name: nodes, vpcID: vpc-1, tags: {karpenter.sh/discovery: prod-eks}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(classWithProblems, "instanceProfile: arn:aws:iam::111122223333:instance-profile/KarpenterNodeInstanceProfile", "role: KarpenterNodeRole", 1)
	doc = strings.Replace(doc, "    - name: platform-team-base-*\n", "", 1)
	doc = strings.Replace(doc, "    - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n", "    - alias: al2023@latest\n", 1)
	for _, fault := range []struct {
		name  string
		op    string
		f     fakeaws.Fault
		cause string
	}{
		{"throttling", "iam:*", fakeaws.Fault{Throttle: true}, "AWS throttled iam:GetRole"},
		{"hanging", "iam:GetRole", fakeaws.Fault{Hang: true}, "no answer from AWS within the 400ms budget (iam:GetRole)"},
		{"denying", "iam:GetRole", fakeaws.Fault{AccessDenied: true}, "AWS denied iam:GetRole"},
	} {
		for _, onError := range []string{"warn", "deny", "allow"} {
			t.Run(fault.name+"/"+onError, func(t *testing.T) {
				env := livetest.Start(t, cf, livetest.Options{Budget: 400 * time.Millisecond, Attempts: 3})
				env.Fake.Inject(fault.op, fault.f)
				cfg := parseConfig(t, "aws:\n  timeout: 400ms\n  onError: "+onError+"\n")
				srv := startServer(t, reviewer(t, env.Provider, cfg, nil), webhook.DefaultLimits())
				start := time.Now()
				resp := srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Create, doc, "", false))
				if d := time.Since(start); d > 10*time.Second { // far past the budget: it was not honoured
					t.Errorf("answered after %v", d)
				}
				said := strings.Join(resp.Warnings, "\n")
				if !resp.Allowed {
					said = resp.Result.Message
				}
				switch onError {
				case "warn":
					if !resp.Allowed || !strings.Contains(said, fault.cause) || !strings.Contains(said, "so 11 checks were not verified: ") || !strings.Contains(resp.AuditAnnotations["unverified"], "node-role-not-authorized") {
						t.Errorf("allowed=%v, said %q, annotations %v; want allowed with a warning naming %q", resp.Allowed, said, resp.AuditAnnotations, fault.cause)
					}
				case "deny":
					first, _, _ := strings.Cut(said, "\n")
					if resp.Allowed || !strings.HasPrefix(first, `karpenter-guard: EC2NodeClass "default" denied: could not verify [`) || !strings.Contains(first, fault.cause) {
						t.Errorf("allowed=%v, said %q; want a denial naming %q", resp.Allowed, said, fault.cause)
					}
				case "allow":
					if !resp.Allowed || strings.Contains(said, "not verified") || !strings.Contains(resp.AuditAnnotations["unverified"], fault.cause) {
						t.Errorf("allowed=%v, said %q, annotations %v; want allowed silently, recorded", resp.Allowed, said, resp.AuditAnnotations)
					}
				}
			})
		}
	}
}

// TestAWSAuthGuard: edits of kube-system/aws-auth that break node joins are refused; a malformed edit is
// refused; a harmless edit passes.
func TestAWSAuthGuard(t *testing.T) {
	cf, err := facts.DecodeSnapshotFile([]byte(`apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster: {name: prod-eks, region: us-east-1, partition: aws, accountID: "111122223333", version: "1.33", authenticationMode: CONFIG_MAP, vpcID: vpc-1}
roles: [{name: KarpenterNodeRole, arn: "arn:aws:iam::111122223333:role/KarpenterNodeRole"}]
`))
	if err != nil {
		t.Fatal(err)
	}
	classes := readString(t, `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod-eks}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: prod-eks}}]
`)
	srv := startServer(t, reviewer(t, facts.NewSnapshot(cf), nil, fixedCluster{classes: classes}), webhook.DefaultLimits())
	cm := func(mapRoles string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aws-auth, namespace: kube-system}\ndata:\n  mapRoles: |\n" + mapRoles
	}
	node := "    - rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole\n      username: system:node:{{EC2PrivateDNSName}}\n      groups: [system:bootstrappers, system:nodes]\n"
	admin := "    - rolearn: arn:aws:iam::111122223333:role/Admin\n      username: admin\n      groups: [system:masters]\n"
	stored := cm(node + admin)
	for _, tc := range []struct {
		name, op, doc, rule string
	}{
		{"drop the node role", "UPDATE", cm(admin), "aws-auth-removes-node-role"},
		{"delete aws-auth", "DELETE", "", "aws-auth-removes-node-role"},
		{"malformed edit", "UPDATE", cm(node + "    - rolearn: arn:aws:iam::111122223333:role/Dev\n"), "aws-auth-malformed"},
		{"drop an admin", "UPDATE", cm(node), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Operation(tc.op), tc.doc, stored, false))
			if tc.rule == "" {
				if !resp.Allowed {
					t.Errorf("refused: %s", resp.Result.Message)
				}
				return
			}
			first, _, _ := strings.Cut(resp.Result.Message, "\n")
			if resp.Allowed || !strings.HasPrefix(first, `karpenter-guard: ConfigMap "kube-system/aws-auth" denied: [`) || !strings.Contains(resp.Result.Message, "["+tc.rule+"]") {
				t.Errorf("allowed=%v, message %q; want a denial by %s", resp.Allowed, resp.Result.Message, tc.rule)
			}
			if tc.op == "DELETE" && !strings.Contains(first, `EC2NodeClass "default"`) {
				t.Errorf("the denial does not name the class: %q", first)
			}
		})
	}
}

// TestMetrics: reviews are counted by kind, operation and decision; findings by rule and action.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := webhook.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	r := webhook.NewReviewer(rules.Default(), config.Default(), facts.None{}, nil, m, logr.Discard())
	srv := startServer(t, r, webhook.DefaultLimits())
	for range 2 { // the second review of a kind counts on the series the first one made
		srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Create, classWithProblems, "", false))
	}
	srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Create, poolWithDeprecatedAnnotations, "", false))
	want := `
# HELP karpenter_guard_admission_requests_total Admission reviews answered, by kind, operation and decision (allow, warn, deny, error).
# TYPE karpenter_guard_admission_requests_total counter
karpenter_guard_admission_requests_total{decision="deny",kind="EC2NodeClass",operation="CREATE"} 2
karpenter_guard_admission_requests_total{decision="deny",kind="NodePool",operation="CREATE"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "karpenter_guard_admission_requests_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(mustCounter(t, reg, "karpenter_guard_findings_total", map[string]string{"rule": "instance-profile-arn", "action": "deny"})); got != 2 {
		t.Errorf("findings_total{instance-profile-arn,deny} = %v, want 2", got)
	}
	if got := testutil.ToFloat64(mustCounter(t, reg, "karpenter_guard_findings_total", map[string]string{"rule": "ami-selector-missing-owner", "action": "warn"})); got != 4 {
		t.Errorf("findings_total{ami-selector-missing-owner,warn} = %v, want 4 (capped at warn without image facts)", got)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	durations := map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() == "karpenter_guard_admission_duration_seconds" {
			for _, m := range mf.GetMetric() {
				durations[m.GetLabel()[0].GetValue()] = m.GetHistogram().GetSampleCount()
			}
		}
	}
	if want := map[string]uint64{"EC2NodeClass": 2, "NodePool": 1}; !maps.Equal(durations, want) {
		t.Errorf("admission_duration_seconds counts %v, want %v", durations, want)
	}
}

func mustCounter(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := true
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					match = false
				}
			}
			if match {
				c := prometheus.NewCounter(prometheus.CounterOpts{Name: "x"})
				c.Add(m.GetCounter().GetValue())
				return c
			}
		}
	}
	t.Fatalf("no %s%v", name, labels)
	return nil
}

// readString parses manifests into objects.
func readString(t testing.TB, in string) []*objects.Object {
	t.Helper()
	objs, _, errs := manifest.Parse("in.yaml", []byte(in))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return objs
}
