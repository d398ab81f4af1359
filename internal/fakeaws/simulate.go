package fakeaws

import (
	"encoding/xml"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// SimulatePrincipalPolicy (query protocol): PolicySourceArn, ActionNames.member.N, ResourceArns.member.N
// (default "*"), ContextEntries.member.N.{ContextKeyName, ContextKeyType, ContextKeyValues.member.M},
// MaxItems and Marker. The answer has one EvaluationResults member per action and resource, actions
// outer. Each question is answered, in this order, by the snapshot's simulations entry for exactly that
// question (principal, action, resource, context: facts.SimulationQuestion.Key), so that the snapshot
// and the live path answer alike; else by evaluating the principal's policies (WithPolicies, policy.go);
// else, for a principal without policies, implicitDeny. Without a simulations section and without
// policies the fake cannot know any answer, and denies the call.

type iamEvaluationResult struct {
	EvalActionName       string
	EvalResourceName     string
	EvalDecision         string
	MatchedStatements    members[iamStatement]
	MissingContextValues members[string]
	// ResourceSpecificResults repeats the answer for the resource when the call named resources: IAM
	// reports missing context values there in that case.
	ResourceSpecificResults *members[iamResourceResult] `xml:",omitempty"`
}

type iamResourceResult struct {
	EvalResourceName     string
	EvalResourceDecision string
	MatchedStatements    members[iamStatement]
	MissingContextValues members[string]
}

type iamStatement struct {
	SourcePolicyID   string `xml:"SourcePolicyId"`
	SourcePolicyType string
	StartPosition    iamPosition
	EndPosition      iamPosition
}

type iamPosition struct {
	Line   int
	Column int
}

// contextKeyTypes are the ContextKeyType values IAM accepts; a list type takes any number of values.
var contextKeyTypes = map[string]bool{
	"string": false, "stringList": true, "numeric": false, "numericList": true, "boolean": false,
	"booleanList": true, "ip": false, "ipList": true, "binary": false, "binaryList": true,
	"date": false, "dateList": true,
}

var contextParamRE = regexp.MustCompile(`^ContextEntries\.member\.(\d+)\.(ContextKeyName|ContextKeyType|ContextKeyValues\.member\.(\d+))$`)

// iamARNRE is the shape of an IAM principal ARN IAM accepts as PolicySourceArn.
var iamARNRE = regexp.MustCompile(`^arn:[a-z0-9-]+:iam::\d{12}:(role|user|group)/.+$`)

func (iamAPI) simulatePrincipalPolicy(w http.ResponseWriter, r *request, wd *world) error {
	form := r.Form
	for k := range form {
		for _, unsupported := range []string{"PolicyInputList", "PermissionsBoundaryPolicyInputList", "PolicyExclusionList", "ResourcePolicy", "ResourceOwner", "CallerArn", "ResourceHandlingOption"} {
			if k == unsupported || strings.HasPrefix(k, unsupported+".") {
				return badRequest("InvalidInput", "fakeaws does not model SimulatePrincipalPolicy's %s", unsupported)
			}
		}
	}
	principal := form.Get("PolicySourceArn")
	if principal == "" {
		return badRequest("ValidationError", "1 validation error detected: Value null at 'policySourceArn' failed to satisfy constraint: Member must not be null")
	}
	actions := memberList(form, "ActionNames")
	if len(actions) == 0 {
		return badRequest("ValidationError", "1 validation error detected: Value null at 'actionNames' failed to satisfy constraint: Member must not be null")
	}
	resources := memberList(form, "ResourceArns")
	named := len(resources) > 0
	if !named {
		resources = []string{"*"}
	}
	ctx, err := contextEntries(form)
	if err != nil {
		return err
	}
	size, offset, err := pageParams(r, "iam:SimulatePrincipalPolicy")
	if err != nil {
		return err
	}
	if wd.simulations == nil && len(wd.policies) == 0 {
		return denied(r, wd)
	}
	if !iamARNRE.MatchString(principal) {
		return badRequest("InvalidInput", "ARN %s is not valid.", principal)
	}
	if !wd.principals[principal] {
		kind, name := principalName(principal)
		return &apiError{status: http.StatusNotFound, code: "NoSuchEntity", message: "The " + kind + " with name " + name + " cannot be found."}
	}

	lower := make(map[string][]string, len(ctx))
	for k, v := range ctx {
		lower[strings.ToLower(k)] = v
	}
	all := make([]iamEvaluationResult, 0, len(actions)*len(resources))
	for _, action := range actions {
		for _, res := range resources {
			a := wd.simulate(facts.SimulationQuestion{Principal: principal, Action: action, Resource: res, Context: ctx}, lower)
			out := iamEvaluationResult{EvalActionName: action, EvalResourceName: res, EvalDecision: a.decision,
				MatchedStatements: members[iamStatement]{Member: statementsOf(a.matched)}, MissingContextValues: members[string]{Member: a.missing}}
			if named {
				out.ResourceSpecificResults = &members[iamResourceResult]{Member: []iamResourceResult{{EvalResourceName: res, EvalResourceDecision: a.decision,
					MatchedStatements: out.MatchedStatements, MissingContextValues: out.MissingContextValues}}}
			}
			all = append(all, out)
		}
	}
	got, next := page("iam:SimulatePrincipalPolicy", all, offset, size)
	return writeQuery(w, r, iamNamespace, struct {
		XMLName           xml.Name `xml:"SimulatePrincipalPolicyResult"`
		EvaluationResults members[iamEvaluationResult]
		IsTruncated       bool
		Marker            string `xml:",omitempty"`
	}{EvaluationResults: members[iamEvaluationResult]{Member: got}, IsTruncated: next != "", Marker: next})
}

// simulate answers one question: the snapshot's recorded answer, else the principal's policies, else
// the implicit deny of a principal without any. lower is q's context with lower-case keys.
func (wd *world) simulate(q facts.SimulationQuestion, lower map[string][]string) simAnswer {
	if sim := wd.simulations[q.Key()]; sim != nil {
		return simAnswer{decision: sim.Decision, missing: sim.MissingContextValues}
	}
	if pp := wd.policies[q.Principal]; pp != nil {
		return evaluate(pp.identity, pp.boundary, simQuestion{action: q.Action, resource: q.Resource, context: lower})
	}
	return simAnswer{decision: facts.DecisionImplicitDeny}
}

func statementsOf(ms []matchedStatement) []iamStatement {
	out := make([]iamStatement, len(ms))
	for i, m := range ms {
		out[i] = iamStatement{SourcePolicyID: m.policyID, SourcePolicyType: m.policyType,
			StartPosition: iamPosition{Line: m.start.line, Column: m.start.column},
			EndPosition:   iamPosition{Line: m.end.line, Column: m.end.column}}
	}
	return out
}

// principalName returns the kind ("role", "user") and name of an IAM principal ARN.
func principalName(arn string) (string, string) {
	res := arn[strings.LastIndex(arn, ":")+1:]
	kind, path, _ := strings.Cut(res, "/")
	return kind, path[strings.LastIndex(path, "/")+1:]
}

// memberList reads a query-protocol list, Name.member.1, Name.member.2, …, in index order.
func memberList(form url.Values, name string) []string {
	type item struct {
		i int
		v string
	}
	var items []item
	prefix := name + ".member."
	for k, vs := range form {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			if i, err := strconv.Atoi(rest); err == nil && len(vs) > 0 {
				items = append(items, item{i, vs[0]})
			}
		}
	}
	slices.SortFunc(items, func(a, b item) int { return a.i - b.i })
	out := make([]string, len(items))
	for n, it := range items {
		out[n] = it.v
	}
	return out
}

