package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/audit"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/fix"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

type exportOptions struct {
	live    liveOptions
	files   []string
	partial bool
	// outFile is -o: the file the snapshot replaces once the export has succeeded ("" or "-" for
	// standard output).
	outFile string
}

func newFactsCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "facts",
		Short: "Work with ClusterFacts snapshots",
	}
	o := &exportOptions{}
	export := &cobra.Command{
		Use:   "export --cluster-name NAME",
		Short: "Write a ClusterFacts snapshot of what the rules need, from AWS and the cluster",
		Long: "Ask AWS (and the cluster, through the kubeconfig) every question the rules ask about the\n" +
			"cluster's EC2NodeClasses and NodePools (or the manifests given with -f), and write the answers\n" +
			"as a ClusterFacts snapshot. `check --facts` and a cluster-facts.yaml beside the manifests then\n" +
			"reproduce the same verdicts with no credentials, in CI.\n\n" +
			"-o FILE replaces FILE only once the export has succeeded, atomically and keeping its permissions:\n" +
			"a failed export leaves the last good snapshot as it was (a shell redirect would empty it first).\n" +
			"FILE may not be a symbolic link. Without -o the snapshot is printed on standard output.\n\n" +
			"The snapshot holds what those objects use (their roles, images, subnets), not the whole\n" +
			"account: export again when the manifests start using other roles or selectors.\n\n" +
			"Independent questions are asked together; each AWS call waits at most aws.timeout, and the\n" +
			"whole export at most --deadline. When the cluster cannot be described nothing else is asked.",
		Example: "  karpenter-guard facts export --cluster-name prod-eks --region us-east-1 -o cluster-facts.yaml\n" +
			"  karpenter-guard facts export --cluster-name prod-eks -f gitops/prod/ -o gitops/prod/.karpenter-guard/cluster-facts.yaml",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runExport(cmd.Context(), cmd, g, o)
		},
	}
	o.live.addFlags(export.Flags())
	o.live.addDeadlineFlag(export.Flags())
	export.Flags().StringArrayVarP(&o.files, "filename", "f", nil, "export for these manifests instead of the cluster's objects (file, directory or -)")
	export.Flags().BoolVar(&o.partial, "partial", false, "when some lookups fail, write the snapshot with their sections left out (unknown) instead of failing")
	// -o names a file here, not a format (a snapshot is always YAML): this local flag takes the place
	// of the persistent --output of the other commands.
	export.Flags().StringVarP(&o.outFile, "output", "o", "", "write the snapshot to `FILE`, replacing it only once the export has succeeded (default: standard output)")
	cmd.AddCommand(export)
	return cmd
}

func runExport(ctx context.Context, cmd *cobra.Command, g *globalOptions, o *exportOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := o.live.withDeadline(ctx)
	defer cancel()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := checkOutFile(o.outFile); err != nil {
		return err
	}
	cat, cfg, err := g.catalogFor(o.files, stderr)
	if err != nil {
		return err
	}
	kube, rc, kubeErr := o.live.kubeClient()
	server := ""
	if kubeErr == nil {
		server = rc.Host
	}
	var set *manifest.Set
	if len(o.files) > 0 {
		// As check reads them: kustomizations rendered, patches left out, nothing outside the tree.
		set = (&manifest.Reader{MaxFileSize: manifest.DefaultMaxFileSize, Stdin: cmd.InOrStdin(), Kustomize: true, Render: true}).Read(ctx, o.files)
		if len(set.Errors) > 0 {
			for _, e := range set.Errors {
				fmt.Fprintln(stderr, "error:", e.Error())
			}
			return exitError{2}
		}
		if kubeErr != nil {
			fmt.Fprintf(stderr, "note: no cluster access (%v): the snapshot will not know aws-auth; the ServiceAccounts of Karpenter and aws-node come from the input only\n", kubeErr)
			o.live.withInputAccounts().set(set.ServiceAccounts)
		}
	} else {
		if kubeErr != nil {
			return fmt.Errorf("facts export reads the cluster's EC2NodeClasses and NodePools: %w (or give the manifests with -f)", kubeErr)
		}
		objs, err := audit.List(ctx, kube)
		if err != nil {
			return err
		}
		set = &manifest.Set{Objects: objs.All(), Errors: objs.Problems}
	}
	p, err := o.live.provider(ctx, cfg, kube, server, stderr)
	if err != nil {
		return err
	}
	defer p.Close()
	snap, gaps, err := exportSnapshot(ctx, cat, cfg, p, set)
	if err != nil {
		return err
	}
	if kube == nil { // said above, with the reason there is no cluster access
		gaps = slices.DeleteFunc(gaps, func(g facts.Gap) bool { return g.Section == facts.AWSAuth })
	}
	if reportGaps(stderr, gaps, o.partial) {
		return exitError{2}
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# ClusterFacts of EKS cluster %s, written by karpenter-guard facts export on %s\n", o.live.clusterName, time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(&buf, "# for %d EC2NodeClasses and NodePools: it holds what they use, not the whole account.\n", countKarpenter(set))
	if err := writeSnapshot(&buf, snap); err != nil {
		return err
	}
	if o.outFile == "" || o.outFile == "-" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	if err := fix.ReplaceFile(o.outFile, buf.Bytes(), 0o644); err != nil {
		return outFileError(o.outFile, err)
	}
	fmt.Fprintf(stderr, "snapshot of EKS cluster %s written to %s\n", o.live.clusterName, o.outFile)
	return nil
}

// checkOutFile refuses, before anything is asked, an -o the export could not write at the end: a
// symbolic link, a directory, a file in a directory that does not exist, or a format name (-o is a
// format in the other commands; a snapshot is always YAML).
func checkOutFile(path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if slices.Contains(append(slices.Clone(reportFormats), "yaml"), path) {
		return fmt.Errorf("facts export -o %s: -o names the file to write here, and a snapshot is always YAML: give a file name such as cluster-facts.yaml (./%s for a file of that name), or leave -o out for standard output", path, path)
	}
	if err := fix.CheckReplaceable(path); err != nil {
		return outFileError(path, err)
	}
	if err := manifest.WritableInside(path); err != nil {
		return fmt.Errorf("facts export -o %s: %w", path, err)
	}
	if dir := filepath.Dir(path); dir != "." {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return fmt.Errorf("facts export -o %s: the directory %s does not exist: create it first", path, dir)
		}
	}
	return nil
}

