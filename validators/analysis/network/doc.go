// Package network is what the network rules share about an EC2NodeClass's network, read from the
// facts: the subnets and security groups its selector terms select, a subnet's way out of the VPC,
// what security groups let through, the control plane's network, the VPC endpoints an isolated subnet
// needs, and the zone rule that decides whether a defect of some subnets stops launches. Analyses are
// memoised per evaluation (validators.Memo), so several rules and every class ask once.
package network
