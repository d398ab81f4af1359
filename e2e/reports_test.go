//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// skippedRules are the EC2NodeClass rules the classes of these tests skip, with a long
// karpenter-guard.io/skip-reason: each class then has one skip result per rule, whose message is
// the reason.
const skippedRules = "al2023-hybrid-auth,ami-alias-version-format,ami-family-eol,ami-family-mismatch,ami-selector-missing-owner," +
	"ami-selector-no-match,aws-auth-rolearn-has-path,custom-userdata-missing-unregistered-taint,ebs-unencrypted,imds-v1-enabled," +
	"instance-profile-arn,instance-profile-no-role,instance-profile-not-found,node-role-access-entry-stale,node-role-access-entry-type," +
	"node-role-not-authorized,node-role-not-found,security-group-selector-no-match,selector-term-ignored-fields,selector-vpc-mismatch"

// clippedSuffix ends a text the reports clipped; the byte count precedes it.
const clippedSuffix = " bytes; `karpenter-guard audit` prints it whole)"

// skipClass is an EC2NodeClass that skips skippedRules with a reason of reasonBytes.
type skipClass struct {
	name        string
	reasonBytes int
}

// reasonOf is the skip reason of a class: its name, then a sentence (with a two-byte rune, so that
// clipping has rune boundaries to respect) repeated to n bytes.
func reasonOf(c skipClass) string {
	var b strings.Builder
	b.WriteString(c.name + ": ")
	for b.Len() < c.reasonBytes {
		b.WriteString("this class runs an AMI vérifié by the platform team, so these rules do not apply; ")
	}
	return b.String()[:c.reasonBytes]
}

// classes returns n classes named prefix-00, prefix-01, … with reasons of size bytes.
func classes(prefix string, n, size int) []skipClass {
	out := make([]skipClass, n)
	for i := range out {
		out[i] = skipClass{name: fmt.Sprintf("%s-%02d", prefix, i), reasonBytes: size}
	}
	return out
}

// createSkipClasses stores the classes with kubectl create (apply would copy each annotation into
// last-applied-configuration, and a 200 KiB reason twice is over the API server's 256 KiB limit on
// annotations).
func createSkipClasses(t *testing.T, cs []skipClass) {
	t.Helper()
	var items []any
	for _, c := range cs {
		items = append(items, map[string]any{
			"apiVersion": "karpenter.k8s.aws/v1",
			"kind":       "EC2NodeClass",
			"metadata": map[string]any{"name": c.name, "annotations": map[string]string{
				"karpenter-guard.io/skip":        skippedRules,
				"karpenter-guard.io/skip-reason": reasonOf(c),
			}},
			"spec": map[string]any{
				"amiSelectorTerms":           []any{map[string]any{"alias": "al2023@latest"}},
				"role":                       "KarpenterNodeRole",
				"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"a": "b"}}},
				"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"a": "b"}}},
			},
		})
	}
	list, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	if r := env.kubectl(t, string(list), "create", "-f", "-"); r.code != 0 {
		t.Fatalf("kubectl create: exit %d\n%s", r.code, r.stderr)
	}
}

// deleteSkipClasses deletes classes.
func deleteSkipClasses(t *testing.T, cs []skipClass) {
	t.Helper()
	args := []string{"delete", "ec2nodeclasses", "--wait=false"}
	for _, c := range cs {
		args = append(args, c.name)
	}
	env.kubectlT(t, args...)
}

// cleanSlate leaves the tests of this file alone with the API server: no webhook, no serve (whose
// audit would write reports too), no Karpenter object, no report.
func cleanSlate(t *testing.T) {
	t.Helper()
	reset(t)
	env.stopGuard()
	env.kubectlT(t, "delete", "clusterpolicyreports,policyreports", "-A", "--all")
}

// auditRun is one `karpenter-guard audit --write-reports -o json`.
type auditRun struct {
	code           int
	stdout, stderr string
	// skipped is what the audit printed of each skip.
	skipped []struct {
		Rule   string
		Object struct{ Name string }
		Reason string
	}
}

// skipsOnly is the body of a GuardConfig that turns off every rule but skippedRules: the results of
// the classes of these tests are then their skips alone, so that the reports' sizes and counts are
// those of the skips (findings and passes do not matter here).
func skipsOnly() string {
	var b strings.Builder
	b.WriteString("rules:\n")
	for _, id := range rules.Default().IDs() {
		if !slices.Contains(strings.Split(skippedRules, ","), id) {
			fmt.Fprintf(&b, "  %s: off\n", id)
		}
	}
	return b.String()
}

