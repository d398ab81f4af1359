package noderole

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/awsauth"
	"github.com/karpenter-guard/karpenter-guard/facts"
)

// Mappings is what aws-auth says about one role: its mapRoles entry by the path-less ARN (the one
// EKS matches), and by the ARN with the role's path.
type Mappings struct {
	Pathless *awsauth.RoleMapping
	Pathed   *awsauth.RoleMapping
}

// MatchMappings finds the role's mapRoles entries in aws-auth (nil: no ConfigMap, no entries).
func MatchMappings(auth *facts.AWSAuthData, role *facts.Role) Mappings {
	if auth == nil {
		return Mappings{}
	}
	pathless := role.PathlessARN()
	m := Mappings{Pathless: auth.RoleMapping(pathless)}
	// A mapping of the role's full ARN counts only when that ARN differs from the path-less one.
	if !strings.EqualFold(pathless, role.ARN) {
		m.Pathed = auth.RoleMapping(role.ARN)
	}
	return m
}

// MappingProblem says why a mapRoles entry does not let nodes join ("" when it does).
func MappingProblem(m awsauth.RoleMapping, windows bool) string {
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

// MappedForNodes reports whether aws-auth lets the role's nodes join: a path-less mapping with the node
// groups; otherwise what is wrong with the mapping it has ("" when it has none).
func MappedForNodes(auth *facts.AWSAuthData, role *facts.Role, windows bool) (bool, string) {
	m := MatchMappings(auth, role)
	if m.Pathless == nil {
		return false, ""
	}
	problem := MappingProblem(*m.Pathless, windows)
	return problem == "", problem
}
