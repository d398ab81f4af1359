//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

// reportResult is what the tests read of a policy report's results.
type reportResult struct {
	Policy     string            `json:"policy"`
	Result     string            `json:"result"`
	Message    string            `json:"message"`
	Properties map[string]string `json:"properties"`
	Resources  []struct {
		Kind, Name, Namespace string
	} `json:"resources"`
}

type policyReport struct {
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Summary map[string]int `json:"summary"`
	Results []reportResult `json:"results"`
}

// clusterReport reads the ClusterPolicyReport karpenter-guard through kubectl (nil when absent).
func clusterReport(t *testing.T) *policyReport {
	t.Helper()
	return readReport(t, "clusterpolicyreport", "karpenter-guard")
}

// awsAuthReport reads the PolicyReport of aws-auth through kubectl (nil when absent).
func awsAuthReport(t *testing.T) *policyReport {
	t.Helper()
	return readReport(t, "policyreport", "karpenter-guard-aws-auth", "-n", "kube-system")
}

func readReport(t *testing.T, args ...string) *policyReport {
	t.Helper()
	r := env.kubectl(t, "", append(append([]string{"get"}, args...), "-o", "json")...)
	if r.code != 0 {
		return nil
	}
	var rep policyReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// has reports whether a report holds a result of rule on the named object with that status.
func (r *policyReport) has(rule, name, result string) bool {
	if r == nil {
		return false
	}
	for _, res := range r.Results {
		if res.Policy == rule && res.Result == result && len(res.Resources) == 1 && res.Resources[0].Name == name {
			return true
		}
	}
	return false
}

// eventually waits until cond holds (the in-cluster audit runs moments after a change).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestAuditCommand: `karpenter-guard audit` reads what was stored before the webhook existed, prints
// like check, and writes reports readable with kubectl get.
func TestAuditCommand(t *testing.T) {
	dir := filepath.Join("..", "examples", "clusters", "config-map-mode")
	world(t, filepath.Join(dir, "cluster-facts.yaml"), "", filepath.Join(dir, "aws-auth.yaml"),
		filepath.Join(dir, "karpenter.yaml"), filepath.Join("..", "examples", "field-reports", "03-al2023-bootstrap-userdata.yaml"))
	env.stopGuard() // the CLI alone
	env.removeWebhooks(t)
	env.kubectl(t, "", "delete", "clusterpolicyreports,policyreports", "-A", "--all")
	out := auditJSON(t, "aws-2026-eks", "us-east-1")
	var rep struct {
		Findings []struct {
			Rule   string
			Object struct{ Kind, Name, File string }
		}
		Summary map[string]int
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	found := map[string]bool{}
	for _, f := range rep.Findings {
		found[f.Object.Name+"/"+f.Rule] = true
		if !strings.HasPrefix(f.Object.File, "cluster/") {
			t.Errorf("finding %+v does not say it comes from the cluster", f)
		}
	}
	for _, want := range []string{"default/node-role-not-authorized", "al2023-legacy-userdata/userdata-bootstrap-on-al2023"} {
		if !found[want] {
			t.Errorf("audit did not find %s: %v", want, found)
		}
	}
	if rep.Summary["objects"] != 4 {
		t.Errorf("objects %d, want 4 (2 classes, 1 pool, aws-auth)", rep.Summary["objects"])
	}
	cpolr := clusterReport(t)
	if !cpolr.has("node-role-not-authorized", "default", "fail") || !cpolr.has("userdata-bootstrap-on-al2023", "al2023-legacy-userdata", "fail") {
		t.Errorf("the ClusterPolicyReport lacks the findings: %+v", cpolr)
	}
	// The rules that ran and found nothing are passes, counted in the summary, for Policy Reporter's
	// compliance views; the API server's CRD accepts them.
	passes := 0
	for _, r := range cpolr.Results {
		if r.Result == "pass" {
			passes++
		}
	}
	if passes == 0 || cpolr.Summary["pass"] != passes || !cpolr.has("exception-unknown-rule", "default", "pass") || cpolr.has("node-role-not-authorized", "default", "pass") {
		t.Errorf("%d pass results, summary %v: want passes for the rules that found nothing, counted, and none for a rule that failed", passes, cpolr.Summary)
	}
	if got := env.kubectlT(t, "get", "policyreport", "karpenter-guard-aws-auth", "-n", "kube-system", "-o", "jsonpath={.metadata.labels}"); !strings.Contains(got, "karpenter-guard") {
		t.Errorf("no aws-auth PolicyReport: %s", got)
	}
	if got := env.kubectlT(t, "get", "clusterpolicyreports"); !strings.Contains(got, "karpenter-guard") {
		t.Errorf("kubectl get clusterpolicyreports:\n%s", got)
	}
}

// auditJSON runs `karpenter-guard audit --write-reports -o json` against the suite's cluster and the
// AWS fake, and returns its report; it fails the test unless the audit exits 1 (deny findings).
func auditJSON(t *testing.T, cluster, region string) []byte {
	t.Helper()
	cmd := exec.Command(env.guardBin, "audit", "--kubeconfig", env.kubeconfig, "--cluster-name", cluster, "--region", region,
		"--aws-endpoint-url", env.fakeURL, "--write-reports", "-o", "json")
	cmd.Env = append(cmd.Environ(), "AWS_ACCESS_KEY_ID=AKIAFAKEAWS000000000", "AWS_SECRET_ACCESS_KEY=fake", "AWS_EC2_METADATA_DISABLED=true")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err == nil || !errorsAs(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("audit: %v (want exit 1: deny findings)\n%s%s", err, out, stderr.String())
	}
	return out
}

func errorsAs(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*target = e
	}
	return ok
}

// TestAuditWithoutReportPermissions: writing reports without RBAC for them fails, saying which grant is
// missing.
func TestAuditWithoutReportPermissions(t *testing.T) {
	reset(t)
	env.kubectlT(t, "create", "serviceaccount", "reader", "-n", "karpenter-guard")
	defer env.kubectl(t, "", "delete", "serviceaccount", "reader", "-n", "karpenter-guard")
	env.kubectlT(t, "create", "clusterrolebinding", "reader", "--clusterrole", "karpenter-guard", "--serviceaccount", "karpenter-guard:reader")
	defer env.kubectl(t, "", "delete", "clusterrolebinding", "reader")
	token := strings.TrimSpace(env.kubectlT(t, "create", "token", "reader", "-n", "karpenter-guard"))
	kc := filepath.Join(t.TempDir(), "reader.kubeconfig")
	if err := writeKubeconfig(kc, env.apiURL, token); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(env.guardBin, "audit", "--kubeconfig", kc, "--facts", "../examples/production/cluster-facts.yaml", "--write-reports").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not allowed: grant get, list, create, update and delete on policyreports and clusterpolicyreports of wgpolicyk8s.io") {
		t.Errorf("audit --write-reports without RBAC: %v\n%s", err, out)
	}
}

