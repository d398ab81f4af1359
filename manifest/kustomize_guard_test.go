package manifest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// loopback is an HTTP server on 127.0.0.1 that serves a NodePool at every path and counts the
// requests it sees: a check without --kustomize-allow-remote must make it see none.
func loopback(t *testing.T) (url string, requests *atomic.Int64) {
	t.Helper()
	requests = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = w.Write([]byte(named("NodePool", "fetched")))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, requests
}

// TestKustomizeNeverFetches: a kustomization naming a remote resource, base, component, patch or
// generator file, directly or in a base it includes, is refused before kustomize fetches anything: the
// loopback server sees no request, and the error names the kustomization and the URL. With
// AllowRemote the same http resource is fetched, so the server would see a request if the guard
// failed.
func TestKustomizeNeverFetches(t *testing.T) {
	url, requests := loopback(t)
	git := strings.Replace(url, "http://", "git::http://", 1)
	for _, tc := range []struct {
		name          string
		kustomization string
		base          string // the kustomization of ./base, when the overlay includes it
		remote        string
	}{
		{"http resource", "resources:\n- " + url + "/pool.yaml\n", "", url + "/pool.yaml"},
		{"git base", "resources:\n- " + url + "/org/repo.git//base?ref=v1\n", "", url + "/org/repo.git//base?ref=v1"},
		{"git:: base", "resources:\n- " + git + "/org/repo//base\n", "", git + "/org/repo//base"},
		{"legacy bases", "bases:\n- " + url + "/org/repo.git\n", "", url + "/org/repo.git"},
		{"component", "resources: [pool.yaml]\ncomponents:\n- " + url + "/org/repo.git//component\n", "", url + "/org/repo.git//component"},
		{"patch file", "resources: [pool.yaml]\npatches:\n- path: " + url + "/patch.yaml\n", "", url + "/patch.yaml"},
		{"strategic merge patch", "resources: [pool.yaml]\npatchesStrategicMerge:\n- " + url + "/patch.yaml\n", "", url + "/patch.yaml"},
		{"generator file", "configMapGenerator:\n- name: c\n  files:\n  - key=" + url + "/data\n", "", url + "/data"},
		{"remote in an included base", "resources:\n- base\n", "resources:\n- " + url + "/pool.yaml\n", url + "/pool.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"kustomization.yaml": tc.kustomization,
				"pool.yaml":          named("NodePool", "local"),
			})
			if tc.base != "" {
				writeFiles(t, dir, map[string]string{"base/kustomization.yaml": tc.base})
			}
			before := requests.Load()
			err := Reader{}.AddKustomization(context.Background(), &Set{}, dir)
			if n := requests.Load() - before; n != 0 {
				t.Fatalf("the loopback server saw %d requests", n)
			}
			var remote *RemoteError
			if !errors.As(err, &remote) || remote.URL != tc.remote {
				t.Fatalf("error = %v, want a remote resource error naming %s", err, tc.remote)
			}
			for _, want := range []string{"kustomization.yaml names the remote resource " + tc.remote, "--kustomize-allow-remote"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}

	t.Run("allowed", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"kustomization.yaml": "resources:\n- " + url + "/pool.yaml\n"})
		before := requests.Load()
		set := &Set{}
		if err := (Reader{AllowRemote: true}).AddKustomization(context.Background(), set, dir); err != nil {
			t.Fatal(err)
		}
		if n := requests.Load() - before; n != 1 || len(set.Objects) != 1 || set.Objects[0].Name != "fetched" {
			t.Fatalf("%d requests, %d objects: want the remote NodePool fetched once", n, len(set.Objects))
		}
	})
}

// TestKustomizeHelmChartIsNotFetched: a helmCharts entry is not a remote reference check refuses:
// kustomize inflates charts only with --enable-helm, which check never passes, so the build fails
// saying so, and the chart's repository sees no request.
func TestKustomizeHelmChartIsNotFetched(t *testing.T) {
	url, requests := loopback(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"kustomization.yaml": "helmCharts:\n- name: karpenter\n  repo: " + url + "/charts\n  version: 1.14.1\n"})
	err := (Reader{}).AddKustomization(context.Background(), &Set{}, dir)
	var remote *RemoteError
	if err == nil || errors.As(err, &remote) || !strings.Contains(err.Error(), "--enable-helm") || requests.Load() != 0 {
		t.Fatalf("error = %v after %d requests, want kustomize's --enable-helm error and none", err, requests.Load())
	}
}

