package fakeaws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// policyDoc is one IAM identity policy (or permissions boundary) parsed for the fake's policy evaluator,
// which answers SimulatePrincipalPolicy for principals given policies with WithPolicies. It is written by
// hand because no Go library evaluates IAM policies. It models: statements with Effect Allow and Deny;
// Action and NotAction (a string or a list; `*` and `?` wildcards; case-insensitive); Resource and
// NotResource (wildcards; case-sensitive); Condition blocks with the String (Equals, NotEquals,
// EqualsIgnoreCase, NotEqualsIgnoreCase, Like, NotLike), Numeric, Date, Bool, IpAddress/NotIpAddress,
// Arn (Equals, Like, NotEquals, NotLike) and Null operators, the ForAllValues:/ForAnyValue: qualifiers
// and the IfExists suffix, keys case-insensitive, several keys of an operator ANDed, several values ORed,
// several operators ANDed; and a key the request does not carry, as IAM does (the condition is false,
// true for a negated operator, ForAllValues or IfExists); explicit Deny wins, then an Allow that the
// permissions boundary also allows, else an implicit deny. A statement kept from applying only by keys
// the request lacks names them in the answer's missing context values, reported on denials as the
// simulator reports them.
//
// It does not model: resource-based policies (of roles, buckets, keys, queues), service control and
// resource control policies, session policies (of AssumeRole or of a Pod Identity association), the
// Principal and NotPrincipal elements (not allowed in identity policies: a document with them is refused),
// policy variables such as ${aws:username} (refused; only the ${*}, ${?} and ${$} escapes are read), the
// BinaryEquals operator (refused), the context keys IAM fills in itself (aws:CurrentTime,
// aws:SecureTransport, aws:PrincipalArn…: they are present only when the request's context entries name
// them), and the resource-type checks of the simulator (an action simulated on a resource of the wrong
// type is evaluated, not refused).
type policyDoc struct {
	id         string // SourcePolicyId in MatchedStatements
	sourceType string // SourcePolicyType
	text       string // the document as given, which GetRolePolicy and GetPolicyVersion return
	statements []statement
}

// statement is one statement of a policy.
type statement struct {
	deny        bool
	actions     []string // patterns
	notAction   bool
	resources   []string // patterns
	notResource bool
	conditions  []condition
	start, end  position // of the statement's braces in the document
}

// position is a 1-based line and column in a policy document.
type position struct{ line, column int }

// condition is one key of one condition operator: "StringEquals": {"aws:RequestedRegion": ["us-east-1"]}.
type condition struct {
	operator string // as written, for messages
	op       *operator
	set      string // "", "forallvalues" or "foranyvalue"
	ifExists bool
	key      string // as written
	values   []string
}

// operator is a condition operator without qualifier and IfExists: match is its positive form
// (StringEquals for StringNotEquals), which negated inverts.
type operator struct {
	name    string
	negated bool
	match   func(req, pol string) bool
	// check validates a policy value once, at load.
	check func(pol string) error
}

var operators = map[string]*operator{}

func init() {
	add := func(name string, negated bool, match func(req, pol string) bool, check func(string) error) {
		operators[strings.ToLower(name)] = &operator{name: name, negated: negated, match: match, check: check}
	}
	equals := func(req, pol string) bool { return req == unescapeVars(pol) }
	fold := func(req, pol string) bool { return strings.EqualFold(req, unescapeVars(pol)) }
	like := func(req, pol string) bool { return globMatch(pol, req, false) }
	add("StringEquals", false, equals, nil)
	add("StringNotEquals", true, equals, nil)
	add("StringEqualsIgnoreCase", false, fold, nil)
	add("StringNotEqualsIgnoreCase", true, fold, nil)
	add("StringLike", false, like, nil)
	add("StringNotLike", true, like, nil)
	add("ArnEquals", false, arnMatch, nil) // IAM compares ArnEquals like ArnLike, wildcards included
	add("ArnLike", false, arnMatch, nil)
	add("ArnNotEquals", true, arnMatch, nil)
	add("ArnNotLike", true, arnMatch, nil)
	add("Bool", false, fold, func(pol string) error {
		if !strings.EqualFold(pol, "true") && !strings.EqualFold(pol, "false") {
			return fmt.Errorf("value %q is not true or false", pol)
		}
		return nil
	})
	for _, c := range []struct {
		suffix  string
		negated bool
		cmp     func(int) bool
	}{
		{"Equals", false, func(c int) bool { return c == 0 }},
		{"NotEquals", true, func(c int) bool { return c == 0 }},
		{"LessThan", false, func(c int) bool { return c < 0 }},
		{"LessThanEquals", false, func(c int) bool { return c <= 0 }},
		{"GreaterThan", false, func(c int) bool { return c > 0 }},
		{"GreaterThanEquals", false, func(c int) bool { return c >= 0 }},
	} {
		add("Numeric"+c.suffix, c.negated, compareWith(parseNumber, c.cmp), checkWith(parseNumber))
		add("Date"+c.suffix, c.negated, compareWith(parseDate, c.cmp), checkWith(parseDate))
	}
	add("IpAddress", false, ipMatch, checkIP)
	add("NotIpAddress", true, ipMatch, checkIP)
}

