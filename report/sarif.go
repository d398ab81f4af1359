package report

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// InformationURI is where SARIF viewers link for the tool.
const InformationURI = "https://github.com/karpenter-guard/karpenter-guard"

// WriteSARIF writes the report as SARIF 2.1.0: rule metadata from the catalog, one result per finding
// at the file and line of its field, and tool execution notifications for input errors (level error)
// and for checks not evaluated (level note, associated with the rule, the reason as the message):
// a code scanning view then shows what was not checked instead of reading silence as a pass. A run
// that checked nothing has a notification saying so (level warning; error under FailOnEmpty, and the
// invocation is then not successful).
func (r *Report) WriteSARIF(w io.Writer, cat *validators.Catalog, version string) error {
	run := sarif.NewRunWithInformationURI("karpenter-guard", InformationURI)
	run.Tool.Driver.WithVersion(version)
	for _, rule := range cat.Rules() {
		d := run.AddRule(rule.ID).
			WithName(rule.ID).
			WithShortDescription(sarif.NewMultiformatMessageString().WithText(rule.Summary)).
			WithFullDescription(sarif.NewMultiformatMessageString().WithText(rule.Doc)).
			WithHelpURI(InformationURI + "/blob/main/docs/rules.md#" + rule.ID)
		d.WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(level(rule.DefaultAction)))
	}
	for _, f := range r.Findings {
		text := f.Message
		if f.Fix != "" {
			text += " Fix: " + f.Fix
		}
		line := f.Line
		if line < 1 {
			line = 1
		}
		res := run.CreateResultForRule(f.Rule).
			WithLevel(level(f.Action)).
			WithMessage(sarif.NewTextMessage(text))
		res.WithLocations([]*sarif.Location{sarif.NewLocationWithPhysicalLocation(
			sarif.NewPhysicalLocation().
				WithArtifactLocation(sarif.NewSimpleArtifactLocation(filepath.ToSlash(f.Object.File))).
				WithRegion(sarif.NewSimpleRegion(line, line)),
		)})
	}
	inv := sarif.NewInvocation().WithExecutionSuccessful(len(r.Errors) == 0 && !r.emptyFails())
	if r.Summary.NothingChecked != "" {
		lvl := sarif.LevelWarning
		if r.emptyFails() {
			lvl = sarif.LevelError
		}
		inv.AddToolExecutionNotification(sarif.NewNotification().WithLevel(lvl).WithMessage(sarif.NewTextMessage("nothing checked: " + r.Summary.NothingChecked)))
	}
	for _, e := range r.Errors {
		n := sarif.NewNotification().WithLevel("error").WithMessage(sarif.NewTextMessage(e.Error()))
		if e.File != "" && e.File != "<stdin>" {
			line := max(e.Line, 1)
			n.WithLocations([]*sarif.Location{sarif.NewLocationWithPhysicalLocation(
				sarif.NewPhysicalLocation().
					WithArtifactLocation(sarif.NewSimpleArtifactLocation(filepath.ToSlash(e.File))).
					WithRegion(sarif.NewSimpleRegion(line, line)),
			)})
		}
		inv.AddToolExecutionNotification(n)
	}
	index := map[string]int{}
	for i, rule := range cat.Rules() {
		index[rule.ID] = i
	}
	for _, ne := range r.NotEvaluated {
		ref := sarif.NewReportingDescriptorReference().WithID(ne.Rule)
		if i, ok := index[ne.Rule]; ok {
			ref.WithIndex(i)
		}
		n := sarif.NewNotification().
			WithLevel(sarif.LevelNote).
			WithAssociatedRule(ref).
			WithMessage(sarif.NewTextMessage(fmt.Sprintf("%s not evaluated on %s: %s", ne.Rule, ne.Object, ne.Reason)))
		if loc := objectLocation(ne.Object); loc != nil {
			n.WithLocations([]*sarif.Location{loc})
		}
		inv.AddToolExecutionNotification(n)
	}
	run.AddInvocation(inv)
	rep := sarif.NewReport()
	rep.AddRun(run)
	return rep.PrettyWrite(w)
}

// objectLocation is where an object starts in its file, nil for an object read from a cluster or
// standard input (no file a viewer could open).
func objectLocation(ref objects.Ref) *sarif.Location {
	if ref.File == "" || ref.File == "<stdin>" {
		return nil
	}
	line := max(ref.Line, 1)
	return sarif.NewLocationWithPhysicalLocation(
		sarif.NewPhysicalLocation().
			WithArtifactLocation(sarif.NewSimpleArtifactLocation(filepath.ToSlash(ref.File))).
			WithRegion(sarif.NewSimpleRegion(line, line)),
	)
}

func level(a config.Action) string {
	switch a {
	case config.ActionDeny:
		return "error"
	case config.ActionWarn:
		return "warning"
	}
	return "note"
}
