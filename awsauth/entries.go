package awsauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// This file reads mapRoles and mapUsers the way aws-iam-authenticator's ParseMap does: the value
// through k8s.io/apimachinery's yaml.ToJSON, the JSON through encoding/json into structs tagged like
// its config.RoleMapping and config.UserMapping, each entry checked like their Validate methods.

// roleJSON is what the authenticator decodes a mapRoles entry into (its config.RoleMapping).
type roleJSON struct {
	RoleARN  string   `json:"rolearn,omitempty"`
	SSO      *ssoJSON `json:"sso,omitempty"`
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
	UserID   string   `json:"userid,omitempty"`
}

// ssoJSON is its config.SSOARNMatcher.
type ssoJSON struct {
	PermissionSetName string `json:"permissionSetName"`
	AccountID         string `json:"accountID"`
	Partition         string `json:"partition,omitempty"`
}

// userJSON is what it decodes a mapUsers entry into (its config.UserMapping).
type userJSON struct {
	UserARN  string   `json:"userarn"`
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
	UserID   string   `json:"userid,omitempty"`
}

// The raw* structs have the same JSON names with raw values: decoding a one-key object into one shows
// which field encoding/json matches the key to (it matches names in any case).
type rawRole struct {
	RoleARN  json.RawMessage `json:"rolearn"`
	SSO      json.RawMessage `json:"sso"`
	Username json.RawMessage `json:"username"`
	Groups   json.RawMessage `json:"groups"`
	UserID   json.RawMessage `json:"userid"`
}

type rawSSO struct {
	PermissionSetName json.RawMessage `json:"permissionSetName"`
	AccountID         json.RawMessage `json:"accountID"`
	Partition         json.RawMessage `json:"partition"`
}

type rawUser struct {
	UserARN  json.RawMessage `json:"userarn"`
	Username json.RawMessage `json:"username"`
	Groups   json.RawMessage `json:"groups"`
	UserID   json.RawMessage `json:"userid"`
}

// shape describes the entries of one data key.
type shape struct {
	key      string
	arnField string
	// kinds is the kind of value each field takes.
	kinds map[string]string
	// probe decodes an object into the shape's raw struct and returns the fields some key set.
	probe func(json.RawMessage) map[string]json.RawMessage
}

// roleShape, userShape and ssoShape describe a mapRoles entry, a mapUsers entry and a role entry's sso.
func roleShape() shape {
	return shape{
		key: KeyMapRoles, arnField: "rolearn",
		kinds: map[string]string{"rolearn": "string", "sso": "mapping", "username": "string", "groups": "list", "userid": "string"},
		probe: func(raw json.RawMessage) map[string]json.RawMessage {
			var r rawRole
			_ = json.Unmarshal(raw, &r)
			return present(map[string]json.RawMessage{"rolearn": r.RoleARN, "sso": r.SSO, "username": r.Username, "groups": r.Groups, "userid": r.UserID})
		},
	}
}

func userShape() shape {
	return shape{
		key: KeyMapUsers, arnField: "userarn",
		kinds: map[string]string{"userarn": "string", "username": "string", "groups": "list", "userid": "string"},
		probe: func(raw json.RawMessage) map[string]json.RawMessage {
			var r rawUser
			_ = json.Unmarshal(raw, &r)
			return present(map[string]json.RawMessage{"userarn": r.UserARN, "username": r.Username, "groups": r.Groups, "userid": r.UserID})
		},
	}
}

func ssoShape() shape {
	return shape{
		key:   KeyMapRoles,
		kinds: map[string]string{"permissionSetName": "string", "accountID": "string", "partition": "string"},
		probe: func(raw json.RawMessage) map[string]json.RawMessage {
			var r rawSSO
			_ = json.Unmarshal(raw, &r)
			return present(map[string]json.RawMessage{"permissionSetName": r.PermissionSetName, "accountID": r.AccountID, "partition": r.Partition})
		},
	}
}

// present drops the fields no key set.
func present(m map[string]json.RawMessage) map[string]json.RawMessage {
	for k, v := range m {
		if v == nil {
			delete(m, k)
		}
	}
	return m
}

// fields returns the shape's fields, sorted.
func (s shape) fields() []string {
	var fs []string
	for f := range s.kinds {
		fs = append(fs, f)
	}
	slices.Sort(fs)
	return fs
}

