// Package objects holds karpenter-guard's view of the Kubernetes objects it checks: EC2NodeClasses,
// NodePools and the kube-system/aws-auth ConfigMap.
//
// Each Object keeps the whole parsed YAML node tree of its source, so nothing the tool does not
// understand is ever lost, plus small typed views of only the fields the rules read.
//
// We deliberately do not import Karpenter's own Go API types (github.com/aws/karpenter-provider-aws/pkg/apis):
// those modules pin their own Kubernetes library versions, some releases need a newer Go than ours, and
// they only know one API version at a time, while the CLI must read v1beta1 and v1 manifests side by side
// and report v1beta1-only fields that Karpenter's v1 types would silently drop. The views below decode
// leniently (unknown fields are kept in the node tree, not rejected) but strictly in type: a string where
// a list belongs is an input error with its line.
package objects
