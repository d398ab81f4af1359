package facts

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file holds EC2's selector semantics, shared by the snapshot provider and by tests of the live
// provider's filters: terms are ORed by callers, the fields of one term ANDed; name and tag values
// accept * and ? wildcards; a tag value of * means "key present"; only available images match.

// Wildcard reports whether value matches an EC2 filter pattern: * matches any run of characters (/
// included), ? exactly one, and a backslash makes the next *, ? or backslash literal (`\*amazon\?\\` is
// the literal string `*amazon?\`, as the EC2 API reference has it); every other character,
// [ and a backslash before anything else included, is literal. Matching is case-sensitive.
//
// It walks both strings rune by rune without allocating: the snapshot provider calls it for every
// image of an account on every name term.
func Wildcard(pattern, value string) bool {
	if !strings.ContainsAny(pattern, "*?\\") {
		return pattern == value
	}
	// Greedy match, backtracking to the last star only: linear in practice, O(len*len) at worst.
	p, v, lastStar, lastV := 0, 0, -1, 0
	for v < len(value) {
		tok, tokLen := wildcardToken(pattern, p)
		switch {
		case tok == wildStar:
			lastStar, lastV = p+tokLen, v
			p += tokLen
			continue
		case tok != wildEnd:
			r, n := utf8.DecodeRuneInString(value[v:])
			if tok == wildOne || tok == r {
				p += tokLen
				v += n
				continue
			}
		}
		if lastStar < 0 {
			return false
		}
		_, n := utf8.DecodeRuneInString(value[lastV:])
		lastV += n
		p, v = lastStar, lastV
	}
	for {
		tok, tokLen := wildcardToken(pattern, p)
		if tok != wildStar {
			return tok == wildEnd
		}
		p += tokLen
	}
}

// Pattern tokens besides literal runes.
const (
	wildEnd  rune = -1
	wildStar rune = -2
	wildOne  rune = -3
)

