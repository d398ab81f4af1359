package rules

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/karpenter-guard/karpenter-guard/awsauth"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/noderole"
)

// This file holds how the aws-auth rules share the problems of one ConfigMap, read as EKS reads it
// (package awsauth): each problem goes to exactly one rule, by what it costs.
//
//   - aws-auth-malformed (deny): EKS keeps none of mapRoles; an entry keeps no username; or what is
//     written for a node role does not give it a mapping its nodes can join with (the entry dropped,
//     its groups lost or read as one group, replaced by a later entry, or under a data key EKS never
//     reads).
//   - aws-auth-groups-misread (warn): groups EKS reads other than written, where that costs no node
//     role its mapping.
//   - aws-auth-key-not-read (warn): a data key EKS never reads that holds no node mapping it misses.
//   - aws-auth-entry-ignored (warn): the rest (entries, fields and keys EKS drops or ignores, where
//     that costs no node role its mapping).

// The IDs of the rules that report aws-auth problems.
const (
	idAWSAuthMalformed     = "aws-auth-malformed"
	idAWSAuthGroupsMisread = "aws-auth-groups-misread"
	idAWSAuthKeyNotRead    = "aws-auth-key-not-read"
	idAWSAuthEntryIgnored  = "aws-auth-entry-ignored"
)

// configMapReading is an aws-auth object's data read as EKS reads it.
type configMapReading struct {
	awsauth.Reading
	data map[string]string
}

// configMapReadings are the readings of one evaluation, by aws-auth object: four rules read each.
var configMapReadings = &validators.Analysis[*objects.Object, configMapReading]{Name: "aws-auth as EKS reads it"}

// readConfigMap reads an aws-auth object's string data as EKS does (values that are not strings are
// left out: aws-auth-malformed reports them), once per evaluation.
func readConfigMap(c *validators.Context, o *objects.Object) configMapReading {
	return validators.Memo(c, configMapReadings, o, func() configMapReading {
		data, _ := validators.ConfigMapData(o)
		return configMapReading{Reading: awsauth.Read(data), data: data}
	})
}

// mapping returns the mapRoles mapping EKS uses for a role ARN (matched ignoring case), or nil.
func (r configMapReading) mapping(arn string) *awsauth.RoleMapping {
	return roleMappingIn(r.Config, arn)
}

func roleMappingIn(cfg awsauth.Config, arn string) *awsauth.RoleMapping {
	if arn == "" {
		return nil
	}
	for i := range cfg.MapRoles {
		if strings.EqualFold(cfg.MapRoles[i].RoleARN, arn) {
			return &cfg.MapRoles[i]
		}
	}
	return nil
}

// nodesJoin reports whether EKS keeps a mapping for the role ARN that lets its nodes join (the Linux
// groups: a static check cannot tell a Windows role).
func (r configMapReading) nodesJoin(arn string) bool {
	m := r.mapping(arn)
	return m != nil && noderole.MappingProblem(*m, false) == ""
}

// nodeCause reports whether a problem of an entry can be why its role has no mapping its nodes can
// join with: the entry dropped or replaced, its username or groups lost, misread or misspelt.
func nodeCause(p awsauth.Problem) bool {
	switch p.Effect {
	case awsauth.DropsEntry, awsauth.NoUsername, awsauth.Overridden:
		return true
	case awsauth.LosesField:
		return p.Field == "groups" || p.Field == "username"
	case awsauth.ReadAsWritten:
		return p.Field == "groups"
	case awsauth.NotRead:
		return p.Field != "" && p.Meant == p.Field
	}
	return false
}

// breaksNodes reports whether a problem is why an entry written for nodes gives its role no mapping
// its nodes can join with.
func (r configMapReading) breaksNodes(p awsauth.Problem) bool {
	return p.Key == awsauth.KeyMapRoles && p.Entry != nil && p.Entry.Nodes && nodeCause(p) && !r.nodesJoin(p.Entry.ARN)
}

// unreadNodeRoles returns the ARNs of the node role mappings a data key EKS never reads holds, read as
// if it were mapRoles, that the keys EKS reads give no working mapping; sorted.
func (r configMapReading) unreadNodeRoles(key string) []string {
	seen := map[string]bool{}
	var arns []string
	for _, e := range awsauth.Read(map[string]string{awsauth.KeyMapRoles: r.data[key]}).Roles {
		if e.Nodes && e.ARN != "" && !r.nodesJoin(e.ARN) && !seen[strings.ToLower(e.ARN)] {
			seen[strings.ToLower(e.ARN)] = true
			arns = append(arns, e.ARN)
		}
	}
	sort.Strings(arns)
	return arns
}

