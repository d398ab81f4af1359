package rules

import (
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// This file holds which IAM role an EC2NodeClass's nodes boot with: spec.role, or the role inside
// spec.instanceProfile. The role inside a profile goes through the same authorization rules as
// spec.role (authorization.go).

// resolvedRole is the IAM role an EC2NodeClass's nodes boot with.
type resolvedRole struct {
	role *facts.Role
	// field is where the class names it: spec.role or spec.instanceProfile.
	field string
}

// resolveRole finds the node role: spec.role, or the role inside spec.instanceProfile. A nil role with
// a nil error means it does not exist (other rules report that).
func resolveRole(c *validators.Context, o *objects.Object) (resolvedRole, error) {
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

// lastSegment returns the name in a role or instance-profile reference: the last segment of an ARN or
// path, or the name itself.
func lastSegment(s string) string {
	s = s[strings.LastIndex(s, "/")+1:]
	return s[strings.LastIndex(s, ":")+1:]
}
