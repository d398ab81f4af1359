package main

import (
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

// TestFactsExportOutputFile: facts export -o FILE replaces FILE only once the export has succeeded,
// keeping its mode (a new file is 0644), and a failed export, a symbolic link at FILE or a format name
// as FILE leave the last good snapshot exactly as it was, with no temporary file beside it.
func TestFactsExportOutputFile(t *testing.T) {
	inRepoRoot(t)
	const dir = "examples/production"
	manifests := absRepo(t, dir) // the subtests that give -o relative to their directory change to it
	const lastGood = "# the last good snapshot\napiVersion: karpenter-guard.io/v1alpha1\nkind: ClusterFacts\n"
	closedPort := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := "http://" + l.Addr().String()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		return addr
	}
	for _, tc := range []struct {
		name string
		// existing is the mode of the snapshot already there (0: none); link makes -o a symbolic link
		// to it.
		existing fs.FileMode
		link     bool
		out      string // -o, relative to the test's directory; "" for cluster-facts.yaml
		fault    func(t *testing.T, srv *fakeaws.Server, flags []string) []string
		wantCode int
		wantErr  string // on stderr
		wantMode fs.FileMode
	}{
		{name: "replaces the last snapshot, keeping its mode", existing: 0o640, wantMode: 0o640},
		{name: "new file", wantMode: 0o644},
		{
			name: "cluster not reachable", existing: 0o644, wantCode: 2,
			fault: func(t *testing.T, _ *fakeaws.Server, flags []string) []string {
				return append(slices.Clone(flags[:len(flags)-1]), closedPort(t))
			},
			wantErr: "could not describe the cluster, so nothing else was asked",
		},
		{
			name: "a section throttled", existing: 0o644, wantCode: 2,
			fault: func(_ *testing.T, srv *fakeaws.Server, flags []string) []string {
				srv.Inject("ssm:GetParameter", fakeaws.Fault{Throttle: true})
				return flags
			},
			wantErr: "error: no snapshot written",
		},
		{
			name: "symbolic link", existing: 0o644, link: true, wantCode: 2,
			wantErr: "it is a symbolic link, which karpenter-guard does not write through: give the path of the file itself, or remove the link",
		},
		{
			name: "a format name", out: "json", wantCode: 2,
			wantErr: "facts export -o json: -o names the file to write here, and a snapshot is always YAML",
		},
		{
			name: "missing directory", out: "missing/cluster-facts.yaml", wantCode: 2,
			wantErr: "facts export -o " + "missing/cluster-facts.yaml: the directory missing does not exist: create it first",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			awsEnv(t)
			srv, flags := fakeFor(t, filepath.Join(manifests, "cluster-facts.yaml"))
			flags = flags[1:] // no --live
			if tc.fault != nil {
				flags = tc.fault(t, srv, flags)
			}
			tmp := t.TempDir()
			snapshot := filepath.Join(tmp, "cluster-facts.yaml")
			out := snapshot
			if tc.existing != 0 {
				if err := os.WriteFile(snapshot, []byte(lastGood), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(snapshot, tc.existing); err != nil {
					t.Fatal(err)
				}
			}
			if tc.link {
				out = filepath.Join(tmp, "link.yaml")
				if err := os.Symlink("cluster-facts.yaml", out); err != nil {
					t.Fatal(err)
				}
			}
			if tc.out != "" {
				out = tc.out
				t.Chdir(tmp)
			}
			before := entries(t, tmp)
			args := append([]string{"facts", "export", "-f", manifests, "-o", out}, flags...)
			code, stdout, stderr := cli(t, "", args...)
			if code != tc.wantCode || stdout != "" || !strings.Contains(stderr, tc.wantErr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, nothing on stdout and %q", code, stdout, stderr, tc.wantCode, tc.wantErr)
			}
			if tc.wantCode != 0 {
				if tc.existing != 0 {
					if got, err := os.ReadFile(snapshot); err != nil || string(got) != lastGood {
						t.Errorf("the last good snapshot now reads %q (%v)", got, err)
					}
				}
				if after := entries(t, tmp); !slices.Equal(after, before) {
					t.Errorf("directory holds %q after the failed export, want %q", after, before)
				}
				if tc.link || tc.out != "" {
					if n := srv.Calls("*"); n != 0 {
						t.Errorf("%d AWS requests: an -o that cannot be written is refused before anything is asked", n)
					}
				}
				return
			}
			if !strings.Contains(stderr, "snapshot of EKS cluster prod-eks written to "+out) {
				t.Errorf("stderr %q does not say where the snapshot went", stderr)
			}
			data, err := os.ReadFile(snapshot)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := facts.DecodeSnapshotFile(data)
			if err != nil || cf.Cluster == nil || cf.Cluster.Name != "prod-eks" {
				t.Fatalf("written snapshot: %v\n%s", err, data)
			}
			if info, err := os.Lstat(snapshot); err != nil || info.Mode() != tc.wantMode {
				t.Errorf("mode %v (%v), want a regular file with mode %v", info.Mode(), err, tc.wantMode)
			}
			if names := entries(t, tmp); !slices.Equal(names, []string{"cluster-facts.yaml"}) {
				t.Errorf("directory holds %q, want only the snapshot", names)
			}
		})
	}
}

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// absRepo is a path of the repository as an absolute path, for a test that changes directory.
func absRepo(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDocsExportWithOutputFile: no doc and no help text shows facts export writing a snapshot through
// a shell redirect, which empties the last good snapshot before the export even starts; they show -o.
func TestDocsExportWithOutputFile(t *testing.T) {
	inRepoRoot(t)
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	for _, p := range append(docs, "README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[p] = string(b)
	}
	_, help, _ := cli(t, "", "facts", "export", "--help")
	texts["facts export --help"] = help
	withOutput := 0
	for name, text := range texts {
		lines := strings.Split(text, "\n")
		for i, line := range lines {
			at := strings.Index(line, "facts export")
			if at < 0 {
				continue
			}
			command := line[at:]
			// An inline code span that goes on to the next line.
			if strings.Count(command, "`")%2 == 0 && strings.Count(line[:at], "`")%2 == 1 && i+1 < len(lines) {
				command += " " + lines[i+1]
			}
			if end := strings.IndexAny(command, "`#"); end >= 0 {
				command = command[:end]
			}
			if strings.Contains(command, " > ") {
				t.Errorf("%s:%d writes a snapshot with a shell redirect, which empties the last good one when the export fails; use -o FILE:\n%s", name, i+1, line)
			}
			if strings.Contains(command, " -o ") {
				withOutput++
			}
		}
	}
	if withOutput < 4 {
		t.Errorf("%d facts export commands with -o in the docs and the help, want the README's, repositories.md's, argocd.md's and the help's", withOutput)
	}
}