// auditWriteReports runs the audit CLI as the admin with the production snapshot for facts and the
// rules but skippedRules off (skipsOnly).
func auditWriteReports(t *testing.T) auditRun {
	t.Helper()
	config := filepath.Join(t.TempDir(), "skips-only.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\n"+skipsOnly()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(env.guardBin, "audit", "--kubeconfig", env.kubeconfig, "--facts", "../examples/production/cluster-facts.yaml",
		"--config", config, "--write-reports", "-o", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	run := auditRun{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		run.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if run.code < 2 {
		var out struct{ Skipped json.RawMessage }
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("audit output: %v\n%.2000s", err, stdout.String())
		}
		if err := json.Unmarshal(out.Skipped, &run.skipped); err != nil {
			t.Fatal(err)
		}
	}
	return run
}

// storedReport is a report as the API server returns it, with the size of its compact JSON.
type storedReport struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Summary map[string]int `json:"summary"`
	Results []reportResult `json:"results"`
	size    int
}

// readReports lists reports with kubectl get (kubectl arguments: kinds, -l, -n), sorted by name.
func readReports(t *testing.T, args ...string) []storedReport {
	t.Helper()
	out := env.kubectlT(t, append(append([]string{"get"}, args...), "-o", "json")...)
	var list struct{ Items []json.RawMessage }
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var reps []storedReport
	for _, raw := range list.Items {
		var r storedReport
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			t.Fatal(err)
		}
		r.size = compact.Len()
		reps = append(reps, r)
	}
	sort.Slice(reps, func(i, j int) bool { return reps[i].Metadata.Name < reps[j].Metadata.Name })
	return reps
}

// ourClusterReports reads karpenter-guard's ClusterPolicyReports.
func ourClusterReports(t *testing.T) []storedReport {
	t.Helper()
	return readReports(t, "clusterpolicyreports", "-l", "app.kubernetes.io/managed-by=karpenter-guard")
}

func names(reps []storedReport) []string {
	var out []string
	for _, r := range reps {
		out = append(out, r.Metadata.Name)
	}
	return out
}

// checkSkipResults checks that reps hold, for each class, a skip result for each skipped rule, whose
// message is the class's reason clipped to at most 1 KiB and saying so (or whole when short), and that
// each report is far below etcd's limit. It returns the number of results in reps.
func checkSkipResults(t *testing.T, reps []storedReport, cs []skipClass) int {
	t.Helper()
	rules := strings.Split(skippedRules, ",")
	byClass := map[string]int{}
	total := 0
	for _, r := range reps {
		total += len(r.Results)
		// 512 KiB as karpenter-guard sends it, and what the API server adds (uid, managedFields, …).
		if r.size > 520<<10 {
			t.Errorf("%s is %d bytes", r.Metadata.Name, r.size)
		}
		if r.Metadata.Labels["app.kubernetes.io/managed-by"] != "karpenter-guard" {
			t.Errorf("%s without karpenter-guard's label: %v", r.Metadata.Name, r.Metadata.Labels)
		}
		for _, res := range r.Results {
			if res.Result == "skip" && len(res.Resources) == 1 {
				byClass[res.Resources[0].Name]++
			}
		}
	}
	messages := map[string]string{}
	for _, r := range reps {
		for _, res := range r.Results {
			if res.Result == "skip" && len(res.Resources) == 1 {
				messages[res.Resources[0].Name] = res.Message
			}
		}
	}
	for _, c := range cs {
		if byClass[c.name] != len(rules) {
			t.Errorf("%s: %d skip results, want %d", c.name, byClass[c.name], len(rules))
		}
		msg, whole := messages[c.name], "karpenter-guard.io/skip: "+reasonOf(c)
		if len(whole) <= 1024 {
			if msg != whole {
				t.Errorf("%s: message %q, want the reason whole", c.name, msg)
			}
			continue
		}
		suffix := "… (clipped from " + strconv.Itoa(len(whole)) + clippedSuffix
		kept, ok := strings.CutSuffix(msg, suffix)
		if len(msg) > 1024 || !ok || !strings.HasPrefix(whole, kept) || len(kept) < 900 {
			t.Errorf("%s: message of %d bytes is not the reason's beginning clipped with %q: …%q", c.name, len(msg), suffix, msg[max(0, len(msg)-120):])
		}
	}
	return total
}

