package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var instanceProfileARN = &validators.Rule{
	ID:            "instance-profile-arn",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Fixable:       true,
	Summary:       "`spec.instanceProfile` is an ARN",
	Doc: "Karpenter passes spec.instanceProfile to EC2 as an instance profile name. An ARN there is " +
		"accepted by the API server, and every launch then fails (karpenter-provider-aws issue 8312). " +
		"The fix keeps only the name, the last segment of the ARN's path.",
	Check: func(_ *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		v := o.NodeClass.Spec.InstanceProfile
		if !strings.HasPrefix(v, "arn:") {
			return nil, nil
		}
		name := v[strings.LastIndex(v, "/")+1:]
		if i := strings.LastIndex(v, ":"); name == v && i >= 0 {
			name = v[i+1:]
		}
		f := validators.Finding{
			Field:   "spec.instanceProfile",
			Line:    o.Fields.Line("spec", "instanceProfile"),
			Message: fmt.Sprintf("instanceProfile is the ARN %q, but Karpenter uses it as a name, so every launch fails", v),
		}
		if name == "" || strings.Contains(name, ":") {
			f.Fix = "set instanceProfile to the instance profile's name (not its ARN)"
			return []validators.Finding{f}, nil
		}
		f.Fix = "instanceProfile: " + name
		f.Edits = []validators.Edit{{Object: o, Path: []any{"spec"}, Op: validators.EditSet, Key: "instanceProfile", Value: validators.Scalar(name)}}
		return []validators.Finding{f}, nil
	},
}