// isReadKey reports whether EKS reads a data key.
func isReadKey(k string) bool {
	return k == awsauth.KeyMapRoles || k == awsauth.KeyMapUsers || k == awsauth.KeyMapAccounts
}

// ruleOf returns the ID of the rule that reports a problem.
func (r configMapReading) ruleOf(p awsauth.Problem) string {
	switch {
	case p.Key == awsauth.KeyMapRoles && p.Effect == awsauth.IgnoresValue,
		p.Effect == awsauth.NoUsername,
		r.breaksNodes(p):
		return idAWSAuthMalformed
	case !isReadKey(p.Key):
		if len(r.unreadNodeRoles(p.Key)) > 0 {
			return idAWSAuthMalformed
		}
		return idAWSAuthKeyNotRead
	case p.Field == "groups" && p.Effect != awsauth.DropsEntry:
		return idAWSAuthGroupsMisread
	}
	return idAWSAuthEntryIgnored
}

// findings returns the findings of one rule: its problems, each with its file line, what EKS does and
// what that costs.
func (r configMapReading) findings(o *objects.Object, rule string) []validators.Finding {
	var out []validators.Finding
	for _, p := range r.Problems {
		if r.ruleOf(p) != rule {
			continue
		}
		line := o.Fields.Line("data", p.Key)
		if p.Line > 0 {
			line = o.Fields.TextLine(p.Line, "data", p.Key)
		}
		where := ""
		if o.File != "" && p.Line > 0 {
			where = fmt.Sprintf(" (file line %d)", line)
		}
		out = append(out, validators.Finding{
			Field:   objects.Path("data", p.Key),
			Line:    line,
			Message: fmt.Sprintf("%s%s: %s%s", p, where, p.Outcome, r.cost(p)),
			Fix:     r.fix(p),
		})
	}
	return out
}

// cost says what EKS's reading of a problem costs, beyond what it does ("" when nothing to add).
func (r configMapReading) cost(p awsauth.Problem) string {
	switch {
	case p.Key == awsauth.KeyMapRoles && p.Effect == awsauth.IgnoresValue:
		return "; every role mapping is gone, node roles included, so their nodes cannot join"
	case !isReadKey(p.Key):
		if arns := r.unreadNodeRoles(p.Key); len(arns) > 0 {
			return fmt.Sprintf("; it holds the node mapping of %s, which mapRoles does not give, so those nodes cannot join", strings.Join(arns, ", "))
		}
	case r.breaksNodes(p):
		if p.Entry.ARN == "" {
			return "; the node mapping written here maps no role, so those nodes cannot join"
		}
		return fmt.Sprintf("; EKS then has no mapping for node role %s that lets its nodes join", p.Entry.ARN)
	case p.Effect == awsauth.NoUsername:
		return "; requests of that identity carry no username, so RBAC can grant them only through their groups"
	}
	return ""
}

// fix says how to write what the problem's writer meant.
func (r configMapReading) fix(p awsauth.Problem) string {
	const nodeEntry = "- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole\n" +
		"  username: system:node:{{EC2PrivateDNSName}}\n" +
		"  groups:\n" +
		"    - system:bootstrappers\n" +
		"    - system:nodes"
	switch {
	case !isReadKey(p.Key):
		if p.Meant != "" {
			return fmt.Sprintf("rename data.%s to %s (move its entries into %s if that key exists too)", p.Key, p.Meant, p.Meant)
		}
		return fmt.Sprintf("remove data.%s, or move what it holds into mapRoles, mapUsers or mapAccounts", p.Key)
	case p.Effect == awsauth.IgnoresValue:
		if p.Key == awsauth.KeyMapAccounts {
			return "mapAccounts is a YAML list of 12-digit account ids, e.g.\n- \"111122223333\""
		}
		if p.Key == awsauth.KeyMapUsers {
			return "mapUsers is a YAML list of entries with userarn, username and groups"
		}
		return "mapRoles is a YAML list of entries with rolearn (path-less ARN), username and groups, e.g.\n" + nodeEntry
	case p.Effect == awsauth.Overridden:
		return "keep one entry per ARN: merge this entry into the later one, or delete it"
	case p.Effect == awsauth.Ambiguous:
		return "keep one entry per user: write the userarn once, in the case IAM gives it"
	case p.Effect == awsauth.NoUsername:
		return "set username: system:node:{{EC2PrivateDNSName}} for a node role, or the Kubernetes username the identity stands for"
	case p.Field == "groups":
		return "write groups as a YAML list, each item at the same indentation, e.g.\n  groups:\n    - system:bootstrappers\n    - system:nodes"
	case p.Effect == awsauth.NotRead && p.Meant != "":
		return fmt.Sprintf("rename the key to %s", p.Meant)
	case p.Effect == awsauth.NotRead && p.Field != "":
		return fmt.Sprintf("write %s once, with one key", p.Field)
	case p.Effect == awsauth.NotRead:
		return "remove the key: EKS ignores it"
	case p.Field == "userid":
		return "quote userid, or remove it: the aws-auth mapper does not use it"
	case p.Key == awsauth.KeyMapAccounts:
		return "each mapAccounts item is a quoted 12-digit account id, e.g. - \"111122223333\""
	case p.Key == awsauth.KeyMapUsers:
		return "each mapUsers entry needs userarn (a string), username and groups"
	case p.Field == "sso":
		return "an SSO entry names sso.permissionSetName and sso.accountID (quoted), no partition, and no rolearn"
	}
	return "each mapRoles entry needs rolearn (the path-less role ARN, as a string), username and groups, e.g.\n" + nodeEntry
}