// TestInClusterAudit: serve's audit reports objects created before the webhook existed, with Events
// on them; fixing one clears its results on the next audit.
func TestInClusterAudit(t *testing.T) {
	world(t, "", "aws:\n  onError: allow\n", filepath.Join("..", "examples", "field-reports", "03-al2023-bootstrap-userdata.yaml"))
	eventually(t, "the bootstrap.sh finding in the ClusterPolicyReport", func() bool {
		return clusterReport(t).has("userdata-bootstrap-on-al2023", "al2023-legacy-userdata", "fail")
	})
	events := env.kubectlT(t, "get", "events", "-A", "--field-selector", "involvedObject.name=al2023-legacy-userdata,reason=PolicyViolation", "-o", "jsonpath={.items[*].message}")
	if !strings.Contains(events, "[userdata-bootstrap-on-al2023] AL2023 userData runs") {
		t.Errorf("no Event on the object: %q", events)
	}
	if r := apply(t, filepath.Join("testdata", "corrected", "03-al2023-bootstrap-userdata.yaml")); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	eventually(t, "the fixed object's results gone", func() bool {
		rep := clusterReport(t)
		return rep != nil && !rep.has("userdata-bootstrap-on-al2023", "al2023-legacy-userdata", "fail")
	})
	// Events are not repeated for a finding already reported (the recorder would count repeats).
	uid := env.kubectlT(t, "get", "ec2nodeclass", "al2023-legacy-userdata", "-o", "jsonpath={.metadata.uid}")
	counts := env.kubectlT(t, "get", "events", "-A", "--field-selector", "involvedObject.uid="+uid+",reason=PolicyViolation", "-o", "jsonpath={.items[*].count}")
	if strings.TrimSpace(counts) != "1" {
		t.Errorf("Events for one finding: counts %q, want one Event once", counts)
	}
}

