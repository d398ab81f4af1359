package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/karpenter-guard/karpenter-guard/crds"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/fix"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/report"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

type checkOptions struct {
	files       []string
	factsFile   string
	live        bool
	liveOpts    liveOptions
	fix         bool
	diff        bool
	maxFileSize int64
	crdsDir     string
	inputs      inputOptions
}

func newCheckCommand(g *globalOptions) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check -f PATH...",
		Short: "Lint Karpenter manifests: files, directories (recursively) or - for stdin",
		Long: "Check EC2NodeClasses, NodePools and the kube-system/aws-auth ConfigMap in manifest files.\n\n" +
			"Exit codes: 0 no finding that fails the run; 1 a finding fails it (--fail-on: deny findings by default,\n" +
			"warn adds warn findings, never none); 2 the run failed (unreadable path, invalid YAML, invalid config,\n" +
			"or, with --fail-on-empty, no EC2NodeClass, NodePool or aws-auth ConfigMap to check).\n" +
			"A run that finds none says so on its last line. With --diff: 0 nothing to change, 1 a change is shown.",
		Example: "  karpenter-guard check -f examples/\n" +
			"  karpenter-guard check -f manifests/ --live --cluster-name prod-eks --region us-east-1\n" +
			"  kustomize build overlays/prod | karpenter-guard check -f - -o json\n" +
			"  karpenter-guard check -f manifests/ --diff",
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = append(o.files, args...)
			return runCheck(cmd.Context(), cmd, g, o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&o.files, "filename", "f", nil, "file, directory or - (stdin); repeatable")
	o.inputs.addFlags(f)
	f.BoolVar(&o.fix, "fix", false, "rewrite files in place with every safe fix (comments and formatting kept)")
	f.BoolVar(&o.diff, "diff", false, "print the fixes as a unified diff instead of writing them")
	f.StringVar(&o.factsFile, "facts", "", "ClusterFacts snapshot for every object (default: a ClusterFacts document in the input, per directory)")
	f.Int64Var(&o.maxFileSize, "max-file-size", manifest.DefaultMaxFileSize, "largest input file in bytes")
	f.StringVar(&o.crdsDir, "karpenter-crds", "", "directory of Karpenter CRDs to validate against (a release's pkg/apis/crds or chart crds/; default: the built-in Karpenter "+crds.Release+" CRDs)")
	f.BoolVar(&o.live, "live", false, "ask AWS and the cluster for facts (needs --cluster-name and AWS credentials)")
	o.liveOpts.addFlags(f)
	o.liveOpts.addDeadlineFlag(f)
	addReportFlags(f, g)
	return cmd
}