// fieldOf returns the field a key of an entry sets, as encoding/json matches it; "" for none.
func (s shape) fieldOf(key string) string {
	obj, err := json.Marshal(map[string]int{key: 0})
	if err != nil {
		return ""
	}
	for f := range s.probe(obj) {
		return f
	}
	return ""
}

// skippable reports whether the authenticator skips a value without reading it (its isSkippable).
func skippable(value string) bool {
	switch strings.TrimSpace(value) {
	case "", "``", `""`, "''":
		return true
	}
	return false
}

// list is a mapRoles or mapUsers value as the authenticator converts it.
type list struct {
	json  []byte
	items []json.RawMessage
	lay   layout
}

// readList converts a value the way the authenticator does: yaml.ToJSON, then a JSON list. A problem
// comes back (with no items) when EKS keeps no entry of the key.
func readList(key, value string) (list, []Problem) {
	if skippable(value) {
		return list{}, nil
	}
	l := list{lay: newLayout(value)}
	j, err := utilyaml.ToJSON([]byte(value))
	if err != nil {
		line, msg := 0, err.Error()
		switch {
		case strings.HasPrefix(msg, "yaml: "):
			line, msg = syntaxError(value, err)
			msg = "not valid YAML: " + msg
		case strings.HasPrefix(msg, "unsupported map key"):
			line, msg = unconvertibleLine(l.lay.root), "a mapping key is null or a list or mapping, which JSON cannot hold"
		case strings.HasPrefix(msg, "json: unsupported value"):
			line, msg = unconvertibleLine(l.lay.root), "a number is infinite or NaN (.inf, .nan), which JSON cannot hold"
		default:
			msg = "cannot be converted to JSON: " + msg
		}
		return list{}, []Problem{ignoredValue(key, line, msg)}
	}
	l.json = j
	if err := json.Unmarshal(j, &l.items); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syntax):
			// Only a value that starts with "{" reaches encoding/json unconverted.
			offset := min(int(max(syntax.Offset, 1)), len(value))
			return list{}, []Problem{ignoredValue(key, 1+strings.Count(value[:offset-1], "\n"),
				"not valid JSON (a value that starts with { is read as JSON): "+syntax.Error())}
		case errors.As(err, &typ):
			return list{}, []Problem{ignoredValue(key, line(l.lay.root), "must be a YAML list of entries, not a "+kindWord(typ.Value))}
		default:
			return list{}, []Problem{ignoredValue(key, line(l.lay.root), "cannot be decoded: "+err.Error())}
		}
	}
	return l, nil
}

// ignoredValue is the problem of a value EKS keeps no entry of.
func ignoredValue(key string, line int, msg string) Problem {
	return Problem{Key: key, Line: line, Message: oneLine(msg), Effect: IgnoresValue,
		Outcome: fmt.Sprintf("EKS keeps no entry of %s (it still reads the other keys)", key)}
}

// oneLine keeps a message on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// jsonKind names the kind of a JSON value in YAML's words.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "null"
	}
	switch raw[0] {
	case '{':
		return "mapping"
	case '[':
		return "list"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// kindWord names an encoding/json type name ("object", "bool") in YAML's words.
func kindWord(jsonType string) string {
	switch jsonType {
	case "object":
		return "mapping"
	case "array":
		return "list"
	case "bool":
		return "boolean"
	}
	return jsonType
}

// pair is one key of a JSON object and its value.
type pair struct {
	key string
	raw json.RawMessage
}

// objectPairs returns the keys of a JSON object and their values, in the order written.
func objectPairs(raw json.RawMessage) []pair {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var pairs []pair
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return pairs
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return pairs
		}
		pairs = append(pairs, pair{k, v})
	}
	return pairs
}

// decoded is what encoding/json makes of the keys of one JSON object decoded into a shape's struct.
type decoded struct {
	// keys are the object's keys in order, and fieldOf the field each sets ("" for none), as
	// encoding/json matches them (any case).
	keys    []string
	fieldOf map[string]string
	// fields holds, for each field some key names, the value decoded into it: encoding/json decodes
	// every key in order, a value of the wrong type leaves the field as it was, and null clears a list
	// or mapping but leaves a string. from names the key that gave the value.
	fields map[string]json.RawMessage
	from   map[string]string
	// lost says, for each field left without value by a value of the wrong type, what is wrong with it.
	lost map[string]string
}

