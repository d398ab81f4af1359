package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// denyNodeClass is an EC2NodeClass whose instance-profile-arn finding denies by default.
var denyNodeClass = strings.Replace(warnOnly, "role: r", "instanceProfile: arn:aws:iam::111122223333:instance-profile/p", 1)

const (
	configWarn = "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\nrules:\n  instance-profile-arn: warn\n"
	configOff  = "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\nrules:\n  instance-profile-arn: off\n"
)

// gitRepo makes a directory that is a repository root (it holds .git) and returns it.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestGuardConfigDiscovery: check finds .karpenter-guard/config.yaml the way it finds the snapshot
// (the path's directory, then its parents up to the repository root), says which file it uses, and
// --config wins over it.
func TestGuardConfigDiscovery(t *testing.T) {
	repo := gitRepo(t)
	writeTemp(t, repo, ".karpenter-guard/config.yaml", configWarn)
	writeTemp(t, repo, "clusters/prod/nodeclass.yaml", denyNodeClass)
	writeTemp(t, repo, "clusters/lab/.karpenter-guard/config.yaml", configOff)
	writeTemp(t, repo, "clusters/lab/nodeclass.yaml", denyNodeClass)
	writeTemp(t, repo, "strict.yaml", "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\n")
	t.Chdir(repo)
	rootConfig := filepath.Join(".karpenter-guard", "config.yaml")
	labConfig := filepath.Join("clusters", "lab", ".karpenter-guard", "config.yaml")
	for _, tc := range []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		note     string // the config file the note on stderr names; "" for no note
		out      string // in stdout
	}{
		{"a file below the root", []string{"-f", "clusters/prod/nodeclass.yaml"}, "", 0, rootConfig, "WARN [instance-profile-arn]"},
		{"a directory below the root", []string{"-f", "clusters/prod"}, "", 0, rootConfig, "WARN [instance-profile-arn]"},
		{"the root itself", []string{"-f", "."}, "", 0, rootConfig, "WARN [instance-profile-arn]"},
		{"the nearest wins", []string{"-f", "clusters/lab"}, "", 0, labConfig, "0 deny, 1 warning,"},
		{"standard input, from the working directory", []string{"-f", "-"}, denyNodeClass, 0, rootConfig, "WARN [instance-profile-arn]"},
		{"a path that finds none takes the one found", []string{"-f", "-", "-f", "clusters/prod"}, denyNodeClass, 0, rootConfig, "WARN [instance-profile-arn]"},
		{"--config wins", []string{"-f", "clusters/prod", "--config", "strict.yaml"}, "", 1, "", "DENY [instance-profile-arn]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := cli(t, tc.stdin, append([]string{"check"}, tc.args...)...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, out, stderr)
			}
			if !strings.Contains(out, tc.out) {
				t.Errorf("stdout does not hold %q:\n%s", tc.out, out)
			}
			note := "note: GuardConfig from "
			switch {
			case tc.note == "" && strings.Contains(stderr, note):
				t.Errorf("stderr names a GuardConfig under --config: %q", stderr)
			case tc.note != "" && !strings.Contains(stderr, note+tc.note+" (--config overrides it)\n"):
				t.Errorf("stderr %q does not name %s", stderr, tc.note)
			}
		})
	}
}

// TestGuardConfigDiscoveryStops: no GuardConfig is taken from above the repository root, nor from a
// parent directory outside a repository, and a discovered config that is wrong fails the run with
// its file and line; two paths finding different configs are refused.
func TestGuardConfigDiscoveryStops(t *testing.T) {
	t.Run("outside a repository only the path's own directory", func(t *testing.T) {
		dir := t.TempDir()
		writeTemp(t, dir, ".karpenter-guard/config.yaml", configOff)
		f := writeTemp(t, dir, "team/nodeclass.yaml", denyNodeClass)
		code, _, stderr := cli(t, "", "check", "-f", f)
		if code != 1 || strings.Contains(stderr, "GuardConfig") {
			t.Errorf("exit %d, stderr %q; want 1 with the defaults, no GuardConfig from the parent", code, stderr)
		}
		code, _, stderr = cli(t, "", "check", "-f", dir)
		if code != 0 || !strings.Contains(stderr, "GuardConfig from") {
			t.Errorf("exit %d, stderr %q; want the directory's own GuardConfig", code, stderr)
		}
	})
	t.Run("not above the repository root", func(t *testing.T) {
		outer := t.TempDir()
		writeTemp(t, outer, ".karpenter-guard/config.yaml", configOff)
		repo := filepath.Join(outer, "repo")
		if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		f := writeTemp(t, repo, "nodeclass.yaml", denyNodeClass)
		if code, _, stderr := cli(t, "", "check", "-f", f); code != 1 || strings.Contains(stderr, "GuardConfig") {
			t.Errorf("exit %d, stderr %q; want 1 with the defaults", code, stderr)
		}
	})
	t.Run("a wrong GuardConfig names its file and line", func(t *testing.T) {
		repo := gitRepo(t)
		writeTemp(t, repo, ".karpenter-guard/config.yaml", "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\nrulez: {}\n")
		f := writeTemp(t, repo, "nodeclass.yaml", denyNodeClass)
		code, _, stderr := cli(t, "", "check", "-f", f)
		want := "error: config " + filepath.Join(repo, ".karpenter-guard", "config.yaml") + ": line 3: field rulez is not a GuardConfig key"
		if code != 2 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "--config") {
			t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
		}
	})
	t.Run("two paths, two configs", func(t *testing.T) {
		repo := gitRepo(t)
		writeTemp(t, repo, "a/.karpenter-guard/config.yaml", configWarn)
		writeTemp(t, repo, "b/.karpenter-guard/config.yaml", configOff)
		a := writeTemp(t, repo, "a/nodeclass.yaml", denyNodeClass)
		b := writeTemp(t, repo, "b/nodeclass.yaml", denyNodeClass)
		code, out, stderr := cli(t, "", "check", "-f", a, "-f", b)
		if code != 2 || out != "" || !strings.Contains(stderr, "a run takes one configuration") ||
			!strings.Contains(stderr, filepath.Join(repo, "a", ".karpenter-guard", "config.yaml")) ||
			!strings.Contains(stderr, filepath.Join(repo, "b", ".karpenter-guard", "config.yaml")) {
			t.Errorf("exit %d, stdout %q, stderr %q; want 2 naming both configs", code, out, stderr)
		}
		if code, _, _ := cli(t, "", "check", "-f", a, "-f", b, "--config", filepath.Join(repo, "a", ".karpenter-guard", "config.yaml")); code != 0 {
			t.Errorf("with --config: exit %d, want 0", code)
		}
	})
}
