package validators

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/awsauth"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
)

// This file holds the node-role family: whether the role nodes boot with may join the cluster
// (docs/design.md §3). One analysis per EC2NodeClass (authorization) feeds all of them, so each cause is
// reported once, by the rule that names it.

var nodeRoleNotAuthorized = &Rule{
	ID:            "node-role-not-authorized",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.ClusterAuthenticationMode, facts.Roles},
	MayNeed:       []facts.Fact{facts.AccessEntries, facts.AWSAuth, facts.InstanceProfiles},
	Summary:       "the node role is covered neither by an EC2_LINUX/EC2_WINDOWS access entry nor by an aws-auth mapping the cluster's mode honours",
	Doc: "Nodes authenticate with their instance profile's role. EKS lets them join only if the cluster's " +
		"authentication mode honours a mapping for that role: an access entry of type EC2_LINUX or " +
		"EC2_WINDOWS (modes API and API_AND_CONFIG_MAP), or an aws-auth mapRoles entry with the path-less " +
		"role ARN, username system:node:{{EC2PrivateDNSName}} and both system:bootstrappers and " +
		"system:nodes (modes CONFIG_MAP and API_AND_CONFIG_MAP; an access entry for the same role wins). " +
		"Otherwise instances launch and never become nodes. The fix is the exact create-access-entry " +
		"command or mapRoles entry. A wrong entry type or a pathed ARN is reported by its own rule instead.",
	Check: func(c *Context, o *objects.Object) []Finding {
		a, err := c.authorization(o)
		if err != nil || a == nil {
			return c.unknownFact(err)
		}
		if a.covered() || a.explainedElsewhere() {
			return nil
		}
		if a.awsAuthErr != nil {
			return c.unknownFact(a.awsAuthErr)
		}
		return []Finding{{
			Field:   a.field,
			Line:    o.Fields.Line("spec", strings.TrimPrefix(a.field, "spec.")),
			Message: a.whyNotCovered(),
			Fix:     a.fix(),
		}}
	},
}

var nodeRoleAccessEntryType = &Rule{
	ID:            "node-role-access-entry-type",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.ClusterAuthenticationMode, facts.AccessEntries, facts.Roles},
	MayNeed:       []facts.Fact{facts.InstanceProfiles},
	Summary:       "the node role's access entry is not of type EC2_LINUX/EC2_WINDOWS",
	Doc: "A STANDARD access entry cannot carry system: groups, so it never lets nodes join " +
		"(karpenter-provider-aws issue 7558); type EC2 is for EKS Auto Mode. In mode API_AND_CONFIG_MAP the " +
		"entry also wins over an aws-auth mapping of the same role. Delete the entry and create it again " +
		"with type EC2_LINUX (EC2_WINDOWS for Windows families).",
	Check: func(c *Context, o *objects.Object) []Finding {
		a, err := c.authorization(o)
		if err != nil || a == nil {
			return c.unknownFact(err)
		}
		if a.entry == nil || a.entryOK || !a.cluster.HonoursAccessEntries() {
			return nil
		}
		msg := fmt.Sprintf("the access entry for node role %s in cluster %s has type %s, which cannot let nodes join; nodes need %s",
			a.role.ARN, a.cluster.Name, a.entry.Type, a.wantType())
		if a.cluster.AuthenticationMode == facts.ModeAPIAndConfigMap && a.mappingOK {
			msg += " (its aws-auth mapping does not count: the entry wins)"
		}
		return []Finding{{
			Field:   a.field,
			Line:    o.Fields.Line("spec", strings.TrimPrefix(a.field, "spec.")),
			Message: msg,
			Fix:     a.recreateEntry(),
		}}
	},
}

var nodeRoleAccessEntryStale = &Rule{
	ID:            "node-role-access-entry-stale",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.ClusterAuthenticationMode, facts.AccessEntries, facts.Roles},
	MayNeed:       []facts.Fact{facts.InstanceProfiles},
	Summary:       "the access entry is older than the role (role re-created; the entry points at a dead role id)",
	Doc: "Access entries are bound to the role's unique id. When a role is deleted and created again under " +
		"the same name, the old entry still shows the ARN but authorizes nothing. Re-create the entry.",
	Check: func(c *Context, o *objects.Object) []Finding {
		a, err := c.authorization(o)
		if err != nil || a == nil {
			return c.unknownFact(err)
		}
		e := a.entry
		if e == nil || e.CreatedAt.IsZero() || a.role.CreateDate.IsZero() || !e.CreatedAt.Before(a.role.CreateDate) {
			return nil
		}
		return []Finding{{
			Field: a.field,
			Line:  o.Fields.Line("spec", strings.TrimPrefix(a.field, "spec.")),
			Message: fmt.Sprintf("the access entry for %s was created %s, before the role itself (%s): the role was re-created and the entry still points at the old role id",
				a.role.ARN, e.CreatedAt.Format("2006-01-02"), a.role.CreateDate.Format("2006-01-02")),
			Fix: a.recreateEntry(),
		}}
	},
}

