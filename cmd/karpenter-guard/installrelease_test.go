package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"go.yaml.in/yaml/v3"
)

// fakeRelease serves a release as GitHub does, under /<tag>/: an archive per os and arch named as
// GoReleaser names them, and checksums.txt. The archives hold a karpenter-guard that records each run
// in a marker file, then runs this test binary as the CLI, so a run through the release checks files
// for real.
type fakeRelease struct {
	url       string
	marker    string
	downloads atomic.Int32
}

// releaseFault spoils a fake release.
type releaseFault int

const (
	releaseIntact      releaseFault = iota
	releaseWrongSum                 // checksums.txt lists another sum for every archive
	releaseNotInSums                // checksums.txt does not list the archives
	releaseNoSuchFiles              // the tag has no files (404)
)

func newFakeRelease(t *testing.T, tag string, fault releaseFault) *fakeRelease {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := &fakeRelease{marker: filepath.Join(t.TempDir(), "runs")}
	binary := fmt.Sprintf("#!/bin/sh\necho run >> '%s'\n%s=1 exec '%s' \"$@\"\n", r.marker, asCLI, self)
	files := map[string][]byte{}
	var sums strings.Builder
	for _, osArch := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
		name := "karpenter-guard_" + strings.TrimPrefix(tag, "v") + "_" + osArch + ".tar.gz"
		files[name] = tarGz(t, map[string]string{"karpenter-guard": binary, "LICENSE": "Apache-2.0\n"})
		sum := sha256.Sum256(files[name])
		switch fault {
		case releaseWrongSum:
			sum = sha256.Sum256([]byte("another archive"))
		case releaseNotInSums:
			name = "karpenter-guard_9.9.9_" + osArch + ".tar.gz"
		}
		fmt.Fprintf(&sums, "%x  %s\n", sum, name)
	}
	files["checksums.txt"] = []byte(sums.String())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.downloads.Add(1)
		name, ok := strings.CutPrefix(req.URL.Path, "/"+tag+"/")
		data, found := files[name]
		if !ok || !found || fault == releaseNoSuchFiles {
			http.NotFound(w, req)
			return
		}
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// runs counts the runs of the release's binary.
func (r *fakeRelease) runs() int {
	data, _ := os.ReadFile(r.marker)
	return strings.Count(string(data), "run\n")
}