// contextEntries reads ContextEntries into a context: key (as the caller spelled it first) to values.
// Keys repeated, or spelled in other cases, merge, as IAM compares condition keys case-insensitively.
func contextEntries(form url.Values) (map[string][]string, error) {
	type entry struct {
		name, typ string
		values    map[int]string
	}
	entries := map[int]*entry{}
	for k, vs := range form {
		if !strings.HasPrefix(k, "ContextEntries.") {
			continue
		}
		m := contextParamRE.FindStringSubmatch(k)
		if m == nil {
			return nil, badRequest("ValidationError", "unknown parameter %s", k)
		}
		n, _ := strconv.Atoi(m[1])
		e := entries[n]
		if e == nil {
			e = &entry{values: map[int]string{}}
			entries[n] = e
		}
		switch m[2] {
		case "ContextKeyName":
			e.name = vs[0]
		case "ContextKeyType":
			e.typ = vs[0]
		default:
			i, _ := strconv.Atoi(m[3])
			e.values[i] = vs[0]
		}
	}
	ctx := map[string][]string{}
	spelled := map[string]string{} // lower-case key → the first spelling
	for _, n := range slices.Sorted(maps.Keys(entries)) {
		e := entries[n]
		if e.name == "" {
			return nil, badRequest("InvalidInput", "ContextEntries.member.%d has no ContextKeyName", n)
		}
		if e.typ == "" {
			e.typ = "string"
		}
		list, ok := contextKeyTypes[e.typ]
		if !ok {
			return nil, badRequest("ValidationError", "1 validation error detected: Value '%s' at 'contextEntries.%d.member.contextKeyType' failed to satisfy constraint: Member must satisfy enum value set: [string, stringList, numeric, numericList, boolean, booleanList, ip, ipList, binary, binaryList, date, dateList]", e.typ, n)
		}
		var values []string
		for _, i := range slices.Sorted(maps.Keys(e.values)) {
			values = append(values, e.values[i])
		}
		if !list && len(values) > 1 {
			return nil, badRequest("InvalidInput", "Context key %s of type %s takes one value, got %d.", e.name, e.typ, len(values))
		}
		for _, v := range values {
			if err := checkContextValue(e.typ, v); err != nil {
				return nil, badRequest("InvalidInput", "Context key %s of type %s: %v", e.name, e.typ, err)
			}
		}
		key := e.name
		if first, ok := spelled[strings.ToLower(key)]; ok {
			key = first
		} else {
			spelled[strings.ToLower(key)] = key
		}
		ctx[key] = append(ctx[key], values...)
	}
	return ctx, nil
}

// checkContextValue checks a context value against its type, as the simulator does.
func checkContextValue(typ, v string) error {
	switch strings.TrimSuffix(typ, "List") {
	case "numeric":
		_, err := parseNumber(v)
		return err
	case "boolean":
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return strconv.ErrSyntax
		}
	case "ip":
		if _, err := netip.ParseAddr(v); err != nil {
			return err
		}
	case "date":
		_, err := parseDate(v)
		return err
	}
	return nil
}
