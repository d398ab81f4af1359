// Command karpenter-guard stops broken Karpenter configuration before it reaches an EKS cluster: it lints
// manifests (check), and, in later subcommands, serves an admission webhook and audits clusters.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// exitError carries an exit code through cobra.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// run executes the CLI and returns its exit code; tests call it directly.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommand(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	default:
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
}

// globalOptions are the flags every subcommand shares.
type globalOptions struct {
	configFile string
	output     string
	quiet      bool
	// report holds the flags of the commands that print a report (addReportFlags).
	report reportOptions
}

// catalog returns the rule catalog and the GuardConfig of --config (the defaults without it).
func (g *globalOptions) catalog() (*validators.Catalog, *config.Config, error) {
	return g.catalogFrom(g.configFile)
}

// catalogFrom returns the rule catalog and the GuardConfig of path (the defaults for "").
func (g *globalOptions) catalogFrom(path string) (*validators.Catalog, *config.Config, error) {
	cat := rules.Default()
	if path == "" {
		return cat, config.Default(), nil
	}
	cfg, err := config.LoadFile(path, cat.IDs())
	return cat, cfg, err
}

func newRootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "karpenter-guard",
		Short: "Stop broken Karpenter configuration before it reaches an EKS cluster",
		Long: "karpenter-guard checks Karpenter EC2NodeClasses, NodePools and the aws-auth ConfigMap for the\n" +
			"mistakes that make nodes launch and never join, and says exactly how to fix each one.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	setVersionFlag(root)
	pf := root.PersistentFlags()
	pf.StringVar(&g.configFile, "config", "", "GuardConfig file (rule actions, AMI owners, AWS settings); check and facts export -f default to the nearest .karpenter-guard/config.yaml above the paths given, up to the repository root")
	pf.StringVarP(&g.output, "output", "o", "text", "output format: text or json; check and audit also sarif, junit, github (workflow commands) or markdown; rules also markdown")
	pf.BoolVar(&g.quiet, "quiet", false, "print only deny findings and errors (text output)")
	root.AddCommand(newCheckCommand(g), newServeCommand(g), newAuditCommand(g), newFactsCommand(g), newRulesCommand(g), newVersionCommand(g))
	return root
}
