package webhook

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/internal/wording"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// Limits of what the API server and its clients show.
const (
	maxMessage    = 4096 // a denial message
	maxWarning    = 255  // one warning (kubectl prints each as a line)
	maxAnnotation = 1024 // one audit annotation value
)

// verdict is a review's outcome once the mode, the per-rule actions and aws.onError are applied.
type verdict struct {
	mode config.Mode
	// deny and warn are the findings that deny or warn; audit the ones only recorded.
	deny, warn, audit []validators.Finding
	// preexisting are deny findings on fields an UPDATE does not change, warned instead.
	preexisting []validators.Finding
	// unverified groups the rules that could not run by cause ("AWS throttled iam:GetRole").
	unverified []validators.CauseGroup
	// denyUnverified is set when aws.onError is deny and something could not be verified (mode
	// enforce); warnUnverified when it is to be warned about (onError warn, or deny in mode warn).
	denyUnverified, warnUnverified bool
	notes                          []string
	skipped                        []validators.Skipped
}

// decide applies the mode (enforce, warn, dry-run), the actions and aws.onError to an evaluation.
func decide(cfg *config.Config, rv *review, res validators.Result) *verdict {
	v := &verdict{mode: cfg.Mode, notes: res.Notes, skipped: res.Skipped}
	for _, f := range res.Findings {
		switch {
		case f.Action == config.ActionAudit || cfg.Mode == config.ModeDryRun:
			v.audit = append(v.audit, f)
		case f.Action == config.ActionWarn || cfg.Mode == config.ModeWarn:
			v.warn = append(v.warn, f)
		case unchangedByUpdate(rv, f):
			v.preexisting = append(v.preexisting, f)
		default:
			v.deny = append(v.deny, f)
		}
	}
	v.unverified = validators.GroupByCause(res.NotEvaluated)
	// aws.onError: deny refuses only what makes or changes an EC2NodeClass or NodePool spec: never an
	// aws-auth edit (aws-auth fails open), a deletion or metadata churn.
	v.denyUnverified = len(v.unverified) > 0 && cfg.AWS.OnError == config.OnErrorDeny && cfg.Mode == config.ModeEnforce &&
		rv.kind != validators.KindAWSAuth && rv.changesSpec()
	v.warnUnverified = len(v.unverified) > 0 && !v.denyUnverified && cfg.AWS.OnError != config.OnErrorAllow
	return v
}

// unchangedByUpdate reports whether f is about a field an UPDATE leaves as it was: karpenter-guard never
// blocks an edit for a problem the edit did not make (the warning and the audit still report it). When
// the stored object cannot be read at all, no finding can be told new, and none blocks: the stored
// object is never the reason an edit is refused.
func unchangedByUpdate(rv *review, f validators.Finding) bool {
	if rv.req.Operation != admissionv1.Update || rv.kind == validators.KindAWSAuth {
		return false
	}
	if rv.oldValues == nil {
		return true
	}
	path := objects.ParsePath(f.Field)
	if len(path) == 0 {
		return false
	}
	return rv.unchanged(path)
}

// unchanged reports whether the field at path holds the same value before and after an UPDATE.
func (rv *review) unchanged(path []any) bool {
	return reflect.DeepEqual(rv.oldValues.Value(path...), rv.objValues.Value(path...))
}

// response renders the verdict as the API server expects it.
func (v *verdict) response(rv *review) admission.Response {
	var resp admission.Response
	if len(v.deny) > 0 || v.denyUnverified {
		resp = admission.Denied(v.denial(rv))
	} else {
		resp = admission.Allowed("")
	}
	if v.mode != config.ModeDryRun {
		resp.Warnings = v.warnings()
	}
	resp.AuditAnnotations = v.annotations()
	return resp
}

// denial is the denial message: a first line that stands alone (GitOps tools show only it), then each
// finding with its fix, under maxMessage.
func (v *verdict) denial(rv *review) string {
	var lines []string
	head := fmt.Sprintf("karpenter-guard: %s denied: ", rv.ref())
	for i, f := range v.deny {
		line := fmt.Sprintf("[%s] %s", f.Rule, wording.OneLine(f.Message))
		if i == 0 {
			line = head + line
		}
		lines = append(lines, line)
		if f.Fix != "" {
			lines = append(lines, "  fix: "+strings.ReplaceAll(f.Fix, "\n", "\n       "))
		}
	}
	if v.denyUnverified {
		for _, u := range v.unverified {
			line := fmt.Sprintf("could not verify [%s]: %s (aws.onError: deny)", strings.Join(u.Rules, ", "), u.Cause)
			if len(lines) == 0 {
				line = head + line
			}
			lines = append(lines, line)
		}
	}
	return joinWithin(lines, maxMessage, func(left int) string {
		return fmt.Sprintf("… %d more lines: run karpenter-guard check on the manifest for all findings", left)
	})
}

