package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// TestVersionFromBuildInfo covers every way a binary gets its version and commit: stamped by -ldflags, from
// the module version `go install` records, and from the VCS settings of a build in a clone.
func TestVersionFromBuildInfo(t *testing.T) {
	const rev = "6ef61c3a5e0d4b8f9c2a1b0e7d6c5f4a3b2c1d0e"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "-trimpath", Value: "true"}, {Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name                          string
		stampedVersion, stampedCommit string
		info                          *debug.BuildInfo
		want                          buildInfo
	}{{
		name: "no build information", stampedVersion: "dev",
		want: buildInfo{Version: "dev", Commit: "unknown"},
	}, {
		name: "release build: stamped wins", stampedVersion: "v0.1.0", stampedCommit: rev,
		info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
		want: buildInfo{Version: "v0.1.0", Commit: rev},
	}, {
		name: "stamped over a module version and other VCS settings", stampedVersion: "v0.2.0-rc.1", stampedCommit: "abc",
		info: &debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}, Settings: vcs("true")},
		want: buildInfo{Version: "v0.2.0-rc.1", Commit: "abc"},
	}, {
		name: "stamped version, the toolchain's commit", stampedVersion: "v0.1.0-dirty",
		info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")},
		want: buildInfo{Version: "v0.1.0-dirty", Commit: rev, Dirty: true},
	}, {
		name: "go install at a tag", stampedVersion: "dev",
		info: &debug.BuildInfo{Main: debug.Module{Path: "github.com/karpenter-guard/karpenter-guard", Version: "v0.1.0"}},
		want: buildInfo{Version: "v0.1.0", Commit: "unknown"},
	}, {
		name: "go install at a commit: the pseudo-version names it", stampedVersion: "dev",
		info: &debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20261124034501-6ef61c3a5e0d"}},
		want: buildInfo{Version: "v0.1.1-0.20261124034501-6ef61c3a5e0d", Commit: "6ef61c3a5e0d"},
	}, {
		name: "go build in a clean clone", stampedVersion: "dev",
		info: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124034501-6ef61c3a5e0d"}, Settings: vcs("false")},
		want: buildInfo{Version: "v0.0.0-20261124034501-6ef61c3a5e0d", Commit: rev},
	}, {
		name: "go build in a modified clone", stampedVersion: "dev",
		info: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124034501-6ef61c3a5e0d+dirty"}, Settings: vcs("true")},
		want: buildInfo{Version: "v0.0.0-20261124034501-6ef61c3a5e0d+dirty", Commit: rev, Dirty: true},
	}, {
		name: "(devel) stays dev", stampedVersion: "dev",
		info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("false")},
		want: buildInfo{Version: "dev", Commit: rev},
	}, {
		name: "-buildvcs=false: (devel) and no commit",
		info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
		want: buildInfo{Version: "dev", Commit: "unknown"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.GoVersion, tc.want.Platform = runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH
			if got := describeBuild(tc.stampedVersion, tc.stampedCommit, tc.info); got != tc.want {
				t.Errorf("describeBuild(%q, %q, …) = %+v, want %+v", tc.stampedVersion, tc.stampedCommit, got, tc.want)
			}
		})
	}
}

func TestVersionLine(t *testing.T) {
	b := buildInfo{Version: "v0.1.0", Commit: "abc", GoVersion: "go1.26.8", Platform: "linux/arm64"}
	if got, want := b.String(), "karpenter-guard v0.1.0 (commit abc, go1.26.8, linux/arm64)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	b.Dirty = true
	if got, want := b.String(), "karpenter-guard v0.1.0 (commit abc, dirty, go1.26.8, linux/arm64)"; got != want {
		t.Errorf("String() dirty = %q, want %q", got, want)
	}
}

// TestVersionFlagMatchesVersionCommand: `karpenter-guard --version` prints exactly what
// `karpenter-guard version` prints, and `version -o json` carries the same values.
func TestVersionFlagMatchesVersionCommand(t *testing.T) {
	code, cmdOut, stderr := cli(t, "", "version")
	if code != 0 || stderr != "" {
		t.Fatalf("version: exit %d, stderr %q", code, stderr)
	}
	for _, flag := range []string{"--version", "-v"} {
		code, flagOut, stderr := cli(t, "", flag)
		if code != 0 || stderr != "" {
			t.Fatalf("%s: exit %d, stderr %q", flag, code, stderr)
		}
		if flagOut != cmdOut {
			t.Errorf("%s printed %q, version printed %q", flag, flagOut, cmdOut)
		}
	}
	want := currentBuild()
	if cmdOut != want.String()+"\n" {
		t.Errorf("version printed %q, want %q", cmdOut, want.String())
	}
	code, jsonOut, _ := cli(t, "", "version", "-o", "json")
	var got buildInfo
	if code != 0 || json.Unmarshal([]byte(jsonOut), &got) != nil || got != want {
		t.Errorf("version -o json: exit %d, %s; want %+v", code, jsonOut, want)
	}
}

// TestVersionReleaseImageMatchesDockerfile: the release image (Dockerfile.goreleaser, from GoReleaser's
// binaries) and the image built from source (Dockerfile) have the same final stage: base, path, user,
// entry point and command.
func TestVersionReleaseImageMatchesDockerfile(t *testing.T) {
	finalStage := func(name string) []string {
		t.Helper()
		src, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		var stage []string
		for _, line := range strings.Split(string(src), "\n") {
			switch {
			case strings.HasPrefix(line, "FROM "):
				stage = []string{strings.Fields(line)[1]}
			case strings.HasPrefix(line, "USER "), strings.HasPrefix(line, "ENTRYPOINT "), strings.HasPrefix(line, "CMD "):
				stage = append(stage, line)
			case strings.HasPrefix(line, "COPY "):
				f := strings.Fields(line)
				stage = append(stage, "COPY … "+f[len(f)-1])
			}
		}
		return stage
	}
	src, release := finalStage("Dockerfile"), finalStage("Dockerfile.goreleaser")
	if len(release) < 4 || !slices.Equal(src, release) {
		t.Errorf("final stages differ:\nDockerfile:            %q\nDockerfile.goreleaser: %q", src, release)
	}
}
