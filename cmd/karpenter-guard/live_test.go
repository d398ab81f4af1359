package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

// awsEnv sets the environment of a live run on a developer machine with nothing configured: static
// credentials, no shared AWS config, no instance metadata, no kubeconfig.
func awsEnv(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEAWS000000000")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fakeaws-secret-key")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("KUBECONFIG", filepath.Join(dir, "no-kubeconfig"))
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
}

// fakeFor serves a directory's cluster-facts.yaml from the AWS fake and returns the flags of a live
// run against it.
func fakeFor(t *testing.T, factsFile string) (*fakeaws.Server, []string) {
	t.Helper()
	data, err := os.ReadFile(factsFile)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := facts.DecodeSnapshotFile(data)
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeaws.New(cf)
	url := srv.Start(t)
	return srv, []string{"--live", "--cluster-name", cf.Cluster.Name, "--region", cf.Cluster.Region, "--aws-endpoint-url", url}
}

// exampleDirs are the example clusters: each directory holds manifests and its cluster-facts.yaml.
func exampleDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("examples/clusters/*")
	if err != nil || len(dirs) < 3 {
		t.Fatalf("example clusters: %v %v", dirs, err)
	}
	return append(dirs, "examples/production")
}

// verdicts renders a JSON report's findings and not-evaluated rules for comparison.
func verdicts(r jsonReport) string {
	var b strings.Builder
	for _, f := range r.Findings {
		b.WriteString(f.Object.Kind + "/" + f.Object.Name + " " + f.Action + " [" + f.Rule + "] " + f.Message + "\n  fix: " + f.Fix + "\n")
	}
	for _, n := range r.NotEvaluated {
		b.WriteString("not evaluated: " + n.Rule + "\n")
	}
	return b.String()
}

// TestLiveMatchesSnapshotOnExamples: `check --live` against the AWS fake serving an example's
// cluster-facts.yaml gives exactly the verdicts of `check` with that snapshot, so the field-report
// failures are caught live with the same fixes, and the production setup stays silent.
func TestLiveMatchesSnapshotOnExamples(t *testing.T) {
	inRepoRoot(t)
	awsEnv(t)
	for _, dir := range exampleDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			_, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
			snapCode, snapOut, _ := cli(t, "", "check", "-f", dir, "-o", "json")
			liveCode, liveOut, liveErr := cli(t, "", append([]string{"check", "-f", dir, "-o", "json"}, flags...)...)
			if liveCode != snapCode {
				t.Errorf("exit %d live, %d with the snapshot; stderr: %s", liveCode, snapCode, liveErr)
			}
			s, l := verdicts(decodeReport(t, snapOut)), verdicts(decodeReport(t, liveOut))
			if s != l {
				t.Errorf("live and snapshot verdicts differ:\n--- snapshot\n%s--- live\n%s", s, l)
			}
			if dir != "examples/production" && !strings.Contains(l, "deny") && !strings.Contains(l, "warn") {
				t.Errorf("the field-report failures of %s are not caught live:\n%s", dir, l)
			}
		})
	}
}

// TestFactsExportRoundTrip: a snapshot exported from the fake serving X gives, for the same manifests,
// the verdicts X gives, and decodes strictly.
func TestFactsExportRoundTrip(t *testing.T) {
	inRepoRoot(t)
	awsEnv(t)
	for _, dir := range exampleDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			srv, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
			code, exported, stderr := cli(t, "", append([]string{"facts", "export", "-f", dir}, flags[1:]...)...)
			if code != 0 {
				t.Fatalf("facts export: exit %d: %s", code, stderr)
			}
			if !strings.HasPrefix(exported, "# ClusterFacts of EKS cluster ") {
				t.Errorf("export lacks its header:\n%s", exported)
			}
			cf, err := facts.DecodeSnapshotFile([]byte(exported))
			if err != nil {
				t.Fatalf("the exported snapshot does not decode: %v\n%s", err, exported)
			}
			// The account's EBS defaults are written whether or not a mapping leads a rule to them.
			data, err := os.ReadFile(filepath.Join(dir, "cluster-facts.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			served, err := facts.DecodeSnapshotFile(data)
			if err != nil {
				t.Fatal(err)
			}
			if want := served.EBSDefaults; want == nil || cf.EBSDefaults == nil || *cf.EBSDefaults != *want {
				t.Errorf("exported ebsDefaults %+v, want those the fake serves, %+v", cf.EBSDefaults, want)
			}
			file := filepath.Join(t.TempDir(), "exported.yaml")
			if err := os.WriteFile(file, []byte(exported), 0o644); err != nil {
				t.Fatal(err)
			}
			_, orig, _ := cli(t, "", "check", "-f", dir, "-o", "json")
			_, again, _ := cli(t, "", "check", "-f", dir, "--facts", file, "-o", "json")
			if o, a := verdicts(decodeReport(t, orig)), verdicts(decodeReport(t, again)); o != a {
				t.Errorf("verdicts with the export differ from the original snapshot's:\n--- original\n%s--- export\n%s\n%s", o, a, exported)
			}
			if srv.Calls("ec2:DescribeImages") == 0 && strings.Contains(exported, "images:") && !strings.Contains(exported, "images: []") {
				t.Errorf("images exported without asking EC2")
			}
		})
	}
}