// outFileError says why the snapshot cannot be written to path, and what to do.
func outFileError(path string, err error) error {
	switch {
	case errors.Is(err, fix.ErrSymlink):
		return fmt.Errorf("facts export -o %s: it is a symbolic link, which karpenter-guard does not write through: give the path of the file itself, or remove the link", path)
	case errors.Is(err, fix.ErrNotRegular):
		return fmt.Errorf("facts export -o %s: it is not a regular file (a directory?): give the path of the snapshot file, or leave -o out for standard output", path)
	}
	return fmt.Errorf("facts export -o %s: %w; the file was left as it was", path, err)
}

// exportSnapshot asks p every question the rules ask about set, through a recorder, and returns the
// answers and the sections it could not write whole, which the snapshot leaves out (unknown). The
// cluster is asked first: a snapshot cannot be written without it, so when it cannot be described
// nothing else is asked. The other questions are asked together (facts.Ask, alongside the engine's
// own fetches: at most twice facts.AskLimit at once), each within aws.timeout.
func exportSnapshot(ctx context.Context, cat *validators.Catalog, cfg *config.Config, p facts.Provider, set *manifest.Set) (*facts.ClusterFacts, []facts.Gap, error) {
	rec := facts.NewRecorder(p)
	if _, err := rec.Cluster(ctx); err != nil {
		return nil, nil, fmt.Errorf("could not describe the cluster, so nothing else was asked: %s", facts.Reason(err))
	}
	// The sections every rule could need, asked even when no object leads a rule to them, so that
	// the snapshot knows what the account can tell (an empty list of access entries is an answer).
	var sections []func(context.Context)
	for _, f := range []facts.Fact{facts.ClusterAuthenticationMode, facts.ClusterVersion, facts.ClusterVPCID, facts.AccessEntries,
		facts.AWSAuth, facts.Roles, facts.InstanceProfiles, facts.Images, facts.SSMParameters, facts.Subnets, facts.SecurityGroups,
		facts.EBSDefaults} {
		sections = append(sections, func(ctx context.Context) { _ = rec.Known(ctx, f) })
	}
	asked := make(chan struct{})
	go func() { // alongside the rules' questions, not before them: most are the same questions
		defer close(asked)
		facts.Ask(ctx, facts.AskLimit, sections...)
	}()
	cat.Evaluate(&validators.Context{Context: ctx, Config: cfg, Facts: rec, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
	<-asked
	snap, gaps := rec.Snapshot(), rec.Gaps()
	if snap.Cluster == nil {
		for _, g := range gaps {
			if g.Section == facts.SectionCluster {
				return nil, nil, fmt.Errorf("could not describe the cluster: %s", g.Reasons[0])
			}
		}
		return nil, nil, errors.New("could not describe the cluster")
	}
	return snap, gaps, nil
}

// reportGaps writes the sections left out of an export to w and reports whether the export must
// fail. It fails on a section whose lookups failed only in part (it would otherwise pass for
// complete, and a rule reads a role or image missing from it as one that does not exist) and on one
// AWS did not answer for a passing reason (throttling, a timeout), which asking again may fill.
// Sections AWS or the cluster would not tell at all (a permission not granted) are notes: the
// snapshot says they are unknown, as a live run would.
func reportGaps(w io.Writer, gaps []facts.Gap, allowPartial bool) bool {
	fail := false
	for _, g := range gaps {
		reasons := strings.Join(g.Reasons, "; ")
		switch {
		case !g.Partial && !g.Transient:
			fmt.Fprintf(w, "note: %s left unknown: %s\n", g.Section, reasons)
		case allowPartial:
			fmt.Fprintf(w, "warning: %s left out (unknown), some lookups failed: %s\n", g.Section, reasons)
		case g.Partial:
			fail = true
			fmt.Fprintf(w, "error: %s: some lookups failed, so the section would be incomplete: %s\n", g.Section, reasons)
		default:
			fail = true
			fmt.Fprintf(w, "error: %s: no answer for now: %s\n", g.Section, reasons)
		}
	}
	if fail {
		fmt.Fprintln(w, "error: no snapshot written; fix the causes above or export again once AWS answers, or pass --partial to write it with those sections unknown")
	}
	return fail
}

// writeSnapshot writes a snapshot as YAML, in the field order of docs/facts.md.
func writeSnapshot(w io.Writer, cf *facts.ClusterFacts) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(cf); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	return enc.Close()
}

func countKarpenter(set *manifest.Set) int {
	n := 0
	for _, o := range set.Objects {
		if o.NodeClass != nil || o.NodePool != nil {
			n++
		}
	}
	return n
}
