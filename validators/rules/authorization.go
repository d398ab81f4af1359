package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/awsauth"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/noderole"
)

// This file holds whether the role an EC2NodeClass's nodes boot with may join the cluster
// (docs/design.md §3): the cluster's authentication mode, the role's access entry and its aws-auth
// mapping. One analysis per EC2NodeClass feeds the node-role rules (node-role-not-authorized,
// node-role-access-entry-type, node-role-access-entry-stale, aws-auth-rolearn-has-path,
// al2023-hybrid-auth, node-username-mismatch, windows-node-missing-kube-proxy-group), so each cause is
// reported once, by the rule that names it: whether the mapping lets nodes join at all (its type, its
// node groups), then whether its username matches the nodes' names, then the Windows group.

// authorization is the analysis of docs/design.md §3 for one EC2NodeClass.
type authorization struct {
	cluster *facts.Cluster
	role    *facts.Role
	field   string
	windows bool
	// naming is how the class's nodes are named, which decides the username the mapping must give.
	naming nodeNaming
	// entry is the role's access entry (only looked up when the mode reads entries).
	entry   *facts.AccessEntry
	entryOK bool
	// mappings (only looked up when the mode reads aws-auth).
	mappings  noderole.Mappings
	mappingOK bool
	// mappingProblem says what is wrong with a path-less mapping that does not let nodes join (the
	// node groups it lacks).
	mappingProblem string
	// awsAuthErr is set when the mode reads aws-auth but it is unknown: only an access entry of the
	// role (which wins over aws-auth) can decide then.
	awsAuthErr error
	// awsAuthData is aws-auth as stored, when known: a message reads it again to say what EKS makes of
	// the role's entry.
	awsAuthData map[string]string
}

// authorizations are the authorization analyses of one evaluation, by EC2NodeClass.
var authorizations = &validators.Analysis[*objects.Object, authResult]{Name: "authorization"}

// authResult is the outcome of analyseAuthorization.
type authResult struct {
	a   *authorization
	err error
}

// authorizationOf analyses the node role's access once per object and evaluation: the node-role
// rules all read it. It returns nil, nil when the role does not resolve (node-role-not-found and the
// instance-profile rules report that).
func authorizationOf(c *validators.Context, o *objects.Object) (*authorization, error) {
	r := validators.Memo(c, authorizations, o, func() authResult {
		a, err := analyseAuthorization(c, o)
		return authResult{a, err}
	})
	return r.a, r.err
}

// analyseAuthorization resolves the node role and reads what decides whether its nodes may join: the
// access entry when the mode reads entries, aws-auth when it reads aws-auth (or, in mode API, when it
// is known anyway, to say it maps the role in vain).
func analyseAuthorization(c *validators.Context, o *objects.Object) (*authorization, error) {
	cluster, err := c.Facts.Cluster(c)
	if err != nil {
		return nil, err
	}
	r, err := noderole.Resolve(c, o)
	if err != nil || r.Role == nil {
		return nil, err
	}
	a := &authorization{cluster: cluster, role: r.Role, field: r.Field, windows: userdata.IsWindows(ami.Family(o.NodeClass)), naming: nodeNamingOf(c, o)}
	if cluster.HonoursAccessEntries() {
		a.entry, err = c.Facts.AccessEntry(c, r.Role)
		if err != nil {
			return nil, err
		}
		a.entryOK = a.entry != nil && a.joinsWith(a.entry.Type)
	}
	switch {
	case !cluster.HonoursAWSAuth():
		// Mode API ignores aws-auth; when it is known anyway, say that it maps the role in vain.
		if c.Facts.Known(c, facts.AWSAuth) == nil {
			if data, err := c.Facts.AWSAuth(c); err == nil {
				a.mappings = noderole.MatchMappings(data, r.Role)
			}
		}
	default:
		data, err := c.Facts.AWSAuth(c)
		if err != nil {
			a.awsAuthErr = err
			break
		}
		a.mappings = noderole.MatchMappings(data, r.Role)
		if data != nil {
			a.awsAuthData = data.Data
		}
		if m := a.mappings.Pathless; m != nil {
			a.mappingProblem = joinProblem(*m)
			a.mappingOK = a.mappingProblem == ""
		}
	}
	return a, nil
}

// entryEC2 is the access entry type EKS Auto Mode creates for its nodes, and nodeadm's documentation for
// nodes named after their instance ID: its username is system:node:{{SessionName}}.
const entryEC2 = "EC2"

// wantType is the access entry type to create for the role's nodes: EC2_WINDOWS for Windows families,
// EC2 for nodes named after their instance ID, else EC2_LINUX.
func (a *authorization) wantType() string {
	switch {
	case a.windows:
		return facts.EntryEC2Windows
	case a.naming == namingInstanceID:
		return entryEC2
	}
	return facts.EntryEC2Linux
}

// joinsWith reports whether an access entry of that type lets the role's nodes join: EC2_LINUX for any
// family (Windows nodes join with it too, without the group Windows DNS needs), EC2_WINDOWS for Windows
// families, and EC2 for nodes named after their instance ID. Whether the entry's username matches the
// nodes' names is node-username-mismatch's question.
func (a *authorization) joinsWith(typ string) bool {
	switch typ {
	case facts.EntryEC2Linux:
		return true
	case facts.EntryEC2Windows:
		return a.windows
	case entryEC2:
		return !a.windows && a.naming == namingInstanceID
	}
	return false
}

