package report

import (
	"io"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// MarkdownMaxFindings caps the rows of the Markdown findings table: GitHub refuses a job summary
// larger than 1 MiB, and a table of thousands of rows is read by nobody. The rest are counted.
const MarkdownMaxFindings = 500

// WriteMarkdown writes the report as GitHub-flavoured Markdown, for a job summary
// ($GITHUB_STEP_SUMMARY) or a merge request comment: the summary line, a table of findings (deny
// first), the input errors and, folded, the checks not evaluated grouped by cause.
func (r *Report) WriteMarkdown(w io.Writer) error {
	p := &printer{w: w}
	p.printf("## karpenter-guard\n\n%s\n\n", r.summaryLine())
	if len(r.Errors) > 0 {
		p.printf("### Input errors\n\n")
		for _, e := range r.Errors {
			p.printf("- `%s`: %s\n", mdCode(location(e.File, e.Line)), mdText(e.Message))
		}
		p.printf("\n")
	}
	if len(r.Findings) > 0 {
		p.printf("| Action | Rule | Object | Where | Finding |\n|---|---|---|---|---|\n")
		shown := 0
		for _, a := range []config.Action{config.ActionDeny, config.ActionWarn, config.ActionAudit} {
			for _, f := range r.Findings {
				if f.Action != a || shown >= MarkdownMaxFindings {
					continue
				}
				shown++
				action := string(f.Action)
				if f.Action == config.ActionDeny {
					action = "**deny**"
				}
				where := "`" + mdCode(location(f.Object.File, f.Line)) + "`"
				if f.Field != "" {
					where += "<br>`" + mdCode(f.Field) + "`"
				}
				text := mdText(f.Message)
				if f.Fix != "" {
					text += "<br>**fix:** " + mdText(f.Fix)
				}
				p.printf("| %s | `%s` | %s | %s | %s |\n", action, f.Rule, mdText(f.Object.String()), where, text)
			}
		}
		if rest := len(r.Findings) - shown; rest > 0 {
			p.printf("\n%d more findings are not shown here: the job log and the SARIF results have them all.\n", rest)
		}
		p.printf("\n")
	}
	if len(r.NotEvaluated) > 0 {
		p.printf("<details><summary>%d checks not evaluated</summary>\n\n", len(r.NotEvaluated))
		for _, g := range validators.GroupByCause(r.NotEvaluated) {
			p.printf("- %s: %s\n", mdText(g.Cause), mdText(strings.Join(g.Rules, ", ")))
		}
		p.printf("\n</details>\n")
	}
	return p.err
}

// mdText escapes text for a cell of a Markdown table: the pipe ends a cell, a line break ends the
// row, and HTML would be rendered.
func mdText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", `\|`, "\r", "", "\n", "<br>").Replace(printable(s))
}

// mdCode makes s safe inside a code span of a table cell: a backquote would end the span, a pipe the
// cell (GitHub splits cells before it reads code spans).
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "|", `\|`, "\n", " ").Replace(s)
}
