package userdata

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/internal/yamlbudget"
)

// Karpenter's registration taint: a node registers with it, and Karpenter removes it once it has
// initialised the node. Karpenter matches it by key and effect; the value is free.
const (
	UnregisteredTaintKey    = "karpenter.sh/unregistered"
	UnregisteredTaintEffect = "NoExecute"
)

// Verdict is what reading userData without running it tells about a registration taint.
type Verdict int

// Verdicts.
const (
	// NotRegistered: nothing the node reads registers the node with the taint. A taint named only in
	// comments, in a here-document fed to the no-op command `:`, or in a field the node does not read
	// is not registered.
	NotRegistered Verdict = iota
	// Registered: a kubelet --register-with-taints flag, a registerWithTaints list (NodeConfig or
	// KubeletConfiguration) or Bottlerocket's settings.kubernetes.node-taints registers it.
	Registered
	// CannotTell: the userData builds the kubelet's taint list at run time (a variable, a command
	// substitution), or names the taint where this package cannot tell what reads it (a variable
	// assignment that is not a flag, a part of a type nothing here reads, a script that does not
	// parse). Only running it would tell.
	CannotTell
)

// String returns the verdict's name.
func (v Verdict) String() string {
	switch v {
	case NotRegistered:
		return "not registered"
	case Registered:
		return "registered"
	case CannotTell:
		return "cannot tell"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Registration is what Registers found.
type Registration struct {
	Verdict Verdict
	// Where locates what decided the verdict, e.g. "line 3 of MIME part 2": the registration
	// (Registered), the first text only running could tell (CannotTell), or the first registration of
	// the key with another effect (NotRegistered with OtherEffects). Empty when nothing names the taint.
	Where string
	// OtherEffects are the effects the key is registered with instead of the one asked for, in the
	// order found ("" for a taint without an effect). Empty unless NotRegistered or CannotTell.
	OtherEffects []string
}

// Registers reads the userData the way the node does and tells whether the kubelet registers the
// node with the taint key:effect:
//   - shell parts are parsed as bash (comments dropped) and the --register-with-taints flags are read
//     in the words of every command and assignment; a here-document written somewhere is read as the
//     file it becomes (NodeConfig or other YAML, a script, or text);
//   - NodeConfig parts are decoded as nodeadm decodes them: spec.kubelet.flags and
//     spec.kubelet.config.registerWithTaints;
//   - cloud-config parts are decoded as YAML: registerWithTaints lists and flags in any string;
//   - Bottlerocket TOML: settings.kubernetes.node-taints, a table of key to "value:effect" strings
//     (one, or a list);
//   - anything else only tells that it cannot be read, when it names the key.
//
// Text known only at run time (a $VARIABLE, a $(command)) in a taint list makes the verdict
// CannotTell rather than NotRegistered: a rule must not deny what it cannot read.
func (u UserData) Registers(key, effect string) Registration {
	r := &taintReader{key: key, effect: effect}
	for i, p := range u.Parts {
		loc := location{line: 1}
		if u.MIME {
			loc.part = i + 1
		}
		switch p.Kind {
		case KindShell:
			r.readShell(p.Body, loc, 0)
		case KindNodeConfig:
			text := p.Body
			if u.MIME {
				// nodeadm base64-decodes and gunzips NodeConfig parts; one whose gzip data does not
				// decompress is read as it is.
				if t, err := nodeConfigPartText(p.Body, i+1); err == nil {
					text = t
				}
			}
			r.readYAML(text, loc, true, 0)
		case KindCloudConfig:
			r.readYAML(p.Body, loc, false, 0)
		case KindTOML:
			r.readTOML(p.Body, loc)
		default:
			r.readOpaque(p.Body, loc)
		}
		if r.done() {
			break
		}
	}
	return r.reg
}

// runtimeMark stands, in text read statically, for text only known at run time: a parameter
// expansion, a command substitution, arithmetic. A private-use rune, which YAML accepts as printable.
const runtimeMark = '\uE000'

// taintReader gathers what the parts say about one taint.
type taintReader struct {
	key, effect string
	reg         Registration
}

func (r *taintReader) done() bool { return r.reg.Verdict == Registered }

func (r *taintReader) registered(loc location) {
	if r.reg.Verdict != Registered {
		r.reg = Registration{Verdict: Registered, Where: loc.String()}
	}
}

func (r *taintReader) cannotTell(loc location) {
	if r.reg.Verdict == NotRegistered {
		r.reg.Verdict = CannotTell
		r.reg.Where = loc.String()
	}
}

func (r *taintReader) otherEffect(effect string, loc location) {
	if r.reg.Verdict == Registered {
		return
	}
	if r.reg.Where == "" {
		r.reg.Where = loc.String()
	}
	if !slices.Contains(r.reg.OtherEffects, effect) {
		r.reg.OtherEffects = append(r.reg.OtherEffects, effect)
	}
}

// entry judges one taint of a list: its key, and its effect.
func (r *taintReader) entry(key, effect string, loc location) {
	switch {
	case strings.ContainsRune(key, runtimeMark):
		r.cannotTell(loc) // $TAINTS, or a key built at run time: it may be the one
	case key != r.key:
	case strings.ContainsRune(effect, runtimeMark):
		r.cannotTell(loc)
	case effect == r.effect:
		r.registered(loc)
	default:
		r.otherEffect(effect, loc)
	}
}

// location says where in the userData a text is.
type location struct {
	// part is the 1-based MIME part, 0 for userData that is no MIME document.
	part int
	// line is the 1-based line inside the part.
	line int
	// field names a field of a structured document (spec.kubelet.flags), "" for none.
	field string
}

func (l location) String() string {
	where := "userData"
	if l.part > 0 {
		where = fmt.Sprintf("MIME part %d", l.part)
	}
	switch {
	case l.field != "":
		return l.field + " in " + where
	case l.line > 0:
		return fmt.Sprintf("line %d of %s", l.line, where)
	}
	return where
}

// at returns the location of offset off of text s, which starts at l.
func (l location) at(s string, off int) location {
	l.line += strings.Count(s[:off], "\n")
	return l
}

// taintFlagRE matches the kubelet flag that lists the taints a node registers with; pflag accepts
// underscores for dashes in the kubelet's flag names.
var taintFlagRE = regexp.MustCompile(`--register[-_]with[-_]taints\b`)

// readText reads the --register-with-taints flags in s, a command line or a string a command or a
// file gets, whose dynamic text is runtimeMark. A flag's value follows '=' or white space, possibly
// quoted. The key named anywhere outside a flag's list cannot be told apart from a registration
// made at run time (TAINTS="karpenter.sh/unregistered:NoExecute" used later as $TAINTS).
func (r *taintReader) readText(s string, loc location) { r.readFlags(s, loc, true) }

// readFlags is readText; without mentions, the key named outside a flag's list says nothing: s is
// the kubelet's own arguments, with no variable to carry it elsewhere.
func (r *taintReader) readFlags(s string, loc location, mentions bool) {
	if !strings.Contains(s, r.key) && !strings.Contains(s, "with") {
		return // the common case: neither the key nor a flag
	}
	var lists [][2]int
	for _, m := range taintFlagRE.FindAllStringIndex(s, -1) {
		i := m[1]
		switch {
		case i == len(s):
			// The list is the next argument, which s does not hold (a YAML list item, say).
			r.cannotTell(loc.at(s, m[0]))
			continue
		case s[i] == '=':
			i++
		case isSpace(s[i]):
			for i < len(s) && isSpace(s[i]) {
				i++
			}
		default:
			continue // --register-with-taints" or the like: not a flag with a value here
		}
		for i < len(s) && (s[i] == '"' || s[i] == '\'' || s[i] == '\\') {
			i++
		}
		j := i
		for j < len(s) && !isSpace(s[j]) && !strings.ContainsRune("\"'\\;|&<>()[]{}`", rune(s[j])) {
			j++
		}
		lists = append(lists, [2]int{m[0], j})
		if i == j {
			continue // an empty list
		}
		for e := range strings.SplitSeq(s[i:j], ",") {
			kv, effect, _ := strings.Cut(e, ":")
			k, _, _ := strings.Cut(kv, "=")
			r.entry(k, effect, loc.at(s, m[0]))
		}
	}
	for off := 0; mentions; {
		i := strings.Index(s[off:], r.key)
		if i < 0 {
			return
		}
		i += off
		if !slices.ContainsFunc(lists, func(l [2]int) bool { return l[0] <= i && i < l[1] }) {
			r.cannotTell(loc.at(s, i))
			return
		}
		off = i + len(r.key)
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// readOpaque reads text no parser here reads: naming the key, it may register it.
func (r *taintReader) readOpaque(s string, loc location) {
	if i := strings.Index(s, r.key); i >= 0 {
		r.cannotTell(loc.at(s, i))
	}
}

// readYAML reads YAML documents: NodeConfig documents as nodeadm decodes them (with nodeConfig set,
// every document is one; without it, those whose kind says so), others as any YAML, looking for
// registerWithTaints lists and for flags in every string. Text that is no YAML is opaque. depth is
// how deep in files written by other files the text is (see readDocument).
func (r *taintReader) readYAML(text string, loc location, nodeConfig bool, depth int) {
	docs, err := yamlDocuments(text)
	if err != nil {
		r.readOpaque(text, loc)
		return
	}
	r.readYAMLDocs(docs, loc, nodeConfig, depth)
}

// readYAMLDocs reads the root nodes of YAML documents that start at loc, as readYAML does.
func (r *taintReader) readYAMLDocs(docs []*yaml.Node, loc location, nodeConfig bool, depth int) {
	for _, d := range docs {
		if nodeConfig || isNodeConfig(d) {
			r.readNodeConfig(d, loc, depth)
		} else {
			r.readYAMLNode(d, loc, depth)
		}
		if r.done() {
			return
		}
	}
}

// yamlDocuments returns the root nodes of the non-empty documents of text, and an error when text is
// not YAML or is over the YAML budget (package yamlbudget).
func yamlDocuments(text string) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	var docs []*yaml.Node
	var budget yamlbudget.Budget
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err == nil {
			err = budget.Check(&n)
		}
		if err != nil {
			return nil, err
		}
		if len(n.Content) > 0 {
			docs = append(docs, n.Content[0])
		}
	}
}

// structured reports whether any of the YAML documents is a mapping or a list: plain text is YAML
// too, as one scalar.
func structured(docs []*yaml.Node) bool {
	for _, d := range docs {
		if d.Kind == yaml.MappingNode || d.Kind == yaml.SequenceNode {
			return true
		}
	}
	return false
}

// isNodeConfig reports whether a YAML document says it is a NodeConfig.
func isNodeConfig(n *yaml.Node) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "kind" && n.Content[i+1].Value == "NodeConfig" {
			return true
		}
	}
	return false
}

