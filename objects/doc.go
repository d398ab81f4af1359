// Package objects holds karpenter-guard's view of the Kubernetes objects it checks: EC2NodeClasses,
// NodePools and the kube-system/aws-auth ConfigMap.
//
// An Object is read from one of three sources, by the ecosystem's own decoders: a manifest file
// (yaml.v3 nodes, which keep lines and comments for messages and --fix), an admission request's JSON
// and an object of the cluster's cache (apimachinery's JSON and unstructured converter). Whatever the
// source, rules see the same two things: small typed views of only the fields they read (one set of
// structs, with json and yaml tags) and Fields, which answers where a field is and what it holds
// (present or not, its keys, its line when the source has lines).
//
// We deliberately do not import Karpenter's own Go API types (github.com/aws/karpenter-provider-aws/pkg/apis):
// those modules pin their own Kubernetes library versions, some releases need a newer Go than ours, and
// they only know one API version at a time, while the CLI must read v1beta1 and v1 manifests side by side
// and report v1beta1-only fields that Karpenter's v1 types would silently drop. The views decode
// leniently (unknown fields are ignored by the view and still visible through Fields) but strictly in
// type: a string where a list belongs is an input error that names the field.
package objects