// decode reads the keys of a JSON object the way encoding/json decodes them into the shape's struct;
// prefix names the struct's fields in messages ("sso.").
func decode(s shape, raw json.RawMessage, prefix string) decoded {
	d := decoded{fieldOf: map[string]string{}, fields: map[string]json.RawMessage{}, from: map[string]string{}, lost: map[string]string{}}
	for _, p := range objectPairs(raw) {
		f := s.fieldOf(p.key)
		d.keys = append(d.keys, p.key)
		d.fieldOf[p.key] = f
		if f == "" {
			continue
		}
		want, kind := s.kinds[f], jsonKind(p.raw)
		switch {
		case kind == want || (kind == "null" && want != "string"):
			d.fields[f], d.from[f] = p.raw, p.key
			delete(d.lost, prefix+f)
		case kind == "null":
			if _, ok := d.fields[f]; !ok {
				d.fields[f] = p.raw
			}
		default:
			if _, ok := d.fields[f]; !ok || jsonKind(d.fields[f]) == "null" {
				d.fields[f] = p.raw
				d.lost[prefix+f] = wrongType(prefix+f, p.raw, want)
			}
		}
	}
	return d
}

// written is one entry as written, with what EKS makes of its keys.
type written struct {
	Entry
	shape shape
	kind  string
	decoded
	// node is the entry's YAML node, when the layout agrees with what EKS read.
	node *yaml.Node
	// username and groups are what EKS decoded, for a kept entry: the decoded raw values explain them.
	username string
	groups   []string
}

// inspect reads one entry (raw, its YAML node when known, its position) for its checks.
func inspect(s shape, raw json.RawMessage, node *yaml.Node, index int) *written {
	w := &written{Entry: Entry{Index: index, Line: line(node)}, shape: s, kind: jsonKind(raw), node: node}
	var v any
	if s.key == KeyMapRoles && json.Unmarshal(raw, &v) == nil {
		w.Nodes = writtenForNodes(v)
	}
	if w.kind != "mapping" {
		return w
	}
	w.decoded = decode(s, raw, "")
	if a := w.fields[s.arnField]; jsonKind(a) == "string" {
		_ = json.Unmarshal(a, &w.ARN)
	}
	return w
}

// problem is a problem about this entry.
func (w *written) problem(line int, field, msg string, effect Effect, outcome string) Problem {
	if line == 0 {
		line = w.Line
	}
	e := w.Entry
	return Problem{Key: w.shape.key, Line: line, Message: msg, Effect: effect, Outcome: outcome, Field: field, Entry: &e}
}

// drop is the problem that makes EKS drop the entry.
func (w *written) drop(field, msg string) Problem {
	return w.problem(w.fieldLine(field), field, msg, DropsEntry, "EKS drops this entry and keeps the others")
}

// keyOf returns the key that gives a field its value, else the last key that names it; "" when none.
func (w *written) keyOf(field string) string {
	if k := w.from[field]; k != "" {
		return k
	}
	key := ""
	for _, k := range w.keys {
		if w.fieldOf[k] == field {
			key = k
		}
	}
	return key
}

// fieldLine is the line of the key that sets a field; 0 when unknown.
func (w *written) fieldLine(field string) int {
	if field == "" {
		return 0
	}
	k, _ := fieldNode(w.node, w.keyOf(field))
	return line(k)
}

// keyLine is the line of one of the entry's keys; 0 when unknown.
func (w *written) keyLine(key string) int {
	k, _ := fieldNode(w.node, key)
	return line(k)
}

// fieldNode is field, for a key that may be "" (none).
func fieldNode(entry *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if key == "" {
		return nil, nil
	}
	return field(entry, key)
}

// wrongType says what is wrong with a field's value, "" when it has the kind the field takes (or
// null, which leaves the field empty without error).
func wrongType(name string, raw json.RawMessage, want string) string {
	k := jsonKind(raw)
	if k == want || k == "null" {
		return ""
	}
	msg := fmt.Sprintf("%s is a %s, not a %s", name, k, want)
	switch {
	case want == "string" && k == "boolean":
		msg += " (YAML 1.1 reads true, yes, on, y and their opposites as booleans: quote it)"
	case want == "string" && k == "number":
		msg += " (quote it)"
	}
	return msg
}

