//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/certs"
)

// karpenterSA is how Karpenter's controller appears to the API server when installed by its chart in
// the namespace "karpenter"; impersonating it (with system:masters for the RBAC Karpenter's chart
// grants) makes the requests Karpenter makes.
var karpenterSA = []string{"--as=system:serviceaccount:karpenter:karpenter", "--as-group=system:masters"}

// storedClass is an EC2NodeClass with Karpenter's finalizer, as Karpenter leaves every class it manages.
func storedClass(name string) string {
	return `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: ` + name + `
  finalizers: [karpenter.k8s.aws/termination]
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: e2e}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: e2e}}]
`
}

// awsAuthConfigMap maps a node role.
const awsAuthConfigMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: aws-auth, namespace: kube-system}
data:
  mapRoles: |
    - rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole
      username: system:node:{{EC2PrivateDNSName}}
      groups: [system:bootstrappers, system:nodes]
`

// specChange pins the class's AMI: a change of spec, which a mode's failure policy governs.
const specChange = `{"spec":{"amiSelectorTerms":[{"alias":"al2023@v20251112"}]}}`

// TestWebhookDownNeverStallsKarpenter: with the webhook configurations of each mode in place and the
// webhook's Service without endpoints (every karpenter-guard pod gone), or with a webhook that accepts
// connections and never answers, Karpenter's controller still updates its objects, deletions finish,
// metadata edits pass, and a spec change is refused in mode enforce only.
func TestWebhookDownNeverStallsKarpenter(t *testing.T) {
	hung := hungWebhook(t)
	// Modes dry-run and warn deploy the same webhook configurations: a webhook that never answers (each
	// call then costs timeoutSeconds) is tried in one of them.
	if dryRun, warn := webhookManifests(t, "dry-run"), webhookManifests(t, "warn"); dryRun != warn {
		t.Fatalf("the webhook configurations of modes dry-run and warn differ:\n%s\n---\n%s", dryRun, warn)
	}
	for _, tc := range []struct {
		mode, outage string
	}{
		{"dry-run", "no endpoints"}, {"warn", "no endpoints"}, {"enforce", "no endpoints"},
		{"warn", "no answer"}, {"enforce", "no answer"},
	} {
		t.Run(tc.mode+"/"+tc.outage, func(t *testing.T) {
			reset(t)
			env.stopGuard()
			env.kubectlT(t, "delete", "service,endpoints", "karpenter-guard", "-n", "karpenter-guard", "--ignore-not-found")
			for _, name := range []string{"kept", "leaving"} {
				if r := env.kubectl(t, storedClass(name), "apply", "-f", "-"); r.code != 0 {
					t.Fatalf("store %s: %+v", name, r)
				}
			}
			t.Cleanup(func() {
				dropFinalizers(t, "kept", "leaving")
				env.kubectl(t, "", "delete", "service,endpoints", "karpenter-guard", "-n", "karpenter-guard", "--ignore-not-found")
			})
			env.registerDownWebhooks(t, tc.mode, tc.outage, hung)

			// (a) Karpenter's controller updates its annotations and removes its finalizer.
			if r := env.kubectl(t, "", append([]string{"annotate", "ec2nodeclass", "kept", "karpenter.k8s.aws/ec2nodeclass-hash=42", "--overwrite"}, karpenterSA...)...); r.code != 0 {
				t.Errorf("Karpenter's annotation update was refused: %+v", r)
			}
			if r := env.kubectl(t, "", append([]string{"patch", "ec2nodeclass", "kept", "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`}, karpenterSA...)...); r.code != 0 {
				t.Errorf("Karpenter's finalizer removal was refused: %+v", r)
			}
			// Anyone's metadata-only edit passes.
			if r := env.kubectl(t, "", "label", "ec2nodeclass", "kept", "team=platform"); r.code != 0 {
				t.Errorf("a label edit was refused: %+v", r)
			}
			// (b) Deleting a class with a finalizer completes once the finalizer goes (here removed by
			// an admin, not Karpenter: the object being deleted is what lets it through).
			env.kubectlT(t, "delete", "ec2nodeclass", "leaving", "--wait=false")
			if r := env.kubectl(t, "", "patch", "ec2nodeclass", "leaving", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`); r.code != 0 {
				t.Errorf("removing the finalizer of a class being deleted was refused: %+v", r)
			}
			if r := env.kubectl(t, "", "get", "ec2nodeclass", "leaving"); r.code == 0 || !strings.Contains(r.stderr, "NotFound") {
				t.Errorf("the deleted class is still there: %+v", r)
			}
			// aws-auth fails open in every mode: an outage never locks anyone out of it.
			if r := env.kubectl(t, awsAuthConfigMap, "apply", "-f", "-"); r.code != 0 {
				t.Errorf("an aws-auth edit was refused by a down webhook: %+v", r)
			}
			// (c, d) A spec change passes in dry-run and warn, and is refused in enforce, naming the
			// webhook and the outage.
			r := env.kubectl(t, "", "patch", "ec2nodeclass", "kept", "--type=merge", "-p", specChange)
			switch tc.mode {
			case "enforce":
				want := `failed calling webhook "karpenter.validate.karpenter-guard.io"`
				if r.code == 0 || !strings.Contains(r.stderr, want) {
					t.Errorf("a spec change passed a down webhook in mode enforce: %+v", r)
				}
				if strings.Contains(r.stderr, "karpenter.mutate.karpenter-guard.io") {
					t.Errorf("the mutating webhook failed closed: %s", r.stderr)
				}
			default:
				if r.code != 0 {
					t.Errorf("a spec change was refused by a down webhook in mode %s: %+v", tc.mode, r)
				}
			}
		})
	}
}

// registerDownWebhooks applies the webhook configurations of mode for an outage: "no endpoints" keeps
// their Service client config, with the Service and an Endpoints object without addresses (what the
// endpoints controller leaves when every pod is gone); "no answer" points them at hung. It waits until
// the API server calls them: until a probe request is recorded failing open (dry-run, warn) or is
// refused (enforce).
func (c *cluster) registerDownWebhooks(t *testing.T, mode, outage, hung string) {
	t.Helper()
	docs := deployment(t, mode)
	webhooks := docs["ValidatingWebhookConfiguration/karpenter-guard"] + "\n---\n" + docs["MutatingWebhookConfiguration/karpenter-guard"]
	// A CA of its own: the API server loads it before it finds there is nothing to call.
	staging := t.TempDir()
	if err := certs.Generate(staging, certs.Hosts("karpenter-guard", "karpenter-guard"), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	ca := []byte(readFile(t, filepath.Join(staging, certs.CAFile)))
	switch outage {
	case "no endpoints":
		c.kubectlT(t, "apply", "-f", writeTemp(t, docs["Service/karpenter-guard"]+"\n---\napiVersion: v1\nkind: Endpoints\nmetadata: {name: karpenter-guard, namespace: karpenter-guard}\n"))
		webhooks = renderWebhooks(webhooks, "", ca)
	case "no answer":
		webhooks = renderWebhooks(webhooks, hung, ca)
	default:
		t.Fatalf("outage %q", outage)
	}
	c.kubectlT(t, "apply", "-f", writeTemp(t, webhooks))
	for i := 0; ; i++ {
		name := fmt.Sprintf("outage-probe-%d", i)
		r := c.kubectl(t, strings.Replace(storedClass(name), "  finalizers: [karpenter.k8s.aws/termination]\n", "", 1), "apply", "--dry-run=server", "-f", "-")
		switch {
		case mode == "enforce" && strings.Contains(r.stderr, `failed calling webhook "karpenter.validate.karpenter-guard.io"`):
			if outage == "no endpoints" && !strings.Contains(r.stderr, `no endpoints available for service "karpenter-guard"`) {
				t.Fatalf("refused for another reason than the outage: %s", r.stderr)
			}
			return
		case mode != "enforce" && r.code == 0 && failedOpen(c, name):
			return
		case i == 150:
			t.Fatalf("the API server never called the %s webhooks: %+v", mode, r)
		}
	}
}

// failedOpen reports whether the audit log records the API server failing open on karpenter-guard's
// validating webhook for a request on the named object.
func failedOpen(c *cluster, name string) bool {
	return auditLogHas(c, name, `"failed-open.validating.webhook.admission.k8s.io/`, "karpenter.validate.karpenter-guard.io")
}