// TestKustomizeStaysInTheRepository: without AllowRemote, kustomize reads only the repository that
// holds the kustomization built: a base outside it, or a resource linked out of it, is refused, while
// a base beside the overlay builds.
func TestKustomizeStaysInTheRepository(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{
		"kustomization.yaml": "resources: [secret.yaml]\n",
		"secret.yaml":        named("NodePool", "outside"),
	})
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Join(repo, "overlays", "outside-base"), outside)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, repo, map[string]string{
		"base/kustomization.yaml":                  "resources: [pool.yaml]\n",
		"base/pool.yaml":                           named("NodePool", "base"),
		"overlays/prod/kustomization.yaml":         "resources: [../../base]\nnamePrefix: prod-\n",
		"overlays/outside-base/kustomization.yaml": "resources: [" + filepath.ToSlash(rel) + "]\n",
		"overlays/linked/kustomization.yaml":       "resources: [pool.yaml]\n",
	})
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(repo, "overlays/linked/pool.yaml")); err != nil {
		t.Fatal(err)
	}
	set := &Set{}
	if err := (Reader{}).AddKustomization(context.Background(), set, filepath.Join(repo, "overlays/prod")); err != nil {
		t.Fatalf("overlay with a base beside it: %v", err)
	}
	if len(set.Objects) != 1 || set.Objects[0].Name != "prod-base" {
		t.Fatalf("objects %v, want prod-base", objectNames(t, repo, set))
	}
	// A base outside the repository: kustomize allows it, the guard does not.
	err = (Reader{}).AddKustomization(context.Background(), &Set{}, filepath.Join(repo, "overlays/outside-base"))
	if err == nil || !strings.Contains(err.Error(), "leads outside "+repoReal(t, repo)+": kustomize may read only the repository's files") {
		t.Errorf("base outside the repository: error = %v, want the read refused", err)
	}
	// A resource linked out of the repository: kustomize's own root restriction refuses it first.
	linked := &Set{}
	err = (Reader{}).AddKustomization(context.Background(), linked, filepath.Join(repo, "overlays/linked"))
	if err == nil || len(linked.Objects) != 0 || !strings.Contains(err.Error(), "is not in or below") {
		t.Errorf("resource linked outside: error = %v, %d objects, want the read refused", err, len(linked.Objects))
	}
}