// nodeConfigTaints holds what nodeadm reads taints from in a NodeConfig (node.eks.aws/v1alpha1).
// It is decoded from JSON, as nodeadm decodes NodeConfig YAML (sigs.k8s.io/yaml), so field names
// match without regard to case, as they do for nodeadm.
type nodeConfigTaints struct {
	Spec struct {
		Kubelet struct {
			Config struct {
				RegisterWithTaints []taintYAML `json:"registerWithTaints"`
			} `json:"config"`
			Flags []string `json:"flags"`
		} `json:"kubelet"`
	} `json:"spec"`
}

// taintYAML is a core/v1 Taint as a kubelet configuration lists it.
type taintYAML struct {
	Key    string `json:"key" yaml:"key"`
	Value  string `json:"value" yaml:"value"`
	Effect string `json:"effect" yaml:"effect"`
}

// readNodeConfig reads one NodeConfig document: the kubelet flags, joined as nodeadm passes them
// to the kubelet, and the kubelet configuration's registerWithTaints. Nothing else in it registers
// a taint. A document nodeadm could not decode is opaque.
func (r *taintReader) readNodeConfig(doc *yaml.Node, loc location, depth int) {
	var nc nodeConfigTaints
	var v any
	err := doc.Decode(&v)
	if err == nil {
		var b []byte
		if b, err = json.Marshal(v); err == nil {
			err = json.Unmarshal(b, &nc)
		}
	}
	if err != nil {
		r.readYAMLNode(doc, loc, depth)
		if r.reg.Verdict == Registered {
			// The generic reading found a registration nodeadm would not decode: say nothing sure.
			r.reg = Registration{Verdict: CannotTell, Where: r.reg.Where}
		}
		return
	}
	for _, t := range nc.Spec.Kubelet.Config.RegisterWithTaints {
		r.entry(t.Key, t.Effect, location{part: loc.part, field: "spec.kubelet.config.registerWithTaints"})
	}
	if len(nc.Spec.Kubelet.Flags) > 0 {
		r.readFlags(strings.Join(nc.Spec.Kubelet.Flags, " "), location{part: loc.part, field: "spec.kubelet.flags"}, false)
	}
}