// TestAuditFollowsTheWorld: removing the node role's mapping from aws-auth (the webhook in mode warn lets
// it through) and deleting a role's access entry in AWS make the dependent EC2NodeClasses fail on the
// next audit, with check's message.
func TestAuditFollowsTheWorld(t *testing.T) {
	t.Run("aws-auth", func(t *testing.T) {
		dir := filepath.Join("..", "examples", "clusters", "config-map-mode")
		world(t, filepath.Join(dir, "cluster-facts.yaml"), "mode: warn\n", "testdata/corrected/config-map-mode-aws-auth.yaml", filepath.Join(dir, "karpenter.yaml"))
		eventually(t, "a first audit", func() bool { return clusterReport(t) != nil })
		if clusterReport(t).has("node-role-not-authorized", "default", "fail") {
			t.Fatalf("the mapped role is reported")
		}
		r := apply(t, filepath.Join(dir, "aws-auth.yaml"))
		if r.code != 0 || !strings.Contains(r.stderr, "Warning: [aws-auth-removes-node-role]") {
			t.Fatalf("mode warn: %+v", r)
		}
		eventually(t, "the class failing after the mapping is removed", func() bool {
			return clusterReport(t).has("node-role-not-authorized", "default", "fail")
		})
		for _, res := range clusterReport(t).Results {
			if res.Policy == "node-role-not-authorized" && res.Result == "fail" && !strings.Contains(res.Message, "is not in aws-auth mapRoles, and cluster aws-2026-eks uses mode CONFIG_MAP") {
				t.Errorf("the report's message is not check's: %q", res.Message)
			}
		}
	})
	t.Run("access entry", func(t *testing.T) {
		dir := filepath.Join("..", "examples", "clusters", "api-mode")
		world(t, filepath.Join(dir, "cluster-facts.yaml"), "aws:\n  cacheTTL: 1s\n  negativeCacheTTL: 1s\n", filepath.Join(dir, "aws-auth.yaml"))
		env.startGuard(t, guardOptions{config: "aws:\n  cacheTTL: 1s\n  negativeCacheTTL: 1s\n", clusterName: "searchspot", region: "eu-west-1", auditInterval: "2s"})
		doc := strings.SplitN(readFile(t, filepath.Join(dir, "ec2nodeclasses.yaml")), "---", 2)[0] // al2023-nodes, authorized by its entry
		if r := env.kubectl(t, doc, "apply", "-f", "-"); r.code != 0 {
			t.Fatalf("%+v", r)
		}
		eventually(t, "a first audit with the class", func() bool {
			rep := clusterReport(t)
			return rep != nil && slices.ContainsFunc(rep.Results, func(r reportResult) bool { return r.Resources[0].Name == "al2023-nodes" })
		})
		if clusterReport(t).has("node-role-not-authorized", "al2023-nodes", "fail") {
			t.Fatalf("the class with an entry is reported")
		}
		cf := decodeFacts(t, filepath.Join(dir, "cluster-facts.yaml"))
		var kept []facts.AccessEntry
		for _, e := range *cf.AccessEntries {
			if !strings.HasSuffix(e.PrincipalARN, "/KarpenterNodeRole-searchspot") {
				kept = append(kept, e)
			}
		}
		cf.AccessEntries = &kept
		env.fake.SetFacts(cf) // the entry deleted in AWS
		eventually(t, "the class failing after its entry is deleted", func() bool {
			return clusterReport(t).has("node-role-not-authorized", "al2023-nodes", "fail")
		})
	})
}

