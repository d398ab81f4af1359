package report

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// WriteGitHub writes the report as GitHub Actions workflow commands, which the runner turns into
// annotations on the files of a pull request: ::error for input errors and deny findings, ::warning
// for warn findings, ::notice for audit findings and, once per object, for the checks not evaluated
// (grouped: a step shows only the first ten annotations of each level, and the reasons are the same
// for every rule of an object). The last line is the text summary, which the log shows as is.
//
// Each finding is anchored at the line of its field and titled with its rule. Paths are written as
// given on the command line: GitHub resolves them from the repository root, where the Action runs.
// A run that checked nothing says so in a ::warning on the run (an ::error under FailOnEmpty), so
// that a green job with a mistyped path is not read as a clean one.
func (r *Report) WriteGitHub(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, e := range r.Errors {
		writeCommand(bw, "error", e.File, e.Line, "input error", e.Message)
	}
	for _, f := range r.Findings {
		msg := f.Object.String()
		if f.Field != "" {
			msg += " " + f.Field
		}
		msg += ": " + f.Message
		if f.Fix != "" {
			msg += "\nfix: " + f.Fix
		}
		writeCommand(bw, commandLevel(f.Action), f.Object.File, f.Line, f.Rule, msg)
	}
	for _, g := range notEvaluatedByObject(r.NotEvaluated) {
		var parts []string
		for _, c := range validators.GroupByCause(g.items) {
			parts = append(parts, strings.Join(c.Rules, ", ")+" ("+c.Cause+")")
		}
		msg := fmt.Sprintf("%s: not evaluated: %s", g.ref, strings.Join(parts, "; "))
		writeCommand(bw, "notice", g.ref.File, g.ref.Line, "not evaluated", msg)
	}
	if r.Summary.NothingChecked != "" {
		level := "warning"
		if r.emptyFails() {
			level = "error"
		}
		writeCommand(bw, level, "", 0, "nothing checked", r.Summary.NothingChecked)
	}
	bw.WriteString(r.summaryLine() + "\n")
	return bw.Flush()
}

// commandLevel maps a finding's action to a workflow command.
func commandLevel(a config.Action) string {
	switch a {
	case config.ActionDeny:
		return "error"
	case config.ActionWarn:
		return "warning"
	}
	return "notice"
}

// writeCommand writes one workflow command: ::level file=F,line=L,title=T::message. A file that is
// not one of the repository's (standard input, an object read from a cluster) is left out, so the
// annotation goes to the run instead of to a file that does not exist.
func writeCommand(w *bufio.Writer, level, file string, line int, title, message string) {
	var props []string
	if file != "" && file != "<stdin>" {
		props = append(props, "file="+escapeProperty(file))
		if line > 0 {
			props = append(props, "line="+strconv.Itoa(line))
		}
	}
	if title != "" {
		props = append(props, "title="+escapeProperty(title))
	}
	w.WriteString("::" + level)
	if len(props) > 0 {
		w.WriteString(" " + strings.Join(props, ","))
	}
	w.WriteString("::" + escapeData(message) + "\n")
}

// escapeData escapes a workflow command's message as the runner unescapes it: % first, then the
// line breaks, which would otherwise end the command (and let the rest of a message be read as
// commands of its own).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(printable(s))
}

// escapeProperty escapes a workflow command's property value: as escapeData, and the ':' and ','
// that separate the properties.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(printable(s))
}

// printable replaces the control characters other than line breaks (a binary input quoted in an
// error) with U+FFFD: a log or a page shows them as nothing, or worse.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\n' && r != '\r' && r != '\t') || r == 0x7f {
			return '\uFFFD'
		}
		return r
	}, s)
}

// objectNotEvaluated is the checks not evaluated on one object.
type objectNotEvaluated struct {
	ref   objects.Ref
	items []validators.NotEvaluated
}

// notEvaluatedByObject groups ns by object, in file and line order.
func notEvaluatedByObject(ns []validators.NotEvaluated) []objectNotEvaluated {
	var out []objectNotEvaluated
	index := map[objects.Ref]int{}
	for _, n := range ns {
		i, ok := index[n.Object]
		if !ok {
			i = len(out)
			index[n.Object] = i
			out = append(out, objectNotEvaluated{ref: n.Object})
		}
		out[i].items = append(out[i].items, n)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].ref, out[j].ref
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return out
}
