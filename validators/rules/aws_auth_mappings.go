package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/awsauth"
	"github.com/karpenter-guard/karpenter-guard/facts"
)

// This file holds what aws-auth says about a node role: its mapRoles entries, and whether they let
// the role's nodes join.

// roleMappings is what aws-auth says about one role: its mapRoles entry by the path-less ARN (the one
// EKS matches), and by the ARN with the role's path.
type roleMappings struct {
	pathless *awsauth.RoleMapping
	pathed   *awsauth.RoleMapping
}

// matchMappings finds the role's mapRoles entries in aws-auth (nil: no ConfigMap, no entries).
func matchMappings(auth *facts.AWSAuthData, role *facts.Role) roleMappings {
	if auth == nil {
		return roleMappings{}
	}
	pathless := role.PathlessARN()
	m := roleMappings{pathless: auth.RoleMapping(pathless)}
	// A mapping of the role's full ARN counts only when that ARN differs from the path-less one.
	if !strings.EqualFold(pathless, role.ARN) {
		m.pathed = auth.RoleMapping(role.ARN)
	}
	return m
}

// mappingProblem says why a mapRoles entry does not let nodes join ("" when it does).
func mappingProblem(m awsauth.RoleMapping, windows bool) string {
	var missing []string
	want := []string{"system:bootstrappers", "system:nodes"}
	if windows {
		want = append(want, "eks:kube-proxy-windows")
	}
	for _, g := range want {
		found := false
		for _, have := range m.Groups {
			found = found || have == g
		}
		if !found {
			missing = append(missing, g)
		}
	}
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, "without "+strings.Join(missing, " and "))
	}
	if m.Username != "system:node:{{EC2PrivateDNSName}}" {
		problems = append(problems, fmt.Sprintf("with username %q instead of system:node:{{EC2PrivateDNSName}}", m.Username))
	}
	return strings.Join(problems, ", ")
}

// mappedForNodes reports whether aws-auth lets the role's nodes join: a path-less mapping with the node
// groups; otherwise what is wrong with the mapping it has ("" when it has none).
func mappedForNodes(auth *facts.AWSAuthData, role *facts.Role, windows bool) (bool, string) {
	m := matchMappings(auth, role)
	if m.pathless == nil {
		return false, ""
	}
	problem := mappingProblem(*m.pathless, windows)
	return problem == "", problem
}