func runCheck(ctx context.Context, cmd *cobra.Command, g *globalOptions, o *checkOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := o.inputs.validate(o.files, o.fix || o.diff); err != nil {
		return err
	}
	if err := validateReportOptions(g); err != nil {
		return err
	}
	if o.fix && o.diff {
		return fmt.Errorf("--fix and --diff exclude each other: --diff shows what --fix would write")
	}
	cat, cfg, err := g.catalogFor(joinPaths(o.files, o.inputs.kustomizations), stderr)
	if err != nil {
		return err
	}
	ev := &evaluator{ctx: ctx, cat: cat, cfg: cfg}
	if o.crdsDir != "" {
		if ev.crds, err = crds.Load(o.crdsDir); err != nil {
			return fmt.Errorf("--karpenter-crds: %w", err)
		}
	}
	if o.live && o.factsFile != "" {
		return fmt.Errorf("--live and --facts exclude each other: live facts come from AWS, --facts from a snapshot")
	}
	var accounts *inputAccounts // a live run without cluster access reads the input's ServiceAccounts
	if o.live {
		// The questions to AWS and the cluster share --deadline; reading and writing files do not.
		liveCtx, cancel := o.liveOpts.withDeadline(ctx)
		defer cancel()
		ev.ctx = liveCtx
		var kube client.Reader
		server := ""
		if c, rc, err := o.liveOpts.kubeClient(); err != nil {
			fmt.Fprintf(stderr, "note: no cluster access (%v): aws-auth and the ServiceAccounts of Karpenter and aws-node come from the input only\n", err)
			accounts = o.liveOpts.withInputAccounts()
		} else {
			kube, server = c, rc.Host
		}
		p, err := o.liveOpts.provider(liveCtx, cfg, kube, server, stderr)
		if err != nil {
			return err
		}
		defer p.Close()
		ev.facts = p
	}
	if o.factsFile != "" {
		snap, err := loadFactsFile(o.factsFile)
		if err != nil {
			return err
		}
		ev.facts = snap
	}
	reader := manifest.Reader{MaxFileSize: o.maxFileSize, Stdin: cmd.InOrStdin()}
	// --fix says what it read once it has written, from the files as written.
	set, err := readInputs(ctx, reader, o.files, &o.inputs, ev.facts == nil, !o.fix, o.fix || o.diff, stderr)
	if err != nil {
		return err
	}
	if accounts != nil {
		accounts.set(set.ServiceAccounts)
	}
	for _, c := range set.Charts {
		fmt.Fprintf(stderr, "note: Helm chart %s skipped: its templates are YAML only once rendered (helm template %s | karpenter-guard check -f -)\n", c, c)
	}
	eval := func(s *manifest.Set) validators.Result {
		res, _ := ev.evaluate(s)
		return res
	}

	fixed := 0
	if o.fix || o.diff {
		outcome, left, err := fixAccepted(set, eval)
		for _, p := range outcome.Problems {
			fmt.Fprintln(stderr, "note:", p)
		}
		for _, r := range left {
			fmt.Fprintf(stderr, "note: %s not fixed: once fixed, the API server would refuse it: %s; convert it by hand\n", r.object, r.message)
		}
		if err != nil {
			return err
		}
		paths := make([]string, 0, len(outcome.Files))
		for p := range outcome.Files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		if o.diff {
			for _, p := range paths {
				// go-internal's diff is Go's own (cmd/go's internal/diff): its hunk headers are exact, so
				// git apply and patch apply the output with no offset.
				if _, err := stdout.Write(diff.Diff("a/"+p, set.Sources[p], "b/"+p, outcome.Files[p])); err != nil {
					return fmt.Errorf("write the diff: %w", err)
				}
			}
			if len(set.Errors) > 0 {
				for _, e := range set.Errors {
					fmt.Fprintln(stderr, "error:", e.Error())
				}
				return exitError{report.ExitFailed}
			}
			if countChecked(set) == 0 { // the patch is empty: say why on stderr, stdout stays a patch
				fmt.Fprintln(stderr, "note: nothing checked:", nothingChecked(set, o.files, o.inputs.kustomizations))
				if g.report.failOnEmpty {
					return exitError{report.ExitFailed}
				}
			}
			if len(paths) > 0 {
				return exitError{1}
			}
			return nil
		}
		for _, p := range paths {
			if p == "<stdin>" {
				return fix.ErrStdin
			}
		}
		// Every file is checked before any is written: a run refused for one file leaves them all as
		// they were.
		for _, p := range paths {
			if err := fix.CheckReplaceable(p); err != nil {
				return fixRefused(p, err)
			}
			if err := manifest.WritableInside(p); err != nil {
				return fmt.Errorf("--fix: %s: %w: nothing was written", p, err)
			}
		}
		for _, p := range paths {
			if err := writeFile(p, outcome.Files[p]); err != nil {
				return err
			}
		}
		fixed = outcome.Fixed
		// The files are fixed as they are; the verdict is check's on the files as written, with the
		// kustomizations rendered, so that --fix passes only what check passes.
		if set, err = readInputs(ctx, reader, o.files, &o.inputs, ev.facts == nil, true, false, stderr); err != nil {
			return err
		}
	}

	res, factsErrs := ev.evaluate(set)
	set.Errors = append(set.Errors, factsErrs...)
	rep := report.New(res, set)
	rep.Summary.Fixed = fixed
	rep.FailOnEmpty = g.report.failOnEmpty
	if rep.Empty() {
		rep.Summary.NothingChecked = nothingChecked(set, o.files, o.inputs.kustomizations)
	}
	if err := write(stdout, rep, g, cat); err != nil {
		return err
	}
	if code := exitCode(rep, g); code != 0 {
		return exitError{code}
	}
	return nil
}

// writeFile replaces a file's content atomically, keeping its permissions, never through a symbolic
// link: --fix runs on pull requests and shared checkouts, where a committed link could turn the write
// into one of a file outside the tree.
func writeFile(path string, data []byte) error {
	if err := fix.ReplaceFile(path, data, 0o644); err != nil {
		return fixRefused(path, err)
	}
	return nil
}

// fixRefused words a fix --fix may not write.
func fixRefused(path string, err error) error {
	if errors.Is(err, fix.ErrSymlink) {
		target, _ := os.Readlink(path)
		return fmt.Errorf("--fix: %s is a symbolic link (to %s), which karpenter-guard does not write through: nothing was written; run --fix on the file it points to instead", path, target)
	}
	return fmt.Errorf("--fix: write %s: %w", path, err)
}