// lineIn returns the line of n, a node of YAML that starts at loc, within loc's part.
func lineIn(loc location, n *yaml.Node) int { return loc.line + n.Line - 1 }

// readYAMLNode reads any YAML: a registerWithTaints key over a list of taints registers them (a
// KubeletConfiguration, in YAML or JSON); a list of strings is read as one command line, a string of
// several lines as the file it likely becomes (cloud-config's write_files content, a script), every
// other string, keys too, as text.
func (r *taintReader) readYAMLNode(n *yaml.Node, loc location, depth int) {
	if r.done() {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "registerWithTaints" && v.Kind == yaml.SequenceNode {
				for _, item := range v.Content {
					var t taintYAML
					if item.Kind != yaml.MappingNode || item.Decode(&t) != nil {
						r.readYAMLNode(item, loc, depth)
						continue
					}
					r.entry(t.Key, t.Effect, location{part: loc.part, line: lineIn(loc, item)})
				}
				continue
			}
			r.readYAMLNode(k, loc, depth)
			r.readYAMLNode(v, loc, depth)
		}
	case yaml.SequenceNode:
		if len(n.Content) > 0 && !slices.ContainsFunc(n.Content, func(c *yaml.Node) bool { return c.Kind != yaml.ScalarNode || strings.Contains(c.Value, "\n") }) {
			// A list of strings is read as one command line: cloud-config's runcmd takes argv lists
			// ([kubelet, --register-with-taints, …]), and flag lists put a value after its flag.
			words := make([]string, len(n.Content))
			for i, c := range n.Content {
				words[i] = c.Value
			}
			r.readText(strings.Join(words, " "), location{part: loc.part, line: lineIn(loc, n.Content[0])})
			return
		}
		for _, c := range n.Content {
			r.readYAMLNode(c, loc, depth)
		}
	case yaml.DocumentNode:
		for _, c := range n.Content {
			r.readYAMLNode(c, loc, depth)
		}
	case yaml.ScalarNode:
		at := location{part: loc.part, line: lineIn(loc, n)}
		if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			at.line++ // a block scalar's text starts on the line after its | or >
		}
		if strings.Contains(strings.TrimSuffix(n.Value, "\n"), "\n") {
			r.readDocument(n.Value, at, depth+1)
		} else {
			r.readText(n.Value, at)
		}
	}
}