var awsAuthRoleARNHasPath = &Rule{
	ID:            "aws-auth-rolearn-has-path",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.AWSAuth, facts.Roles},
	MayNeed:       []facts.Fact{facts.InstanceProfiles, facts.ClusterAuthenticationMode, facts.AccessEntries},
	Summary:       "the only aws-auth mapping of the node role uses the ARN with the role's path",
	Doc: "EKS turns the node's STS identity into a role ARN without the IAM path, so a mapRoles entry " +
		"written with the path (arn:aws:iam::…:role/team/NodeRole) never matches. Write the path-less ARN. " +
		"Not reported where the mapping decides nothing: mode API, or an access entry of the role (it wins).",
	Check: func(c *Context, o *objects.Object) []Finding {
		r, err := c.resolveRole(o)
		if err != nil || r.role == nil {
			return c.unknownFact(err)
		}
		data, err := c.Facts.AWSAuth(c)
		if err != nil {
			return c.unknownFact(err)
		}
		m := matchMappings(data, r.role)
		if m.pathless != nil || m.pathed == nil {
			return nil
		}
		// The mapping decides only in a mode that reads aws-auth and when no access entry of the role
		// wins over it (docs/design.md §3); otherwise node-role-not-authorized or -access-entry-type report.
		if c.Facts.Known(c, facts.ClusterAuthenticationMode) == nil {
			a, err := c.authorization(o)
			if err != nil || a == nil {
				return c.unknownFact(err)
			}
			if !a.cluster.HonoursAWSAuth() || a.entry != nil {
				return nil
			}
		}
		return []Finding{{
			Field: r.field,
			Line:  o.Fields.Line("spec", strings.TrimPrefix(r.field, "spec.")),
			Message: fmt.Sprintf("aws-auth maps node role %s only as rolearn %s (mapRoles line %d), with the role's path %s: EKS sees nodes as %s, so that entry never matches",
				r.role.Name, m.pathed.RoleARN, m.pathed.Line, r.role.Path, r.role.PathlessARN()),
			Fix: fmt.Sprintf("in aws-auth mapRoles, replace rolearn: %s with rolearn: %s", m.pathed.RoleARN, r.role.PathlessARN()),
		}}
	},
}

var al2023HybridAuth = &Rule{
	ID:            "al2023-hybrid-auth",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	Needs:         []facts.Fact{facts.ClusterAuthenticationMode, facts.AccessEntries, facts.AWSAuth, facts.Roles},
	MayNeed:       []facts.Fact{facts.InstanceProfiles},
	Summary:       "AL2023 nodes whose role is covered only by an access entry",
	Doc: "A field report describes AL2023 nodes that never registered with access entries alone and joined " +
		"after the cluster moved to API_AND_CONFIG_MAP with an aws-auth mapping holding both node groups. " +
		"Karpenter's docs say an EC2_LINUX entry suffices, so this is a warning: if AL2023 nodes do not " +
		"register, add the mapping.",
	Check: func(c *Context, o *objects.Object) []Finding {
		if family(o.NodeClass) != userdata.FamilyAL2023 {
			return nil
		}
		a, err := c.authorization(o)
		if err != nil || a == nil {
			return c.unknownFact(err)
		}
		if a.awsAuthErr != nil {
			return c.unknownFact(a.awsAuthErr)
		}
		if !a.covered() || a.entry == nil || !a.entryOK || (a.cluster.AuthenticationMode == facts.ModeAPIAndConfigMap && a.mappingOK) {
			return nil
		}
		fix := a.mapRolesFix()
		if a.cluster.AuthenticationMode == facts.ModeAPI {
			// EKS only moves CONFIG_MAP -> API_AND_CONFIG_MAP -> API: aws-auth cannot be enabled again.
			fix = fmt.Sprintf("cluster %s cannot return from mode API to API_AND_CONFIG_MAP (EKS never re-enables aws-auth), so the aws-auth workaround is not available; if AL2023 nodes do not register, inspect the entry: aws eks describe-access-entry --cluster-name %s --region %s --principal-arn %s",
				a.cluster.Name, a.cluster.Name, a.cluster.Region, a.entry.PrincipalARN)
		}
		return []Finding{{
			Field: a.field,
			Line:  o.Fields.Line("spec", strings.TrimPrefix(a.field, "spec.")),
			Message: fmt.Sprintf("AL2023 nodes of role %s are authorized only by an %s access entry (mode %s): teams have seen such nodes never register until aws-auth also mapped the role with system:bootstrappers and system:nodes",
				a.role.Name, a.entry.Type, a.cluster.AuthenticationMode),
			Fix: fix,
		}}
	},
}

