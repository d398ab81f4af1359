package awsauth

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml2 "go.yaml.in/yaml/v2"
	yaml "go.yaml.in/yaml/v3"
)

// This file reads mapAccounts the way aws-iam-authenticator's ParseMap does: yaml.v2 decodes the value
// straight into a list of strings. It imports gopkg.in/yaml.v2; this package uses go.yaml.in/yaml/v2,
// that library's continuation under its new module path (the one sigs.k8s.io/yaml builds on). yaml.v2 keeps every scalar item as written (even unquoted
// numbers keep their text), drops items that are lists or mappings with a type error, and keeps the
// items it could decode.

var typeErrorRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// readAccounts reads mapAccounts: the account ids EKS keeps and the problems.
func readAccounts(value string) ([]string, []Problem) {
	if skippable(value) {
		return nil, nil
	}
	var accounts []string
	err := yaml2.Unmarshal([]byte(value), &accounts)
	var problems []Problem
	var typeErr *yaml2.TypeError
	switch {
	case errors.As(err, &typeErr):
		for _, e := range typeErr.Errors {
			line, msg := 0, e
			if m := typeErrorRE.FindStringSubmatch(e); m != nil {
				line, _ = strconv.Atoi(m[1])
				msg = m[2]
			}
			if strings.HasSuffix(msg, "into []string") {
				// The value itself is not a list: nothing was decoded.
				return nil, []Problem{ignoredValue(KeyMapAccounts, line, "must be a YAML list of account ids, not a "+yamlKind(msg))}
			}
			problems = append(problems, Problem{Key: KeyMapAccounts, Line: line, Effect: DropsEntry,
				Message: fmt.Sprintf("entry is a %s, not an account id", yamlKind(msg)),
				Outcome: "EKS drops this entry and keeps the others"})
		}
	case err != nil:
		line, msg := syntaxError(value, err)
		return nil, []Problem{ignoredValue(KeyMapAccounts, line, "not valid YAML: "+msg)}
	}
	// The items yaml.v2 kept are the scalar items, in order; their lines come from the layout when it
	// agrees.
	var lines []int
	for _, it := range newLayout(value).items {
		if n := resolve(it); n != nil && n.Kind == yaml.ScalarNode {
			lines = append(lines, it.Line)
		}
	}
	if len(lines) != len(accounts) {
		lines = nil
	}
	for i, a := range accounts {
		if accountIDRE.MatchString(a) {
			continue
		}
		line := 0
		if lines != nil {
			line = lines[i]
		}
		msg := fmt.Sprintf("%q is not a 12-digit account id", a)
		if a == "" {
			msg = "entry is empty"
		}
		problems = append(problems, Problem{Key: KeyMapAccounts, Line: line, Effect: ReadAsWritten, Message: msg,
			Outcome: "EKS keeps it, but no identity's account id equals it"})
	}
	sortByLine(problems)
	return accounts, problems
}

// yamlKind names the kind in a yaml.v2 type error ("cannot unmarshal !!seq into string").
func yamlKind(msg string) string {
	switch {
	case strings.Contains(msg, "!!seq"):
		return "list"
	case strings.Contains(msg, "!!map"):
		return "mapping"
	case strings.Contains(msg, "!!int"), strings.Contains(msg, "!!float"):
		return "number"
	case strings.Contains(msg, "!!bool"):
		return "boolean"
	case strings.Contains(msg, "!!null"):
		return "null"
	}
	return "string"
}

// sortByLine orders problems by line, keeping the order of equal lines.
func sortByLine(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int { return a.Line - b.Line })
}
