package live

import (
	"context"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// notYet is the reason of the identity facts until the live provider asks them.
const notYet = "not asked live yet"

// PodIdentityAssociations implements facts.Provider.
func (p *Provider) PodIdentityAssociations(context.Context) (int, error) {
	return 0, facts.Unknown(facts.ClusterPodIdentityAssociations, notYet)
}

// KarpenterController implements facts.Provider.
func (p *Provider) KarpenterController(context.Context) (*facts.ControllerRole, error) {
	return nil, facts.Unknown(facts.KarpenterController, notYet)
}

// VPCCNI implements facts.Provider.
func (p *Provider) VPCCNI(context.Context) (*facts.CNI, error) {
	return nil, facts.Unknown(facts.VPCCNI, notYet)
}

// Simulate implements facts.Provider.
func (p *Provider) Simulate(context.Context, facts.SimulationRow) ([]facts.Simulation, error) {
	return nil, facts.Unknown(facts.Simulations, notYet)
}
