package rules

import (
	"fmt"
	"sort"

	"github.com/karpenter-guard/karpenter-guard/awsauth"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/noderole"
)

var awsAuthRemovesNodeRole = &validators.Rule{
	ID:            "aws-auth-removes-node-role",
	Kinds:         []string{validators.KindAWSAuth},
	DefaultAction: config.ActionDeny,
	Scope:         validators.ScopeAdmission,
	Operations:    []string{validators.OperationUpdate, validators.OperationDelete},
	Needs:         []facts.Fact{facts.ClusterNodeClasses, facts.ClusterAuthenticationMode, facts.AccessEntries},
	MayNeed:       []facts.Fact{facts.Roles, facts.InstanceProfiles},
	Summary:       "an UPDATE or DELETE of aws-auth drops the mapping an existing EC2NodeClass's role depends on",
	Doc: "Editing aws-auth by hand can drop the mapping (or one of the two node groups) of the role " +
		"Karpenter's nodes use; when that mapping is what authorizes the role, new nodes stop joining. Both " +
		"versions are read as EKS reads them: an entry EKS drops, groups it reads as one string, or a mapRoles " +
		"it cannot parse map nothing, while the good entries around them still count. The webhook refuses " +
		"such an edit, says what EKS makes of the role's entry, and lists the EC2NodeClasses that would stop " +
		"joining nodes.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		if c.Old == nil || c.Old.AWSAuth == nil {
			return nil, nil
		}
		cluster, err := c.Facts.Cluster(c)
		if err != nil {
			return nil, err
		}
		if !cluster.HonoursAWSAuth() {
			return nil, nil // mode API: aws-auth authorizes nothing
		}
		before := parsedConfigMap(c.Old)
		var after *facts.AWSAuthData
		if c.Operation == validators.OperationUpdate {
			after = parsedConfigMap(o)
		}
		afterData := map[string]string{}
		if after != nil {
			afterData = after.Data
		}
		type loss struct {
			role    *facts.Role
			classes []string
			problem string
			windows bool
		}
		losses := map[string]*loss{}
		for _, nc := range c.Input {
			if nc.NodeClass == nil {
				continue
			}
			r, err := noderole.Resolve(c, nc)
			if err != nil {
				return nil, err
			}
			if r.Role == nil {
				continue
			}
			windows := userdata.IsWindows(ami.Family(nc.NodeClass))
			if cluster.HonoursAccessEntries() {
				entry, err := c.Facts.AccessEntry(c, r.Role)
				if err != nil {
					return nil, err
				}
				if entry != nil {
					continue // the entry decides for this role, whatever aws-auth says
				}
			}
			if ok, _ := noderole.MappedForNodes(before, r.Role, windows); !ok {
				continue // aws-auth did not authorize it before either
			}
			ok, problem := noderole.MappedForNodes(after, r.Role, windows)
			if ok {
				continue
			}
			l := losses[r.Role.ARN]
			if l == nil {
				l = &loss{role: r.Role, problem: problem, windows: windows}
				losses[r.Role.ARN] = l
			}
			l.classes = append(l.classes, nc.Name)
		}
		arns := make([]string, 0, len(losses))
		for arn := range losses {
			arns = append(arns, arn)
		}
		sort.Strings(arns)
		edit := "this edit of aws-auth"
		if c.Operation == validators.OperationDelete {
			edit = "deleting aws-auth"
		}
		var out []validators.Finding
		for _, arn := range arns {
			l := losses[arn]
			sort.Strings(l.classes)
			what := "drops the mapping of node role " + l.role.PathlessARN()
			if l.problem != "" {
				what = "leaves the mapping of node role " + l.role.PathlessARN() + " " + l.problem
			}
			if cause := awsAuthCause(afterData, l.role.PathlessARN()); cause != "" {
				what += " (" + cause + ")"
			}
			a := &authorization{cluster: cluster, role: l.role, windows: l.windows}
			fix := "keep this entry in mapRoles:\n" + a.mapRolesEntry()
			if cluster.HonoursAccessEntries() {
				fix += "\nor first give the role an access entry: " + a.createEntry()
			}
			out = append(out, validators.Finding{
				Field: "data.mapRoles",
				Line:  o.Fields.Line("data", "mapRoles"),
				Message: fmt.Sprintf("%s %s; that mapping is what lets nodes of %s join cluster %s (mode %s), so new nodes would never join",
					edit, what, namedList(l.classes, "EC2NodeClass", "EC2NodeClasses"), cluster.Name, cluster.AuthenticationMode),
				Fix: fix,
			})
		}
		return out, nil
	},
}

// parsedConfigMap reads an aws-auth object's data as EKS does: the mappings it keeps, however many
// entries it drops beside them. Nil when a data value is not a string (the API server would not have
// stored such a ConfigMap), so it authorizes nothing.
func parsedConfigMap(o *objects.Object) *facts.AWSAuthData {
	if o.AWSAuth == nil {
		return nil
	}
	data, strs := validators.ConfigMapData(o)
	if !strs {
		return nil
	}
	return &facts.AWSAuthData{Data: data, Config: awsauth.Read(data).Config}
}
