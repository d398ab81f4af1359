// Package awsauth parses the data of the kube-system/aws-auth ConfigMap the way EKS reads it, keeping the
// line of every entry so that a problem can be pointed at inside mapRoles.
package awsauth

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// The data keys of aws-auth.
const (
	KeyMapRoles    = "mapRoles"
	KeyMapUsers    = "mapUsers"
	KeyMapAccounts = "mapAccounts"
)

// RoleMapping is one mapRoles entry.
type RoleMapping struct {
	RoleARN  string
	Username string
	Groups   []string
	// Line is the entry's 1-based line inside the mapRoles value.
	Line int
}

// UserMapping is one mapUsers entry.
type UserMapping struct {
	UserARN  string
	Username string
	Groups   []string
	Line     int
}

// Config is the parsed aws-auth data.
type Config struct {
	MapRoles    []RoleMapping
	MapUsers    []UserMapping
	MapAccounts []string
}

// Problem is one reason the ConfigMap is malformed.
type Problem struct {
	// Key is the data key (mapRoles, mapUsers, mapAccounts).
	Key string
	// Line is 1-based inside the key's value; 0 when the problem is the whole value.
	Line    int
	Message string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", p.Key, p.Line, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.Key, p.Message)
}

var syntaxLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// prefixBudget is how many bytes syntaxErrorLine re-parses beyond twice the value: re-parsing every
// prefix grows with the square of the value, so the budget keeps the work linear.
const prefixBudget = 1 << 20

// syntaxErrorLine returns the 1-based line of an invalid value where YAML stops making sense: the line
// after the longest run of leading lines that still parses. The "line N" of yaml's error names the start
// of the enclosing construct, is often a line early (more after a leading ---) and is missing for errors
// on the first line, so it is only the fallback when the value is too large to re-parse.
func syntaxErrorLine(value string, fallback int) int {
	lines := strings.SplitAfter(value, "\n")
	size, budget := len(value), prefixBudget+2*len(value)
	for k := len(lines) - 1; k >= 1; k-- {
		size -= len(lines[k])
		if budget -= size; budget < 0 {
			return fallback
		}
		var n yaml.Node
		if yaml.Unmarshal([]byte(value[:size]), &n) == nil {
			return k + 1
		}
	}
	return 1
}

// Parse reads the aws-auth data. Entries that parse are returned even when others do not; any problem
// means EKS would reject the whole ConfigMap, so callers treat a non-empty problem list as "malformed".
func Parse(data map[string]string) (Config, []Problem) {
	var cfg Config
	var problems []Problem
	if v, ok := data[KeyMapRoles]; ok {
		items, ps := sequence(KeyMapRoles, v)
		problems = append(problems, ps...)
		for _, it := range items {
			m, ps := mapping(KeyMapRoles, it, "rolearn")
			problems = append(problems, ps...)
			if m != nil {
				cfg.MapRoles = append(cfg.MapRoles, RoleMapping{RoleARN: m.arn, Username: m.username, Groups: m.groups, Line: it.Line})
			}
		}
	}
	if v, ok := data[KeyMapUsers]; ok {
		items, ps := sequence(KeyMapUsers, v)
		problems = append(problems, ps...)
		for _, it := range items {
			m, ps := mapping(KeyMapUsers, it, "userarn")
			problems = append(problems, ps...)
			if m != nil {
				cfg.MapUsers = append(cfg.MapUsers, UserMapping{UserARN: m.arn, Username: m.username, Groups: m.groups, Line: it.Line})
			}
		}
	}
	if v, ok := data[KeyMapAccounts]; ok {
		items, ps := sequence(KeyMapAccounts, v)
		problems = append(problems, ps...)
		for _, it := range items {
			if it.Kind != yaml.ScalarNode || it.Value == "" || it.Tag == "!!null" {
				problems = append(problems, Problem{Key: KeyMapAccounts, Line: it.Line, Message: "entry must be an AWS account id"})
				continue
			}
			cfg.MapAccounts = append(cfg.MapAccounts, it.Value)
		}
	}
	return cfg, problems
}

// sequence parses one data value as a YAML list.
func sequence(key, value string) ([]*yaml.Node, []Problem) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
		line, msg := 0, err.Error()
		if m := syntaxLineRE.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		return nil, []Problem{{Key: key, Line: syntaxErrorLine(value, line), Message: "not valid YAML: " + msg}}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.SequenceNode {
		return nil, []Problem{{Key: key, Line: root.Line, Message: "must be a YAML list of entries"}}
	}
	return root.Content, nil
}

type entry struct {
	arn, username string
	groups        []string
}

// mapping checks one mapRoles/mapUsers entry.
func mapping(key string, n *yaml.Node, arnKey string) (*entry, []Problem) {
	if n.Kind != yaml.MappingNode {
		return nil, []Problem{{Key: key, Line: n.Line, Message: fmt.Sprintf("entry must be a mapping with %s, username and groups", arnKey)}}
	}
	var e entry
	var problems []Problem
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		// EKS's authenticator decodes entries through JSON into tagged structs, and encoding/json
		// matches keys regardless of case: roleARN and rOlEaRn are rolearn.
		name := k.Value
		for _, known := range []string{arnKey, "username", "groups"} {
			if strings.EqualFold(name, known) {
				name = known
			}
		}
		seen[name] = true
		switch name {
		case arnKey, "username":
			if v.Kind != yaml.ScalarNode {
				problems = append(problems, Problem{Key: key, Line: v.Line, Message: name + " must be a string"})
				continue
			}
			if v.Tag == "!!null" {
				continue // `username: ~` or `rolearn: null` is no value: reported as missing below
			}
			if name == "username" {
				e.username = v.Value
			} else {
				e.arn = v.Value
			}
		case "groups":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				continue
			}
			if v.Kind != yaml.SequenceNode {
				problems = append(problems, Problem{Key: key, Line: v.Line, Message: "groups must be a list of strings"})
				continue
			}
			for _, g := range v.Content {
				if g.Kind != yaml.ScalarNode {
					problems = append(problems, Problem{Key: key, Line: g.Line, Message: "groups must be a list of strings"})
					continue
				}
				e.groups = append(e.groups, g.Value)
			}
		}
	}
	if !seen[arnKey] || e.arn == "" {
		problems = append(problems, Problem{Key: key, Line: n.Line, Message: fmt.Sprintf("entry has no %s", arnKey)})
	}
	if !seen["username"] || e.username == "" {
		problems = append(problems, Problem{Key: key, Line: n.Line, Message: "entry has no username"})
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return &e, nil
}