// wildcardToken returns the pattern token at byte offset p and its length in bytes: a literal rune
// (an escaped *, ? or backslash included), wildStar, wildOne, or wildEnd past the pattern.
func wildcardToken(pattern string, p int) (rune, int) {
	if p >= len(pattern) {
		return wildEnd, 0
	}
	switch c := pattern[p]; c {
	case '*':
		return wildStar, 1
	case '?':
		return wildOne, 1
	case '\\':
		if p+1 < len(pattern) && strings.IndexByte(`*?\`, pattern[p+1]) >= 0 {
			return rune(pattern[p+1]), 2
		}
	}
	return utf8.DecodeRuneInString(pattern[p:])
}

// MatchTags reports whether tags carry every key of want with a matching value ("*" = any value).
func MatchTags(want, tags map[string]string) bool {
	for k, v := range want {
		got, ok := tags[k]
		if !ok {
			return false
		}
		if v != "*" && !Wildcard(v, got) {
			return false
		}
	}
	return true
}

// Owners returns the owners a term searches: its owner list, or self and amazon for a name term
// without owner, or nil (any owner) otherwise.
func (t ImageTerm) Owners() []string {
	if t.Owner != "" {
		out := []string{} // never nil: an owner of commas only selects no owner, not any owner
		for _, o := range strings.Split(t.Owner, ",") {
			if o = strings.TrimSpace(o); o != "" {
				out = append(out, o)
			}
		}
		return out
	}
	if t.Name != "" {
		return []string{"self", "amazon"}
	}
	return nil
}

// MatchImage reports whether an image is selected by a term; account is the cluster's account (self).
func MatchImage(t ImageTerm, img Image, account string) bool {
	if img.State != "available" {
		return false
	}
	if t.ID != "" && img.ID != t.ID {
		return false
	}
	if t.Name != "" && !Wildcard(t.Name, img.Name) {
		return false
	}
	if len(t.Tags) > 0 && !MatchTags(t.Tags, img.Tags) {
		return false
	}
	if owners := t.Owners(); owners != nil {
		ok := false
		for _, o := range owners {
			switch o {
			case "self":
				ok = ok || (account != "" && img.OwnerID == account)
			case "amazon", "aws-marketplace":
				ok = ok || img.OwnerAlias == o
			default:
				ok = ok || img.OwnerID == o
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// MatchSubnet reports whether a subnet is selected by a term. A term with an id selects by the id
// alone: Karpenter ignores the term's other fields (selector-term-ignored-fields warns about them).
func MatchSubnet(t SelectorTerm, s Subnet) bool {
	if t.ID != "" {
		return s.ID == t.ID
	}
	return len(t.Tags) == 0 || MatchTags(t.Tags, s.Tags)
}

// MatchSecurityGroup reports whether a group is selected by a term; an id selects alone, as for
// subnets.
func MatchSecurityGroup(t SelectorTerm, g SecurityGroup) bool {
	if t.ID != "" {
		return g.ID == t.ID
	}
	if t.Name != "" && !Wildcard(t.Name, g.Name) {
		return false
	}
	return len(t.Tags) == 0 || MatchTags(t.Tags, g.Tags)
}

// AliasParameters returns the SSM parameter names that resolve an alias for a Kubernetes minor version
// ("1.33"), one per architecture, as Karpenter resolves them (docs/design.md §4; karpenter-provider-aws
// pkg/providers/amifamily); nil for a family the parameters do not cover.
func AliasParameters(family, version, k8s string) map[string]string {
	out := map[string]string{}
	for _, arch := range []string{"x86_64", "arm64"} {
		switch family {
		case "al2023":
			if version == "latest" {
				out[arch] = "/aws/service/eks/optimized-ami/" + k8s + "/amazon-linux-2023/" + arch + "/standard/recommended/image_id"
			} else {
				out[arch] = "/aws/service/eks/optimized-ami/" + k8s + "/amazon-linux-2023/" + arch + "/standard/amazon-eks-node-al2023-" + arch + "-standard-" + k8s + "-" + version + "/image_id"
			}
		case "al2":
			dir, node := "amazon-linux-2", "amazon-eks-node-"
			if arch == "arm64" {
				dir, node = "amazon-linux-2-arm64", "amazon-eks-arm64-node-"
			}
			name := "recommended"
			if version != "latest" {
				name = node + k8s + "-" + version
			}
			out[arch] = "/aws/service/eks/optimized-ami/" + k8s + "/" + dir + "/" + name + "/image_id"
		case "bottlerocket":
			// Bottlerocket versions carry a v on GitHub but not in the parameter path.
			out[arch] = "/aws/service/bottlerocket/aws-k8s-" + k8s + "/" + arch + "/" + strings.TrimLeft(version, "v") + "/image_id"
		case "windows2019", "windows2022", "windows2025":
			if arch != "x86_64" {
				continue
			}
			year := strings.TrimPrefix(family, "windows")
			out[arch] = "/aws/service/ami-windows-latest/Windows_Server-" + year + "-English-Core-EKS_Optimized-" + k8s + "/image_id"
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ResolveImageTerm turns an ssmParameter term into a term for the image id the parameter holds,
// asking p; other terms come back as they are. ok is false when the parameter does not exist: the
// term selects nothing. Every provider resolves terms this way, so that an unknown parameter is the
// same unknown fact (ssmParameters) whichever answers.
func ResolveImageTerm(ctx context.Context, p Provider, t ImageTerm) (_ ImageTerm, ok bool, _ error) {
	if t.SSMParameter == "" {
		return t, true, nil
	}
	id, ok, err := p.SSMParameter(ctx, t.SSMParameter)
	if err != nil || !ok {
		return ImageTerm{}, false, err
	}
	return ImageTerm{ID: id}, true, nil
}

// SortImages puts images in the order both providers answer in: newest first (creationDate, which AWS
// writes in one ISO 8601 form), then by ID. AWS lists them in no stated order and a snapshot in its
// file's, so without it a message or a suggested fix could depend on where the facts came from.
func SortImages(imgs []Image) {
	slices.SortStableFunc(imgs, func(a, b Image) int {
		if c := strings.Compare(b.CreationDate, a.CreationDate); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// SortSubnets puts subnets in the order both providers answer in: by ID.
func SortSubnets(s []Subnet) {
	slices.SortStableFunc(s, func(a, b Subnet) int { return strings.Compare(a.ID, b.ID) })
}

// SortSecurityGroups puts security groups in the order both providers answer in: by ID.
func SortSecurityGroups(g []SecurityGroup) {
	slices.SortStableFunc(g, func(a, b SecurityGroup) int { return strings.Compare(a.ID, b.ID) })
}