var nodeRoleNotFound = &Rule{
	ID:            "node-role-not-found",
	Kinds:         []string{KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.Roles},
	MayNeed:       []facts.Fact{facts.InstanceProfiles},
	Summary:       "`spec.role` names no IAM role",
	Doc: "Karpenter creates an instance profile for spec.role; a role that does not exist makes every launch " +
		"fail (karpenter-provider-aws issue 8538). A common slip is an instance profile name in spec.role: " +
		"the message says so and points to spec.instanceProfile.",
	Check: func(c *Context, o *objects.Object) []Finding {
		spec := o.NodeClass.Spec
		if spec.Role == "" {
			return nil
		}
		name := lastSegment(spec.Role)
		role, err := c.Facts.Role(c, name)
		if err != nil {
			return c.unknownFact(err)
		}
		if role != nil {
			return nil
		}
		f := Finding{
			Field:   "spec.role",
			Line:    o.Fields.Line("spec", "role"),
			Message: fmt.Sprintf("spec.role names %q, but the account has no IAM role of that name, so every launch fails", name),
			Fix:     "create the role, or correct the name",
		}
		if err := c.Facts.Known(c, facts.InstanceProfiles); err == nil {
			p, err := c.Facts.InstanceProfile(c, name)
			if err != nil {
				return c.unknownFact(err)
			}
			if p != nil {
				f.Message = fmt.Sprintf("spec.role names %q, which is an instance profile, not a role: Karpenter would create a profile for a role that does not exist", name)
				f.Fix = fmt.Sprintf("replace role: %s with instanceProfile: %s", spec.Role, p.Name)
				if len(p.Roles) == 1 {
					f.Fix += fmt.Sprintf(", or use role: %s (the role inside it)", p.Roles[0])
				}
			}
		}
		return []Finding{f}
	},
}

// resolvedRole is the IAM role an EC2NodeClass's nodes boot with.
type resolvedRole struct {
	role *facts.Role
	// field is where the class names it: spec.role or spec.instanceProfile.
	field string
}

// resolveRole finds the node role: spec.role, or the role inside spec.instanceProfile. A nil role with
// a nil error means it does not exist (other rules report that).
func (c *Context) resolveRole(o *objects.Object) (resolvedRole, error) {
	spec := o.NodeClass.Spec
	switch {
	case spec.Role != "":
		r, err := c.Facts.Role(c, lastSegment(spec.Role))
		return resolvedRole{role: r, field: "spec.role"}, err
	case spec.InstanceProfile != "":
		p, err := c.Facts.InstanceProfile(c, lastSegment(spec.InstanceProfile))
		if err != nil || p == nil || len(p.Roles) == 0 {
			return resolvedRole{field: "spec.instanceProfile"}, err
		}
		r, err := c.Facts.Role(c, p.Roles[0])
		return resolvedRole{role: r, field: "spec.instanceProfile"}, err
	}
	return resolvedRole{}, nil
}

func lastSegment(s string) string {
	s = s[strings.LastIndex(s, "/")+1:]
	return s[strings.LastIndex(s, ":")+1:]
}

// roleMappings is what aws-auth says about one role.
type roleMappings struct {
	pathless *awsauth.RoleMapping
	pathed   *awsauth.RoleMapping
}

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

// authorization is the analysis of docs/design.md §3 for one EC2NodeClass.
type authorization struct {
	cluster *facts.Cluster
	role    *facts.Role
	field   string
	windows bool
	// entry is the role's access entry (only looked up when the mode reads entries).
	entry   *facts.AccessEntry
	entryOK bool
	// mappings (only looked up when the mode reads aws-auth).
	mappings  roleMappings
	mappingOK bool
	// mappingProblem says what is wrong with a path-less mapping that does not cover the role.
	mappingProblem string
	// awsAuthErr is set when the mode reads aws-auth but it is unknown: only an access entry of the
	// role (which wins over aws-auth) can decide then.
	awsAuthErr error
}

// authorization analyses the node role's access once per object and evaluation. It returns nil, nil
// when the role does not resolve (node-role-not-found and the instance-profile rules report that).
func (c *Context) authorization(o *objects.Object) (*authorization, error) {
	if a, ok := c.auth.get(o); ok {
		return a.a, a.err
	}
	a, err := c.analyseAuthorization(o)
	c.auth.put(o, authResult{a, err})
	return a, err
}

type authResult struct {
	a   *authorization
	err error
}