// TestLiveRunFailures: what stops a live run says what to do; what silences checks names the IAM
// action and the rules it costs.
func TestLiveRunFailures(t *testing.T) {
	inRepoRoot(t)
	const dir = "examples/clusters/network-and-ami"
	t.Run("no cluster name", func(t *testing.T) {
		awsEnv(t)
		code, _, stderr := cli(t, "", "check", "-f", dir, "--live", "--region", "us-east-1")
		if code != 2 || !strings.Contains(stderr, "live facts need --cluster-name") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("no region", func(t *testing.T) {
		awsEnv(t)
		code, _, stderr := cli(t, "", "check", "-f", dir, "--live", "--cluster-name", "shop-eks")
		if code != 2 || !strings.Contains(stderr, "no AWS region: pass --region, set AWS_REGION") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("no credentials", func(t *testing.T) {
		awsEnv(t)
		_, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
		t.Setenv("AWS_ACCESS_KEY_ID", "")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "")
		code, _, stderr := cli(t, "", append([]string{"check", "-f", dir}, flags...)...)
		if code != 2 || !strings.Contains(stderr, "no AWS credentials (set AWS_PROFILE or AWS_ACCESS_KEY_ID for a local run; in the cluster, EKS Pod Identity or IRSA") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("unknown cluster", func(t *testing.T) {
		awsEnv(t)
		_, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
		flags[2] = "shop-eks-typo"
		code, _, stderr := cli(t, "", append([]string{"check", "-f", dir}, flags...)...)
		if code != 2 || !strings.Contains(stderr, `EKS cluster "shop-eks-typo" not found in us-east-1 (check --cluster-name and --region)`) {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("a permission missing", func(t *testing.T) {
		awsEnv(t)
		srv, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
		srv.Inject("iam:GetRole", fakeaws.Fault{AccessDenied: true})
		code, out, stderr := cli(t, "", append([]string{"check", "-f", dir}, flags...)...)
		want := "Not evaluated because AWS denied iam:GetRole (grant it to karpenter-guard's IAM role: manifests/iam-policy.json):\n" +
			"  al2023-hybrid-auth, aws-auth-rolearn-has-path, node-role-access-entry-stale, node-role-access-entry-type, node-role-join-permissions, node-role-not-authorized, node-role-not-found, node-role-runtime-permissions, node-role-trust-policy, node-username-mismatch, spot-service-linked-role-missing, windows-node-missing-kube-proxy-group\n"
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("exit %d (want 1: other rules still deny), stderr %q, output:\n%s\nwant it to contain:\n%s", code, stderr, out, want)
		}
	})
	t.Run("live and facts", func(t *testing.T) {
		awsEnv(t)
		code, _, stderr := cli(t, "", "check", "-f", dir, "--live", "--facts", filepath.Join(dir, "cluster-facts.yaml"))
		if code != 2 || !strings.Contains(stderr, "--live and --facts exclude each other") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

// TestFactsExportResolvesSSMTerms: an amiSelectorTerm by ssmParameter is resolved through the
// recorder, so the export holds the parameter and gives the live verdict (no "selects no image").
func TestFactsExportResolvesSSMTerms(t *testing.T) {
	inRepoRoot(t)
	awsEnv(t)
	dir := t.TempDir()
	const param = "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.33-v20251112/image_id"
	orig, err := os.ReadFile("examples/production/ec2nodeclass.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nc := strings.Replace(string(orig), "    - alias: al2023@v20251112\n", "    - ssmParameter: "+param+"\n", 1)
	if !strings.Contains(nc, "ssmParameter") {
		t.Fatal("the example's amiSelectorTerms changed")
	}
	if err := os.WriteFile(filepath.Join(dir, "ec2nodeclass.yaml"), []byte(nc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, flags := fakeFor(t, "examples/production/cluster-facts.yaml")
	code, exported, stderr := cli(t, "", append([]string{"facts", "export", "-f", dir}, flags[1:]...)...)
	if code != 0 {
		t.Fatalf("facts export: exit %d: %s", code, stderr)
	}
	cf, err := facts.DecodeSnapshotFile([]byte(exported))
	if err != nil {
		t.Fatal(err)
	}
	if cf.SSMParameters == nil || (*cf.SSMParameters)[param] != "ami-0aa11bb22cc33dd44" {
		t.Errorf("the export lacks the parameter:\n%s", exported)
	}
	file := filepath.Join(t.TempDir(), "exported.yaml")
	if err := os.WriteFile(file, []byte(exported), 0o644); err != nil {
		t.Fatal(err)
	}
	_, live, _ := cli(t, "", append([]string{"check", "-f", dir, "-o", "json"}, flags...)...)
	_, again, _ := cli(t, "", "check", "-f", dir, "--facts", file, "-o", "json")
	if l, a := verdicts(decodeReport(t, live)), verdicts(decodeReport(t, again)); l != a {
		t.Errorf("verdicts with the export differ from live:\n--- live\n%s--- export\n%s", l, a)
	}
}

// TestFactsExportFailedLookups: a lookup that fails in a section AWS otherwise answers (the permission
// probe passed, then GetRole of the node role was denied) fails the export instead of writing a
// roles section without the role, which `check --facts` would read as "the role does not exist".
// --partial writes the snapshot with that section unknown; a section AWS would not tell at all is a
// note, and the export still succeeds.
func TestFactsExportFailedLookups(t *testing.T) {
	inRepoRoot(t)
	const dir = "examples/production"
	export := func(t *testing.T, srv *fakeaws.Server, flags []string, extra ...string) (int, string, string) {
		t.Helper()
		return cli(t, "", append(append([]string{"facts", "export", "-f", dir}, flags[1:]...), extra...)...)
	}
	t.Run("lookup failed", func(t *testing.T) {
		awsEnv(t)
		srv, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
		srv.Inject("iam:GetRole", fakeaws.Fault{AccessDenied: true, After: 1})
		code, out, stderr := export(t, srv, flags)
		want := "error: roles: some lookups failed, so the section would be incomplete: AWS denied iam:GetRole (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)\n"
		if code != 2 || out != "" || !strings.Contains(stderr, want) || !strings.Contains(stderr, "pass --partial") {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, nothing written, and %q", code, out, stderr, want)
		}
	})
	t.Run("partial", func(t *testing.T) {
		awsEnv(t)
		srv, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
		srv.Inject("iam:GetRole", fakeaws.Fault{AccessDenied: true, After: 1})
		code, out, stderr := export(t, srv, flags, "--partial")
		if code != 0 || !strings.Contains(stderr, "warning: roles left out (unknown), some lookups failed: AWS denied iam:GetRole") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		cf, err := facts.DecodeSnapshotFile([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		if cf.Roles != nil || cf.Images == nil {
			t.Errorf("roles %v (want unknown), images %v (want known)", cf.Roles, cf.Images)
		}
		file := filepath.Join(t.TempDir(), "partial.yaml")
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		code, report, _ := cli(t, "", "check", "-f", dir, "--facts", file)
		if code != 0 || !strings.Contains(report, "Not evaluated because not in the facts snapshot:\n  al2023-hybrid-auth, aws-auth-rolearn-has-path, node-role-access-entry-stale, node-role-access-entry-type, node-role-join-permissions, node-role-not-authorized, node-role-not-found") || !strings.Contains(report, "node-role-not-found") {
			t.Errorf("check with the partial snapshot: exit %d; want 0 and the role rules not evaluated:\n%s", code, report)
		}
	})
	t.Run("section throttled", func(t *testing.T) {
		awsEnv(t)
		srv, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
		srv.Inject("ssm:GetParameter", fakeaws.Fault{Throttle: true})
		code, out, stderr := export(t, srv, flags)
		if code != 2 || out != "" || !strings.Contains(stderr, "error: ssmParameters: no answer for now: AWS throttled ssm:GetParameter; karpenter-guard backs off every SSM call until AWS answers again\n") ||
			!strings.Contains(stderr, "export again once AWS answers") {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and the throttling named", code, out, stderr)
		}
	})
	t.Run("section unknown", func(t *testing.T) {
		awsEnv(t)
		srv, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
		srv.Inject("ssm:GetParameter", fakeaws.Fault{AccessDenied: true})
		code, out, stderr := export(t, srv, flags)
		if code != 0 || !strings.Contains(stderr, "note: ssmParameters left unknown: AWS denied ssm:GetParameter") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if cf, err := facts.DecodeSnapshotFile([]byte(out)); err != nil || cf.SSMParameters != nil {
			t.Errorf("ssmParameters should be unknown: %v", err)
		}
	})
}

// oneClass copies the production EC2NodeClass alone into a new directory (no ClusterFacts beside it)
// and writes a GuardConfig with the given aws section into another; it returns both paths.
func oneClass(t *testing.T, awsSection string) (dir, cfg string) {
	t.Helper()
	data, err := os.ReadFile("examples/production/ec2nodeclass.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	writeTemp(t, dir, "ec2nodeclass.yaml", string(data))
	cfg = writeTemp(t, t.TempDir(), "config.yaml", "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\naws:\n"+awsSection)
	return dir, cfg
}

// notEvaluated maps each rule not evaluated to its reason.
func notEvaluated(r jsonReport) map[string]string {
	m := map[string]string{}
	for _, n := range r.NotEvaluated {
		m[n.Rule] = n.Reason
	}
	return m
}

// TestLiveSlowAWS: with AWS answering every call after 5 s and aws.timeout 1s, `check --live` on one
// EC2NodeClass waits for no call longer than its budget, asks its questions together, and reports
// every rule that needs AWS not evaluated, saying the budget ran out: the rules of a run without
// facts, with the same exit status (the static rules still decide it). --deadline bounds the run
// the same way, naming itself, and nothing is asked after it.
func TestLiveSlowAWS(t *testing.T) {
	inRepoRoot(t)
	for _, tc := range []struct {
		name string
		aws  string
		args []string
		// reason is what every rule needing AWS is not evaluated for.
		reason string
	}{
		{"aws.timeout", "  timeout: 1s\n", nil, "no answer from AWS within the 1s budget ("},
		{"--deadline", "  timeout: 10s\n", []string{"--deadline", "1s"}, "the run's --deadline of 1s passed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			awsEnv(t)
			dir, cfg := oneClass(t, tc.aws)
			srv, flags := fakeFor(t, "examples/production/cluster-facts.yaml")
			srv.Inject("*", fakeaws.Fault{Latency: 5 * time.Second})
			start := time.Now()
			code, out, stderr := cli(t, "", append(append([]string{"--config", cfg, "check", "-f", dir, "-o", "json"}, flags...), tc.args...)...)
			t.Logf("check --live, every AWS call answering after 5s (%s): %v, %d AWS requests", tc.name, time.Since(start).Round(10*time.Millisecond), srv.Calls("*"))
			baseCode, baseOut, _ := cli(t, "", "--config", cfg, "check", "-f", dir, "-o", "json")
			if code != baseCode {
				t.Errorf("exit %d, want %d as without facts; stderr %s", code, baseCode, stderr)
			}
			got, want := notEvaluated(decodeReport(t, out)), notEvaluated(decodeReport(t, baseOut))
			if len(want) == 0 {
				t.Fatal("no rule needs facts")
			}
			for rule, reason := range got {
				if _, ok := want[rule]; !ok {
					t.Errorf("%s not evaluated (%s); it runs without facts", rule, reason)
				}
				if !strings.Contains(reason, tc.reason) {
					t.Errorf("%s not evaluated because %q; want %q", rule, reason, tc.reason)
				}
			}
			for rule := range want {
				if _, ok := got[rule]; !ok {
					t.Errorf("%s was evaluated with every AWS call late", rule)
				}
			}
			if tc.name == "--deadline" {
				// The preflight asked the caller's identity and the cluster; past the deadline, nothing.
				if n, pre := srv.Calls("*"), srv.Calls("sts:GetCallerIdentity")+srv.Calls("eks:DescribeCluster"); n != pre {
					t.Errorf("%d AWS requests, %d of them after the preflight; want none after the deadline", n, n-pre)
				}
			}
		})
	}
}

// TestLiveClusterUnavailable: an endpoint without EKS DescribeCluster (an emulator) is "not available
// here", a lasting reason given once for every rule that needs the cluster; nothing that depends on the
// cluster (access entries, the alias's parameters) is asked, and the rules that do not need it run.
func TestLiveClusterUnavailable(t *testing.T) {
	inRepoRoot(t)
	awsEnv(t)
	const dir = "examples/production"
	srv, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
	srv.Inject("eks:DescribeCluster", fakeaws.Fault{Unavailable: true})
	code, out, stderr := cli(t, "", append([]string{"check", "-f", dir}, flags...)...)
	const reason = "EKS DescribeCluster is not available at this endpoint (HTTP 404 from 127.0.0.1:"
	if code != 0 || strings.Count(out, "Not evaluated because ") != 1 || !strings.Contains(out, "Not evaluated because "+reason) {
		t.Errorf("exit %d, stderr %q; want 0 and one cause of rules not evaluated, the cluster's:\n%s", code, stderr, out)
	}
	for _, op := range []string{"eks:ListAccessEntries", "eks:DescribeAccessEntry", "ssm:GetParameter"} {
		if n := srv.Calls(op); n != 0 {
			t.Errorf("%s asked %d times without a cluster", op, n)
		}
	}
	if n := srv.Calls("eks:DescribeCluster"); n != 1 {
		t.Errorf("eks:DescribeCluster asked %d times; a missing API is not asked again", n)
	}
	_, js, _ := cli(t, "", append([]string{"check", "-f", dir, "-o", "json"}, flags...)...)
	skipped := notEvaluated(decodeReport(t, js))
	for _, rule := range []string{"node-role-not-found", "subnet-public", "security-group-selector-no-match"} {
		if _, ok := skipped[rule]; ok {
			t.Errorf("%s does not need the cluster, yet was not evaluated", rule)
		}
	}
	if _, ok := skipped["node-role-not-authorized"]; !ok {
		t.Errorf("node-role-not-authorized was evaluated without the cluster: %v", skipped)
	}
}

// TestLiveReadsTheInputServiceAccounts: without cluster access, the ServiceAccounts of the input name
// the controller's and aws-node's roles; left out of the input, they are unknown, with what to do,
// never taken as absent.
func TestLiveReadsTheInputServiceAccounts(t *testing.T) {
	inRepoRoot(t)
	awsEnv(t)
	const dir = "examples/clusters/controller-cannot-pass-role"
	_, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
	code, out, _ := cli(t, "", append([]string{"check", "-f", dir}, flags...)...)
	if code != 1 || !strings.Contains(out, "[controller-launch-permissions]") {
		t.Errorf("with the input's ServiceAccounts: exit %d, want 1 and the PassRole denial:\n%s", code, out)
	}
	code, out, _ = cli(t, "", append([]string{"check", "-f", filepath.Join(dir, "karpenter.yaml"), "-f", filepath.Join(dir, "aws-auth.yaml")}, flags...)...)
	if code != 0 || strings.Contains(out, "[controller-launch-permissions]") ||
		!strings.Contains(out, "no cluster access and no ServiceAccount kube-system/karpenter in the input (give a kubeconfig, or add the ServiceAccount's manifest to the input)") {
		t.Errorf("without them: exit %d, want 0 and the controller rules not evaluated, saying why:\n%s", code, out)
	}
}