func repoReal(t *testing.T, dir string) string {
	t.Helper()
	r, err := realPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestIsRemote: the references kustomize fetches, as its own parser reads them.
func TestIsRemote(t *testing.T) {
	for ref, want := range map[string]bool{
		"https://github.com/org/repo//base?ref=v1": true,
		"http://example.com/x.yaml":                true,
		"github.com/org/repo/base?ref=v1":          true,
		"GitHub.com:org/repo":                      true,
		"git@github.com:org/repo.git":              true,
		"git::https://gitlab.com/org/repo.git":     true,
		"ssh://git@host/org/repo":                  true,
		"file:///etc":                              true,
		"user@host.example.com:org/repo":           true,
		"../base":                                  false,
		"base":                                     false,
		"gitlab.com/org/repo":                      false, // kustomize reads it as a local path
		"patches/github.com.yaml":                  false,
		"nodepool@v1.yaml":                         false,
		"":                                         false,
	} {
		if got := isRemote(ref); got != want {
			t.Errorf("isRemote(%q) = %v, want %v", ref, got, want)
		}
	}
}

// fakeGit puts a git first on PATH that records each call in a file, and returns that file: a check
// must never run git.
func fakeGit(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	calls := filepath.Join(bin, "calls")
	script := "#!/bin/sh\necho \"$@\" >> " + calls + "\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

// TestKustomizeDirectoryNamedLikeAURL: a directory a repository holds whose relative path reads as a
// git URL (github.com/org/repo, git@host:org/repo) is built from disk, never cloned: kustomize is given
// absolute paths. Found under a walked directory and named with -k alike.
func TestKustomizeDirectoryNamedLikeAURL(t *testing.T) {
	calls := fakeGit(t)
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"github.com/org/repo", "git@127.0.0.1:org/repo"} {
		writeFiles(t, repo, map[string]string{
			dir + "/kustomization.yaml": "resources: [pool.yaml]\n",
			dir + "/pool.yaml":          named("NodePool", "pool"),
		})
	}
	t.Chdir(repo)
	set := readWithin(t, Reader{Kustomize: true, Render: true}, ".")
	if len(set.Rendered) != 2 || len(set.Objects) != 2 || len(set.Errors) != 0 {
		t.Errorf("rendered %v, %d objects, errors %v: want both directories built from disk", set.Rendered, len(set.Objects), set.Errors)
	}
	for _, dir := range []string{"github.com/org/repo", "git@127.0.0.1:org/repo"} {
		if err := (Reader{}).AddKustomization(context.Background(), &Set{}, dir); err != nil {
			t.Errorf("-k %s: %v", dir, err)
		}
	}
	if data, err := os.ReadFile(calls); err == nil {
		t.Errorf("git was run: %s", data)
	}
}

// TestKustomizePluginConfigNeverFetches: a builtin plugin's configuration listed under transformers
// or generators names files kustomize GETs over http (PatchTransformer's path, ConfigMapGenerator's
// files): refused before any request, naming the configuration file and the URL.
func TestKustomizePluginConfigNeverFetches(t *testing.T) {
	url, requests := loopback(t)
	for name, config := range map[string]string{
		"transformers": "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npath: " + url + "/patch.yaml\ntarget: {kind: NodePool}\n",
		"generators":   "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: c}\nfiles:\n- " + url + "/file.txt\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"kustomization.yaml": "resources: [pool.yaml]\n" + name + ": [plugin.yaml]\n",
				"pool.yaml":          named("NodePool", "pool"),
				"plugin.yaml":        config,
			})
			err := (Reader{}).AddKustomization(context.Background(), &Set{}, dir)
			var remote *RemoteError
			if !errors.As(err, &remote) || !strings.HasSuffix(remote.File, "plugin.yaml") || !strings.HasPrefix(remote.URL, url) || requests.Load() != 0 {
				t.Fatalf("error = %v after %d requests: want plugin.yaml's URL refused before any request", err, requests.Load())
			}
		})
	}
}

// TestKustomizeBudgetAsKyamlSplits: a bomb behind a "---#" line, which yaml.v3 reads as text and
// kustomize's kyaml as a separator, is refused at its line before kustomize expands it.
func TestKustomizeBudgetAsKyamlSplits(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n---#\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  a0: &a0 lol\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&bomb, "  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"kustomization.yaml": "resources: [bomb.yaml]\n", "bomb.yaml": bomb.String()})
	err := (Reader{}).AddKustomization(context.Background(), &Set{}, dir)
	var ke *KustomizeError
	if !errors.As(err, &ke) || !ke.Refused || !strings.Contains(err.Error(), "bomb.yaml:") || !strings.Contains(err.Error(), "YAML aliases expand") {
		t.Fatalf("error = %v, want bomb.yaml refused at its line", err)
	}
}

// TestKustomizeDiamondIsBounded: overlays that each include the two below them make kustomize load
// the bottom 2^n times; a build that reads more kustomizations than any real repository does is
// refused instead of running for hours.
func TestKustomizeDiamondIsBounded(t *testing.T) {
	dir := t.TempDir()
	const levels = 14
	files := map[string]string{".git/HEAD": "ref: refs/heads/main\n"}
	for _, side := range []string{"x", "y"} {
		files[fmt.Sprintf("%s%d/kustomization.yaml", side, levels)] = "resources: [cm.yaml]\n"
		files[fmt.Sprintf("%s%d/cm.yaml", side, levels)] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + side + "}\n"
		for i := 0; i < levels; i++ {
			files[fmt.Sprintf("%s%d/kustomization.yaml", side, i)] = fmt.Sprintf("namePrefix: %s%d-\nresources: [../x%d, ../y%d]\n", side, i, i+1, i+1)
		}
	}
	writeFiles(t, dir, files)
	err := (Reader{}).AddKustomization(context.Background(), &Set{}, filepath.Join(dir, "x0"))
	if err == nil || !strings.Contains(err.Error(), "kustomizations (overlays that each include others, over and over)") {
		t.Fatalf("error = %v, want the build refused for reading too many kustomizations", err)
	}
}
