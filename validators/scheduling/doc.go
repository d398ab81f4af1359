// Package scheduling decides which instance types a NodePool can launch: the labels Karpenter computes
// for an instance type from DescribeInstanceTypes and the class it launches with, and Karpenter's
// requirement semantics over them. It is pure: the NodePool rules gather the facts (instance types,
// the class's subnets, AMIs and capacity reservations) into an Env and call it.
//
// A type is usable when its architecture is one the class's AMIs serve, it is not a1 under AL2023,
// and its zone set (offering zones ∩ class subnet zones) and capacity-type set are both non-empty. It
// satisfies a pool when, for every requirement whose key is computable, its value set intersects the
// requirement. A key that is not computable (network bandwidth, nitro-sandbox, placement groups,
// capacity reservation labels, karpenter.sh/nodepool, custom labels) is never a reason to reject a
// type; nor are the region and zone ID when the Env does not know them.
//
// Karpenter (karpenter-provider-aws computeRequirements, offerings and compatibility; core
// Requirements, SatisfiesMinValues) differs from this model here; the package keeps to the model:
//
//   - Karpenter merges all requirements on one key, template labels included, before comparing; this
//     package checks each on its own. That only matters for the multi-valued labels (zone, zone ID,
//     capacity type, tenancy), where Karpenter is stricter: zone In [a] and zone In [b] reject a type
//     offered in both a and b.
//   - Karpenter also needs one offering, a (zone, capacity type) pair, that satisfies the zone, zone ID
//     and capacity-type requirements together (reserved exists only in the reservation's zone); this
//     package checks the zone set and the capacity-type set apart, so it admits capacity-type In
//     [reserved] with zone In [b] when the reservation is in a.
//   - Karpenter's capacity-type label has reserved when the class matched a reservation of the type in
//     any zone; the reserved offering is then available only in a usable zone, which is what this
//     package requires of the label.
//   - With minValues Karpenter counts distinct values over the 600 cheapest compatible types only;
//     this package counts over every surviving type, so it can pass what Karpenter fails.
//   - Karpenter's class compatibility also rejects types for network interfaces, nested
//     virtualization, placement groups and connection tracking (Nitro only); only a1 under AL2023 is
//     modelled.
//   - Karpenter labels a type whose DescribeInstanceTypes answer lacks the field with a processor
//     manufacturer "", a sustained clock speed "0" and encryption in transit "false"; here the zero
//     value of a field of the type is "not set" and leaves the label undefined (stricter for
//     In ["false"], or Lt on the clock speed). Of the types Karpenter lists in us-east-1 only c1, m1,
//     m2 and t1 lack one (the clock speed). The GPU and accelerator labels follow Karpenter: defined
//     whenever the type has the one device they describe, zero and empty values included.
//
// Readings of the model where it could be read two ways: kubernetes.io/arch is the first
// architecture Karpenter recognizes (t2's [i386, x86_64] is amd64), and a bare-metal type's
// hypervisor label is defined and empty, as Karpenter sets it.
package scheduling