// parsePolicy parses a policy document as IAM would accept it for an identity policy, and reports what
// the evaluator cannot model as an error rather than answer wrongly.
func parsePolicy(id, sourceType, doc string) (*policyDoc, error) {
	p := &policyDoc{id: id, sourceType: sourceType, text: doc}
	dec := json.NewDecoder(strings.NewReader(doc))
	var top struct {
		Version   string
		ID        string `json:"Id"`
		Statement json.RawMessage
	}
	dec.DisallowUnknownFields()
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("not a policy document: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("not a policy document: data after the JSON object")
	}
	if top.Version != "" && top.Version != "2012-10-17" && top.Version != "2008-10-17" {
		return nil, fmt.Errorf("Version %q: expected 2012-10-17", top.Version)
	}
	if top.ID != "" {
		p.id = top.ID
	}
	raw := bytes.TrimSpace(top.Statement)
	if len(raw) == 0 {
		return nil, errors.New("no Statement")
	}
	// Offsets, for positions: where the Statement value starts in doc.
	base := strings.Index(doc, string(raw))
	var elems []json.RawMessage
	var offsets []int
	if raw[0] == '[' {
		sub := json.NewDecoder(bytes.NewReader(raw))
		if _, err := sub.Token(); err != nil {
			return nil, fmt.Errorf("Statement: %w", err)
		}
		for sub.More() {
			var e json.RawMessage
			if err := sub.Decode(&e); err != nil {
				return nil, fmt.Errorf("Statement: %w", err)
			}
			elems = append(elems, e)
			offsets = append(offsets, base+int(sub.InputOffset())-len(e))
		}
		if len(elems) == 0 {
			return nil, errors.New("Statement is empty")
		}
	} else {
		elems, offsets = []json.RawMessage{raw}, []int{base}
	}
	for i, e := range elems {
		st, err := parseStatement(e)
		if err != nil {
			return nil, fmt.Errorf("Statement[%d]: %w", i, err)
		}
		st.start, st.end = positionAt(doc, offsets[i]), positionAt(doc, offsets[i]+len(e)-1)
		p.statements = append(p.statements, st)
	}
	return p, nil
}

// positionAt converts a byte offset of doc into a line and column.
func positionAt(doc string, off int) position {
	off = min(max(off, 0), len(doc))
	line := strings.Count(doc[:off], "\n") + 1
	return position{line: line, column: utf8.RuneCountInString(doc[strings.LastIndexByte(doc[:off], '\n')+1:off]) + 1}
}