func (c *Context) analyseAuthorization(o *objects.Object) (*authorization, error) {
	cluster, err := c.Facts.Cluster(c)
	if err != nil {
		return nil, err
	}
	r, err := c.resolveRole(o)
	if err != nil || r.role == nil {
		return nil, err
	}
	a := &authorization{cluster: cluster, role: r.role, field: r.field, windows: userdata.IsWindows(family(o.NodeClass))}
	if cluster.HonoursAccessEntries() {
		a.entry, err = c.Facts.AccessEntry(c, r.role)
		if err != nil {
			return nil, err
		}
		a.entryOK = a.entry != nil && a.entry.Type == a.wantType()
	}
	switch {
	case !cluster.HonoursAWSAuth():
		// Mode API ignores aws-auth; when it is known anyway, say that it maps the role in vain.
		if c.Facts.Known(c, facts.AWSAuth) == nil {
			if data, err := c.Facts.AWSAuth(c); err == nil {
				a.mappings = matchMappings(data, r.role)
			}
		}
	default:
		data, err := c.Facts.AWSAuth(c)
		if err != nil {
			a.awsAuthErr = err
			break
		}
		a.mappings = matchMappings(data, r.role)
		if m := a.mappings.pathless; m != nil {
			a.mappingProblem = mappingProblem(*m, a.windows)
			a.mappingOK = a.mappingProblem == ""
		}
	}
	return a, nil
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

func (a *authorization) wantType() string {
	if a.windows {
		return facts.EntryEC2Windows
	}
	return facts.EntryEC2Linux
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
	return a.cluster.HonoursAWSAuth() && a.entry == nil && a.mappings.pathless == nil && a.mappings.pathed != nil // aws-auth-rolearn-has-path
}

func (a *authorization) whyNotCovered() string {
	c, role := a.cluster, a.role.ARN
	switch c.AuthenticationMode {
	case facts.ModeAPI:
		if a.mappings.pathless != nil || a.mappings.pathed != nil {
			return fmt.Sprintf("node role %s has no access entry in cluster %s; aws-auth maps it, but mode API ignores aws-auth, so nodes never join", role, c.Name)
		}
		return fmt.Sprintf("node role %s has no access entry in cluster %s (mode API), so nodes never join", role, c.Name)
	case facts.ModeConfigMap:
		if a.mappingProblem != "" {
			return fmt.Sprintf("aws-auth maps node role %s %s, so nodes of cluster %s (mode CONFIG_MAP) never join", role, a.mappingProblem, c.Name)
		}
		return fmt.Sprintf("node role %s is not in aws-auth mapRoles, and cluster %s uses mode CONFIG_MAP, which reads only aws-auth, so nodes never join", role, c.Name)
	default:
		if a.mappingProblem != "" {
			return fmt.Sprintf("node role %s has no access entry in cluster %s, and aws-auth maps it %s, so nodes never join", role, c.Name, a.mappingProblem)
		}
		return fmt.Sprintf("node role %s has neither an %s access entry nor an aws-auth mapping in cluster %s (mode %s), so nodes never join", role, a.wantType(), c.Name, c.AuthenticationMode)
	}
}

// fix is the exact command or mapRoles entry that authorizes the role.
func (a *authorization) fix() string {
	if a.cluster.HonoursAccessEntries() {
		return a.createEntry()
	}
	return a.mapRolesFix()
}

// mapRolesFix adds the mapRoles entry, or replaces the role's broken one (a second entry for the same
// rolearn would leave EKS to pick one of them).
func (a *authorization) mapRolesFix() string {
	if a.mappings.pathless != nil {
		return "replace the role's aws-auth mapRoles entry with:\n" + a.mapRolesEntry()
	}
	return "add to aws-auth mapRoles:\n" + a.mapRolesEntry()
}

func (a *authorization) createEntry() string {
	return fmt.Sprintf("aws eks create-access-entry --cluster-name %s --region %s --principal-arn %s --type %s",
		a.cluster.Name, a.cluster.Region, a.role.ARN, a.wantType())
}

func (a *authorization) recreateEntry() string {
	return fmt.Sprintf("aws eks delete-access-entry --cluster-name %s --region %s --principal-arn %s\n%s",
		a.cluster.Name, a.cluster.Region, a.entry.PrincipalARN, a.createEntry())
}

func (a *authorization) mapRolesEntry() string {
	groups := "    - system:bootstrappers\n    - system:nodes"
	if a.windows {
		groups += "\n    - eks:kube-proxy-windows"
	}
	return fmt.Sprintf("- rolearn: %s\n  username: system:node:{{EC2PrivateDNSName}}\n  groups:\n%s", a.role.PathlessARN(), groups)
}
