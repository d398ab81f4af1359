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
