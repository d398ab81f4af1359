package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

type jsonReport struct {
	Findings []struct {
		Rule, Action, Message, Fix string
		Object                     struct{ Kind, Name, File string }
	}
	NotEvaluated []struct{ Rule, Reason string }
	Errors       []struct {
		File    string
		Line    int
		Message string
	}
}

func decodeReport(t *testing.T, out string) jsonReport {
	t.Helper()
	var r jsonReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r
}

func rulesFired(r jsonReport) map[string]bool {
	m := map[string]bool{}
	for _, f := range r.Findings {
		m[f.Object.Name+"/"+f.Rule] = true
	}
	return m
}

// TestFieldReportScenarios: every field-report failure of examples/clusters is caught with its exact
// fix, and the production setup produces no finding and leaves nothing unevaluated.
func TestFieldReportScenarios(t *testing.T) {
	inRepoRoot(t)
	code, out, _ := cli(t, "", "check", "-f", "examples/clusters", "-f", "examples/production", "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	r := decodeReport(t, out)
	want := map[string]string{
		"default/node-role-not-authorized":            "- rolearn: arn:aws:iam::069057294951:role/aws-2026-eks-karpenter-node",
		"legacy/node-role-not-authorized":             "aws eks create-access-entry --cluster-name searchspot --region eu-west-1 --principal-arn arn:aws:iam::222233334444:role/LegacyNodeRole --type EC2_LINUX",
		"batch/node-role-access-entry-type":           "aws eks delete-access-entry --cluster-name searchspot",
		"al2023-nodes/al2023-hybrid-auth":             "aws eks describe-access-entry --cluster-name searchspot",
		"general/subnet-public":                       "remove the discovery tag",
		"legacy-al2/ami-family-eol":                   "alias: al2023@latest",
		"legacy-al2/ami-selector-no-match":            "describe-images",
		"batch-spot/spot-service-linked-role-missing": "aws iam create-service-linked-role --aws-service-name spot.amazonaws.com",
		"default/node-role-trust-policy":              `aws iam update-assume-role-policy --role-name KarpenterNodeRole-ledger --policy-document '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}'`,
		"gpu/controller-launch-permissions":           `"Action":"iam:PassRole","Resource":"arn:aws:iam::555566667777:role/media-gpu-nodes","Condition":{"StringEquals":{"iam:PassedToService":"ec2.amazonaws.com"}}`,
		"general/subnet-missing-vpc-endpoints":        "--service-name com.amazonaws.us-east-1.ec2",
		"general/subnet-missing-registry-endpoints":   "--service-name com.amazonaws.us-east-1.ecr.api",
		"payments/subnet-missing-vpc-endpoints":       "--service-name com.amazonaws.eu-west-2.ec2",
	}
	got := rulesFired(r)
	for k, fix := range want {
		if !got[k] {
			t.Errorf("%s not reported", k)
			continue
		}
		for _, f := range r.Findings {
			if f.Object.Name+"/"+f.Rule == k && !strings.Contains(f.Fix, fix) {
				t.Errorf("%s: fix %q lacks %q", k, f.Fix, fix)
			}
		}
	}
	if len(r.Findings) != len(want) {
		t.Errorf("%d findings, want exactly %d: %v", len(r.Findings), len(want), got)
	}
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Object.File, "examples/production") {
			t.Errorf("production setup has a finding: %+v", f)
		}
	}
	if len(r.NotEvaluated) != 0 {
		t.Errorf("with facts, nothing should be left unevaluated: %+v", r.NotEvaluated)
	}
}