// joinProblem says why a mapRoles entry does not let nodes join at all: the node groups it lacks (""
// when it has both). Its username is node-username-mismatch's question, and the group Windows DNS
// needs windows-node-missing-kube-proxy-group's.
func joinProblem(m awsauth.RoleMapping) string {
	var missing []string
	for _, g := range []string{"system:bootstrappers", "system:nodes"} {
		if !slices.Contains(m.Groups, g) {
			missing = append(missing, g)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "without " + strings.Join(missing, " and ")
}

// inEffect returns the mapping the cluster's mode applies to the role: its access entry, in a mode
// that reads entries, when it has one (an entry wins over aws-auth); else its path-less aws-auth
// mapping, in a mode that reads aws-auth; else neither.
func (a *authorization) inEffect() (*facts.AccessEntry, *awsauth.RoleMapping) {
	if a.cluster.HonoursAccessEntries() && a.entry != nil {
		return a.entry, nil
	}
	if a.cluster.HonoursAWSAuth() {
		return nil, a.mappings.Pathless
	}
	return nil, nil
}

// covered applies the decision table of docs/design.md §3.
func (a *authorization) covered() bool {
	if a.cluster.HonoursAccessEntries() && a.entry != nil {
		return a.entryOK // an entry wins over aws-auth for the same role
	}
	return a.cluster.HonoursAWSAuth() && a.mappingOK
}

// explainedElsewhere is true when a more specific rule reports why the role is not covered.
func (a *authorization) explainedElsewhere() bool {
	if a.cluster.HonoursAccessEntries() && a.entry != nil && !a.entryOK {
		return true // node-role-access-entry-type
	}
	return a.cluster.HonoursAWSAuth() && a.entry == nil && a.mappings.Pathless == nil && a.mappings.Pathed != nil // aws-auth-rolearn-has-path
}

// whyNotCovered says why nothing the cluster's mode honours covers the role, and what EKS makes of
// the role's aws-auth entry when that explains it (a mistyped field, an entry another one replaces, a
// data key EKS never reads).
func (a *authorization) whyNotCovered() string {
	c, role := a.cluster, a.role.ARN
	problem, asRead := a.mappingProblem, ""
	if cause := awsAuthCause(a.awsAuthData, a.role.PathlessARN()); cause != "" && c.AuthenticationMode != facts.ModeAPI {
		if problem != "" {
			problem += " (" + cause + ")"
		} else {
			asRead = " as EKS reads it (" + cause + ")"
		}
	}
	switch c.AuthenticationMode {
	case facts.ModeAPI:
		if a.mappings.Pathless != nil || a.mappings.Pathed != nil {
			return fmt.Sprintf("node role %s has no access entry in cluster %s; aws-auth maps it, but mode API ignores aws-auth, so nodes never join", role, c.Name)
		}
		return fmt.Sprintf("node role %s has no access entry in cluster %s (mode API), so nodes never join", role, c.Name)
	case facts.ModeConfigMap:
		if problem != "" {
			return fmt.Sprintf("aws-auth maps node role %s %s, so nodes of cluster %s (mode CONFIG_MAP) never join", role, problem, c.Name)
		}
		return fmt.Sprintf("node role %s is not in aws-auth mapRoles%s, and cluster %s uses mode CONFIG_MAP, which reads only aws-auth, so nodes never join", role, asRead, c.Name)
	default:
		if problem != "" {
			return fmt.Sprintf("node role %s has no access entry in cluster %s, and aws-auth maps it %s, so nodes never join", role, c.Name, problem)
		}
		return fmt.Sprintf("node role %s has neither an %s access entry nor an aws-auth mapping%s in cluster %s (mode %s), so nodes never join", role, a.wantType(), asRead, c.Name, c.AuthenticationMode)
	}
}

// fix is the exact command or mapRoles entry that authorizes the role.
func (a *authorization) fix() string {
	if a.cluster.HonoursAccessEntries() {
		return a.createEntry()
	}
	return a.mapRolesFix()
}

// mapRolesFix adds the mapRoles entry, or replaces the role's broken one (EKS keeps only the last entry
// for a rolearn, so one added before it would change nothing) or the one EKS drops (left in place, it
// would still read as the role's mapping).
func (a *authorization) mapRolesFix() string {
	if a.mappings.Pathless != nil {
		return "replace the role's aws-auth mapRoles entry with:\n" + a.mapRolesEntry()
	}
	if e := droppedEntryOf(a.awsAuthData, a.role.PathlessARN()); e != nil {
		at := ""
		if e.Line > 0 {
			at = fmt.Sprintf(" at line %d", e.Line)
		}
		return fmt.Sprintf("replace the role's aws-auth mapRoles entry%s, which EKS drops, with:\n%s", at, a.mapRolesEntry())
	}
	return "add to aws-auth mapRoles:\n" + a.mapRolesEntry()
}

// createEntry is the command that creates the role's access entry.
func (a *authorization) createEntry() string {
	return fmt.Sprintf("aws eks create-access-entry --cluster-name %s --region %s --principal-arn %s --type %s",
		a.cluster.Name, a.cluster.Region, a.role.ARN, a.wantType())
}

// recreateEntry deletes the role's access entry and creates it again.
func (a *authorization) recreateEntry() string {
	return fmt.Sprintf("aws eks delete-access-entry --cluster-name %s --region %s --principal-arn %s\n%s",
		a.cluster.Name, a.cluster.Region, a.entry.PrincipalARN, a.createEntry())
}

// mapRolesEntry is the mapRoles entry that lets the role's nodes join.
func (a *authorization) mapRolesEntry() string {
	groups := "    - system:bootstrappers\n    - system:nodes"
	if a.windows {
		groups += "\n    - " + kubeProxyWindowsGroup
	}
	return fmt.Sprintf("- rolearn: %s\n  username: %s\n  groups:\n%s", a.role.PathlessARN(), a.naming.username(), groups)
}
