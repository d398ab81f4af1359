package rules

import (
	"fmt"
	"sort"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var awsAuthMalformed = &validators.Rule{
	ID:            "aws-auth-malformed",
	Kinds:         []string{validators.KindAWSAuth},
	DefaultAction: config.ActionDeny,
	Summary:       "EKS keeps no entry of `mapRoles`, an entry has no `username`, or a node role's mapping is dropped, misread or under a key EKS never reads",
	Doc: "EKS's authenticator never rejects aws-auth as a whole: it logs what it cannot read and keeps the " +
		"rest. Invalid YAML, or a value that is not a list, costs every entry of that key: for mapRoles, every " +
		"node role's mapping. One bad entry costs only itself: EKS drops an entry without a usable rolearn " +
		"and keeps the others. A field of the wrong type is left empty (groups: a string, or a list item " +
		"indented under the one before it, which YAML reads as one group such as \"system:bootstrappers - " +
		"system:nodes\"), and data keys other than mapRoles, mapUsers and mapAccounts, in exactly that case, " +
		"are never read. This rule denies what surely breaks: all of mapRoles lost; an entry kept with the " +
		"empty username; and any of the above that leaves a role written for nodes without a mapping its " +
		"nodes can join with. A data value written as a YAML structure instead of a string makes the API " +
		"server reject the ConfigMap. The message gives the line inside the value and in the file, and what " +
		"EKS does. The same problems in entries not written for nodes are warnings of " +
		"aws-auth-entry-ignored, aws-auth-groups-misread and aws-auth-key-not-read.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		var out []validators.Finding
		var ks []string
		for k := range o.AWSAuth.Data {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			switch o.AWSAuth.Data[k].(type) {
			case string, nil:
			default:
				out = append(out, validators.Finding{
					Field: objects.Path("data", k),
					Line:  o.Fields.Line("data", k),
					Message: fmt.Sprintf("data.%s is a %s, but ConfigMap data values are strings: the API server rejects the whole ConfigMap, so this aws-auth never reaches EKS",
						k, structureKind(o.AWSAuth.Data[k])),
					Fix: fmt.Sprintf("write it as a block string: %s: |, with the YAML indented below", k),
				})
			}
		}
		return append(out, readConfigMap(c, o).findings(o, idAWSAuthMalformed)...), nil
	},
}

// structureKind names the YAML kind of a data value that is not a string.
func structureKind(v any) string {
	switch v.(type) {
	case []any:
		return "YAML list"
	case map[string]any, map[any]any:
		return "YAML mapping"
	case bool:
		return "boolean"
	case int, int64, uint64, float64:
		return "number"
	}
	return "YAML structure"
}