// lost returns, for each field a value of the wrong type leaves empty, what is wrong with it; sso's
// fields are named sso.<field>.
func (w *written) lost() map[string]string {
	out := map[string]string{}
	for f, msg := range w.decoded.lost {
		out[f] = msg
	}
	if sso := w.fields["sso"]; jsonKind(sso) == "mapping" {
		for f, msg := range decode(ssoShape(), sso, "sso.").lost {
			out[f] = msg
		}
	}
	return out
}

// unknownFor returns the key EKS never reads that seems meant to be field, "" when none.
func (w *written) unknownFor(field string) string {
	for _, k := range w.keys {
		if w.fieldOf[k] == "" && closest(k, w.shape.fields(), normalizeEntryKey) == field {
			return k
		}
	}
	return ""
}

// missing says why a field EKS needs is empty: its value's type, an empty string, or a misspelt key.
func (w *written) missing(field string, lost map[string]string) string {
	if msg := lost[field]; msg != "" {
		return msg
	}
	if raw := w.fields[field]; jsonKind(raw) == "string" {
		return field + " is empty"
	}
	msg := "entry has no " + field
	if k := w.unknownFor(field); k != "" {
		msg += fmt.Sprintf(" (EKS never reads key %q)", k)
	}
	return msg
}

// hints reports whether the problem of a kept entry's missing field names key k, meant as that field
// (see keptChecks and groupChecks).
func (w *written) hints(k, meant string) bool {
	if meant == "" || w.unknownFor(meant) != k {
		return false
	}
	switch meant {
	case "username":
		return w.username == "" && w.lost()["username"] == ""
	case "groups":
		return w.groups == nil && jsonKind(w.fields["groups"]) == "null"
	}
	return false
}

// notMapping is the message of an entry that is not a mapping.
func notMapping(kind string) string {
	if kind == "null" {
		return "entry is empty"
	}
	return fmt.Sprintf("entry is a %s, not a mapping", kind)
}

var (
	accountIDRE         = regexp.MustCompile(`^[0-9]{12}$`)
	permissionSetNameRE = regexp.MustCompile(`^[\w+=,.@-]{1,32}$`)
)

// ssoProblem checks sso as the authenticator's RoleMapping.Validate does, in its order; "" when valid.
// Its last check (that the ARN pattern built from sso parses) cannot fail once these pass: the account
// is digits and the permission set name holds no colon, so the pattern always has its six parts.
func ssoProblem(s ssoJSON, lost map[string]string) string {
	check := func(field, value string, ok bool, format string) string {
		if ok {
			return ""
		}
		if msg := lost["sso."+field]; msg != "" {
			return msg
		}
		return fmt.Sprintf(format, value)
	}
	if msg := check("accountID", s.AccountID, accountIDRE.MatchString(s.AccountID), "sso.accountID %q is not a 12-digit account id"); msg != "" {
		return msg
	}
	if msg := check("permissionSetName", s.PermissionSetName, permissionSetNameRE.MatchString(s.PermissionSetName),
		"sso.permissionSetName %q is not a permission set name (1 to 32 letters, digits and +=,.@_-)"); msg != "" {
		return msg
	}
	// The partitions aws-iam-authenticator's pkg/endpoints knows (its PARTITIONS).
	partitions := []string{"aws", "aws-cn", "aws-us-gov", "aws-iso", "aws-iso-b", "aws-iso-e", "aws-iso-f", "aws-eusc"}
	return check("partition", s.Partition, s.Partition == "" || slices.Contains(partitions, s.Partition), "sso.partition %q is not an AWS partition")
}

// ssoKey is the key the authenticator stores an SSO entry under (its RoleMapping.Key, through
// SSOArnLike). SSOArnLike sets the partition only when sso names none, so every named partition gives
// the same key.
func ssoKey(s *SSO) string {
	partition := ""
	if s.Partition == "" {
		partition = "aws"
	}
	return strings.ToLower(fmt.Sprintf("arn:%s:iam::%s:role/AWSReservedSSO_%s_*", partition, s.AccountID, s.PermissionSetName))
}

