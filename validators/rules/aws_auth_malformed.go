package rules

import (
	"fmt"
	"sort"

	"github.com/karpenter-guard/karpenter-guard/awsauth"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var awsAuthMalformed = &validators.Rule{
	ID:            "aws-auth-malformed",
	Kinds:         []string{validators.KindAWSAuth},
	DefaultAction: config.ActionDeny,
	Summary:       "`mapRoles`/`mapUsers`/`mapAccounts` is not valid YAML, or an entry lacks its ARN or `username`",
	Doc: "EKS reads kube-system/aws-auth as a whole: one unparsable value or one entry without rolearn " +
		"(userarn) or username makes it ignore the ConfigMap, and every node and every mapped user loses " +
		"access at once. The message gives the line inside the value and in the file.",
	Check: func(_ *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		data := map[string]string{}
		var out []validators.Finding
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
					out = append(out, validators.Finding{
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
			out = append(out, validators.Finding{
				Field:   objects.Path("data", p.Key),
				Line:    line,
				Message: fmt.Sprintf("%s%s: EKS ignores the whole ConfigMap, so every node and mapped user loses access", p, where),
				Fix:     fixFor(p),
			})
		}
		return out, nil
	},
}

// fixFor says what a well-formed value of the problem's key looks like.
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
