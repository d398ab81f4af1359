//go:build unix

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// countingServer is a loopback HTTP server that counts requests: check must send it none.
func countingServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		_, _ = w.Write([]byte("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: fetched}\n"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

// TestGitOpsRootWithPatches: `check -f .` at the root of a repository whose overlays patch a base with
// partial objects renders the overlays, never judges a patch as a whole object (a false deny on
// today's commonest GitOps layout), and still catches a patch that makes the rendered object invalid
// and a broken base. A kustomization with a remote base is not fetched: its local files are checked one
// by one, its patches still left out.
func TestGitOpsRootWithPatches(t *testing.T) {
	url, requests := countingServer(t)
	for _, tc := range []struct {
		name        string
		args        []string
		edits       map[string]string
		code        int
		contains    []string
		notContains []string
	}{
		{
			name: "partial patches", args: []string{"check", "-f", "."}, code: 0,
			contains: []string{
				"5 objects checked (3 of other kinds ignored; 2 kustomizations rendered; 5 paths not read): 0 deny",
				"note: kustomizations rendered, their objects checked as kustomize builds them, at their source files: overlays/prod, overlays/staging",
				"note: 5 kustomize patches and inputs not read on their own",
				// The staging overlay's prefix, renamed in the NodePool's reference too.
				`EC2NodeClass "staging-production" (overlays/staging/kustomization.yaml:`,
				`NodePool "batch" (standalone/nodepool.yaml:2)`,
			},
			notContains: []string{"DENY", "nodeclass-tags.yaml:", "nodepool-limits.yaml:", "nodepool-nodeclass-missing"},
		},
		{
			name: "a patch named on its own is checked through its kustomization", args: []string{"check", "-f", "overlays/prod/nodeclass-tags.yaml"}, code: 0,
			contains: []string{
				"note: 1 kustomize patch or input not read on its own",
				"note: kustomizations rendered, their objects checked as kustomize builds them, at their source files: overlays/prod",
				"2 objects checked (1 kustomization rendered; 1 path not read): 0 deny",
			},
			notContains: []string{"DENY"},
		},
		{
			name: "a broken patch named on its own", args: []string{"check", "-f", "overlays/prod/nodepool-limits.yaml"}, code: 1,
			edits:    map[string]string{"overlays/prod/nodepool-limits.yaml": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: production\nspec:\n  limits:\n    cpu: lots\n"},
			contains: []string{"DENY [karpenter-crd-invalid] overlays/prod/kustomization.yaml:5 spec.limits.cpu"},
		},
		{
			name: "--fix passes only what check passes", args: []string{"check", "-f", ".", "--fix"}, code: 1,
			edits:    map[string]string{"overlays/prod/nodepool-limits.yaml": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: production\nspec:\n  limits:\n    cpu: lots\n"},
			contains: []string{"DENY [karpenter-crd-invalid] overlays/prod/kustomization.yaml:5 spec.limits.cpu", "2 kustomizations rendered"},
		},
		{
			name: "each overlay resolves its own references", args: []string{"check", "-f", "."}, code: 0,
			edits: map[string]string{
				// prod renames its class without telling kustomize that nodeClassRef names one; dev keeps
				// the base's name, which must not satisfy prod's pool.
				"overlays/prod/kustomization.yaml": "resources:\n  - ../../base\nnamePrefix: prod-\npatches:\n  - path: nodeclass-tags.yaml\n  - path: nodepool-limits.yaml\n",
				"overlays/dev/kustomization.yaml":  "resources:\n  - ../../base\n",
			},
			contains: []string{`WARN [nodepool-nodeclass-missing] overlays/prod/kustomization.yaml:4 spec.template.spec.nodeClassRef.name`},
		},
		{
			name: "a finding two overlays render alike is said once", args: []string{"check", "-f", "."}, code: 0,
			edits: map[string]string{
				"overlays/dev/kustomization.yaml": "resources:\n  - ../../base\n",
				"overlays/qa/kustomization.yaml":  "resources:\n  - ../../base\n",
				"base/nodepool.yaml":              "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: production\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: production}\n      requirements: []\n      expireAfter: 720h\n  disruption:\n    consolidateAfter: 1m\n",
			},
			contains: []string{"WARN [nodepool-no-limits] base/nodepool.yaml:5 spec.limits", "4 kustomizations rendered"},
		},
		{
			name: "a patch that makes the object invalid", args: []string{"check", "-f", "."}, code: 1,
			edits: map[string]string{"overlays/prod/nodeclass-tags.yaml": "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: production\nspec:\n  tags:\n    kubernetes.io/cluster/prod: owned\n"},
			contains: []string{
				"DENY [karpenter-crd-invalid] overlays/prod/kustomization.yaml:5 spec.tags",
				"tag contains a restricted tag matching kubernetes.io/cluster/",
			},
		},
		{
			name: "a broken base", args: []string{"check", "-f", "."}, code: 1,
			edits:    map[string]string{"standalone/nodepool.yaml": "", "base/nodepool.yaml": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: production\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: production}\n      requirements: []\n      expireAfter: sometimes\n"},
			contains: []string{"DENY [karpenter-crd-invalid]", "spec.template.spec.expireAfter"},
		},
		{
			name: "without rendering", args: []string{"check", "-f", ".", "--render-kustomizations=false"}, code: 0,
			contains:    []string{"3 objects checked", "5 paths not read", "note: 5 kustomize patches and inputs not read on their own"},
			notContains: []string{"DENY", "rendered"},
		},
		{
			name: "kustomizations of classes and of pools beside each other resolve each other", args: []string{"check", "-f", "."}, code: 0,
			edits: map[string]string{
				"split/classes/kustomization.yaml": "resources: [class.yaml]\n",
				"split/classes/class.yaml":         "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: split-class\nspec:\n  role: KarpenterNodeRole-prod-eks\n  amiSelectorTerms: [{alias: al2023@v20251112}]\n  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod-eks}}]\n  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: prod-eks}}]\n",
				"split/pools/kustomization.yaml":   "resources: [pool.yaml]\n",
				"split/pools/pool.yaml":            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: split-pool\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: split-class}\n      requirements: []\n      expireAfter: 720h\n  limits: {cpu: \"10\"}\n",
			},
			contains:    []string{"4 kustomizations rendered"},
			notContains: []string{"nodepool-nodeclass-missing"},
		},
		{
			name: "a patch over the YAML budget is an input error", args: []string{"check", "-f", "."}, code: 2,
			edits:    map[string]string{"overlays/prod/nodeclass-tags.yaml": "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: production\nspec:\n  tags: &b {<<: *b}\n"},
			contains: []string{"overlays/prod/nodeclass-tags.yaml:6: alias *b is inside the value of its own anchor"},
		},
		{
			name: "a remote base is not fetched", args: []string{"check", "-f", "."}, code: 0,
			edits: map[string]string{
				"overlays/remote/kustomization.yaml": "resources:\n- " + url + "/org/repo.git//base?ref=v1\n- ../../base\npatches:\n- path: limits.yaml\n",
				"overlays/remote/limits.yaml":        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: production\nspec:\n  limits:\n    cpu: \"8\"\n",
			},
			contains: []string{
				"note: overlays/remote not rendered: overlays/remote/kustomization.yaml names the remote resource " + url + "/org/repo.git//base?ref=v1, which check does not fetch without --kustomize-allow-remote; the files of overlays/remote are checked one by one, and its patches not at all",
				"note: 6 kustomize patches and inputs not read on their own",
			},
			notContains: []string{"DENY"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			copyRepositoryFrom(t, gitopsPatches, tc.edits)
			before := requests.Load()
			code, out, stderr := cli(t, "", tc.args...)
			if n := requests.Load() - before; n != 0 {
				t.Errorf("check sent %d requests", n)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, stderr)
			}
			all := out + stderr
			checkOutput(t, all, tc.contains, tc.notContains)
			if n := strings.Count(all, "WARN [nodepool-no-limits] base/nodepool.yaml"); n > 1 {
				t.Errorf("the same finding is said %d times:\n%s", n, all)
			}
		})
	}
}

// TestCheckKustomizeRemote: -k of a kustomization naming a remote resource exits 2 naming the URL,
// and the loopback server it names sees no request; --kustomize-allow-remote fetches it.
func TestCheckKustomizeRemote(t *testing.T) {
	url, requests := countingServer(t)
	copyRepositoryFrom(t, gitopsPatches, map[string]string{
		"remote/kustomization.yaml": "resources:\n- " + url + "/nodepool.yaml\n",
	})
	code, out, stderr := cli(t, "", "check", "-k", "remote")
	if code != 2 || requests.Load() != 0 {
		t.Fatalf("exit %d after %d requests, want 2 and none\n%s%s", code, requests.Load(), out, stderr)
	}
	want := "error: kustomize build remote: remote/kustomization.yaml names the remote resource " + url + "/nodepool.yaml: check does not fetch remote resources"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	code, out, stderr = cli(t, "", "check", "-k", "remote", "--kustomize-allow-remote")
	if code != 1 || requests.Load() != 1 || !strings.Contains(out, `NodePool "fetched" (`+url+"/nodepool.yaml:1)") {
		t.Errorf("--kustomize-allow-remote: exit %d after %d requests\n%s%s", code, requests.Load(), out, stderr)
	}
}

// TestCheckStaysInTheTree: check -f DIR of a repository holding a link to a file outside it, a link to
// /dev/stdin and a FIFO finishes without reading any of them, says which it left and why, and reports
// no object from outside; the JSON report lists them.
func TestCheckStaysInTheTree(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "credentials.yaml"), []byte("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: runner-secret}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := copyRepositoryFrom(t, gitopsPatches, nil)
	for name, target := range map[string]string{
		"standalone/secret.yaml": filepath.Join(outside, "credentials.yaml"),
		"standalone/stdin.yaml":  "/dev/stdin",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "standalone", "pipe.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		code        int
		out, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, stderr := cli(t, "", "check", "-f", ".", "-o", "json")
		done <- result{code, out, stderr}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("check blocked on a FIFO or on standard input")
	}
	if r.code != 0 || strings.Contains(r.out, "runner-secret") {
		t.Fatalf("exit %d, want 0 without the linked object\n%s%s", r.code, r.out, r.stderr)
	}
	var rep struct {
		Unread []struct{ Path, Reason, Kind string } `json:"unread"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, u := range rep.Unread {
		got[u.Path] = u.Reason
	}
	if want := "symbolic link to " + filepath.Join(outside, "credentials.yaml") + ", outside .: not followed"; got["standalone/secret.yaml"] != want {
		t.Errorf("secret.yaml not read because %q, want %q", got["standalone/secret.yaml"], want)
	}
	if got["standalone/pipe.yaml"] != "a FIFO, not a regular file: not read" {
		t.Errorf("pipe.yaml not read because %q", got["standalone/pipe.yaml"])
	}
	if got["standalone/stdin.yaml"] == "" {
		t.Errorf("stdin.yaml is not listed as not read: %v", got)
	}
	if !strings.Contains(r.stderr, "note: standalone/secret.yaml not read: symbolic link to ") {
		t.Errorf("stderr does not say the link was not read:\n%s", r.stderr)
	}

	// Named on the command line, a FIFO is refused without being opened.
	code, out, stderr := cli(t, "", "check", "-f", "standalone/pipe.yaml")
	stderr = out + stderr
	if code != 2 || !strings.Contains(stderr, "standalone/pipe.yaml: cannot read: a FIFO, not a regular file: only files, directories and - (standard input) are read") {
		t.Errorf("named FIFO: exit %d\n%s", code, stderr)
	}
}

// gitopsPatches is a GitOps repository whose overlays patch a base with partial objects.
const gitopsPatches = "testdata/gitops-patches"

// TestFixAndReportFileNeverWriteThroughALink: --fix refuses, before writing anything, a file that is a
// symbolic link (a committed link would turn the fix into a write of the file it points to), and
// --report-file refuses a link before the run; the files the links point to are left as they were.
func TestFixAndReportFileNeverWriteThroughALink(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.yaml")
	v1beta1, err := os.ReadFile(mustAbs(t, "../../examples/field-reports/01-v1beta1-nodepool.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(victim, v1beta1, 0o644); err != nil {
		t.Fatal(err)
	}
	root := copyRepositoryFrom(t, gitopsPatches, map[string]string{"standalone/v1beta1.yaml": string(v1beta1)})
	if err := os.Symlink("v1beta1.yaml", filepath.Join(root, "standalone", "link.yaml")); err != nil {
		t.Fatal(err)
	}

	// The link stays in the tree, so check reads it; --fix would write the same file through it.
	code, out, stderr := cli(t, "", "check", "-f", "standalone", "--fix")
	if code != 2 || !strings.Contains(out+stderr, "--fix: standalone/link.yaml is a symbolic link (to v1beta1.yaml), which karpenter-guard does not write through: nothing was written") {
		t.Errorf("--fix through a link: exit %d\n%s%s", code, out, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "standalone", "v1beta1.yaml")); string(got) != string(v1beta1) {
		t.Errorf("--fix wrote standalone/v1beta1.yaml although the run was refused")
	}

	if err := os.Symlink(victim, filepath.Join(root, "results.sarif")); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = cli(t, "", "check", "-f", "base", "--report-file", "sarif=results.sarif")
	if code != 2 || !strings.Contains(out+stderr, "--report-file results.sarif: it is a symbolic link, which karpenter-guard does not write through") {
		t.Errorf("--report-file through a link: exit %d\n%s%s", code, out, stderr)
	}
	if got, _ := os.ReadFile(victim); string(got) != string(v1beta1) {
		t.Errorf("--report-file wrote through the link to %s", victim)
	}

	// A directory link on the way out of the repository is refused too.
	if err := os.Symlink(outside, filepath.Join(root, "reports")); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = cli(t, "", "check", "-f", "base", "--report-file", "sarif=reports/out.sarif")
	if _, err := os.Stat(filepath.Join(outside, "out.sarif")); code != 2 || err == nil || !strings.Contains(out+stderr, "leads through a symbolic link to "+outside+", outside the repository") {
		t.Errorf("--report-file through a linked directory: exit %d, written: %v\n%s%s", code, err == nil, out, stderr)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestGitOpsRootWithoutGit: a checkout without .git (a tarball, a CI checkout of the files alone) still
// renders its overlays: kustomize may read the tree walked, or the working directory for -k.
func TestGitOpsRootWithoutGit(t *testing.T) {
	root := copyRepositoryFrom(t, gitopsPatches, map[string]string{"overlays/prod/nodepool-limits.yaml": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: production\nspec:\n  limits:\n    cpu: lots\n"})
	if err := os.RemoveAll(filepath.Join(root, ".git")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "-f", "."}, {"check", "-k", "overlays/prod"}} {
		code, out, stderr := cli(t, "", args...)
		if code != 1 || !strings.Contains(out, "DENY [karpenter-crd-invalid] overlays/prod/kustomization.yaml:5 spec.limits.cpu") {
			t.Errorf("%v: exit %d, want the patched pool refused\n%s%s", args, code, out, stderr)
		}
	}
}
