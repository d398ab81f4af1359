// Package ami is what the AMI rules share about the images an EC2NodeClass boots: the AMI family it
// boots (spec.amiFamily or its alias's), the family an image belongs to, the alias Karpenter would pin,
// and the images each amiSelectorTerms term resolves to (aliases through the SSM parameters of the
// cluster's version), memoised per evaluation.
package ami
