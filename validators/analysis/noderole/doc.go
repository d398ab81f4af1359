// Package noderole is what the node-role rules share: which IAM role an EC2NodeClass's nodes boot with
// (spec.role, or the role inside spec.instanceProfile, which the same authorization rules judge), and
// what aws-auth's mapRoles says about that role and whether it lets the role's nodes join.
package noderole