func parseStatement(raw json.RawMessage) (statement, error) {
	var s struct {
		Sid          string
		Effect       string
		Action       json.RawMessage
		NotAction    json.RawMessage
		Resource     json.RawMessage
		NotResource  json.RawMessage
		Condition    map[string]map[string]json.RawMessage
		Principal    json.RawMessage
		NotPrincipal json.RawMessage
	}
	if len(raw) == 0 || raw[0] != '{' {
		return statement{}, fmt.Errorf("expected a statement object, got %s", raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return statement{}, fmt.Errorf("%s: unexpected JSON %s", ute.Field, ute.Value)
		}
		return statement{}, err
	}
	var st statement
	switch s.Effect {
	case "Allow":
	case "Deny":
		st.deny = true
	default:
		return st, fmt.Errorf("Effect %q: expected Allow or Deny", s.Effect)
	}
	if s.Principal != nil || s.NotPrincipal != nil {
		return st, errors.New("Principal and NotPrincipal belong in resource policies, not in an identity policy")
	}
	var err error
	if st.actions, st.notAction, err = either(s.Action, s.NotAction, "Action"); err != nil {
		return st, err
	}
	if st.resources, st.notResource, err = either(s.Resource, s.NotResource, "Resource"); err != nil {
		return st, err
	}
	for _, r := range st.resources {
		if err := checkVars(r); err != nil {
			return st, fmt.Errorf("Resource %q: %w", r, err)
		}
	}
	for opName, keys := range s.Condition {
		op, set, ifExists, err := parseOperator(opName)
		if err != nil {
			return st, fmt.Errorf("Condition: %w", err)
		}
		if len(keys) == 0 {
			return st, fmt.Errorf("Condition %s: no condition key", opName)
		}
		for key, rawValues := range keys {
			values, err := conditionValues(rawValues)
			if err != nil {
				return st, fmt.Errorf("Condition %s %s: %w", opName, key, err)
			}
			for _, v := range values {
				if err := checkVars(v); err != nil {
					return st, fmt.Errorf("Condition %s %s value %q: %w", opName, key, v, err)
				}
				if op.check != nil {
					if err := op.check(v); err != nil {
						return st, fmt.Errorf("Condition %s %s: %w", opName, key, err)
					}
				}
				if op.name == "Null" && !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
					return st, fmt.Errorf("Condition Null %s: value %q is not true or false", key, v)
				}
			}
			st.conditions = append(st.conditions, condition{operator: opName, op: op, set: set, ifExists: ifExists, key: key, values: values})
		}
	}
	// The JSON object's order is lost in the map: sort, so that missing keys come in a stable order.
	slices.SortFunc(st.conditions, func(a, b condition) int {
		return strings.Compare(a.operator+"\x00"+strings.ToLower(a.key), b.operator+"\x00"+strings.ToLower(b.key))
	})
	return st, nil
}

// nullOperator is Null: whether the key is absent (handled apart: it looks at presence, not values).
var nullOperator = &operator{name: "Null"}

// parseOperator splits "ForAnyValue:StringLikeIfExists" into the operator, the set qualifier and IfExists.
func parseOperator(name string) (*operator, string, bool, error) {
	base := name
	set := ""
	if q, rest, ok := strings.Cut(name, ":"); ok {
		set = strings.ToLower(q)
		if set != "forallvalues" && set != "foranyvalue" {
			return nil, "", false, fmt.Errorf("operator %q: unknown qualifier %q (expected ForAllValues or ForAnyValue)", name, q)
		}
		base = rest
	}
	ifExists := false
	if len(base) > len("IfExists") && strings.EqualFold(base[len(base)-len("IfExists"):], "IfExists") {
		ifExists, base = true, base[:len(base)-len("IfExists")]
	}
	if strings.EqualFold(base, "Null") {
		if set != "" || ifExists {
			return nil, "", false, fmt.Errorf("operator %q: Null takes no qualifier and no IfExists", name)
		}
		return nullOperator, "", false, nil
	}
	op, ok := operators[strings.ToLower(base)]
	if !ok {
		return nil, "", false, fmt.Errorf("operator %q is not modelled by fakeaws's policy evaluator", name)
	}
	return op, set, ifExists, nil
}

// either reads the one of a positive and a Not element a statement must have.
func either(pos, neg json.RawMessage, name string) ([]string, bool, error) {
	switch {
	case pos != nil && neg != nil:
		return nil, false, fmt.Errorf("both %s and Not%s", name, name)
	case pos != nil:
		l, err := stringList(pos)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", name, err)
		}
		return l, false, nil
	case neg != nil:
		l, err := stringList(neg)
		if err != nil {
			return nil, false, fmt.Errorf("Not%s: %w", name, err)
		}
		return l, true, nil
	}
	return nil, false, fmt.Errorf("no %s or Not%s", name, name)
}

// stringList reads a string or a non-empty list of strings.
func stringList(raw json.RawMessage) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 {
		return nil, fmt.Errorf("expected a string or a non-empty list of strings, got %s", raw)
	}
	return many, nil
}

// conditionValues reads a condition's values: a string, number or boolean, or a non-empty list of them.
func conditionValues(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	if len(list) == 0 {
		return nil, errors.New("no values")
	}
	out := make([]string, len(list))
	for i, x := range list {
		switch x := x.(type) {
		case string:
			out[i] = x
		case json.Number:
			out[i] = x.String()
		case bool:
			out[i] = strconv.FormatBool(x)
		default:
			return nil, fmt.Errorf("expected strings, numbers or booleans, got %s", raw)
		}
	}
	return out, nil
}