// TestAuditPartialWhenAWSFails: with AWS denying, the audit's report keeps what could be judged, marks
// itself partial, and reports the rest as errors with the reason, never as passing.
func TestAuditPartialWhenAWSFails(t *testing.T) {
	dir := filepath.Join("..", "examples", "production")
	world(t, filepath.Join(dir, "cluster-facts.yaml"), "", filepath.Join(dir, "aws-auth.yaml"), filepath.Join(dir, "ec2nodeclass.yaml"),
		filepath.Join("..", "examples", "field-reports", "03-al2023-bootstrap-userdata.yaml"))
	env.fake.Inject("iam:*", fakeawsDenied())
	defer env.fake.Clear("")
	env.startGuard(t, guardOptions{config: "", clusterName: "prod-eks", region: "us-east-1"})
	eventually(t, "a partial report", func() bool {
		rep := clusterReport(t)
		return rep != nil && rep.Metadata.Annotations["karpenter-guard.io/partial"] == "true"
	})
	rep := clusterReport(t)
	if !rep.has("userdata-bootstrap-on-al2023", "al2023-legacy-userdata", "fail") {
		t.Errorf("what could be judged is not kept: %+v", rep.Results)
	}
	if !rep.has("node-role-not-authorized", "production", "error") {
		t.Errorf("the rule AWS kept from running is not reported as an error: %+v", rep.Results)
	}
	for _, r := range rep.Results {
		if r.Result == "error" && !strings.Contains(r.Message, "AWS denied iam:") {
			t.Errorf("error without its reason: %+v", r)
		}
	}
	// A rule AWS kept from running is an error, never a pass; a rule that ran on the manifest alone
	// and found nothing is a pass.
	if rep.has("node-role-not-authorized", "production", "pass") || !rep.has("instance-profile-arn", "production", "pass") {
		t.Errorf("passes: want instance-profile-arn and not node-role-not-authorized on production: %+v", rep.Results)
	}
}