// joinWithin joins lines with newlines, dropping the tail (and saying how much) past limit bytes.
func joinWithin(lines []string, limit int, more func(left int) string) string {
	var b strings.Builder
	for i, l := range lines {
		tail := ""
		if i < len(lines)-1 {
			tail = more(len(lines) - i - 1)
		}
		if b.Len() > 0 && b.Len()+1+len(l)+1+len(tail) > limit {
			b.WriteString("\n" + more(len(lines)-i))
			break
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(clip(l, limit-len(tail)-1))
	}
	return b.String()
}

// warnings are kubectl's "Warning:" lines: one per finding that warns, then what could not be verified
// and what the facts provider noted.
func (v *verdict) warnings() []string {
	var out []string
	for _, f := range v.warn {
		out = append(out, warning(f.Rule, f.Message))
	}
	for _, f := range v.preexisting {
		out = append(out, warning(f.Rule, "(not changed by this request) "+f.Message))
	}
	if v.warnUnverified {
		for _, u := range v.unverified {
			// The cause first: it is what an operator acts on; the full list is in the audit annotations.
			out = append(out, clip(fmt.Sprintf("[karpenter-guard] %s, so %s not verified: %s", u.Cause, wording.Plural(len(u.Rules), "check was", "checks were"), strings.Join(u.Rules, ", ")), maxWarning))
		}
	}
	for _, n := range v.notes {
		out = append(out, clip("[karpenter-guard] "+n, maxWarning))
	}
	return out
}

func warning(rule, msg string) string {
	return clip(fmt.Sprintf("[%s] %s", rule, wording.OneLine(msg)), maxWarning)
}

// annotations are the audit annotations: every finding with what was done about it, skips, what could
// not be verified. The API server prefixes each key with the webhook's name.
func (v *verdict) annotations() map[string]string {
	a := map[string]string{}
	add := func(key, val string) {
		if prev, ok := a[key]; ok {
			val = prev + "; " + val
		}
		a[key] = annotation(val)
	}
	v.eachTaken(func(f validators.Finding, t taken) {
		verb := t.action
		switch {
		case t.unchanged:
			verb += " (unchanged by this request)"
		case t.would:
			verb = "would " + verb
		}
		add(f.Rule, verb+": "+wording.OneLine(f.Message))
	})
	for _, s := range v.skipped {
		add(annotationKey("skipped", s.Rule), s.Reason)
	}
	for _, u := range v.unverified {
		add("unverified", strings.Join(u.Rules, ",")+": "+u.Cause)
	}
	if len(a) == 0 {
		return nil
	}
	return a
}

// taken is what a verdict did with one finding: the action ("deny" or "warn", or the rule's own
// action for a finding only recorded), and whether it is a deny warned about because the UPDATE left
// its field as stored (unchanged) or a recorded finding enforcement would have acted on (would).
type taken struct {
	action           string
	unchanged, would bool
}

// eachTaken calls fn with every finding of the verdict and what was done with it: denies, denies on
// unchanged fields, warnings, then the findings only recorded.
func (v *verdict) eachTaken(fn func(validators.Finding, taken)) {
	for _, f := range v.deny {
		fn(f, taken{action: "deny"})
	}
	for _, f := range v.preexisting {
		fn(f, taken{action: "warn", unchanged: true})
	}
	for _, f := range v.warn {
		fn(f, taken{action: "warn"})
	}
	for _, f := range v.audit {
		fn(f, taken{action: string(f.Action), would: v.wouldApply(f)})
	}
}

// wouldApply reports whether a finding recorded only (v.audit) is one enforcement would have acted on:
// a deny or warn in mode dry-run, not a rule whose action is audit.
func (v *verdict) wouldApply(f validators.Finding) bool {
	return v.mode == config.ModeDryRun && f.Action != config.ActionAudit
}

// annotationKey is a qualified-name key: "fixed.ami-selector-missing-owner".
func annotationKey(kind, rule string) string { return kind + "." + rule }

// clip cuts s to at most n bytes, marking the cut with "…": after the last whole word that fits, so a
// warning does not end mid-word, unless that would drop more than half the room (one overlong word, such
// as an ARN), where it cuts on a rune boundary instead.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	c := wording.Clip(s, n, "")
	body, ok := strings.CutSuffix(c, ellipsis)
	if !ok || body == "" {
		return c
	}
	// body is a prefix of s made valid UTF-8; the rune after it says whether the cut ends a word.
	rest := strings.ToValidUTF8(s, "\uFFFD")[len(body):]
	if r, _ := utf8.DecodeRuneInString(rest); !unicode.IsSpace(r) {
		i := strings.LastIndexFunc(body, unicode.IsSpace)
		if i < len(body)/2 {
			return c
		}
		body = body[:i]
	}
	if word := strings.TrimRightFunc(body, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(",;:", r) }); word != "" {
		return word + ellipsis
	}
	return c
}

// annotation clips an audit annotation's value to maxAnnotation, saying so: the audit log keeps every
// review's annotations, and a user's text (a skip reason, a userData line) can be of any length.
func annotation(s string) string {
	return wording.Clip(s, maxAnnotation, " (clipped: karpenter-guard check prints it whole)")
}
