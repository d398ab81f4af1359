// Package validators is karpenter-guard's rule catalog: every check, with its ID, default action, the
// facts it needs, whether it can fix what it finds, and its documentation, and the engine that runs
// them over a set of objects.
//
// Each rule lives in its own file named after its ID (instance-profile-arn → instance_profile_arn.go)
// with its table test beside it and its golden messages in testdata/<id>.golden. Rules are pure
// functions of the object, the other objects of the input, the configuration and the facts; they never
// call AWS or Kubernetes.
package validators