// checkVars refuses policy variables, which the evaluator does not substitute.
func checkVars(s string) error {
	rest := strings.NewReplacer("${*}", "", "${?}", "", "${$}", "").Replace(s)
	if i := strings.Index(rest, "${"); i >= 0 {
		end := strings.IndexByte(rest[i:], '}')
		if end < 0 {
			end = len(rest) - i - 1
		}
		return fmt.Errorf("policy variable %s is not modelled by fakeaws's policy evaluator", rest[i:i+end+1])
	}
	return nil
}

// unescapeVars resolves the escapes ${*}, ${?} and ${$} for literal comparisons.
func unescapeVars(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return strings.NewReplacer("${*}", "*", "${?}", "?", "${$}", "$").Replace(s)
}

// globMatch matches s against an IAM pattern: `*` is any run of characters, `?` any one character, and
// ${*}, ${?}, ${$} stand for the literal characters. fold compares case-insensitively.
func globMatch(pattern, s string, fold bool) bool {
	if fold {
		pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	}
	type tok struct {
		r    rune
		wild byte // 0: the literal r; '*' or '?'
	}
	var toks []tok
	for i := 0; i < len(pattern); {
		switch esc := pattern[i:]; {
		case strings.HasPrefix(esc, "${*}"), strings.HasPrefix(esc, "${?}"), strings.HasPrefix(esc, "${$}"):
			toks = append(toks, tok{r: rune(esc[2])})
			i += 4
		case pattern[i] == '*' || pattern[i] == '?':
			toks = append(toks, tok{wild: pattern[i]})
			i++
		default:
			r, n := utf8.DecodeRuneInString(esc)
			toks = append(toks, tok{r: r})
			i += n
		}
	}
	rs := []rune(s)
	ti, si, starTi, starSi := 0, 0, -1, 0
	for si < len(rs) {
		switch {
		case ti < len(toks) && (toks[ti].wild == '?' || toks[ti].wild == 0 && toks[ti].r == rs[si]):
			ti, si = ti+1, si+1
		case ti < len(toks) && toks[ti].wild == '*':
			starTi, starSi = ti, si
			ti++
		case starTi >= 0:
			starSi++
			ti, si = starTi+1, starSi
		default:
			return false
		}
	}
	for ti < len(toks) && toks[ti].wild == '*' {
		ti++
	}
	return ti == len(toks)
}

// arnMatch compares ARNs as the Arn operators do: the six colon-separated parts one by one, each with
// wildcards (the last part keeps its colons).
func arnMatch(req, pol string) bool {
	rp, pp := strings.SplitN(req, ":", 6), strings.SplitN(pol, ":", 6)
	if len(rp) != 6 || len(pp) != 6 {
		return false
	}
	for i := range pp {
		if !globMatch(pp[i], rp[i], false) {
			return false
		}
	}
	return true
}

func parseNumber(s string) (float64, error) { return strconv.ParseFloat(strings.TrimSpace(s), 64) }

// parseDate reads the date forms IAM accepts that matter here: ISO 8601 (RFC 3339, or a day) and epoch
// seconds.
func parseDate(s string) (float64, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return float64(t.UnixNano()) / 1e9, nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return float64(n), nil
	}
	return 0, fmt.Errorf("%q is not a date (ISO 8601 or epoch seconds)", s)
}

// compareWith builds a numeric or date operator: the request value compared with the policy value.
func compareWith(parse func(string) (float64, error), ok func(int) bool) func(req, pol string) bool {
	return func(req, pol string) bool {
		a, err1 := parse(req)
		b, err2 := parse(pol)
		if err1 != nil || err2 != nil {
			return false
		}
		switch {
		case a < b:
			return ok(-1)
		case a > b:
			return ok(1)
		}
		return ok(0)
	}
}

func checkWith(parse func(string) (float64, error)) func(string) error {
	return func(pol string) error {
		_, err := parse(pol)
		return err
	}
}

// ipMatch reports whether the request's address lies in the policy's CIDR block (or equals its address).
func ipMatch(req, pol string) bool {
	addr, err := netip.ParseAddr(strings.TrimSpace(req))
	if err != nil {
		return false
	}
	prefix, err := ipPrefix(pol)
	return err == nil && prefix.Contains(addr)
}

func ipPrefix(pol string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(pol); err == nil {
		return p, nil
	}
	a, err := netip.ParseAddr(pol)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR block", pol)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func checkIP(pol string) error {
	_, err := ipPrefix(pol)
	return err
}

// simQuestion is one question to the evaluator: an action on a resource, in a request context whose
// keys are lower-case.
type simQuestion struct {
	action, resource string
	context          map[string][]string
}

// matchedStatement is a statement that decided an answer (MatchedStatements).
type matchedStatement struct {
	policyID, policyType string
	start, end           position
}

