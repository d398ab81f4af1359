package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/karpenter-guard/karpenter-guard/crds"

	"github.com/spf13/cobra"

	"github.com/karpenter-guard/karpenter-guard/audit"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/report"
)

type auditOptions struct {
	live         liveOptions
	factsFile    string
	writeReports bool
	mode         string
	crdsDir      string
}

func newAuditCommand(g *globalOptions) *cobra.Command {
	o := &auditOptions{}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Evaluate every EC2NodeClass, NodePool and the aws-auth ConfigMap stored in a cluster",
		Long: "Read the cluster's EC2NodeClasses, NodePools and kube-system/aws-auth through the kubeconfig and\n" +
			"evaluate them with the rules of check: facts from AWS (--cluster-name), or from a snapshot (--facts).\n" +
			"Prints like check (-o text, json, sarif, junit, github or markdown; same exit codes, --fail-on and\n" +
			"--fail-on-empty).\n" +
			"--write-reports replaces the wgpolicyk8s.io/v1alpha2 reports: a ClusterPolicyReport for EC2NodeClasses\n" +
			"and NodePools, a PolicyReport in kube-system for aws-auth (kubectl get cpolr,polr -A).",
		Example: "  karpenter-guard audit --cluster-name prod-eks\n" +
			"  karpenter-guard audit --cluster-name prod-eks --write-reports -o json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAudit(cmd.Context(), cmd, g, o)
		},
	}
	o.live.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.factsFile, "facts", "", "ClusterFacts snapshot to use instead of AWS")
	cmd.Flags().StringVar(&o.crdsDir, "karpenter-crds", "", "directory of Karpenter CRDs to validate the stored objects against (default: the ones the cluster serves, else the built-in Karpenter "+crds.Release+" CRDs)")
	cmd.Flags().BoolVar(&o.writeReports, "write-reports", false, "write the wgpolicyk8s.io/v1alpha2 policy reports")
	addReportFlags(cmd.Flags(), g)
	cmd.Flags().StringVar(&o.mode, "mode", "", "the webhook's mode (enforce, warn or dry-run), which the reports record: in dry-run they mark what enforcement would deny; give the in-cluster webhook's when you write its reports (default: the GuardConfig's)")
	return cmd
}

func runAudit(ctx context.Context, cmd *cobra.Command, g *globalOptions, o *auditOptions) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := validateReportOptions(g); err != nil {
		return err
	}
	cat, cfg, err := g.catalog()
	if err != nil {
		return err
	}
	if err := applyMode(cfg, o.mode, g.configFile); err != nil {
		return err
	}
	kube, rc, err := o.live.kubeClient()
	if err != nil {
		return fmt.Errorf("audit reads the cluster: %w", err)
	}
	progress := newProgress(stderr)
	progress.say("reading the cluster's EC2NodeClasses, NodePools and aws-auth")
	objs, err := audit.List(ctx, kube)
	if err != nil {
		return err
	}
	switch {
	case o.crdsDir != "":
		if objs.CRDs, err = crds.Load(o.crdsDir); err != nil {
			return fmt.Errorf("--karpenter-crds: %w", err)
		}
	default:
		if objs.CRDs, err = audit.ClusterCRDs(ctx, kube); err != nil {
			fmt.Fprintf(stderr, "note: validating against the built-in Karpenter %s CRDs: %v\n", crds.Release, err)
		}
	}
	var p facts.Provider
	if o.factsFile != "" {
		snap, err := loadFactsFile(o.factsFile)
		if err != nil {
			return err
		}
		p = snap
	} else {
		lp, err := o.live.provider(ctx, cfg, kube, rc.Host, stderr)
		if err != nil {
			return err
		}
		defer lp.Close()
		p = lp
	}
	progress.say(fmt.Sprintf("evaluating %d objects", len(objs.All())))
	outcome := audit.RunWithProgress(ctx, cat, cfg, p, objs, progress.count)
	progress.done()
	set := &manifest.Set{Objects: objs.All(), Errors: outcome.Problems}
	rep := report.New(outcome.Result, set)
	rep.FailOnEmpty = g.report.failOnEmpty
	if rep.Empty() {
		rep.Summary.NothingChecked = nothingAudited(rc.Host)
	}
	// The findings are printed first: a report that cannot be written hides none of them.
	if err := write(stdout, rep, g, cat); err != nil {
		return err
	}
	if o.writeReports {
		if err := audit.WriteReports(ctx, kube, audit.Reports(outcome, cfg.Mode, time.Now())); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "reports written: kubectl get clusterpolicyreports,policyreports -A -l app.kubernetes.io/managed-by=karpenter-guard")
	}
	if code := exitCode(rep, g); code != 0 {
		return exitError{code}
	}
	return nil
}

// progress reports an audit's progress on a terminal (nothing elsewhere, so that logs and pipes stay
// clean).
type progress struct {
	out  *os.File
	last time.Time
}

func newProgress(w any) *progress {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(f) {
		return &progress{}
	}
	return &progress{out: f}
}

func (p *progress) say(msg string) {
	if p.out != nil {
		fmt.Fprintf(p.out, "\r\033[K%s…", msg)
	}
}

func (p *progress) count(done, total int) {
	if p.out == nil || (time.Since(p.last) < 100*time.Millisecond && done < total) {
		return
	}
	p.last = time.Now()
	width := 30
	filled := width * done / max(total, 1)
	fmt.Fprintf(p.out, "\r\033[Kevaluating [%s%s] %d/%d", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total)
}

func (p *progress) done() {
	if p.out != nil {
		fmt.Fprint(p.out, "\r\033[K")
	}
}