// keptChecks returns the problems of an entry EKS keeps: no username, groups it cannot read as
// written, fields it loses, keys it never reads or reads only once.
func (w *written) keptChecks(lost map[string]string) []Problem {
	var out []Problem
	subject := "role"
	if w.shape.key == KeyMapUsers {
		subject = "user"
	}
	if w.username == "" {
		msg, at := "entry has no username", w.fieldLine("username")
		if l := lost["username"]; l != "" {
			msg += ": " + l
		} else if k := w.unknownFor("username"); k != "" {
			msg += fmt.Sprintf(" (EKS never reads key %q)", k)
			if at == 0 {
				at = w.keyLine(k)
			}
		}
		out = append(out, w.problem(at, "username", msg, NoUsername,
			fmt.Sprintf("EKS keeps the entry and maps the %s to the empty username", subject)))
	}
	out = append(out, w.groupChecks(lost)...)
	fields := []string{"userid", "sso.permissionSetName", "sso.accountID", "sso.partition"}
	if w.ARN == "" {
		fields = append(fields, w.shape.arnField) // kept without it: an SSO entry
	}
	for _, f := range fields {
		if msg := lost[f]; msg != "" {
			outcome := "EKS keeps the entry without " + f
			switch f {
			case "userid":
				outcome += " (which the aws-auth mapper does not use)"
			case "rolearn":
				outcome += " (it matches by sso)"
			}
			out = append(out, w.problem(w.fieldLine(strings.Split(f, ".")[0]), strings.Split(f, ".")[0], msg, LosesField, outcome))
		}
	}
	out = append(out, w.keyChecks()...)
	sortByLine(out)
	return out
}

