package validators

import (
	"fmt"
	"sort"

	"github.com/karpenter-guard/karpenter-guard/awsauth"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

var awsAuthMalformed = &Rule{
	ID:            "aws-auth-malformed",
	Kinds:         []string{KindAWSAuth},
	DefaultAction: config.ActionDeny,
	Summary:       "`mapRoles`/`mapUsers`/`mapAccounts` is not valid YAML, or an entry lacks its ARN or `username`",
	Doc: "EKS reads kube-system/aws-auth as a whole: one unparsable value or one entry without rolearn " +
		"(userarn) or username makes it ignore the ConfigMap, and every node and every mapped user loses " +
		"access at once. The message gives the line inside the value and in the file.",
	Check: func(_ *Context, o *objects.Object) []Finding {
		data := map[string]string{}
		var out []Finding
		var ks []string
		for k := range o.AWSAuth.Data {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			switch v := o.AWSAuth.Data[k].(type) {
			case string:
				data[k] = v
			case nil:
			default:
				if k == awsauth.KeyMapRoles || k == awsauth.KeyMapUsers || k == awsauth.KeyMapAccounts {
					out = append(out, Finding{
						Field:   objects.Path("data", k),
						Line:    o.Fields.Line("data", k),
						Message: fmt.Sprintf("data.%s is a YAML structure, but ConfigMap data values are strings: EKS cannot read it", k),
						Fix:     fmt.Sprintf("write it as a block string: %s: |, with the list indented below", k),
					})
				}
			}
		}
		_, problems := awsauth.Parse(data)
		for _, p := range problems {
			line := o.Fields.Line("data", p.Key)
			if p.Line > 0 {
				line = o.Fields.TextLine(p.Line, "data", p.Key)
			}
			where := ""
			if o.File != "" {
				where = fmt.Sprintf(" (file line %d)", line)
			}
			out = append(out, Finding{
				Field:   objects.Path("data", p.Key),
				Line:    line,
				Message: fmt.Sprintf("%s%s: EKS ignores the whole ConfigMap, so every node and mapped user loses access", p, where),
				Fix:     fixFor(p),
			})
		}
		return out
	},
}

func fixFor(p awsauth.Problem) string {
	if p.Key == awsauth.KeyMapRoles {
		return "each entry needs rolearn (path-less ARN), username and groups, e.g.\n" +
			"- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole\n" +
			"  username: system:node:{{EC2PrivateDNSName}}\n" +
			"  groups: [system:bootstrappers, system:nodes]"
	}
	if p.Key == awsauth.KeyMapUsers {
		return "each entry needs userarn, username and groups"
	}
	return "mapAccounts is a list of 12-digit account ids"
}

// InputAWSAuth returns the data of the first aws-auth ConfigMap among objs, whether EKS would find it
// malformed, and whether there was one. The CLI lets it stand in for a snapshot without awsAuth.
func InputAWSAuth(objs []*objects.Object) (data map[string]string, malformed, found bool) {
	for _, o := range objs {
		if o.AWSAuth == nil {
			continue
		}
		data, strs := ConfigMapData(o)
		_, problems := awsauth.Parse(data)
		return data, !strs || len(problems) > 0, true
	}
	return nil, false, false
}

// ConfigMapData returns an aws-auth object's data as strings, without parsing it; allStrings is false
// when a value is not a string (left out of data), which makes the ConfigMap malformed to EKS.
func ConfigMapData(o *objects.Object) (data map[string]string, allStrings bool) {
	data, allStrings = map[string]string{}, true
	for k, v := range o.AWSAuth.Data {
		str, ok := v.(string)
		if !ok && v != nil {
			allStrings = false
			continue
		}
		data[k] = str
	}
	return data, allStrings
}
