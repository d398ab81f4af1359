package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Set with -ldflags "-X main.version=… -X main.commit=…" by the Makefile, the Dockerfile and
// .goreleaser.yaml. Left unset, the version and commit come from what the Go toolchain recorded in the
// binary (see describeBuild).
var (
	version = "dev"
	commit  = ""
)

// buildInfo describes this binary.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Dirty     bool   `json:"dirty,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// pseudoVersionRev matches the revision at the end of a pseudo-version (v0.0.0-20250102150405-abcdef123456,
// v1.2.4-0.20250102150405-abcdef123456, optionally +dirty or +incompatible).
var pseudoVersionRev = regexp.MustCompile(`[-.]\d{14}-([0-9a-f]{12})(?:\+[0-9A-Za-z.-]+)?$`)

// currentBuild describes the running binary.
func currentBuild() buildInfo {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return describeBuild(version, commit, info)
}

// describeBuild derives the version and commit of a binary from the values -ldflags stamped into it
// (stampedVersion "dev" and stampedCommit "" when nothing was) and from the build information the Go
// toolchain recorded (nil when there is none), so that every way of building it says what it is:
//   - a release build, or `make build`, stamps both;
//   - `go install …/cmd/karpenter-guard@v0.1.0` stamps nothing, and the toolchain records the module
//     version v0.1.0 (a pseudo-version, which names the commit, for a commit that is not tagged);
//   - `go build` in a clone records "(devel)" or, since Go 1.24, a pseudo-version, and the VCS
//     settings vcs.revision and vcs.modified (unless -buildvcs=false).
//
// Dirty is set only when the toolchain saw uncommitted changes in the commit reported; a stamped
// version from `git describe --dirty` already says so itself.
func describeBuild(stampedVersion, stampedCommit string, info *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: stampedVersion, Commit: stampedCommit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if b.Version == "" {
		b.Version = "dev"
	}
	if info != nil {
		if b.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		var revision, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if b.Commit == "" {
			b.Commit = revision
		}
		if b.Commit == "" {
			if m := pseudoVersionRev.FindStringSubmatch(info.Main.Version); m != nil {
				b.Commit = m[1]
			}
		}
		b.Dirty = revision != "" && b.Commit == revision && modified == "true"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

// String is the one line `karpenter-guard version` and `karpenter-guard --version` print.
func (b buildInfo) String() string {
	commit := b.Commit
	if b.Dirty {
		commit += ", dirty"
	}
	return fmt.Sprintf("karpenter-guard %s (commit %s, %s, %s)", b.Version, commit, b.GoVersion, b.Platform)
}

// setVersionFlag gives root a --version flag that prints what the version command prints as text.
// Cobra executes the version template with the command as its data: Version holds the whole line,
// so no part of it (a stamped version, say) is ever read as template syntax.
func setVersionFlag(root *cobra.Command) {
	root.Version = currentBuild().String()
	root.SetVersionTemplate("{{.Version}}\n")
}

func newVersionCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Long: "Print the version, commit and Go version (also karpenter-guard --version). The version is the\n" +
			"release's, or the module version `go install` built, or dev.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := currentBuild()
			if g.output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(b)
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), b)
			return err
		},
	}
}