// hungWebhook is a webhook that accepts connections and never answers (a process stuck, a node gone
// silent): the API server waits for timeoutSeconds, then applies the failure policy. It returns its
// base URL.
func hungWebhook(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 64)
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			select {
			case held <- conn: // kept open, never read
			default:
				conn.Close()
			}
		}
	}()
	t.Cleanup(func() {
		l.Close()
		close(held)
		for conn := range held {
			conn.Close()
		}
	})
	return "https://" + l.Addr().String()
}

// dropFinalizers removes the finalizers of the named EC2NodeClasses, so that reset can delete them.
func dropFinalizers(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		env.kubectl(t, "", "patch", "ec2nodeclass", n, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	}
}

// writeTemp writes data to a file of the test's and returns its path.
func writeTemp(t testing.TB, data string) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.WriteString(f, data); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// TestKarpenterUpdatesAreNeverSent: with the webhook up in mode enforce, the API server does not send
// it Karpenter's own updates, nor anyone's metadata-only edits, nor the updates of an object being
// deleted; it does send a spec change. Counted in the webhook's own metrics.
func TestKarpenterUpdatesAreNeverSent(t *testing.T) {
	world(t, "", "mode: enforce\naws:\n  onError: allow\n")
	for _, name := range []string{"kept", "leaving"} {
		if r := env.kubectl(t, storedClass(name), "apply", "-f", "-"); r.code != 0 {
			t.Fatalf("store %s: %+v", name, r)
		}
	}
	t.Cleanup(func() { dropFinalizers(t, "kept", "leaving") })
	before := reviews(t)
	for _, args := range [][]string{
		append([]string{"annotate", "ec2nodeclass", "kept", "karpenter.k8s.aws/ec2nodeclass-hash=42", "--overwrite"}, karpenterSA...),
		append([]string{"patch", "ec2nodeclass", "kept", "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`}, karpenterSA...),
		{"label", "ec2nodeclass", "kept", "team=platform"},
		{"delete", "ec2nodeclass", "leaving", "--wait=false"},
		{"patch", "ec2nodeclass", "leaving", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`},
	} {
		if r := env.kubectl(t, "", args...); r.code != 0 {
			t.Errorf("kubectl %v: %+v", args, r)
		}
	}
	if after := reviews(t); after != before {
		t.Errorf("the webhook reviewed %v requests it must never be sent", after-before)
	}
	// An annotation karpenter-guard reads is a change it must see, even with the spec unchanged.
	env.kubectlT(t, "annotate", "ec2nodeclass", "kept", "karpenter-guard.io/skip=ami-selector-missing-owner")
	if after := reviews(t); after == before {
		t.Errorf("an exception annotation was not reviewed")
	}
	before = reviews(t)
	env.kubectlT(t, "patch", "ec2nodeclass", "kept", "--type=merge", "-p", specChange)
	if after := reviews(t); after < before+2 { // /mutate and /validate
		t.Errorf("a spec change made %v reviews, want 2", after-before)
	}
}

// reviews is the number of admission reviews the running webhook has answered, from its /metrics.
func reviews(t testing.TB) float64 {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(env.guardMetrics) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The text exposition format: one "name{labels} value" line a series.
	total := 0.0
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "karpenter_guard_admission_requests_total{"); ok {
			v, err := strconv.ParseFloat(rest[strings.LastIndexByte(rest, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("/metrics: %q: %v", s.Text(), err)
			}
			total += v
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}

// TestOnErrorDenyBlocksOnlySpecChanges: with aws.onError deny in mode enforce and AWS refusing every IAM
// call, a spec change of an EC2NodeClass is refused, naming what could not be verified; an edit of an
// annotation karpenter-guard reads (reviewed, spec unchanged) passes with the warning, and so does an
// aws-auth edit.
func TestOnErrorDenyBlocksOnlySpecChanges(t *testing.T) {
	dir := filepath.Join("..", "examples", "production")
	class := filepath.Join(dir, "ec2nodeclass.yaml")
	config := "mode: enforce\naws:\n  timeout: 2s\n  onError: deny\n"
	world(t, filepath.Join(dir, "cluster-facts.yaml"), config, filepath.Join(dir, "aws-auth.yaml"), class)
	// A webhook that never had an IAM answer to fall back on.
	env.fake.Inject("iam:*", fakeawsDenied())
	defer env.fake.Clear("")
	env.startGuard(t, guardOptions{config: config, clusterName: "prod-eks", region: "us-east-1"})
	r := env.kubectl(t, "", "patch", "ec2nodeclass", "production", "--type=merge", "-p", `{"spec":{"tags":{"team":"platform-2"}}}`)
	if r.code == 0 || !strings.Contains(r.stderr, `karpenter-guard: EC2NodeClass "production" denied: could not verify [`) || !strings.Contains(r.stderr, "AWS denied iam:") {
		t.Errorf("a spec change without IAM answers: exit %d, want refused naming what could not be verified\n%s", r.code, r.stderr)
	}
	r = env.kubectl(t, "", "annotate", "ec2nodeclass", "production", "karpenter-guard.io/skip-reason=reviewed")
	if r.code != 0 || !strings.Contains(r.stderr, "Warning: [karpenter-guard] AWS denied iam:") {
		t.Errorf("an annotation edit without IAM answers: exit %d, want it reviewed and allowed with the warning\n%s", r.code, r.stderr)
	}
	if r := env.kubectl(t, "", "label", "configmap", "aws-auth", "-n", "kube-system", "team=platform"); r.code != 0 {
		t.Errorf("an aws-auth edit without IAM answers was refused: %+v", r)
	}
}

// TestUnreadableObjectsAfterACRDUpgrade: a Karpenter upgrade whose CRD widens a field (here
// spec.associatePublicIPAddress, a boolean, made to take strings too) sends the webhook objects it
// cannot read. In mode enforce a CREATE of one is refused naming the field, while an edit that leaves
// the spec as stored passes with a warning; in mode warn the CREATE passes with the warning.
func TestUnreadableObjectsAfterACRDUpgrade(t *testing.T) {
	config := "mode: enforce\naws:\n  onError: allow\n"
	world(t, "", config)
	original := filepath.Join(os.Getenv("KARPENTER_CRDS"), "karpenter.k8s.aws_ec2nodeclasses.yaml")
	var crd map[string]any
	if err := sigsyaml.Unmarshal([]byte(readFile(t, original)), &crd); err != nil {
		t.Fatal(err)
	}
	props := dig(t, crd, "spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties").(map[string]any)
	props["associatePublicIPAddress"] = map[string]any{"x-kubernetes-int-or-string": true}
	widened, err := sigsyaml.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	widenedClass := func(name string) string {
		return strings.Replace(storedClass(name), "  finalizers: [karpenter.k8s.aws/termination]\n", "", 1) + "  associatePublicIPAddress: \"sometimes\"\n"
	}
	t.Cleanup(func() {
		env.kubectl(t, "", "delete", "ec2nodeclass", "widened-stored", "widened-new", "--ignore-not-found")
		env.kubectlT(t, "apply", "-f", original)
	})
	// Stored before karpenter-guard sees it (an upgrade applied with the webhook away).
	env.removeWebhooks(t)
	env.kubectlT(t, "apply", "-f", writeTemp(t, string(widened)))
	env.kubectlT(t, "wait", "--for", "condition=established", "crd/ec2nodeclasses.karpenter.k8s.aws")
	for i := 0; ; i++ {
		r := env.kubectl(t, widenedClass("widened-stored"), "apply", "-f", "-")
		if r.code == 0 {
			break
		}
		if i == 50 {
			t.Fatalf("the widened CRD never took a string: %+v", r)
		}
		time.Sleep(200 * time.Millisecond)
	}
	env.registerWebhooks(t, "enforce")

	const field = "spec.associatePublicIPAddress: expected"
	r := env.kubectl(t, widenedClass("widened-new"), "apply", "-f", "-")
	if got := denials(t, r); r.code == 0 || len(got) != 0 || !strings.Contains(r.stderr, `karpenter-guard: EC2NodeClass "widened-new" denied: cannot read the object: spec.associatePublicIPAddress: `) ||
		!strings.Contains(r.stderr, field) {
		t.Errorf("mode enforce, a CREATE it cannot read: exit %d, want refused naming the field\n%s", r.code, r.stderr)
	}
	// An annotation karpenter-guard reads is sent to it even with the spec unchanged.
	r = env.kubectl(t, "", "annotate", "ec2nodeclass", "widened-stored", "karpenter-guard.io/skip-reason=reviewed")
	if r.code != 0 || !strings.Contains(r.stderr, "Warning: [karpenter-guard] not checked: cannot read the object: ") || !strings.Contains(r.stderr, field) {
		t.Errorf("mode enforce, an edit that leaves the spec as stored: exit %d, want allowed with a warning naming the field\n%s", r.code, r.stderr)
	}
	env.startGuard(t, guardOptions{config: "mode: warn\naws:\n  onError: allow\n", clusterName: "e2e", region: "us-east-1"})
	env.registerWebhooks(t, "warn")
	r = env.kubectl(t, widenedClass("widened-new"), "apply", "-f", "-")
	if r.code != 0 || !strings.Contains(r.stderr, "Warning: [karpenter-guard] not checked: cannot read the object: ") {
		t.Errorf("mode warn, a CREATE it cannot read: exit %d, want allowed with the warning\n%s", r.code, r.stderr)
	}
}

// dig walks a decoded YAML document by keys and list indexes.
func dig(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("no %q in %T", k, v)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("no [%d] in %T", k, v)
			}
			v = l[k]
		}
	}
	return v
}
