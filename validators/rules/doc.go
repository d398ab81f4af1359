// Package rules is karpenter-guard's rule catalog: every check of this build, as a validators.Rule,
// and Default, the catalog that holds them.
//
// A rule is one package-level *validators.Rule in the file named after its ID, with dashes as
// underscores (instance-profile-arn → instance_profile_arn.go), beside its table test
// (instance_profile_arn_test.go) whose messages, fixes and fixed files are kept in
// testdata/instance-profile-arn.golden; a second table of a rule is <id>_<aspect>_test.go with
// testdata/<id>-<aspect>.golden. The rule's file holds its Check and whatever only that rule uses;
// TestLayout keeps the naming.
//
// Analyses that read no rule live in packages of their own under validators/analysis
// (trustpolicy: what a role's trust policy says about EC2; network: what a class's selector terms
// select, subnets' egress, what security groups let through, the control plane's network and the VPC
// endpoints isolated subnets need; ami: the AMI family a class boots and an image belongs to, and the
// images each amiSelectorTerms term resolves to; noderole: the role a class's nodes boot with and
// what aws-auth maps it to). What several rules read here and that names rules itself (the findings
// it builds carry their IDs) is a named analysis in a file named for it, computed once per evaluation
// through validators.Memo:
//
//   - authorization.go: whether the node role may join the cluster, from the cluster's authentication
//     mode, the role's access entry and its aws-auth mapping (docs/design.md §3), read by the
//     node-role rules; aws_auth_reading.go: aws-auth as EKS reads it;
//   - permissions.go, node_role_permissions.go and controller_*.go: the permission tables the
//     node-role and controller rules simulate, and the controller's policy and inputs;
//   - nodepool_env.go and node_naming.go: what a NodePool's class offers it, and how nodes are named;
//   - userdata.go: a class's userData parsed for its family;
//   - capacity_type.go, annotations.go, messages.go: a NodePool's capacity types, where annotations
//     are, how messages name things.
//
// A Check is a pure function of the object, the input, the configuration and the facts. A rule that
// meets an unknown fact it reads only in some cases (MayNeed) returns the provider's
// *facts.UnknownError as its error, and the engine reports it as not evaluated with that reason.
package rules
