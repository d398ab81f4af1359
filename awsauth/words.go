package awsauth

import (
	"strings"
	"unicode"
)

// This file holds the guesses behind the hints of problems: which key a misspelt key was meant to be,
// whether a group is a list that YAML read as one string, and whether an entry is written for nodes.

// closest returns the candidate that key seems meant to be: equal once both are normalized, or at
// most two edits away for a key of four or more characters; "" when none is close.
func closest(key string, candidates []string, normalize func(string) string) string {
	k := normalize(key)
	best, bestDist := "", 3
	for _, c := range candidates {
		d := editDistance(k, normalize(c))
		if d == 0 {
			return c
		}
		if len([]rune(k)) >= 4 && d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, counting a swap of two neighbours as one
// edit (usernmae is one edit from username).
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// d[i][j] is the distance between x[:i] and y[:j].
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// normalizeEntryKey folds the spellings of an entry key that stand for the same word.
func normalizeEntryKey(k string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, strings.ToLower(k))
}

// listInOne returns the groups a single group string seems to hold, or nil when it looks like one
// group. A list item indented under the one before it folds into it ("system:bootstrappers -
// system:nodes"), and a flow list written inside quotes stays one string ("system:bootstrappers,
// system:nodes").
func listInOne(g string) []string {
	dashed := strings.HasPrefix(g, "- ") || strings.Contains(g, " - ") || strings.Contains(g, "\t- ")
	comma := strings.Contains(g, ",")
	var items []string
	for _, f := range strings.FieldsFunc(g, func(r rune) bool { return unicode.IsSpace(r) || r == ',' }) {
		if f = strings.TrimLeft(f, "-"); f != "" {
			items = append(items, f)
		}
	}
	if len(items) == 0 {
		return nil
	}
	spaced := false
	if len(items) > 1 {
		for _, it := range items {
			spaced = spaced || strings.HasPrefix(it, "system:") || strings.HasPrefix(it, "eks:")
		}
	}
	if dashed || comma || spaced {
		return items
	}
	return nil
}

// nodeGroupsNamed reports whether s names a group or username that only nodes carry.
func nodeGroupsNamed(s string) bool {
	return strings.HasPrefix(s, "system:node:") || strings.Contains(s, "system:nodes") || strings.Contains(s, "system:bootstrappers")
}

// writtenForNodes reports whether any string in a decoded JSON value (keys included) names what only
// nodes carry.
func writtenForNodes(v any) bool {
	switch v := v.(type) {
	case string:
		return nodeGroupsNamed(v)
	case []any:
		for _, x := range v {
			if writtenForNodes(x) {
				return true
			}
		}
	case map[string]any:
		for k, x := range v {
			if nodeGroupsNamed(k) || writtenForNodes(x) {
				return true
			}
		}
	}
	return false
}