// TestReportsLongSkipReasons: a class with a 200 KiB skip reason and ten with 20 KiB reasons (20 rules
// skipped each: 8 MiB of messages uncut) give reports the real API server accepts, holding every
// result with the reason clipped to 1 KiB and saying so, while `karpenter-guard audit` prints it
// whole. More classes than fit in 512 KiB split the cluster report by size, under 500 results; when
// they are gone, the second report goes too.
func TestReportsLongSkipReasons(t *testing.T) {
	cleanSlate(t)
	long := append([]skipClass{{name: "reasons-huge", reasonBytes: 200 << 10}}, classes("reasons-long", 10, 20<<10)...)
	more := classes("reasons-more", 10, 20<<10)
	t.Cleanup(func() { env.kubectl(t, "", "delete", "ec2nodeclasses", "--all", "--wait=false") })
	createSkipClasses(t, long)

	run := auditWriteReports(t)
	if run.code > 1 || !strings.Contains(run.stderr, "reports written") {
		t.Fatalf("audit --write-reports: exit %d\n%s", run.code, run.stderr)
	}
	printed := 0
	for _, s := range run.skipped {
		if s.Object.Name == "reasons-huge" && strings.HasSuffix(s.Reason, reasonOf(long[0])) {
			printed++
		}
	}
	if printed != len(strings.Split(skippedRules, ",")) {
		t.Errorf("audit printed the 200 KiB reason whole %d times, want once per skipped rule", printed)
	}
	reps := ourClusterReports(t)
	if got := names(reps); len(got) != 1 || got[0] != "karpenter-guard" {
		t.Fatalf("cluster reports %q, want one (about 300 KiB clipped)", got)
	}
	checkSkipResults(t, reps, long)
	if aws := readReports(t, "policyreports", "-n", "kube-system"); len(aws) != 1 || aws[0].Metadata.Name != "karpenter-guard-aws-auth" {
		t.Errorf("aws-auth reports %q", names(aws))
	}

	createSkipClasses(t, more)
	if run := auditWriteReports(t); run.code > 1 {
		t.Fatalf("audit --write-reports: exit %d\n%s", run.code, run.stderr)
	}
	reps = ourClusterReports(t)
	if got := names(reps); len(got) != 2 || got[0] != "karpenter-guard" || got[1] != "karpenter-guard-2" {
		t.Errorf("cluster reports %q, want karpenter-guard and karpenter-guard-2", got)
	}
	if total := checkSkipResults(t, reps, append(long, more...)); total >= 500 {
		t.Errorf("%d results: the test means to split by size, under the count", total)
	}

	deleteSkipClasses(t, more)
	if run := auditWriteReports(t); run.code > 1 {
		t.Fatalf("audit --write-reports: exit %d\n%s", run.code, run.stderr)
	}
	reps = ourClusterReports(t)
	if got := names(reps); len(got) != 1 || got[0] != "karpenter-guard" {
		t.Errorf("cluster reports %q after the classes were deleted, want karpenter-guard alone", got)
	}
	checkSkipResults(t, reps, long)
}

// foreignReport is a ClusterPolicyReport karpenter-guard did not write: labels as given (none: a
// report under our name that is not ours), with a summary that shows whether it was overwritten.
func foreignReport(name, labels string) string {
	return fmt.Sprintf(`apiVersion: wgpolicyk8s.io/v1alpha2
kind: ClusterPolicyReport
metadata:
  name: %s
  labels: {%s}
summary: {pass: 42}
`, name, labels)
}

// checkForeign checks that a report we did not write is still there, unchanged.
func checkForeign(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	reps := readReports(t, "clusterpolicyreports", "--field-selector", "metadata.name="+name)
	if len(reps) != 1 {
		t.Errorf("%s is gone", name)
		return
	}
	r := reps[0]
	if r.Summary["pass"] != 42 || len(r.Results) != 0 || fmt.Sprint(r.Metadata.Labels) != fmt.Sprint(labels) {
		t.Errorf("%s was overwritten: labels %v, summary %v, %d results", name, r.Metadata.Labels, r.Summary, len(r.Results))
	}
}

// reportWrites scrapes karpenter_guard_report_writes_total{outcome} from serve's /metrics (-1: absent).
func reportWrites(t *testing.T, port int, outcome string) float64 {
	t.Helper()
	res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	prefix := `karpenter_guard_report_writes_total{outcome="` + outcome + `"} `
	for _, l := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return -1
}

