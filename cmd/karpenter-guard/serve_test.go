package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// TestServeRefusesSettingsThatCannotWork: serve (and audit, for --mode) stops at start-up, before it listens or reads the
// cluster, on a --mode the GuardConfig contradicts and on an aws.timeout the API server would cut off,
// saying what to change.
func TestServeRefusesSettingsThatCannotWork(t *testing.T) {
	dir := t.TempDir()
	config := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	dryRun := config("dry-run.yaml", "mode: dry-run\n")
	noMode := config("no-mode.yaml", "aws:\n  timeout: 4500ms\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a --mode the file contradicts", []string{"--config", dryRun, "--mode", "enforce"},
			"--mode enforce contradicts mode: dry-run in " + dryRun},
		{"an unknown --mode", []string{"--mode", "audit"}, `--mode "audit": expected enforce, warn or dry-run`},
		{"aws.timeout too close to timeoutSeconds", []string{"--config", noMode},
			"aws.timeout 4.5s leaves less than 1s under the webhook's timeoutSeconds (5s, --webhook-timeout): the API server would give up on reviews waiting for AWS; set aws.timeout to at most 4s"},
		{"aws.timeout past a shorter timeoutSeconds", []string{"--webhook-timeout", "2s"},
			"aws.timeout 2s leaves less than 1s under the webhook's timeoutSeconds (2s, --webhook-timeout)"},
		{"audit: a --mode the file contradicts", []string{"audit", "--config", dryRun, "--mode", "warn"},
			"--mode warn contradicts mode: dry-run in " + dryRun},
		{"audit: an unknown --mode", []string{"audit", "--mode", "off"}, `--mode "off": expected enforce, warn or dry-run`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "--facts", "does-not-matter.yaml"}, tc.args...)
			if tc.args[0] == "audit" {
				args = append([]string{"audit", "--kubeconfig", "/dev/null"}, tc.args[1:]...)
			}
			code, _, stderr := cli(t, "", args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// TestShippedConfigTakesEveryMode: the GuardConfig of manifests/base leaves the mode to --mode, which
// the mode components set, so every mode starts with it; and its aws.timeout fits the 5 s the
// Deployment gives as --webhook-timeout.
func TestShippedConfigTakesEveryMode(t *testing.T) {
	var cm corev1.ConfigMap
	if err := sigsyaml.Unmarshal(mustRead(t, "../../manifests/base/config.yaml"), &cm); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(cm.Data["config.yaml"]), rules.Default().IDs())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ModeSet {
		t.Fatalf("the shipped GuardConfig sets mode %s: --mode from the mode components would contradict it", cfg.Mode)
	}
	for _, mode := range []string{"dry-run", "warn", "enforce"} {
		o := &serveOptions{mode: mode, webhookTimeout: 5 * time.Second}
		c := *cfg
		if err := o.settle(&c, "config.yaml"); err != nil || string(c.Mode) != mode {
			t.Errorf("--mode %s: %v, mode %s", mode, err, c.Mode)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDependencyDirection: the webhook, the audit and the rules reach AWS only through the facts
// interface: none of them imports the AWS SDK or the live provider (its concept providers included);
// only cmd wires them.
func TestDependencyDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "../../webhook", "../../audit", "../../validators", "../../validators/rules", "../../cluster").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		const live = "github.com/karpenter-guard/karpenter-guard/facts/live"
		if strings.HasPrefix(dep, "github.com/aws/aws-sdk-go-v2") || dep == live || strings.HasPrefix(dep, live+"/") {
			t.Errorf("webhook, audit, validators or cluster import %s", dep)
		}
	}
}