// awsAuthCause says what, in aws-auth as written, leaves a node role without a mapping its nodes can
// join with: its entry dropped, lost or misread, all of mapRoles ignored, or its entry under a data
// key EKS never reads; "" when nothing written explains it (the entry is just not there, or wrong as
// written).
func awsAuthCause(data map[string]string, arn string) string {
	r := configMapReading{Reading: awsauth.Read(data), data: data}
	for _, p := range r.Problems {
		switch {
		case p.Key == awsauth.KeyMapRoles && p.Effect == awsauth.IgnoresValue:
			return fmt.Sprintf("EKS ignores all of mapRoles: %s", p)
		case p.Key == awsauth.KeyMapRoles && p.Entry != nil && nodeCause(p) && strings.EqualFold(p.Entry.ARN, arn),
			r.dropsEntryOf(p, arn):
			return fmt.Sprintf("%s: %s", p, p.Outcome)
		}
	}
	for _, p := range r.Problems {
		if isReadKey(p.Key) {
			continue
		}
		for _, e := range awsauth.Read(map[string]string{awsauth.KeyMapRoles: data[p.Key]}).Roles {
			if strings.EqualFold(e.ARN, arn) {
				return fmt.Sprintf("its entry is under data.%s, which EKS never reads: it reads mapRoles, with that case", p.Key)
			}
		}
	}
	return ""
}

// droppedEntryOf returns the mapRoles entry EKS drops that was written for the role ARN, or nil.
func droppedEntryOf(data map[string]string, arn string) *awsauth.Entry {
	r := configMapReading{Reading: awsauth.Read(data), data: data}
	for _, p := range r.Problems {
		if p.Key == awsauth.KeyMapRoles && p.Effect == awsauth.DropsEntry && p.Entry != nil &&
			(strings.EqualFold(p.Entry.ARN, arn) || r.dropsEntryOf(p, arn)) {
			return p.Entry
		}
	}
	return nil
}

// dropsEntryOf reports whether a problem is that EKS drops a mapRoles entry that names the role ARN
// though not as a string rolearn (under a misspelt key, as a list): EKS then reads no ARN in it, but
// it is the role's entry all the same.
func (r configMapReading) dropsEntryOf(p awsauth.Problem, arn string) bool {
	if p.Key != awsauth.KeyMapRoles || p.Effect != awsauth.DropsEntry || p.Entry == nil || p.Entry.ARN != "" || arn == "" {
		return false
	}
	j, err := utilyaml.ToJSON([]byte(r.data[awsauth.KeyMapRoles]))
	if err != nil {
		return false
	}
	var items []any
	if json.Unmarshal(j, &items) != nil || p.Entry.Index >= len(items) {
		return false
	}
	return namesARN(items[p.Entry.Index], arn)
}

// namesARN reports whether a decoded value holds the ARN as a string, at any depth.
func namesARN(v any, arn string) bool {
	switch v := v.(type) {
	case string:
		return strings.EqualFold(strings.TrimSpace(v), arn)
	case []any:
		for _, x := range v {
			if namesARN(x, arn) {
				return true
			}
		}
	case map[string]any:
		for _, x := range v {
			if namesARN(x, arn) {
				return true
			}
		}
	}
	return false
}