// simAnswer is the evaluator's answer to a question.
type simAnswer struct {
	decision string // allowed, implicitDeny or explicitDeny
	// missing are the condition keys that kept a statement from applying because the question lacked
	// them; set only on a denial, as the simulator reports them.
	missing []string
	matched []matchedStatement
}

// evaluate answers q for a principal with the identity policies and the permissions boundary (nil: none):
// an explicit Deny in either wins; else an Allow of the identity policies that the boundary also allows;
// else an implicit deny.
func evaluate(identity []*policyDoc, boundary *policyDoc, q simQuestion) simAnswer {
	id := verdictOf(identity, q)
	var b verdict
	if boundary != nil {
		b = verdictOf([]*policyDoc{boundary}, q)
	}
	var a simAnswer
	switch {
	case len(id.denies) > 0 || len(b.denies) > 0:
		a = simAnswer{decision: facts.DecisionExplicitDeny, matched: append(id.denies, b.denies...)}
	case len(id.allows) > 0 && (boundary == nil || len(b.allows) > 0):
		return simAnswer{decision: facts.DecisionAllowed, matched: append(id.allows, b.allows...)}
	default:
		a = simAnswer{decision: facts.DecisionImplicitDeny}
	}
	a.missing = mergeKeys(id.missing, b.missing)
	return a
}

// verdict is what a set of policies says about a question: the statements that allow and deny it, and
// the keys missing from statements that would otherwise apply.
type verdict struct {
	allows, denies []matchedStatement
	missing        []string
}

func verdictOf(docs []*policyDoc, q simQuestion) verdict {
	var v verdict
	for _, d := range docs {
		for i := range d.statements {
			st := &d.statements[i]
			ok, missing := st.applies(q)
			v.missing = append(v.missing, missing...)
			if !ok {
				continue
			}
			m := matchedStatement{policyID: d.id, policyType: d.sourceType, start: st.start, end: st.end}
			if st.deny {
				v.denies = append(v.denies, m)
			} else {
				v.allows = append(v.allows, m)
			}
		}
	}
	return v
}

// applies reports whether the statement applies to q; when it does not only because q lacks condition
// keys (its action, resource and every other condition match), it returns those keys.
func (st *statement) applies(q simQuestion) (bool, []string) {
	if matchesAny(st.actions, q.action, true) == st.notAction {
		return false, nil
	}
	if matchesAny(st.resources, q.resource, false) == st.notResource {
		return false, nil
	}
	var missing []string
	for i := range st.conditions {
		c := &st.conditions[i]
		switch ok, absent := c.holds(q.context); {
		case absent:
			missing = append(missing, c.key)
		case !ok:
			return false, nil
		}
	}
	return len(missing) == 0, missing
}

func matchesAny(patterns []string, s string, fold bool) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return globMatch(p, s, fold) })
}

// holds evaluates the condition on a request context; absent is true when it fails only because the
// context lacks its key.
func (c *condition) holds(ctx map[string][]string) (ok, absent bool) {
	vals := ctx[strings.ToLower(c.key)]
	present := len(vals) > 0
	if c.op == nullOperator {
		// {"Null": {"k": "true"}}: k is absent; "false": k is present.
		return slices.ContainsFunc(c.values, func(v string) bool { return strings.EqualFold(v, "true") != present }), false
	}
	if !present {
		switch {
		case c.ifExists, c.set == "forallvalues":
			return true, false // vacuously true
		case c.set == "foranyvalue":
			return false, true
		case c.op.negated:
			return true, false // a key that is absent matches no value, so "not equal" holds
		}
		return false, true
	}
	matchOne := func(v string) bool {
		return slices.ContainsFunc(c.values, func(p string) bool { return c.op.match(v, p) })
	}
	each := func(v string) bool { return matchOne(v) != c.op.negated }
	switch c.set {
	case "forallvalues":
		for _, v := range vals {
			if !each(v) {
				return false, false
			}
		}
		return true, false
	case "foranyvalue":
		return slices.ContainsFunc(vals, each), false
	}
	// Without a qualifier the request's values are taken together: some value matches some policy
	// value (for a negated operator: none does).
	return slices.ContainsFunc(vals, matchOne) != c.op.negated, false
}

// mergeKeys returns the keys of lists without duplicates (compared case-insensitively, as IAM compares
// condition keys), sorted.
func mergeKeys(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, k := range l {
			if lk := strings.ToLower(k); !seen[lk] {
				seen[lk] = true
				out = append(out, k)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	return out
}
