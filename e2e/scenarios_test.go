//go:build e2e

package e2e

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/certs"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

func insecureTLS() *tls.Config { return &tls.Config{InsecureSkipVerify: true} }

// world serves a snapshot (and the example's IAM policies in testdata/policies) from the AWS fake, applies the files of stored (without the webhook, like
// objects that were in the cluster before it) and the serviceaccounts.yaml beside the snapshot (the
// cluster's Karpenter and aws-node ServiceAccounts, whose roles the snapshot describes), (re)starts the
// webhook for the snapshot's cluster with a GuardConfig body, and registers the webhook
// configurations. It returns the cluster's name.
func world(t *testing.T, snapshot, config string, stored ...string) string {
	t.Helper()
	cf := &facts.ClusterFacts{}
	name, region := "e2e", "us-east-1"
	if snapshot != "" {
		cf = decodeFacts(t, snapshot)
		name, region = cf.Cluster.Name, cf.Cluster.Region
	}
	env.fake.Clear("")
	// The IAM policies of an example cluster, when the repository has them, let the fake's simulator
	// answer questions the snapshot does not list (a class applied before its NodePools asks with
	// other tags), as IAM would.
	var policies fakeaws.Policies
	if snapshot != "" {
		if data, err := os.ReadFile(filepath.Join("testdata", "policies", filepath.Base(filepath.Dir(snapshot))+".yaml")); err == nil {
			if policies, err = fakeaws.LoadPolicies(data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := env.fake.SetWorld(cf, policies); err != nil {
		t.Fatal(err)
	}
	reset(t)
	if snapshot != "" {
		if sa := filepath.Join(filepath.Dir(snapshot), "serviceaccounts.yaml"); fileExists(sa) {
			stored = append([]string{sa}, stored...)
		}
	}
	for _, f := range stored {
		env.kubectlT(t, "apply", "-f", f)
	}
	env.startGuard(t, guardOptions{config: config, clusterName: name, region: region})
	env.registerWebhooks(t, modeOf(config))
	return name
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// reset removes the webhooks and every object a scenario may have left.
func reset(t testing.TB) {
	t.Helper()
	env.removeWebhooks(t)
	env.kubectlT(t, "delete", "ec2nodeclasses,nodepools", "--all", "--ignore-not-found", "--wait=false")
	env.kubectlT(t, "delete", "configmap", "aws-auth", "-n", "kube-system", "--ignore-not-found")
	env.kubectlT(t, "delete", "serviceaccount", "karpenter", "aws-node", "-n", "kube-system", "--ignore-not-found")
}

var deniedRE = regexp.MustCompile(`karpenter-guard: (\w+) "([^"]+)" denied: \[([a-z0-9-]+)\]`)

// denials returns "Kind/name: rule" for every object a kubectl run reports refused by karpenter-guard,
// checking that each refusal's line is the self-contained first line of the webhook's message.
func denials(t *testing.T, r result) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if m := deniedRE.FindStringSubmatch(l); m != nil {
			if !strings.Contains(l, `admission webhook "karpenter.validate.karpenter-guard.io" denied the request: karpenter-guard: `) &&
				!strings.Contains(l, `admission webhook "aws-auth.validate.karpenter-guard.io" denied the request: karpenter-guard: `) {
				t.Errorf("refusal not in the API server's words: %q", l)
			}
			out = append(out, m[1]+"/"+m[2]+": "+m[3])
		}
	}
	return out
}

var warningRE = regexp.MustCompile(`(?m)^Warning: \[([a-z0-9-]+)\]`)

// warnings returns the rule IDs of kubectl's "Warning: [rule] …" lines (not karpenter-guard's own
// notes, "Warning: [karpenter-guard] …").
func warnings(r result) []string {
	var out []string
	for _, m := range warningRE.FindAllStringSubmatch(r.stderr+r.stdout, -1) {
		if m[1] != "karpenter-guard" {
			out = append(out, m[1])
		}
	}
	return out
}

func apply(t *testing.T, file string, extra ...string) result {
	t.Helper()
	return env.kubectl(t, "", append([]string{"apply", "-f", file}, extra...)...)
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestFieldReportClustersAreRefused: for each example cluster (its cluster-facts.yaml served by the AWS
// fake), `kubectl apply` refuses exactly the objects `check` denies, with the rule and the object on
// the first line, and shows the warn findings as kubectl warnings; the corrected setup applies.
func TestFieldReportClustersAreRefused(t *testing.T) {
	for _, tc := range []struct {
		dir, manifest string
		denied        []string
		warned        []string
	}{
		{"config-map-mode", "karpenter.yaml", []string{"EC2NodeClass/default: node-role-not-authorized"}, []string{"nodepool-nodeclass-missing"}},
		{"api-mode", "ec2nodeclasses.yaml", []string{"EC2NodeClass/batch: node-role-access-entry-type", "EC2NodeClass/legacy: node-role-not-authorized"}, []string{"al2023-hybrid-auth"}},
		// The general class selects a public subnet whose instances get no public IP: nothing leaves the
		// VPC from there and no EC2 endpoint serves it.
		{"network-and-ami", "karpenter.yaml", []string{"EC2NodeClass/legacy-al2: ami-family-eol", "EC2NodeClass/general: subnet-missing-vpc-endpoints"},
			[]string{"subnet-public", "subnet-missing-registry-endpoints", "spot-service-linked-role-missing", "nodepool-nodeclass-missing"}},
		// A private cluster's isolated node subnets have ECR, STS and S3 endpoints but none for EC2.
		{"isolated-subnet-no-ec2-endpoint", "karpenter.yaml", []string{"EC2NodeClass/payments: subnet-missing-vpc-endpoints"}, []string{"nodepool-nodeclass-missing"}},
		// The node role's trust policy names eks.amazonaws.com: EC2 cannot hand its credentials to the
		// instances. The webhook learns the controller's role from the ServiceAccount's IRSA annotation.
		{"untrusted-node-role", "karpenter.yaml", []string{"EC2NodeClass/default: node-role-trust-policy"}, []string{"nodepool-nodeclass-missing"}},
		// Karpenter's own controller policy may pass only KarpenterNodeRole-media; the gpu class names
		// another role. The controller's role comes from its Pod Identity association (the AWS fake's).
		{"controller-cannot-pass-role", "karpenter.yaml", []string{"EC2NodeClass/gpu: controller-launch-permissions"}, []string{"nodepool-nodeclass-missing"}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join("..", "examples", "clusters", tc.dir)
			world(t, filepath.Join(dir, "cluster-facts.yaml"), "", filepath.Join(dir, "aws-auth.yaml"))
			r := apply(t, filepath.Join(dir, tc.manifest))
			if r.code == 0 || !sameSet(denials(t, r), tc.denied) {
				t.Errorf("refused %v (exit %d), want %v\n%s", denials(t, r), r.code, tc.denied, r.stderr)
			}
			if !sameSet(warnings(r), tc.warned) {
				t.Errorf("warned %v, want %v\n%s", warnings(r), tc.warned, r.stderr)
			}
		})
	}
	t.Run("config-map-mode corrected", func(t *testing.T) {
		dir := filepath.Join("..", "examples", "clusters", "config-map-mode")
		world(t, filepath.Join(dir, "cluster-facts.yaml"), "", "testdata/corrected/config-map-mode-aws-auth.yaml")
		for _, f := range []string{filepath.Join(dir, "karpenter.yaml")} {
			if r := apply(t, f); r.code != 0 || len(warnings(r)) > 0 {
				t.Errorf("%s: exit %d, warnings %v\n%s", f, r.code, warnings(r), r.stderr)
			}
		}
	})
	t.Run("production", func(t *testing.T) {
		dir := filepath.Join("..", "examples", "production")
		world(t, filepath.Join(dir, "cluster-facts.yaml"), "", filepath.Join(dir, "aws-auth.yaml"))
		for _, f := range []string{"ec2nodeclass.yaml", "nodepool.yaml"} {
			if r := apply(t, filepath.Join(dir, f)); r.code != 0 || strings.Contains(r.stderr, "Warning") {
				t.Errorf("%s: exit %d\n%s%s", f, r.code, r.stdout, r.stderr)
			}
		}
		// A NodePool whose instance family does not exist is refused against the stored class, with
		// the nearest real families in the message.
		r := apply(t, filepath.Join("testdata", "nodepools", "family-typo.yaml"))
		if r.code == 0 || !sameSet(denials(t, r), []string{"NodePool/general-purpose: nodepool-requirements-unsatisfiable"}) {
			t.Errorf("refused %v (exit %d), want the typo refused\n%s", denials(t, r), r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "karpenter.k8s.aws/instance-family In [m9]") || !strings.Contains(r.stderr, "the nearest real values of karpenter.k8s.aws/instance-family are m") {
			t.Errorf("the refusal does not name the requirement and the nearest real families:\n%s", r.stderr)
		}
	})
}

// TestFieldReportsWithoutFacts: the field reports that need no facts are caught from the object alone
// (AWS knows nothing here and aws.onError is allow), mutation fixes what it safely can, and the
// corrected manifests apply cleanly.
func TestFieldReportsWithoutFacts(t *testing.T) {
	world(t, "", "aws:\n  onError: allow\n")
	dir := filepath.Join("..", "examples", "field-reports")
	for _, tc := range []struct {
		file   string
		denied []string
		warned []string
	}{
		// Without image facts a name term without an owner may work today: warned, never refused.
		{"02-ami-name-without-owner.yaml", nil, []string{"ami-selector-missing-owner", "ami-selector-missing-owner"}},
		{"03-al2023-bootstrap-userdata.yaml", []string{"EC2NodeClass/al2023-legacy-userdata: userdata-bootstrap-on-al2023"}, nil},
		{"04-instance-profile-arn.yaml", nil, []string{"instance-profile-arn", "imds-v1-enabled", "ebs-unencrypted"}},
		{"05-aws-auth-malformed.yaml", []string{"ConfigMap/kube-system/aws-auth: aws-auth-malformed"}, nil},
		// Its pool's EC2NodeClass is 02's, admitted above.
		{"07-spot-nodepool.yaml", nil, []string{"exception-missing-reason"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := apply(t, filepath.Join(dir, tc.file))
			if got := denials(t, r); !sameSet(got, tc.denied) || (r.code == 0) != (len(tc.denied) == 0) {
				t.Errorf("refused %v (exit %d), want %v\n%s", got, r.code, tc.denied, r.stderr)
			}
			if !sameSet(warnings(r), tc.warned) {
				t.Errorf("warned %v, want %v\n%s", warnings(r), tc.warned, r.stderr)
			}
		})
	}
	t.Run("06-custom-ami-family.yaml", func(t *testing.T) {
		// The CRD itself refuses a lone subnet term mixing id and tags (docs/design.md §1)...
		text := readFile(t, filepath.Join(dir, "06-custom-ami-family.yaml"))
		clean := "    - tags:                                      # only when every term mixes id and tags)\n        karpenter.sh/discovery: \"aws-2026-eks\"\n        kubernetes.io/role/internal-elb: \"1\"\n"
		if !strings.Contains(text, clean) {
			t.Fatalf("the example no longer has its clean subnet term:\n%s", text)
		}
		r := env.kubectl(t, strings.Replace(text, clean, "", 1), "apply", "-f", "-")
		if r.code == 0 || !strings.Contains(r.stderr, "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term") {
			t.Errorf("exit %d\n%s", r.code, r.stderr)
		}
		// ...and admits it beside a clean term, as the example has it, where Karpenter silently ignores
		// the tags: the webhook warns.
		r = apply(t, filepath.Join(dir, "06-custom-ami-family.yaml"))
		want := []string{"stale-compatibility-annotation", "selector-term-ignored-fields", "custom-userdata-missing-unregistered-taint"}
		if r.code != 0 || !sameSet(warnings(r), want) {
			t.Errorf("exit %d, warned %v, want %v\n%s", r.code, warnings(r), want, r.stderr)
		}
	})
	t.Run("mutation is visible on the stored objects", func(t *testing.T) {
		if got := env.kubectlT(t, "get", "ec2nodeclass", "terraform-profile", "-o", "jsonpath={.spec.instanceProfile}"); got != "aws-2026-eks_1976173924626587633" {
			t.Errorf("stored instanceProfile %q, want the name", got)
		}
		got := env.kubectlT(t, "get", "ec2nodeclass", "gpu-custom", "-o", `jsonpath={.metadata.annotations.compatibility\.karpenter\.k8s\.aws/v1beta1-ubuntu}`)
		if got != "" {
			t.Errorf("the stale annotation is still stored: %q", got)
		}
	})
	for _, f := range []string{"02-ami-name-without-owner.yaml", "03-al2023-bootstrap-userdata.yaml", "05-aws-auth-malformed.yaml"} {
		t.Run("corrected "+f, func(t *testing.T) {
			if r := apply(t, filepath.Join("testdata", "corrected", f)); r.code != 0 || len(warnings(r)) > 0 {
				t.Errorf("exit %d, warnings %v\n%s", r.code, warnings(r), r.stderr)
			}
		})
	}
}

const ownerlessClass = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: ownerless
spec:
  amiFamily: AL2023
  amiSelectorTerms:
    - name: amazon-eks-node-al2023-x86_64-standard-1.33-*
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: e2e}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: e2e}}]
`

// TestUpdateDoesNotRewriteUntouchedTerms: an EC2NodeClass stored before the webhook existed keeps its
// owner-less AMI term through an UPDATE that does not touch it (adding an owner would make Karpenter
// replace every node); an UPDATE that edits the term gets the owner.
func TestUpdateDoesNotRewriteUntouchedTerms(t *testing.T) {
	world(t, "", "aws:\n  onError: allow\n")
	env.removeWebhooks(t)
	if r := env.kubectl(t, ownerlessClass, "apply", "-f", "-"); r.code != 0 {
		t.Fatalf("create without the webhook: %+v", r)
	}
	env.registerWebhooks(t, "enforce")
	// A label edit changes no spec: the API server does not even send it (matchConditions).
	r := env.kubectl(t, "", "label", "ec2nodeclass", "ownerless", "team=platform")
	if r.code != 0 || strings.Contains(r.stderr, "Warning:") {
		t.Fatalf("a label edit was refused or reviewed: %+v", r)
	}
	// A spec edit elsewhere is reviewed, and the old problem only warned (without image facts it is a
	// warning anyway; an unchanged denied field is demoted too, TestUpdateDoesNotBlockOnUnchangedFields).
	other := strings.Replace(ownerlessClass, "  role: KarpenterNodeRole\n", "  role: KarpenterNodeRole\n  tags: {team: platform}\n", 1)
	r = env.kubectl(t, other, "apply", "-f", "-")
	if r.code != 0 {
		t.Fatalf("an edit of another field was refused: %+v", r)
	}
	if !strings.Contains(r.stderr, "Warning: [ami-selector-missing-owner]") {
		t.Errorf("the old problem is not warned: %s", r.stderr)
	}
	if got := env.kubectlT(t, "get", "ec2nodeclass", "ownerless", "-o", "jsonpath={.spec.amiSelectorTerms[0].owner}"); got != "" {
		t.Errorf("an UPDATE that did not touch the term added owner %q", got)
	}
	edited := strings.Replace(other, "1.33-*", "1.34-*", 1)
	if r := env.kubectl(t, edited, "apply", "-f", "-"); r.code != 0 {
		t.Fatalf("edit of the term: %+v", r)
	}
	if got := env.kubectlT(t, "get", "ec2nodeclass", "ownerless", "-o", "jsonpath={.spec.amiSelectorTerms[0].owner}"); got != "amazon" {
		t.Errorf("the edited term's owner is %q, want amazon", got)
	}
}

// TestDryRunAndServerSideApply: --dry-run=server and --server-side get the verdicts of a plain apply.
func TestDryRunAndServerSideApply(t *testing.T) {
	world(t, "", "aws:\n  onError: allow\n")
	refused := filepath.Join("..", "examples", "field-reports", "03-al2023-bootstrap-userdata.yaml")
	accepted := filepath.Join("..", "examples", "field-reports", "07-spot-nodepool.yaml")
	for _, flags := range [][]string{{"--dry-run=server"}, {"--server-side"}, {"--server-side", "--dry-run=server"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			r := apply(t, refused, flags...)
			if got := denials(t, r); r.code == 0 || !sameSet(got, []string{"EC2NodeClass/al2023-legacy-userdata: userdata-bootstrap-on-al2023"}) {
				t.Errorf("refused %v (exit %d)\n%s", got, r.code, r.stderr)
			}
			r = apply(t, accepted, flags...)
			if r.code != 0 || !sameSet(warnings(r), []string{"exception-missing-reason", "nodepool-nodeclass-missing"}) {
				t.Errorf("exit %d warnings %v\n%s", r.code, warnings(r), r.stderr)
			}
			env.kubectlT(t, "delete", "-f", accepted, "--ignore-not-found")
		})
	}
	// Applying a stored object again, unchanged, changes no spec: it is not reviewed (matchConditions),
	// so it is neither refused nor warned about again; the audit reports what is stored.
	env.kubectlT(t, "apply", "-f", accepted)
	if r := apply(t, accepted, "--server-side", "--dry-run=server"); r.code != 0 || len(warnings(r)) > 0 {
		t.Errorf("an unchanged re-apply: exit %d warnings %v\n%s", r.code, warnings(r), r.stderr)
	}
	if r := env.kubectl(t, "", "get", "ec2nodeclass", "al2023-legacy-userdata"); r.code == 0 {
		t.Errorf("a refused object was stored")
	}
}

// auditEvent is what the tests read of the API server's audit log.
type auditEvent struct {
	Verb      string            `json:"verb"`
	Stage     string            `json:"stage"`
	Annots    map[string]string `json:"annotations"`
	ObjectRef struct {
		Resource, Name, Namespace string
	} `json:"objectRef"`
}

// auditAnnotations returns the annotations of the last ResponseComplete event on an object.
func auditAnnotations(t *testing.T, resource, name, verb string) map[string]string {
	t.Helper()
	f, err := os.Open(env.auditLog())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last map[string]string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 4<<20), 4<<20)
	for s.Scan() {
		var e auditEvent
		if json.Unmarshal(s.Bytes(), &e) != nil {
			continue
		}
		if e.ObjectRef.Resource == resource && e.ObjectRef.Name == name && e.Verb == verb && e.Stage == "ResponseComplete" {
			last = e.Annots
		}
	}
	return last
}

// TestModeDryRun: in mode dry-run nothing is refused and nothing warned, and the audit log holds what
// enforcing would have done.
func TestModeDryRun(t *testing.T) {
	world(t, "", "mode: dry-run\naws:\n  onError: allow\n")
	r := apply(t, filepath.Join("..", "examples", "field-reports", "03-al2023-bootstrap-userdata.yaml"))
	if r.code != 0 || strings.Contains(r.stderr, "Warning") {
		t.Fatalf("mode dry-run: exit %d\n%s", r.code, r.stderr)
	}
	a := auditAnnotations(t, "ec2nodeclasses", "al2023-legacy-userdata", "create")
	if v := a["karpenter.validate.karpenter-guard.io/userdata-bootstrap-on-al2023"]; !strings.HasPrefix(v, "would deny: AL2023 userData runs") {
		t.Errorf("audit annotations %v: want a would-deny of userdata-bootstrap-on-al2023", a)
	}
}

// TestAWSAuthEdits: an edit of aws-auth that drops the mapping an EC2NodeClass's role depends on is
// refused, naming the class; a malformed edit and deleting aws-auth are refused; a harmless edit passes.
func TestAWSAuthEdits(t *testing.T) {
	dir := filepath.Join("..", "examples", "clusters", "config-map-mode")
	corrected := "testdata/corrected/config-map-mode-aws-auth.yaml"
	world(t, filepath.Join(dir, "cluster-facts.yaml"), "", corrected)
	if r := apply(t, filepath.Join(dir, "karpenter.yaml")); r.code != 0 {
		t.Fatalf("the class of the mapped role: %+v", r)
	}
	// The report's aws-auth, where the Karpenter role is not mapped; dry-run until the webhook's watch has
	// the class.
	waitForWatch(t, `EC2NodeClass "default"`, func() result { return apply(t, filepath.Join(dir, "aws-auth.yaml"), "--dry-run=server") })
	r := apply(t, filepath.Join(dir, "aws-auth.yaml"))
	if got := denials(t, r); !sameSet(got, []string{"ConfigMap/kube-system/aws-auth: aws-auth-removes-node-role"}) || !strings.Contains(r.stderr, `EC2NodeClass "default"`) {
		t.Errorf("dropping the node role: refused %v\n%s", got, r.stderr)
	}
	malformed := strings.Replace(readFile(t, corrected), "role/aws-2026-eks-node-role\n      username:", "role/aws-2026-eks-node-role\n      usernmae:", 1)
	r = env.kubectl(t, malformed, "apply", "-f", "-")
	if r.code == 0 || !regexp.MustCompile(`\[aws-auth-malformed\] mapRoles line \d+: entry has no username`).MatchString(r.stderr) {
		t.Errorf("malformed edit: exit %d\n%s", r.code, r.stderr)
	}
	r = env.kubectl(t, "", "delete", "configmap", "aws-auth", "-n", "kube-system")
	if r.code == 0 || !strings.Contains(r.stderr, "[aws-auth-removes-node-role] deleting aws-auth drops the mapping of node role arn:aws:iam::069057294951:role/aws-2026-eks-karpenter-node") {
		t.Errorf("delete: exit %d\n%s", r.code, r.stderr)
	}
	harmless := strings.Replace(readFile(t, corrected), "\ndata:\n", "\ndata:\n  mapUsers: |\n    - userarn: arn:aws:iam::069057294951:user/ops\n      username: ops\n      groups: [ops]\n", 1)
	if r := env.kubectl(t, harmless, "apply", "-f", "-"); r.code != 0 {
		t.Errorf("a harmless edit was refused: %+v", r)
	}
}

// waitForWatch retries try (a dry-run) until its refusal names want: the webhook's watch of
// EC2NodeClasses catches up with the API server within moments.
func waitForWatch(t *testing.T, want string, try func() result) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := try()
		if r.code != 0 && strings.Contains(r.stderr, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook never saw %s: %+v", want, r)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAWSFaults: with the AWS fake throttling, hanging or denying, `kubectl apply` is answered by the
// webhook (not by the API server's timeout) with the verdict aws.onError prescribes, saying what
// could not be verified.
func TestAWSFaults(t *testing.T) {
	dir := filepath.Join("..", "examples", "production")
	class := filepath.Join(dir, "ec2nodeclass.yaml")
	for _, fault := range []struct {
		name  string
		op    string
		f     fakeaws.Fault
		cause string
	}{
		{"throttling", "iam:*", fakeaws.Fault{Throttle: true}, "AWS throttled iam:"},
		{"hanging", "iam:*", fakeaws.Fault{Hang: true}, "no answer from AWS within the 2s budget (iam:"},
		{"denying", "iam:*", fakeaws.Fault{AccessDenied: true}, "AWS denied iam:"},
	} {
		for _, onError := range []string{"warn", "deny"} {
			t.Run(fault.name+"/"+onError, func(t *testing.T) {
				world(t, filepath.Join(dir, "cluster-facts.yaml"), "aws:\n  timeout: 2s\n  onError: "+onError+"\n", filepath.Join(dir, "aws-auth.yaml"))
				env.startGuard(t, guardOptions{config: "aws:\n  timeout: 2s\n  onError: " + onError + "\n", clusterName: "prod-eks", region: "us-east-1"})
				env.fake.Inject(fault.op, fault.f)
				defer env.fake.Clear("")
				start := time.Now()
				r := apply(t, class)
				took := time.Since(start)
				if strings.Contains(r.stderr, "context deadline exceeded") || strings.Contains(r.stderr, "failed calling webhook") {
					t.Fatalf("the API server gave up on the webhook (after %v): %s", took, r.stderr)
				}
				switch onError {
				case "warn":
					if r.code != 0 || !strings.Contains(r.stderr, "Warning: [karpenter-guard] "+fault.cause) {
						t.Errorf("exit %d after %v, want accepted with a warning naming %q:\n%s", r.code, took, fault.cause, r.stderr)
					}
				case "deny":
					if r.code == 0 || !strings.Contains(r.stderr, `karpenter-guard: EC2NodeClass "production" denied: could not verify [`) || !strings.Contains(r.stderr, fault.cause) {
						t.Errorf("exit %d after %v, want refused naming %q:\n%s", r.code, took, fault.cause, r.stderr)
					}
				}
			})
		}
	}
}

// TestGracefulShutdown: on SIGTERM the webhook first fails /readyz (so the Service stops routing to
// it) and goes on answering the reviews still sent its way for --shutdown-delay, then exits.
func TestGracefulShutdown(t *testing.T) {
	dir := filepath.Join("..", "examples", "production")
	name := world(t, filepath.Join(dir, "cluster-facts.yaml"), "", filepath.Join(dir, "aws-auth.yaml"))
	env.startGuard(t, guardOptions{clusterName: name, region: "us-east-1", extraArgs: []string{"--shutdown-delay=4s"}})
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", env.guardProbe)
	status := func() int {
		resp, err := http.Get(readyz)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := status(); s != http.StatusOK {
		t.Fatalf("/readyz = %d before shutdown", s)
	}
	g := env.guard
	start := time.Now()
	if err := syscall.Kill(g.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := start.Add(3 * time.Second)
	for status() == http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("/readyz still ready after SIGTERM")
		}
		time.Sleep(50 * time.Millisecond)
	}
	r := apply(t, filepath.Join("..", "examples", "field-reports", "07-spot-nodepool.yaml"), "--dry-run=server")
	if g.exited() {
		t.Fatalf("exited within the shutdown delay (%v after SIGTERM)", time.Since(start))
	}
	if strings.Contains(r.stderr, "failed calling webhook") || len(denials(t, r)) == 0 && r.code != 0 {
		t.Errorf("a review sent during the shutdown delay was not answered: %+v", r)
	}
	select {
	case <-g.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30s after SIGTERM:\n%s", tail(g.log, 20))
	}
	env.guard = nil
	if !strings.Contains(readFile(t, g.log), "shutting down: not ready, serving reviews still routed here") {
		t.Errorf("the log does not say it is draining:\n%s", tail(g.log, 20))
	}
}

// TestCertificateRotationWhileServing: a new serving certificate (from a new CA the webhook
// configurations learn first, as a real rotation does) is picked up from disk while requests keep
// being answered, without a restart.
func TestCertificateRotationWhileServing(t *testing.T) {
	world(t, "", "aws:\n  onError: allow\n")
	pid := env.guard.cmd.Process.Pid
	before := servedCertificate(t)
	staging := t.TempDir()
	if err := certs.Generate(staging, certs.Hosts("", ""), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	// The configurations trust both CAs while the certificate changes.
	oldCA, newCA := readFile(t, filepath.Join(env.guardCerts, certs.CAFile)), readFile(t, filepath.Join(staging, certs.CAFile))
	data := renderWebhooks(webhookManifests(t, "enforce"), fmt.Sprintf("https://127.0.0.1:%d", env.guardPort), []byte(oldCA+newCA))
	if r := env.kubectl(t, data, "apply", "-f", "-"); r.code != 0 {
		t.Fatal(r)
	}
	stop := make(chan struct{})
	failures := make(chan string, 100)
	go func() {
		for {
			select {
			case <-stop:
				close(failures)
				return
			default:
			}
			out, err := exec.Command(os.Getenv("KUBECTL"), "--kubeconfig", env.kubeconfig, "apply", "--dry-run=server", "-f",
				filepath.Join("..", "examples", "field-reports", "07-spot-nodepool.yaml")).CombinedOutput()
			if err != nil {
				failures <- fmt.Sprintf("%v: %s", err, out)
			}
		}
	}()
	for _, f := range []string{certs.KeyFile, certs.CertFile, certs.CAFile} {
		if err := os.Rename(filepath.Join(staging, f), filepath.Join(env.guardCerts, f)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for servedCertificate(t) == before {
		if time.Now().After(deadline) {
			t.Fatal("the new certificate was never served")
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second)
	close(stop)
	for f := range failures {
		t.Errorf("a request failed during the rotation: %s", f)
	}
	if env.guard.exited() || env.guard.cmd.Process.Pid != pid {
		t.Errorf("the webhook restarted")
	}
}

// servedCertificate returns the serial of the certificate the webhook serves.
func servedCertificate(t *testing.T) string {
	t.Helper()
	conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", env.guardPort), insecureTLS())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// TestDeploymentManifestsAreValid: the API server's schema validation accepts every manifest of the
// deployment (base, overlays, the host-network variant).
func TestDeploymentManifestsAreValid(t *testing.T) {
	for _, k := range []string{"base", "overlays/cert-manager", "overlays/self-managed", "overlays/cert-manager-host-network"} {
		t.Run(k, func(t *testing.T) {
			r := env.kubectl(t, "", "apply", "--dry-run=server", "-k", filepath.Join("..", "manifests", k))
			if r.code != 0 {
				t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
	// Each mode's deployment: the API server takes it, and the mode and the failure policies change
	// together (docs/rollout.md): only the validating webhook of Karpenter's kinds fails closed, and only
	// in enforce.
	for _, mode := range []string{"dry-run", "warn", "enforce"} {
		t.Run("mode "+mode, func(t *testing.T) {
			docs := deployment(t, mode)
			var all []string
			for _, d := range docs {
				all = append(all, d)
			}
			if r := env.kubectl(t, strings.Join(all, "\n---\n"), "apply", "--dry-run=server", "-f", "-"); r.code != 0 {
				t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			var dep appsv1.Deployment
			if err := sigsyaml.Unmarshal([]byte(docs["Deployment/karpenter-guard"]), &dep); err != nil {
				t.Fatal(err)
			}
			c := dep.Spec.Template.Spec.Containers[0]
			if !slices.Contains(c.Args, "--mode=$(KARPENTER_GUARD_MODE)") || !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "KARPENTER_GUARD_MODE" && e.Value == mode }) {
				t.Errorf("the Deployment does not run in mode %s: args %v env %v", mode, c.Args, c.Env)
			}
			policies := map[string]string{}
			for _, kind := range []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
				var cfg struct {
					Webhooks []admissionregistrationv1.ValidatingWebhook `json:"webhooks"`
				}
				if err := sigsyaml.Unmarshal([]byte(docs[kind+"/karpenter-guard"]), &cfg); err != nil {
					t.Fatal(err)
				}
				for _, w := range cfg.Webhooks {
					policies[w.Name] = string(*w.FailurePolicy)
					if got := fmt.Sprintf("--webhook-timeout=%ds", *w.TimeoutSeconds); !slices.Contains(c.Args, got) {
						t.Errorf("%s: timeoutSeconds %d, but serve is told %v", w.Name, *w.TimeoutSeconds, c.Args)
					}
				}
			}
			want := map[string]string{"karpenter.validate.karpenter-guard.io": "Ignore", "aws-auth.validate.karpenter-guard.io": "Ignore", "karpenter.mutate.karpenter-guard.io": "Ignore"}
			if mode == "enforce" {
				want["karpenter.validate.karpenter-guard.io"] = "Fail"
			}
			if !maps.Equal(policies, want) {
				t.Errorf("failure policies %v, want %v", policies, want)
			}
		})
	} // Without mutation: one webhook configuration, and the rotator told there is no other.
	t.Run("no mutation", func(t *testing.T) {
		docs := deployment(t, "enforce", "no-mutation")
		if _, ok := docs["MutatingWebhookConfiguration/karpenter-guard"]; ok {
			t.Errorf("components/no-mutation keeps the MutatingWebhookConfiguration")
		}
		if !strings.Contains(docs["Deployment/karpenter-guard"], "--mutating-webhook-configuration=\n") {
			t.Errorf("the Deployment still names a mutating configuration:\n%s", docs["Deployment/karpenter-guard"])
		}
		var all []string
		for _, d := range docs {
			all = append(all, d)
		}
		if r := env.kubectl(t, strings.Join(all, "\n---\n"), "apply", "--dry-run=server", "-f", "-"); r.code != 0 {
			t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
}

// TestV1beta1IsRefusedAndExplained: the API server refuses a v1beta1 NodePool (Karpenter serves only v1),
// and `check` explains the conversion.
func TestV1beta1IsRefusedAndExplained(t *testing.T) {
	file := filepath.Join("..", "examples", "field-reports", "01-v1beta1-nodepool.yaml")
	r := apply(t, file)
	if r.code == 0 || !strings.Contains(r.stderr, `no matches for kind "NodePool" in version "karpenter.sh/v1beta1"`) {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	out, err := exec.Command(env.guardBin, "check", "-f", file).CombinedOutput()
	if !strings.Contains(string(out), "DENY [nodepool-v1beta1]") || !strings.Contains(string(out), "apiVersion: karpenter.sh/v1 (--fix applies it)") || err == nil {
		t.Errorf("check: %v\n%s", err, out)
	}
}

// TestWebhookRBACIsEnoughAndNoMore: the webhook works with only manifests/base's RBAC (every scenario
// above ran with it), and that RBAC reads no Secret and no other ConfigMap.
func TestWebhookRBACIsEnoughAndNoMore(t *testing.T) {
	for _, args := range [][]string{
		{"get", "secrets", "-n", "kube-system"},
		{"get", "secrets", "-n", "karpenter-guard"},
		{"get", "configmaps", "-n", "kube-system"},
		{"get", "configmap", "coredns", "-n", "kube-system"},
	} {
		if r := env.kubectlAs(t, env.guardKube, "", args...); r.code == 0 || !strings.Contains(r.stderr, "Forbidden") {
			t.Errorf("the webhook's service account may %v: exit %d %s", args, r.code, r.stderr)
		}
	}
	for _, args := range [][]string{
		{"get", "secrets", "-A"},
		{"list", "configmaps", "-n", "kube-system"},
		{"update", "configmaps/aws-auth", "-n", "kube-system"},
		{"create", "configmaps", "-n", "kube-system"},
		{"delete", "ec2nodeclasses"},
		{"update", "nodepools"},
		{"create", "pods", "-n", "karpenter-guard"},
	} {
		r := env.kubectlAs(t, env.guardKube, "", append([]string{"auth", "can-i"}, args...)...)
		if strings.TrimSpace(r.stdout) != "no" {
			t.Errorf("the webhook's service account can %v: %q", args, r.stdout)
		}
	}
	for _, args := range [][]string{
		{"get", "ec2nodeclasses"},
		{"get", "nodepools"},
		{"get", "configmaps", "-n", "kube-system", "--field-selector", "metadata.name=aws-auth"},
	} {
		if r := env.kubectlAs(t, env.guardKube, "", args...); r.code != 0 {
			t.Errorf("the webhook's service account may not %v: %s", args, r.stderr)
		}
	}
}

// TestSelfManagedCertificates: with --cert-rotation the webhook creates its CA and certificate in its
// Secret, injects the CA into its webhook configurations (both, or the validating one alone with
// components/no-mutation), and serves with them. It runs with the RBAC of manifests/base plus
// manifests/overlays/self-managed, which names the one Secret and the webhook configurations: the
// webhook's service account cannot read another Secret of its namespace, nor list Secrets or webhook
// configurations, and the rotator still follows its objects (a CA bundle removed is put back, a Secret
// emptied is filled with new certificates).
func TestSelfManagedCertificates(t *testing.T) {
	for _, tc := range []struct {
		name       string
		extra      []string // components
		kinds      []string // the webhook configurations deployed
		guardFlags []string
	}{
		{"validating and mutating", nil, []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}, nil},
		{"no mutation", []string{"no-mutation"}, []string{"ValidatingWebhookConfiguration"}, []string{"--mutating-webhook-configuration="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset(t)
			env.fake.SetFacts(&facts.ClusterFacts{})
			env.kubectlT(t, "apply", "-f", "../manifests/overlays/self-managed/rbac.yaml", "-f", "../manifests/overlays/self-managed/secret.yaml")
			t.Cleanup(func() {
				env.kubectl(t, "", "delete", "-f", "../manifests/overlays/self-managed/rbac.yaml", "-f", "../manifests/overlays/self-managed/secret.yaml", "--ignore-not-found")
			})
			// The configurations with a URL and no CA bundle: the rotator fills it in.
			env.reserveGuard(t)
			docs := deployment(t, "enforce", tc.extra...)
			var manifests []string
			for _, kind := range tc.kinds {
				manifests = append(manifests, docs[kind+"/karpenter-guard"])
			}
			data := renderWebhooks(strings.Join(manifests, "\n---\n"), fmt.Sprintf("https://localhost:%d", env.guardPort), nil)
			data = regexp.MustCompile(`(?m)^\s+caBundle: *$\n?`).ReplaceAllString(data, "")
			if r := env.kubectl(t, data, "apply", "-f", "-"); r.code != 0 {
				t.Fatal(r)
			}
			saved := env.guardCerts
			env.guardCerts = t.TempDir()
			t.Cleanup(func() { env.stopGuard(); env.guardCerts = saved })
			stopProjection := projectSecret(t, "karpenter-guard", "karpenter-guard-cert", env.guardCerts)
			defer stopProjection()
			env.startGuard(t, guardOptions{config: "aws:\n  onError: allow\n", clusterName: "e2e", region: "us-east-1", noSelfSigned: true,
				extraArgs: append([]string{"--cert-rotation", "--cert-dns-names", "localhost"}, tc.guardFlags...)})
			if got := env.kubectlT(t, "get", "secret", "karpenter-guard-cert", "-n", "karpenter-guard", "-o", "jsonpath={.data.tls\\.crt}"); got == "" {
				t.Errorf("the Secret holds no certificate")
			}
			for _, kind := range tc.kinds {
				if got := env.kubectlT(t, "get", strings.ToLower(kind), "karpenter-guard", "-o", "jsonpath={.webhooks[0].clientConfig.caBundle}"); got == "" {
					t.Errorf("%s has no CA bundle", kind)
				}
			}
			waitWebhooksServe(t, env)

			// Least privilege: the Secret and the configurations by name, nothing else.
			env.kubectlT(t, "create", "secret", "generic", "not-the-webhooks", "-n", "karpenter-guard", "--from-literal=password=hunter2")
			t.Cleanup(func() {
				env.kubectl(t, "", "delete", "secret", "not-the-webhooks", "-n", "karpenter-guard", "--ignore-not-found")
			})
			for _, args := range [][]string{
				{"get", "secret", "not-the-webhooks", "-n", "karpenter-guard"},
				{"get", "secrets", "-n", "karpenter-guard"},
				{"get", "secrets", "-n", "karpenter-guard", "--watch-only", "--request-timeout=2s"},
				{"get", "validatingwebhookconfigurations"},
				{"get", "mutatingwebhookconfigurations"},
			} {
				if r := env.kubectlAs(t, env.guardKube, "", args...); r.code == 0 || !strings.Contains(r.stderr, "Forbidden") {
					t.Errorf("the webhook's service account may %v: exit %d %s%s", args, r.code, r.stdout, r.stderr)
				}
			}
			for _, args := range [][]string{
				{"get", "secret", "karpenter-guard-cert", "-n", "karpenter-guard"},
				{"get", "secrets", "-n", "karpenter-guard", "--field-selector", "metadata.name=karpenter-guard-cert"},
				{"get", "validatingwebhookconfigurations", "--field-selector", "metadata.name=karpenter-guard"},
			} {
				if r := env.kubectlAs(t, env.guardKube, "", args...); r.code != 0 {
					t.Errorf("the webhook's service account may not %v: %s", args, r.stderr)
				}
			}

			// The rotator's watches, narrowed to its objects, still see them change.
			kind := strings.ToLower(tc.kinds[0])
			env.kubectlT(t, "patch", kind, "karpenter-guard", "--type=json", "-p", `[{"op":"remove","path":"/webhooks/0/clientConfig/caBundle"}]`)
			eventually(t, "the rotator puts back the CA bundle removed from "+kind, func() bool {
				return env.kubectlT(t, "get", kind, "karpenter-guard", "-o", "jsonpath={.webhooks[0].clientConfig.caBundle}") != ""
			})
			before := env.kubectlT(t, "get", "secret", "karpenter-guard-cert", "-n", "karpenter-guard", "-o", "jsonpath={.data.tls\\.crt}")
			env.kubectlT(t, "patch", "secret", "karpenter-guard-cert", "-n", "karpenter-guard", "--type=json", "-p", `[{"op":"remove","path":"/data"}]`)
			eventually(t, "the rotator fills the emptied Secret with new certificates", func() bool {
				now := env.kubectlT(t, "get", "secret", "karpenter-guard-cert", "-n", "karpenter-guard", "-o", "jsonpath={.data.tls\\.crt}")
				return now != "" && now != before
			})
			waitWebhooksServe(t, env)
		})
	}
}

// projectSecret does what the kubelet does for a Secret volume: it writes the Secret's keys into dir and
// keeps them current, until the returned function is called.
func projectSecret(t *testing.T, namespace, name, dir string) func() {
	t.Helper()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			out, err := exec.Command(os.Getenv("KUBECTL"), "--kubeconfig", env.kubeconfig, "get", "secret", name, "-n", namespace, "-o", "json").Output()
			if err == nil {
				var s struct {
					Data map[string][]byte `json:"data"`
				}
				if json.Unmarshal(out, &s) == nil {
					for k, v := range s.Data {
						if cur, _ := os.ReadFile(filepath.Join(dir, k)); len(v) > 0 && string(cur) != string(v) {
							_ = os.WriteFile(filepath.Join(dir, k), v, 0o600)
						}
					}
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return func() { close(stop); <-done }
}