func tarGz(t *testing.T, members map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, content := range members {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// needTools skips the test where the shell tools the install scripts rely on are missing.
func needTools(t *testing.T) {
	t.Helper()
	for _, alternatives := range [][]string{{"sh"}, {"tar"}, {"awk"}, {"curl", "wget"}, {"sha256sum", "shasum"}} {
		found := false
		for _, tool := range alternatives {
			if _, err := exec.LookPath(tool); err == nil {
				found = true
			}
		}
		if !found {
			t.Skipf("needs %s", strings.Join(alternatives, " or "))
		}
	}
}

// runProcess runs a command in dir with extra environment and returns its exit code, stdout and
// stderr.
func runProcess(t *testing.T, dir string, env []string, name string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String()
	}
	t.Fatalf("run %s %v: %v", name, args, err)
	return 0, "", ""
}

// releaseHooks returns the hooks of .pre-commit-hooks.yaml that run the release binary, by ID.
func releaseHooks(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile("../../.pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var hooks []preCommitHook
	if err := yaml.Unmarshal(data, &hooks); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, h := range hooks {
		if h.Language == "script" {
			out[h.ID] = strings.Fields(h.Entry)
		}
	}
	return out
}

// defaultReleaseVersion is the release the install script pins.
func defaultReleaseVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../hack/install-release.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^default_version=(v\S+)$`).FindStringSubmatch(string(data))
	if m == nil {
		t.Fatal("hack/install-release.sh sets no default_version=vX.Y.Z")
	}
	return m[1]
}

// TestReleaseHooks runs the pre-commit hooks that use the release archive as pre-commit runs them
// (the entry from the hook's repository, the staged files, in the project's root), against a fake
// release: the archive is downloaded once, checked, and the binary checks the files; a checksum
// that does not match, or an archive the checksums do not list, fails the hook without running
// anything or leaving a binary behind.
func TestReleaseHooks(t *testing.T) {
	needTools(t)
	hooks := releaseHooks(t)
	check, fix := hooks["karpenter-guard-release"], hooks["karpenter-guard-release-fix"]
	if len(check) == 0 || len(fix) == 0 || check[0] != "hack/install-release.sh" || check[1] != "check" || fix[0] != "hack/install-release.sh" {
		t.Fatalf("release hooks %v: want karpenter-guard-release and karpenter-guard-release-fix running hack/install-release.sh check", hooks)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	version := defaultReleaseVersion(t)
	action, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(action), "default: "+version+"\n") {
		t.Errorf("hack/install-release.sh pins %s, action.yml another release: pin the same", version)
	}
	hook := func(rel *fakeRelease, cache string, entry []string, files ...string) (int, string, string) {
		env := []string{"KARPENTER_GUARD_RELEASES=" + rel.url, "KARPENTER_GUARD_CACHE=" + cache, "KARPENTER_GUARD_VERSION="}
		return runProcess(t, root, env, filepath.Join(root, entry[0]), append(entry[1:], files...)...)
	}

	t.Run("installs once and runs", func(t *testing.T) {
		rel, cache := newFakeRelease(t, version, releaseIntact), t.TempDir()
		code, out, stderr := hook(rel, cache, check, "examples/production/ec2nodeclass.yaml", "examples/production/nodepool.yaml")
		if code != 0 || rel.runs() != 1 || !strings.Contains(out, "0 deny") {
			t.Fatalf("exit %d, %d runs; want 0 and one run\nstdout:\n%s\nstderr:\n%s", code, rel.runs(), out, stderr)
		}
		if n := rel.downloads.Load(); n != 2 {
			t.Errorf("%d downloads, want the archive and checksums.txt", n)
		}
		code, out, _ = hook(rel, cache, check, "examples/field-reports/04-instance-profile-arn.yaml")
		if code != 1 || !strings.Contains(out, "[instance-profile-arn]") || rel.runs() != 2 {
			t.Errorf("on a deny: exit %d, want 1 with the finding:\n%s", code, out)
		}
		if n := rel.downloads.Load(); n != 2 {
			t.Errorf("%d downloads after a second run, want none more: the verified binary is kept", n)
		}
		code, out, _ = hook(rel, cache, []string{"hack/install-release.sh", "--install-only"})
		if bin := strings.TrimSpace(out); code != 0 || !strings.HasPrefix(bin, filepath.Join(cache, version)+string(filepath.Separator)) || rel.runs() != 2 {
			t.Errorf("--install-only: exit %d, printed %q; want the cached binary's path and no run", code, out)
		}
		src, err := os.ReadFile("../../examples/field-reports/01-v1beta1-nodepool.yaml")
		if err != nil {
			t.Fatal(err)
		}
		p := writeTemp(t, t.TempDir(), "pool.yaml", string(src))
		if code, out, stderr := hook(rel, cache, fix, p); code != 0 {
			t.Errorf("fix hook: exit %d\n%s%s", code, out, stderr)
		}
		if after, _ := os.ReadFile(p); !strings.Contains(string(after), "apiVersion: karpenter.sh/v1\n") {
			t.Errorf("fix hook did not rewrite the file to v1:\n%s", after)
		}
	})

	for _, tc := range []struct {
		name  string
		fault releaseFault
		want  string
	}{
		{"a wrong checksum", releaseWrongSum, "but the release's checksums.txt says"},
		{"an archive the checksums do not list", releaseNotInSums, "checksums.txt has no line for karpenter-guard_"},
		{"a release that does not exist", releaseNoSuchFiles, "cannot download "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rel, cache := newFakeRelease(t, version, tc.fault), t.TempDir()
			code, out, stderr := hook(rel, cache, check, "examples/field-reports/04-instance-profile-arn.yaml")
			if code != 2 || out != "" || !strings.Contains(stderr, "karpenter-guard install: ") || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, stderr, tc.want)
			}
			if rel.runs() != 0 {
				t.Errorf("the unverified binary ran %d times", rel.runs())
			}
			if bins, _ := filepath.Glob(filepath.Join(cache, "*", "*", "*")); len(bins) != 0 {
				t.Errorf("left in the cache: %v", bins)
			}
		})
	}

	t.Run("a version that is not a release tag", func(t *testing.T) {
		rel, cache := newFakeRelease(t, version, releaseIntact), t.TempDir()
		env := []string{"KARPENTER_GUARD_RELEASES=" + rel.url, "KARPENTER_GUARD_CACHE=" + cache, "KARPENTER_GUARD_VERSION=v1.0.0/../../x"}
		code, _, stderr := runProcess(t, root, env, filepath.Join(root, check[0]), "check", "README.md")
		if code != 2 || !strings.Contains(stderr, "expected a release tag such as "+version) || rel.downloads.Load() != 0 {
			t.Errorf("exit %d, stderr %q, %d downloads; want 2, the reason and nothing asked", code, stderr, rel.downloads.Load())
		}
	})
}

// gitlabJob is the part of a GitLab CI job the recipe in docs/ci.md uses.
type gitlabJob struct {
	Image        string            `yaml:"image"`
	Variables    map[string]string `yaml:"variables"`
	BeforeScript []string          `yaml:"before_script"`
	Script       []string          `yaml:"script"`
	Artifacts    any               `yaml:"artifacts"`
}

// TestGitLabRecipe runs the install lines of the GitLab job in docs/ci.md against a fake release,
// as the runner's shell runs them (one script, stopping at the first failing command), with the
// image's package install left out and a temporary directory for /usr/local/bin: the binary is
// installed and runs; with a checksum that does not match, the job fails before anything is
// unpacked.
func TestGitLabRecipe(t *testing.T) {
	needTools(t)
	data, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.Index(doc, "## GitLab CI\n")
	if i < 0 {
		t.Fatal("docs/ci.md has no GitLab CI section")
	}
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(doc[i:])
	if block == nil {
		t.Fatal("the GitLab CI section has no yaml block")
	}
	var jobs map[string]gitlabJob
	if err := yaml.Unmarshal([]byte(block[1]), &jobs); err != nil {
		t.Fatalf("the GitLab recipe is not YAML: %v", err)
	}
	job, ok := jobs["karpenter-guard"]
	if !ok || len(job.BeforeScript) == 0 || len(job.Script) == 0 {
		t.Fatalf("the recipe has no karpenter-guard job with before_script and script: %+v", jobs)
	}
	version := job.Variables["KARPENTER_GUARD_VERSION"]
	if want := defaultReleaseVersion(t); version != want {
		t.Errorf("the recipe pins %q, hack/install-release.sh %q: pin the same release", version, want)
	}
	if strings.Contains(strings.Join(job.BeforeScript, "\n"), "go install") {
		t.Error("the recipe compiles karpenter-guard")
	}

	// install runs the recipe's install lines and then the installed binary; it returns the exit code
	// and outputs of the first that fails, and the directory standing for /usr/local/bin.
	install := func(t *testing.T, fault releaseFault) (int, string, string, string) {
		rel := newFakeRelease(t, version, fault)
		bin, work := t.TempDir(), t.TempDir()
		var lines []string
		for _, l := range job.BeforeScript {
			if strings.HasPrefix(l, "apk ") {
				continue // the image's package manager: curl is here already
			}
			lines = append(lines, strings.ReplaceAll(l, "/usr/local/bin", bin))
		}
		env := []string{"KARPENTER_GUARD_VERSION=" + version, "KARPENTER_GUARD_RELEASES=" + rel.url}
		code, out, stderr := runProcess(t, work, env, "sh", "-e", "-c", strings.Join(lines, "\n"))
		if code != 0 {
			if rel.runs() != 0 {
				t.Errorf("the binary ran %d times though the install failed", rel.runs())
			}
			return code, out, stderr, bin
		}
		code, out, stderr = runProcess(t, work, nil, filepath.Join(bin, "karpenter-guard"), "version")
		if rel.runs() != 1 {
			t.Errorf("the installed binary ran %d times, want once", rel.runs())
		}
		return code, out, stderr, bin
	}
	if code, out, stderr, _ := install(t, releaseIntact); code != 0 || !strings.HasPrefix(out, "karpenter-guard ") {
		t.Errorf("recipe: exit %d, want the installed karpenter-guard to run\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	for _, fault := range []releaseFault{releaseWrongSum, releaseNotInSums} {
		code, _, stderr, bin := install(t, fault)
		if code == 0 {
			t.Errorf("recipe with fault %d: exit 0, want the job to fail before unpacking\n%s", fault, stderr)
		}
		if _, err := os.Stat(filepath.Join(bin, "karpenter-guard")); err == nil {
			t.Errorf("recipe with fault %d: karpenter-guard was unpacked", fault)
		}
	}
}