// readTOML reads Bottlerocket settings: settings.kubernetes.node-taints maps each key to
// "value:effect" strings, one or a list. Every other string is read as text, so that a taint named
// in, say, a bootstrap command is not taken for an absent one; TOML that does not decode is opaque.
func (r *taintReader) readTOML(text string, loc location) {
	var doc map[string]any
	if _, err := toml.Decode(text, &doc); err != nil {
		r.readOpaque(text, loc)
		return
	}
	settings, _ := doc["settings"].(map[string]any)
	k8s, _ := settings["kubernetes"].(map[string]any)
	taintLoc := location{part: loc.part, field: "settings.kubernetes.node-taints"}
	switch taints := k8s["node-taints"].(type) {
	case nil:
	case map[string]any:
		for _, k := range sortedKeys(taints) {
			var values []any
			switch v := taints[k].(type) {
			case string:
				values = []any{v}
			case []any:
				values = v
			}
			for _, v := range values {
				s, ok := v.(string)
				if !ok {
					continue
				}
				_, effect, _ := strings.Cut(s, ":")
				r.entry(k, effect, taintLoc)
			}
		}
		delete(k8s, "node-taints") // read; the strings below are the others
	}
	// node-taints that is no table Bottlerocket refuses; it is read below as any string, so that one
	// naming the key is not taken for an absent taint.
	r.readTOMLStrings(doc, loc.part, "")
}

// readTOMLStrings reads every string value of decoded TOML, at the dotted key path, as text.
func (r *taintReader) readTOMLStrings(v any, part int, path string) {
	switch v := v.(type) {
	case string:
		r.readText(v, location{part: part, field: path})
	case map[string]any:
		for _, k := range sortedKeys(v) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			r.readTOMLStrings(v[k], part, p)
		}
	case []any:
		for _, e := range v {
			r.readTOMLStrings(e, part, path)
		}
	case []map[string]any:
		for _, e := range v {
			r.readTOMLStrings(e, part, path)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