// TestFactsFlag: --facts applies a snapshot to every object, and a bad snapshot stops the run with
// its file and line.
func TestFactsFlag(t *testing.T) {
	inRepoRoot(t)
	code, out, _ := cli(t, "", "check", "-f", "examples/clusters/config-map-mode/karpenter.yaml", "--facts", "examples/clusters/api-mode/cluster-facts.yaml", "-o", "json")
	r := decodeReport(t, out)
	if code != 1 || !rulesFired(r)["default/node-role-not-found"] {
		t.Fatalf("exit %d; with the api-mode facts the role of config-map-mode does not exist: %v", code, rulesFired(r))
	}
	dir := t.TempDir()
	bad := writeTemp(t, dir, "facts.yaml", "apiVersion: karpenter-guard.io/v1alpha1\nkind: ClusterFacts\ncluster:\n  name: x\n  authenticationMode: CONFIGMAP\n")
	code, _, stderr := cli(t, "", "check", "-f", "examples/production", "--facts", bad)
	if code != 2 || !strings.Contains(stderr, bad+":5: cluster.authenticationMode \"CONFIGMAP\": expected CONFIG_MAP, API or API_AND_CONFIG_MAP") {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
}

// TestFactsInInput: a ClusterFacts document applies to its directory and below; a broken one is an
// input error with its line while the other objects are still checked; stdin works too.
func TestFactsInInput(t *testing.T) {
	dir := t.TempDir()
	facts, err := os.ReadFile("../../examples/clusters/config-map-mode/cluster-facts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := os.ReadFile("../../examples/clusters/config-map-mode/karpenter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	writeTemp(t, dir, "prod/cluster-facts.yaml", string(facts))
	writeTemp(t, dir, "prod/apps/karpenter.yaml", string(manifests))
	writeTemp(t, dir, "staging/karpenter.yaml", string(manifests))
	awsAuth, err := os.ReadFile("../../examples/clusters/config-map-mode/aws-auth.yaml")
	if err != nil {
		t.Fatal(err)
	}
	writeTemp(t, dir, "prod/apps/aws-auth.yaml", string(awsAuth))
	code, out, _ := cli(t, "", "check", "-f", dir, "-o", "json")
	r := decodeReport(t, out)
	var prod, staging int
	for _, f := range r.Findings {
		if f.Rule == "node-role-not-authorized" {
			if strings.Contains(f.Object.File, filepath.Join("prod", "apps")) {
				prod++
			} else {
				staging++
			}
		}
	}
	if code != 1 || prod != 1 || staging != 0 {
		t.Fatalf("exit %d: node-role-not-authorized in prod %d, staging %d; want 1, 0 (facts cover their directory only)", code, prod, staging)
	}
	notEval := 0
	for _, n := range r.NotEvaluated {
		if n.Rule == "node-role-not-authorized" && strings.HasPrefix(n.Reason, "no facts") {
			notEval++
		}
	}
	if notEval != 1 {
		t.Errorf("staging's node-role-not-authorized should be not evaluated for want of facts: %+v", r.NotEvaluated)
	}

	broken := strings.Replace(string(facts), "  version: \"1.32\"\n", "  version: \"1.32\"\n  vpcId: vpc-typo\n", 1)
	writeTemp(t, dir, "prod/cluster-facts.yaml", broken)
	code, out, _ = cli(t, "", "check", "-f", dir, "-o", "json")
	r = decodeReport(t, out)
	if code != 2 || len(r.Errors) != 1 || r.Errors[0].Line != 11 || !strings.Contains(r.Errors[0].Message, `unknown field "vpcId"`) {
		t.Fatalf("exit %d errors %+v", code, r.Errors)
	}
	if len(r.NotEvaluated) == 0 {
		t.Errorf("a broken facts document must leave its objects checked (rules needing facts not evaluated), not dropped")
	}

	code, out, _ = cli(t, string(facts)+"---\n"+string(manifests)+"---\n"+string(awsAuth), "check", "-f", "-", "-o", "json")
	if r = decodeReport(t, out); code != 1 || !rulesFired(r)["default/node-role-not-authorized"] {
		t.Fatalf("stdin with facts: exit %d %v", code, rulesFired(r))
	}
}

// TestFactsExportStopsAtTheCluster: a snapshot needs its cluster, so when the cluster cannot be
// described (a closed port, a failing EKS) the export fails at once with the cluster's reason and asks
// nothing else.
func TestFactsExportStopsAtTheCluster(t *testing.T) {
	inRepoRoot(t)
	const dir = "examples/production"
	t.Run("closed port", func(t *testing.T) {
		awsEnv(t)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + l.Addr().String()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		code, out, stderr := cli(t, "", "facts", "export", "-f", dir, "--cluster-name", "prod-eks", "--region", "us-east-1", "--aws-endpoint-url", closed)
		t.Logf("facts export against a closed port: %v", time.Since(start).Round(10*time.Millisecond))
		if code != 2 || out != "" || !strings.Contains(stderr, "could not describe the cluster, so nothing else was asked: eks:DescribeCluster failed (") ||
			!strings.Contains(stderr, "connection refused") {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and the cluster's reason", code, out, stderr)
		}
	})
	t.Run("EKS failing", func(t *testing.T) {
		awsEnv(t)
		srv, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
		srv.Inject("eks:DescribeCluster", fakeaws.Fault{Status: 503})
		code, out, stderr := cli(t, "", append([]string{"facts", "export", "-f", dir}, flags[1:]...)...)
		if code != 2 || out != "" || !strings.Contains(stderr, "could not describe the cluster, so nothing else was asked: eks:DescribeCluster failed (ServiceUnavailableException") {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and the cluster's reason", code, out, stderr)
		}
		if all, cluster, id := srv.Calls("*"), srv.Calls("eks:DescribeCluster"), srv.Calls("sts:GetCallerIdentity"); all != cluster+id {
			t.Errorf("%d AWS requests, %d of them neither DescribeCluster (%d) nor the identity check (%d): the export went on without a cluster", all, all-cluster-id, cluster, id)
		}
	})
}

// TestFactsExportNotAvailable: an endpoint that does not serve an API (an emulator without EKS access
// entries) leaves that section unknown for a lasting reason that names the API and the endpoint, as a
// note: the export succeeds, and does not say to export again.
func TestFactsExportNotAvailable(t *testing.T) {
	inRepoRoot(t)
	awsEnv(t)
	const dir = "examples/production"
	srv, flags := fakeFor(t, filepath.Join(dir, "cluster-facts.yaml"))
	srv.Inject("eks:ListAccessEntries", fakeaws.Fault{Unavailable: true})
	code, out, stderr := cli(t, "", append([]string{"facts", "export", "-f", dir}, flags[1:]...)...)
	if code != 0 || !strings.Contains(stderr, "note: accessEntries left unknown: EKS ListAccessEntries is not available at this endpoint (HTTP 404 from 127.0.0.1:") ||
		strings.Contains(stderr, "export again") {
		t.Fatalf("exit %d, stderr %q; want 0 and a note naming the API", code, stderr)
	}
	cf, err := facts.DecodeSnapshotFile([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if cf.AccessEntries != nil || cf.Cluster == nil || cf.Roles == nil {
		t.Errorf("accessEntries %v (want unknown), cluster %v, roles %v (want known)", cf.AccessEntries, cf.Cluster, cf.Roles)
	}
	if n := srv.Calls("eks:ListAccessEntries"); n != 1 {
		t.Errorf("eks:ListAccessEntries asked %d times; an API the endpoint lacks is asked once", n)
	}
}
