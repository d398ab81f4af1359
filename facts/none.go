package facts

import "context"

// None is the provider with no facts at all: every rule that needs one is reported as not evaluated.
type None struct{}

const noFacts = "no facts"

// Known implements Provider.
func (None) Known(_ context.Context, f Fact) error { return Unknown(f, noFacts) }

// Cluster implements Provider.
func (None) Cluster(context.Context) (*Cluster, error) { return nil, Unknown("cluster", noFacts) }

// AccessEntry implements Provider.
func (None) AccessEntry(context.Context, *Role) (*AccessEntry, error) {
	return nil, Unknown(AccessEntries, noFacts)
}

// AWSAuth implements Provider.
func (None) AWSAuth(context.Context) (*AWSAuthData, error) {
	return nil, Unknown(AWSAuth, noFacts)
}

// Role implements Provider.
func (None) Role(context.Context, string) (*Role, error) { return nil, Unknown(Roles, noFacts) }

// InstanceProfile implements Provider.
func (None) InstanceProfile(context.Context, string) (*InstanceProfile, error) {
	return nil, Unknown(InstanceProfiles, noFacts)
}

// Images implements Provider.
func (None) Images(context.Context, ImageTerm) ([]Image, error) { return nil, Unknown(Images, noFacts) }

// SSMParameter implements Provider.
func (None) SSMParameter(context.Context, string) (string, bool, error) {
	return "", false, Unknown(SSMParameters, noFacts)
}

// Subnets implements Provider.
func (None) Subnets(context.Context, SelectorTerm) ([]Subnet, error) {
	return nil, Unknown(Subnets, noFacts)
}

// SecurityGroups implements Provider.
func (None) SecurityGroups(context.Context, SelectorTerm) ([]SecurityGroup, error) {
	return nil, Unknown(SecurityGroups, noFacts)
}

// EBSDefaults implements Provider.
func (None) EBSDefaults(context.Context) (*EBSEncryption, error) {
	return nil, Unknown(EBSDefaults, noFacts)
}

// PodIdentityAssociations implements Provider.
func (None) PodIdentityAssociations(context.Context) (int, error) {
	return 0, Unknown(ClusterPodIdentityAssociations, noFacts)
}

// KarpenterController implements Provider.
func (None) KarpenterController(context.Context) (*ControllerRole, error) {
	return nil, Unknown(KarpenterController, noFacts)
}

// VPCCNI implements Provider.
func (None) VPCCNI(context.Context) (*CNI, error) { return nil, Unknown(VPCCNI, noFacts) }

// Simulate implements Provider.
func (None) Simulate(context.Context, SimulationRow) ([]Simulation, error) {
	return nil, Unknown(Simulations, noFacts)
}

// VPC implements Provider.
func (None) VPC(context.Context) (*VPCAttributes, error) { return nil, Unknown(VPC, noFacts) }

// NATGateways implements Provider.
func (None) NATGateways(context.Context) ([]NATGateway, error) {
	return nil, Unknown(NATGateways, noFacts)
}

// VPCEndpoints implements Provider.
func (None) VPCEndpoints(context.Context) ([]VPCEndpoint, error) {
	return nil, Unknown(VPCEndpoints, noFacts)
}

// KMSKey implements Provider.
func (None) KMSKey(context.Context, string) (*KMSKey, error) { return nil, Unknown(KMSKeys, noFacts) }

// ServiceQuota implements Provider.
func (None) ServiceQuota(context.Context, string) (int, error) {
	return 0, Unknown(ServiceQuotas, noFacts)
}

// CapacityReservations implements Provider.
func (None) CapacityReservations(context.Context) ([]CapacityReservation, error) {
	return nil, Unknown(CapacityReservations, noFacts)
}

// InstanceTypes implements Provider.
func (None) InstanceTypes(context.Context) ([]InstanceType, error) {
	return nil, Unknown(InstanceTypes, noFacts)
}
