package validators

import (
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// Finding is one problem a rule found in one object.
type Finding struct {
	Rule    string        `json:"rule"`
	Action  config.Action `json:"action"`
	Object  objects.Ref   `json:"object"`
	Field   string        `json:"field"`
	Message string        `json:"message"`
	// Fix is the exact change, as YAML or a command, with real names filled in ("" when there is none).
	Fix     string `json:"fix,omitempty"`
	Fixable bool   `json:"fixable"`

	// AtMost, when set, caps the finding's action: a rule whose action is deny gives this finding only
	// AtMost (warn) when the rule cannot say the object will fail, only that it may. Never raises it.
	AtMost config.Action `json:"-"`
	// Line is the file line of Field (the object's line when the field is absent).
	Line int `json:"-"`
	// Edits are the machine-applicable form of Fix; set when Fixable.
	Edits []Edit `json:"-"`
	// Source is the object the finding is about.
	Source *objects.Object `json:"-"`
}

// NotEvaluated records a rule that could not run on an object, and why.
type NotEvaluated struct {
	Rule   string      `json:"rule"`
	Object objects.Ref `json:"object"`
	// Reason is why, with the facts: "no facts: roles, instanceProfiles".
	Reason string `json:"reason"`
	// Causes are the reasons without the facts ("no facts", "AWS denied iam:GetRole …"), for
	// summaries that group rules by what silenced them.
	Causes []string `json:"-"`
}

// CauseList returns why the rule was not evaluated, without the facts: Causes, else Reason up to its
// facts (results decoded from JSON carry no Causes).
func (n NotEvaluated) CauseList() []string {
	if len(n.Causes) > 0 {
		return n.Causes
	}
	if i := strings.LastIndex(n.Reason, ": "); i >= 0 {
		return []string{n.Reason[:i]}
	}
	return []string{n.Reason}
}

// CauseGroup is one reason rules were not evaluated and the rules it silenced, sorted.
type CauseGroup struct {
	Cause string
	Rules []string
}

// GroupByCause groups not-evaluated rules by cause, in the order causes first appear: "AWS denied
// iam:GetRole …" then tells an operator which permission costs which checks.
func GroupByCause(ns []NotEvaluated) []CauseGroup {
	var groups []CauseGroup
	index := map[string]int{}
	for _, n := range ns {
		for _, c := range n.CauseList() {
			i, ok := index[c]
			if !ok {
				i = len(groups)
				index[c] = i
				groups = append(groups, CauseGroup{Cause: c})
			}
			if !slices.Contains(groups[i].Rules, n.Rule) {
				groups[i].Rules = append(groups[i].Rules, n.Rule)
			}
		}
	}
	for _, g := range groups {
		slices.Sort(g.Rules)
	}
	return groups
}

// Skipped records a rule an object opted out of with karpenter-guard.io/skip.
type Skipped struct {
	Rule   string      `json:"rule"`
	Object objects.Ref `json:"object"`
	Reason string      `json:"reason"`
}

// Passed records a rule that ran on an object and found nothing.
type Passed struct {
	Rule   string      `json:"rule"`
	Object objects.Ref `json:"object"`
}

// EditOp is the kind of a structural edit.
type EditOp string

// Edit operations on a mapping.
const (
	// EditSet replaces the value of Key (a scalar) with Value.
	EditSet EditOp = "set"
	// EditRename renames Key to NewKey, and replaces its value with Value when Value is set.
	EditRename EditOp = "rename"
	// EditDelete removes Key and its value.
	EditDelete EditOp = "delete"
	// EditAdd adds Key with Value at the end of the mapping.
	EditAdd EditOp = "add"
)

// Edit is one structural change to an object, expressed on its field paths so that it can be applied
// to a YAML file (preserving everything else) or turned into a JSON patch by the webhook.
type Edit struct {
	Object *objects.Object
	// Path leads from the object's root to the mapping the edit changes (strings and ints).
	Path   []any
	Op     EditOp
	Key    string
	NewKey string
	Value  *yaml.Node
}

// Scalar returns a plain string scalar node, for Edit values.
func Scalar(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}
