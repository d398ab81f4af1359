package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/karpenter-guard/karpenter-guard/fix"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/report"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// reportFormats are the values of -o for check and audit.
var reportFormats = []string{"text", "json", "sarif", "junit", "github", "markdown"}

// reportOptions are the flags of the commands that print a report (check and audit).
type reportOptions struct {
	failOn  string
	noColor bool
	// failOnEmpty makes a run that checked no EC2NodeClass, NodePool or aws-auth ConfigMap exit 2.
	failOnEmpty bool
	// files are the --report-file values, FORMAT=PATH.
	files []string

	// The flags as validateReportOptions parsed them, once, before the run.
	parsedFailOn report.FailOn
	parsedFiles  []reportFile
}

// addReportFlags adds the report flags to a command that prints a report.
func addReportFlags(f *pflag.FlagSet, g *globalOptions) {
	f.StringVar(&g.report.failOn, "fail-on", string(report.FailOnDeny), "findings that make the run exit 1: deny, warn (deny and warn findings) or never")
	f.BoolVar(&g.report.failOnEmpty, "fail-on-empty", false, "exit 2 when there is no EC2NodeClass, NodePool or aws-auth ConfigMap to check (a path that holds none is likely a mistake), instead of passing with a note")
	f.BoolVar(&g.report.noColor, "no-color", false, "no colours in the text output (also when NO_COLOR is set; colours are only ever used on a terminal)")
	f.StringArrayVar(&g.report.files, "report-file", nil, "also write the report as FORMAT to PATH, given as FORMAT=PATH (e.g. sarif=results.sarif); repeatable, so one run feeds several tools")
}

// reportFile is one --report-file.
type reportFile struct{ format, path string }

// validateReportOptions checks -o, --fail-on and --report-file before any work is done, and keeps
// the parsed --fail-on and --report-file values in g.report for write and exitCode.
func validateReportOptions(g *globalOptions) error {
	failOn, files, err := parseReportOptions(g)
	if err != nil {
		return err
	}
	g.report.parsedFailOn, g.report.parsedFiles = failOn, files
	return nil
}

func parseReportOptions(g *globalOptions) (report.FailOn, []reportFile, error) {
	if !isReportFormat(g.output) {
		return "", nil, fmt.Errorf("unknown output %q: expected %s", g.output, formatList())
	}
	failOn, err := report.ParseFailOn(g.report.failOn)
	if err != nil {
		return "", nil, err
	}
	var files []reportFile
	for _, v := range g.report.files {
		format, path, ok := strings.Cut(v, "=")
		switch {
		case !ok || path == "":
			return "", nil, fmt.Errorf("--report-file %q: expected FORMAT=PATH, e.g. sarif=results.sarif", v)
		case !isReportFormat(format):
			return "", nil, fmt.Errorf("--report-file %q: unknown format %q: expected %s", v, format, formatList())
		}
		if err := fix.CheckReplaceable(path); err != nil {
			return "", nil, reportFileError(path, err)
		}
		if err := manifest.WritableInside(path); err != nil {
			return "", nil, fmt.Errorf("--report-file %s: %w", path, err)
		}
		files = append(files, reportFile{format: format, path: path})
	}
	return failOn, files, nil
}

func isReportFormat(s string) bool {
	for _, f := range reportFormats {
		if s == f {
			return true
		}
	}
	return false
}

func formatList() string {
	return strings.Join(reportFormats[:len(reportFormats)-1], ", ") + " or " + reportFormats[len(reportFormats)-1]
}

// write prints the report on w in the -o format, then writes every --report-file. The flags were
// validated by validateReportOptions.
func write(w io.Writer, rep *report.Report, g *globalOptions, cat *validators.Catalog) error {
	failOn, files := g.report.parsedFailOn, g.report.parsedFiles
	color := !g.report.noColor && isTerminal(w)
	if err := render(w, g.output, rep, cat, failOn, report.TextOptions{Color: color, Quiet: g.quiet}); err != nil {
		return err
	}
	for _, f := range files {
		if err := writeReportFile(f, rep, cat, failOn); err != nil {
			return err
		}
	}
	return nil
}

// writeReportFile writes one --report-file, atomically (a reader never sees half a report, and a
// failed run leaves the previous one); its text output has no colours and is never quiet.
func writeReportFile(f reportFile, rep *report.Report, cat *validators.Catalog, failOn report.FailOn) error {
	var buf bytes.Buffer
	if err := render(&buf, f.format, rep, cat, failOn, report.TextOptions{}); err != nil {
		return fmt.Errorf("--report-file %s: %w", f.path, err)
	}
	if err := fix.ReplaceFile(f.path, buf.Bytes(), 0o644); err != nil {
		return reportFileError(f.path, err)
	}
	return nil
}

// reportFileError words a --report-file that cannot be written: a missing directory, a symbolic link
// (never written through: CI runs on pull requests, and a committed link would turn the report into a
// write of a file elsewhere), anything else.
func reportFileError(path string, err error) error {
	switch {
	case errors.Is(err, fix.ErrSymlink):
		return fmt.Errorf("--report-file %s: it is a symbolic link, which karpenter-guard does not write through: remove the link or write the report elsewhere", path)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--report-file %s: the directory %s does not exist: create it first", path, filepath.Dir(path))
	}
	return fmt.Errorf("--report-file %s: %w", path, err)
}

func render(w io.Writer, format string, rep *report.Report, cat *validators.Catalog, failOn report.FailOn, text report.TextOptions) error {
	switch format {
	case "json":
		return rep.WriteJSON(w)
	case "sarif":
		return rep.WriteSARIF(w, cat, currentBuild().Version)
	case "junit":
		return rep.WriteJUnit(w, report.JUnitOptions{FailOn: failOn})
	case "github":
		return rep.WriteGitHub(w)
	case "markdown":
		return rep.WriteMarkdown(w)
	}
	return rep.WriteText(w, text)
}

// exitCode is the exit code of a run that printed rep: 2 on input errors, 1 when a finding fails
// the run under --fail-on, else 0.
func exitCode(rep *report.Report, g *globalOptions) int {
	return rep.ExitCodeFor(g.report.parsedFailOn)
}

// isTerminal reports whether w is a terminal that wants colour (NO_COLOR unset or empty, as
// no-color.org asks).
func isTerminal(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
