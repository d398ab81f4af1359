package noderole

import (
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// Resolved is the IAM role an EC2NodeClass's nodes boot with.
type Resolved struct {
	Role *facts.Role
	// Field is where the class names it: spec.role or spec.instanceProfile.
	Field string
}

// Resolve finds the node role: spec.role, or the role inside spec.instanceProfile. A nil role with
// a nil error means it does not exist (other rules report that).
func Resolve(c *validators.Context, o *objects.Object) (Resolved, error) {
	spec := o.NodeClass.Spec
	switch {
	case spec.Role != "":
		r, err := c.Facts.Role(c, LastSegment(spec.Role))
		return Resolved{Role: r, Field: "spec.role"}, err
	case spec.InstanceProfile != "":
		p, err := c.Facts.InstanceProfile(c, LastSegment(spec.InstanceProfile))
		if err != nil || p == nil || len(p.Roles) == 0 {
			return Resolved{Field: "spec.instanceProfile"}, err
		}
		r, err := c.Facts.Role(c, p.Roles[0])
		return Resolved{Role: r, Field: "spec.instanceProfile"}, err
	}
	return Resolved{}, nil
}

// LastSegment returns the name in a role or instance-profile reference: the last segment of an ARN or
// path, or the name itself.
func LastSegment(s string) string {
	s = s[strings.LastIndex(s, "/")+1:]
	return s[strings.LastIndex(s, ":")+1:]
}
