package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzKustomization reads arbitrary bytes as a kustomization, as the reader does for every one it
// finds under a directory and as the guard does for every one kustomize reads: neither may panic, a
// remote reference found must be one isRemote calls remote, and no path the reader takes from it as
// local may be remote.
func FuzzKustomization(f *testing.F) {
	f.Add([]byte("resources:\n- ../../base\n- https://example.com/x.yaml\npatches:\n- path: tags.yaml\n"))
	f.Add([]byte("bases: [github.com/org/repo//base?ref=v1]\ncomponents: [../c]\npatchesStrategicMerge:\n- |\n  kind: NodePool\n- p.yaml\n"))
	f.Add([]byte("configMapGenerator:\n- name: c\n  files: [k=git@host:org/repo, data.txt]\n  envs: [.env]\nhelmCharts:\n- name: x\n  valuesFile: v.yaml\nopenapi: {path: s.json}\n"))
	f.Add([]byte("kind: Component\nreplacements: [{path: r.yaml}]\ngenerators: [gen]\ntransformers: [/etc/passwd]\n"))
	f.Add([]byte("resources: &r [a, *r]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if url := remoteReference(data); url != "" && !isRemote(url) {
			t.Fatalf("remoteReference returned %q, which isRemote does not call remote", url)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		k, ok := Reader{}.readKustomization(dir)
		if !ok {
			t.Fatal("the kustomization written was not found")
		}
		for _, list := range [][]string{k.resources, k.includes, k.inputs} {
			for _, p := range list {
				if rel, err := filepath.Rel(dir, p); err != nil || isRemote(rel) || strings.Contains(p, "://") {
					t.Fatalf("path %q taken as local is remote", p)
				}
			}
		}
	})
}