func decodeFacts(t testing.TB, path string) *facts.ClusterFacts {
	t.Helper()
	cf, err := facts.DecodeSnapshotFile([]byte(readFile(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

func fakeawsDenied() fakeaws.Fault { return fakeaws.Fault{AccessDenied: true} }

// TestFactsExportFromCluster: `facts export` reads the cluster's objects and aws-auth through the real
// API server and asks AWS what their rules need; check with the export gives the verdicts of the
// original snapshot.
func TestFactsExportFromCluster(t *testing.T) {
	dir := filepath.Join("..", "examples", "clusters", "config-map-mode")
	world(t, filepath.Join(dir, "cluster-facts.yaml"), "", filepath.Join(dir, "aws-auth.yaml"), filepath.Join(dir, "karpenter.yaml"))
	cmd := exec.Command(env.guardBin, "facts", "export", "--kubeconfig", env.kubeconfig, "--cluster-name", "aws-2026-eks", "--region", "us-east-1",
		"--aws-endpoint-url", env.fakeURL)
	cmd.Env = append(cmd.Environ(), "AWS_ACCESS_KEY_ID=AKIAFAKEAWS000000000", "AWS_SECRET_ACCESS_KEY=fake", "AWS_EC2_METADATA_DISABLED=true")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	exported, err := cmd.Output()
	if err != nil {
		t.Fatalf("facts export: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(string(exported), "awsAuth:") || !strings.Contains(string(exported), "aws-2026-eks-node-role") {
		t.Errorf("the export lacks the cluster's aws-auth:\n%s", exported)
	}
	file := filepath.Join(t.TempDir(), "exported.yaml")
	if err := writeFile(file, exported); err != nil {
		t.Fatal(err)
	}
	check := func(args ...string) string {
		out, _ := exec.Command(env.guardBin, append([]string{"check", "-o", "json", "-f", filepath.Join(dir, "karpenter.yaml")}, args...)...).Output()
		var rep struct {
			Findings []struct{ Rule, Message, Fix string }
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		b, _ := json.Marshal(rep.Findings)
		return string(b)
	}
	if a, b := check("--facts", filepath.Join(dir, "cluster-facts.yaml"), "-f", filepath.Join(dir, "aws-auth.yaml")), check("--facts", file); a != b {
		t.Errorf("verdicts differ:\noriginal %s\nexport   %s", a, b)
	}
}

func writeFile(path string, data []byte) error { return os.WriteFile(path, data, 0o644) }

// TestAWSAuthNotReadable: without RBAC on aws-auth, serve still starts, audits and answers reviews:
// the aws-auth report says the ConfigMap could not be read and names the grant, instead of the
// audit waiting forever for a watch that cannot sync.
func TestAWSAuthNotReadable(t *testing.T) {
	dir := filepath.Join("..", "examples", "production")
	world(t, filepath.Join(dir, "cluster-facts.yaml"), "", filepath.Join(dir, "aws-auth.yaml"), filepath.Join(dir, "ec2nodeclass.yaml"))
	env.kubectlT(t, "delete", "rolebinding", "karpenter-guard-aws-auth", "-n", "kube-system")
	defer env.kubectlT(t, "apply", "-f", "../manifests/base/rbac.yaml")
	env.startGuard(t, guardOptions{clusterName: "prod-eks", region: "us-east-1"})
	eventually(t, "the aws-auth report saying it could not be read", func() bool {
		rep := awsAuthReport(t)
		return rep.has("karpenter-guard-read", "aws-auth", "error") &&
			strings.Contains(rep.Results[0].Message, "cannot read kube-system/aws-auth") && strings.Contains(rep.Results[0].Message, "forbidden")
	})
	doc := strings.Replace(readFile(t, filepath.Join(dir, "ec2nodeclass.yaml")), "name: production", "name: production-2", 1)
	r := env.kubectl(t, doc, "apply", "--dry-run=server", "-f", "-")
	if r.code != 0 || !strings.Contains(r.stderr, "Warning: [karpenter-guard] not allowed to read ConfigMap kube-system/aws-auth (RBAC: get, list and watch on configmaps, resourceNames aws-auth)") {
		t.Errorf("review without aws-auth: %+v", r)
	}
	if !strings.Contains(tail(env.guard.log, 200), "not allowed to read kube-system/aws-auth") {
		t.Errorf("the log does not say aws-auth cannot be read")
	}
}

// TestAuditReportsJoinReadiness: objects stored before the webhook existed (a node role EC2 cannot
// assume; a class whose role the controller may not pass) are reported by `karpenter-guard audit`,
// which reads the controller's and aws-node's roles from the cluster's ServiceAccounts (IRSA
// annotation, Pod Identity association) and asks the AWS fake's policy simulator, and the findings
// land in the ClusterPolicyReport.
func TestAuditReportsJoinReadiness(t *testing.T) {
	for _, tc := range []struct {
		name, dir, cluster, region, want string
		// manifests are applied after aws-auth; nil: the example's karpenter.yaml.
		manifests []string
	}{
		{"untrusted-node-role", "clusters/untrusted-node-role", "ledger", "us-west-2", "default/node-role-trust-policy", nil},
		{"controller-cannot-pass-role", "clusters/controller-cannot-pass-role", "media", "eu-central-1", "gpu/controller-launch-permissions", nil},
		{"isolated-subnet-no-ec2-endpoint", "clusters/isolated-subnet-no-ec2-endpoint", "payments", "eu-west-2", "payments/subnet-missing-vpc-endpoints", nil},
		// A NodePool whose instance family does not exist, stored beside the production class.
		{"nodepool-family-typo", "production", "prod-eks", "us-east-1", "general-purpose/nodepool-requirements-unsatisfiable",
			[]string{"../examples/production/ec2nodeclass.yaml", "../examples/production/nodepool.yaml", "testdata/nodepools/family-typo.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join("..", "examples", tc.dir)
			manifests := tc.manifests
			if manifests == nil {
				manifests = []string{filepath.Join(dir, "karpenter.yaml")}
			}
			world(t, filepath.Join(dir, "cluster-facts.yaml"), "", append([]string{filepath.Join(dir, "aws-auth.yaml")}, manifests...)...)
			env.stopGuard()
			env.removeWebhooks(t)
			env.kubectl(t, "", "delete", "clusterpolicyreports,policyreports", "-A", "--all")
			out := auditJSON(t, tc.cluster, tc.region)
			var rep struct {
				Findings []struct {
					Rule   string
					Object struct{ Name string }
				}
				NotEvaluated []struct{ Rule, Reason string }
			}
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var found []string
			for _, f := range rep.Findings {
				found = append(found, f.Object.Name+"/"+f.Rule)
			}
			if !slices.Equal(found, []string{tc.want}) {
				t.Errorf("audit found %v, want exactly [%s]", found, tc.want)
			}
			if len(rep.NotEvaluated) != 0 {
				t.Errorf("with the cluster's ServiceAccounts and the simulator, nothing should be left unevaluated: %+v", rep.NotEvaluated)
			}
			name, rule, _ := strings.Cut(tc.want, "/")
			if cpolr := clusterReport(t); !cpolr.has(rule, name, "fail") {
				t.Errorf("the ClusterPolicyReport lacks %s: %+v", tc.want, cpolr)
			}
		})
	}
}