// groupChecks returns the problems of a kept entry's groups.
func (w *written) groupChecks(lost map[string]string) []Problem {
	raw := w.fields["groups"]
	if w.groups == nil && jsonKind(raw) == "null" {
		if k := w.unknownFor("groups"); k != "" {
			return []Problem{w.problem(w.keyLine(k), "groups", fmt.Sprintf("entry has no groups (EKS never reads key %q)", k), NotRead,
				"EKS keeps the entry without groups")}
		}
		return nil
	}
	_, node := fieldNode(w.node, w.keyOf("groups"))
	if msg := lost["groups"]; msg != "" && w.groups == nil {
		var s string
		if json.Unmarshal(raw, &s) == nil && listInOne(s) != nil {
			msg += fmt.Sprintf(": %q reads as one string", s)
		}
		return []Problem{w.problem(line(node), "groups", msg, LosesField, "EKS keeps the entry without groups")}
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || len(items) != len(w.groups) {
		return nil // another key set groups
	}
	var itemNodes []*yaml.Node
	if n := resolve(node); n != nil && n.Kind == yaml.SequenceNode && len(n.Content) == len(items) {
		itemNodes = n.Content
	}
	var out []Problem
	for j, it := range items {
		itemLine := line(node)
		if itemNodes != nil {
			itemLine = itemNodes[j].Line
		}
		var g string
		switch k := jsonKind(it); k {
		case "string":
			_ = json.Unmarshal(it, &g)
			if parts := listInOne(g); parts != nil {
				out = append(out, w.problem(itemLine, "groups", fmt.Sprintf("group %q holds a list in one string", g), ReadAsWritten,
					fmt.Sprintf("EKS maps the entry to the one group %q, not to %s", g, strings.Join(parts, " and "))))
			}
		case "null":
			out = append(out, w.problem(itemLine, "groups", fmt.Sprintf("group %d is empty", j+1), ReadAsWritten,
				`EKS keeps it as a group named ""`))
		default:
			out = append(out, w.problem(itemLine, "groups", wrongType(fmt.Sprintf("group %d", j+1), it, "string"), LosesField,
				"EKS keeps the entry with an empty group in its place"))
		}
	}
	return out
}

// keyChecks returns the problems of an entry's keys: keys EKS never reads, keys it reads as the same
// field as another key, and keys written twice.
func (w *written) keyChecks() []Problem {
	var out []Problem
	fields := w.shape.fields()
	for _, k := range w.keys {
		f := w.fieldOf[k]
		if f == "" {
			meant := closest(k, fields, normalizeEntryKey)
			if w.hints(k, meant) {
				continue // the problem of the missing field names it
			}
			msg := fmt.Sprintf("unknown key %q", k)
			if meant != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", meant)
			}
			p := w.problem(w.keyLine(k), "", msg, NotRead, "EKS never reads it")
			p.Meant = meant
			out = append(out, p)
			continue
		}
		if last := w.from[f]; last != "" && last != k {
			out = append(out, w.problem(w.keyLine(k), f, fmt.Sprintf("keys %q and %q both set %s", k, last, f), NotRead,
				fmt.Sprintf("EKS reads %s from %q and ignores %q", f, last, k)))
		}
	}
	dups := duplicateKeys(w.node)
	for _, k := range sortedKeys(dups) {
		ls := dups[k]
		for _, l := range ls[:len(ls)-1] {
			out = append(out, w.problem(l, w.fieldOf[k], fmt.Sprintf("key %q is written again at line %d", k, ls[len(ls)-1]), NotRead,
				"EKS reads only the last of them"))
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// readRoles reads mapRoles: the mappings EKS keeps, every entry as written, and the problems.
func readRoles(value string) ([]RoleMapping, []Entry, []Problem) {
	l, problems := readList(KeyMapRoles, value)
	if len(l.items) == 0 {
		return nil, nil, problems
	}
	// One decode of the whole list, as the authenticator does: a value of the wrong type leaves its
	// field empty and the rest still decodes.
	var decoded []roleJSON
	_ = json.Unmarshal(l.json, &decoded)
	entries := make([]Entry, len(l.items))
	perEntry := make([][]Problem, len(l.items))
	var kept []RoleMapping
	var keptAt []int
	for i, raw := range l.items {
		w := inspect(roleShape(), raw, l.lay.item(i, len(l.items)), i)
		var d roleJSON
		if i < len(decoded) {
			d = decoded[i]
		}
		ps, ok := checkRole(w, d)
		w.Kept = ok
		for j := range ps {
			ps[j].Entry.Kept = ok
		}
		entries[i], perEntry[i] = w.Entry, ps
		if ok {
			m := RoleMapping{RoleARN: d.RoleARN, Username: d.Username, Groups: d.Groups, Line: w.Line}
			if d.SSO != nil {
				m.SSO = &SSO{PermissionSetName: d.SSO.PermissionSetName, AccountID: d.SSO.AccountID, Partition: d.SSO.Partition}
			}
			kept, keptAt = append(kept, m), append(keptAt, i)
		}
	}
	key := func(m RoleMapping) string {
		if m.RoleARN != "" {
			return strings.ToLower(m.RoleARN)
		}
		return ssoKey(m.SSO)
	}
	var config []RoleMapping
	last := map[string]int{}
	for j, m := range kept {
		last[key(m)] = j
	}
	for j, m := range kept {
		if l := last[key(m)]; l != j {
			what := "rolearn " + m.RoleARN
			if m.RoleARN == "" {
				what = fmt.Sprintf("sso of account %s and permission set %s", m.SSO.AccountID, m.SSO.PermissionSetName)
				if m.SSO.Partition != kept[l].SSO.Partition {
					what += " (whatever partition it names)"
				}
			}
			e := entries[keptAt[j]]
			perEntry[keptAt[j]] = append(perEntry[keptAt[j]], Problem{Key: KeyMapRoles, Line: m.Line, Effect: Overridden, Entry: &e,
				Message: fmt.Sprintf("%s is mapped again %s", what, laterEntry(kept[l].Line)),
				Outcome: "EKS keeps only the last entry for an ARN, so this one has no effect"})
			continue
		}
		config = append(config, m)
	}
	for _, ps := range perEntry {
		problems = append(problems, ps...)
	}
	return config, entries, problems
}

// laterEntry names the entry that replaces another.
func laterEntry(line int) string {
	if line == 0 {
		return "by a later entry"
	}
	return fmt.Sprintf("at line %d", line)
}

// checkRole checks one mapRoles entry; ok reports whether EKS keeps it.
func checkRole(w *written, d roleJSON) ([]Problem, bool) {
	if w.kind != "mapping" {
		return []Problem{w.drop("", notMapping(w.kind))}, false
	}
	lost := w.lost()
	// encoding/json allocates sso for any value but null, even one of the wrong type: the entry then
	// has an sso, with empty fields.
	switch {
	case d.RoleARN == "" && d.SSO == nil:
		return []Problem{w.drop("rolearn", w.missing("rolearn", lost))}, false
	case d.RoleARN != "" && d.SSO != nil:
		msg := "entry has both rolearn and sso; EKS accepts only one of them"
		if l := lost["sso"]; l != "" {
			msg += " (" + l + ", which still counts)"
		}
		return []Problem{w.drop("sso", msg)}, false
	case d.SSO != nil:
		msg := lost["sso"]
		if msg == "" {
			msg = ssoProblem(*d.SSO, lost)
		}
		if msg != "" {
			return []Problem{w.drop("sso", msg)}, false
		}
	}
	w.username, w.groups = d.Username, d.Groups
	out := w.keptChecks(lost)
	if d.SSO != nil && d.SSO.Partition != "" {
		// SSOArnLike sets the pattern's partition only when sso names none: with one named, the
		// pattern is arn::iam::…, whose empty partition no role ARN has.
		out = append(out, w.problem(w.fieldLine("sso"), "sso", fmt.Sprintf("sso names partition %q", d.SSO.Partition), ReadAsWritten,
			"EKS keeps the entry, but the ARN pattern it builds from sso then has an empty partition, so it matches no role"))
		sortByLine(out)
	}
	return out, true
}

// readUsers reads mapUsers: the mappings EKS keeps and the problems.
func readUsers(value string) ([]UserMapping, []Problem) {
	l, problems := readList(KeyMapUsers, value)
	if len(l.items) == 0 {
		return nil, problems
	}
	var decoded []userJSON
	_ = json.Unmarshal(l.json, &decoded)
	perEntry := make([][]Problem, len(l.items))
	entries := make([]Entry, len(l.items))
	var kept []UserMapping
	var keptAt []int
	for i, raw := range l.items {
		w := inspect(userShape(), raw, l.lay.item(i, len(l.items)), i)
		var d userJSON
		if i < len(decoded) {
			d = decoded[i]
		}
		var ps []Problem
		ok := false
		switch {
		case w.kind != "mapping":
			ps = []Problem{w.drop("", notMapping(w.kind))}
		case d.UserARN == "":
			ps = []Problem{w.drop("userarn", w.missing("userarn", w.lost()))}
		default:
			ok = true
			w.username, w.groups = d.Username, d.Groups
			ps = w.keptChecks(w.lost())
		}
		w.Kept = ok
		for j := range ps {
			ps[j].Entry.Kept = ok
		}
		entries[i], perEntry[i] = w.Entry, ps
		if ok {
			kept = append(kept, UserMapping{UserARN: d.UserARN, Username: d.Username, Groups: d.Groups, Line: w.Line})
			keptAt = append(keptAt, i)
		}
	}
	// Users are stored by userarn as written: a later entry replaces one with the same userarn, and
	// userarns that differ only in case are both kept, matched in the map's random order.
	last := map[string]int{}
	for j, m := range kept {
		last[m.UserARN] = j
	}
	var config []UserMapping
	var configAt []int
	for j, m := range kept {
		if l := last[m.UserARN]; l != j {
			e := entries[keptAt[j]]
			perEntry[keptAt[j]] = append(perEntry[keptAt[j]], Problem{Key: KeyMapUsers, Line: m.Line, Effect: Overridden, Entry: &e,
				Message: fmt.Sprintf("userarn %s is mapped again %s", m.UserARN, laterEntry(kept[l].Line)),
				Outcome: "EKS keeps only the last entry for an ARN, so this one has no effect"})
			continue
		}
		config, configAt = append(config, m), append(configAt, keptAt[j])
	}
	for a, m := range config {
		for b, other := range config {
			if a != b && m.UserARN != other.UserARN && strings.EqualFold(m.UserARN, other.UserARN) {
				e := entries[configAt[a]]
				perEntry[configAt[a]] = append(perEntry[configAt[a]], Problem{Key: KeyMapUsers, Line: m.Line, Effect: Ambiguous, Entry: &e,
					Message: fmt.Sprintf("userarn %s differs only in case from userarn %s", m.UserARN, other.UserARN),
					Outcome: "EKS keeps both and matches a user against whichever it finds first, in random order"})
				break
			}
		}
	}
	for _, ps := range perEntry {
		problems = append(problems, ps...)
	}
	return config, problems
}