// TestReportsWriteFailure: a report karpenter-guard may not write (an object of its name without its
// label, which it refuses to overwrite) does not keep the other reports from being written, by the
// CLI and by serve's audit; the failure is an error that names the report and says what to do, a log
// line and a count in karpenter_guard_report_writes_total{outcome="error"}. Reports not carrying
// karpenter-guard's label (Kyverno's) survive every audit, including the deletion of stale reports.
func TestReportsWriteFailure(t *testing.T) {
	cleanSlate(t)
	cs := append(classes("failure-a", 11, 20<<10), classes("failure-b", 11, 20<<10)...) // two cluster reports
	t.Cleanup(func() {
		env.kubectl(t, "", "delete", "ec2nodeclasses", "--all", "--wait=false")
		env.kubectl(t, "", "delete", "clusterpolicyreports", "karpenter-guard-2", "kyverno-cluster", "--ignore-not-found")
	})
	createSkipClasses(t, cs)
	env.kubectlT(t, "delete", "clusterpolicyreports,policyreports", "-A", "--all")
	for _, r := range []string{foreignReport("karpenter-guard-2", ""), foreignReport("kyverno-cluster", "app.kubernetes.io/managed-by: kyverno")} {
		if res := env.kubectl(t, r, "create", "-f", "-"); res.code != 0 {
			t.Fatalf("create a foreign report: %s", res.stderr)
		}
	}
	kyverno := map[string]string{"app.kubernetes.io/managed-by": "kyverno"}

	t.Run("CLI", func(t *testing.T) {
		run := auditWriteReports(t)
		const refused = `write ClusterPolicyReport "karpenter-guard-2": a report of that name exists without the label app.kubernetes.io/managed-by=karpenter-guard`
		if run.code != 2 || !strings.Contains(run.stderr, refused) || !strings.Contains(run.stderr, "delete or rename it") {
			t.Errorf("audit --write-reports: exit %d, want 2 and %q\n%s", run.code, refused, run.stderr)
		}
		if !strings.Contains(run.stdout, `"findings"`) || !strings.Contains(run.stdout, `"summary"`) {
			t.Errorf("a report that could not be written hid the audit's findings: stdout %.300q", run.stdout)
		}
		reps := ourClusterReports(t)
		if got := names(reps); len(got) == 0 || got[0] != "karpenter-guard" || slices.Contains(got, "karpenter-guard-2") {
			t.Errorf("our cluster reports %q, want karpenter-guard (written despite the refusal of karpenter-guard-2)", got)
		} else if len(reps[0].Results) < 300 {
			t.Errorf("karpenter-guard holds %d results", len(reps[0].Results))
		}
		if aws := readReports(t, "policyreports", "-n", "kube-system"); len(aws) != 1 || aws[0].Metadata.Name != "karpenter-guard-aws-auth" {
			t.Errorf("the aws-auth report, written after the refusal, is not there: %q", names(aws))
		}
		checkForeign(t, "karpenter-guard-2", nil)
		checkForeign(t, "kyverno-cluster", kyverno)
	})

	t.Run("serve", func(t *testing.T) {
		env.fake.Clear("")
		env.fake.SetFacts(&facts.ClusterFacts{})
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		// The last --metrics-bind-address wins: a port this test knows.
		env.startGuard(t, guardOptions{config: skipsOnly(), clusterName: "e2e", region: "us-east-1", extraArgs: []string{fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", port)}})
		defer env.stopGuard()
		// One audit: karpenter-guard-2 refused, karpenter-guard and the aws-auth report written.
		eventually(t, "a refused report write counted, and the others written", func() bool {
			return reportWrites(t, port, "error") >= 1 && reportWrites(t, port, "ok") >= 2
		})
		if log := tail(env.guard.log, 400); !strings.Contains(log, "policy report write failed") || !strings.Contains(log, `"name":"karpenter-guard-2"`) ||
			!strings.Contains(log, "delete or rename it") {
			t.Errorf("the log does not say which report was not written and what to do:\n%s", log)
		}
		checkForeign(t, "karpenter-guard-2", nil)

		// Once the squatter is gone, the next audit (on a change) writes the report there.
		env.kubectlT(t, "delete", "clusterpolicyreport", "karpenter-guard-2")
		env.kubectlT(t, "annotate", "ec2nodeclass", cs[0].name, "e2e/touched=1", "--overwrite")
		eventually(t, "karpenter-guard-2 written by the audit", func() bool {
			return slices.Contains(names(ourClusterReports(t)), "karpenter-guard-2")
		})
		// With half the classes gone, karpenter-guard-2 is stale and deleted; Kyverno's report is not.
		deleteSkipClasses(t, cs[11:])
		eventually(t, "the stale karpenter-guard-2 deleted", func() bool {
			return fmt.Sprint(names(ourClusterReports(t))) == "[karpenter-guard]"
		})
		checkSkipResults(t, ourClusterReports(t), cs[:11])
		checkForeign(t, "kyverno-cluster", kyverno)
	})
}
