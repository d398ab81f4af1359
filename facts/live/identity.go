package live

import (
	"context"
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// The VPC CNI's ServiceAccount: the aws-node DaemonSet runs as it.
const (
	awsNodeNamespace = "kube-system"
	awsNodeName      = "aws-node"
)

// PodIdentityAssociations implements facts.Provider with EKS ListPodIdentityAssociations, aws-node's
// association left out.
func (p *Provider) PodIdentityAssociations(ctx context.Context) (int, error) {
	return p.eks.PodIdentityAssociations(ctx)
}

// KarpenterController implements facts.Provider. The controller's role is, in this order: the one the
// GuardConfig names (karpenter.controllerRoleARN); the IRSA annotation of its ServiceAccount
// (karpenter.serviceAccount), since the SDK resolves web identity before container credentials; the
// ServiceAccount's EKS Pod Identity association. A controller with neither runs as the node's role,
// which is not modelled: the fact is then unknown.
func (p *Provider) KarpenterController(ctx context.Context) (*facts.ControllerRole, error) {
	const f = facts.KarpenterController
	sa := p.opts.Karpenter.ServiceAccount
	if sa == "" {
		sa = config.DefaultKarpenterServiceAccount
	}
	if role := p.opts.Karpenter.ControllerRoleARN; role != "" {
		return &facts.ControllerRole{ServiceAccount: sa, RoleARN: role, Source: facts.CredentialsConfig}, nil
	}
	namespace, name, ok := strings.Cut(sa, "/")
	if !ok || namespace == "" || name == "" {
		return nil, facts.Unknown(f, fmt.Sprintf("karpenter.serviceAccount %q is not namespace/name", sa))
	}
	acct, err := p.serviceAccounts.Get(ctx, f, namespace, name)
	if err != nil {
		return nil, err
	}
	if acct == nil {
		return nil, facts.Unknown(f, fmt.Sprintf("no ServiceAccount %s: set karpenter.serviceAccount", sa))
	}
	if acct.RoleARN != "" {
		return &facts.ControllerRole{ServiceAccount: sa, RoleARN: acct.RoleARN, Source: facts.CredentialsIRSA}, nil
	}
	pi, err := p.eks.PodIdentity(ctx, f, namespace, name)
	if err != nil {
		return nil, err
	}
	if pi == nil {
		return nil, facts.Unknown(f, "the controller runs with neither IRSA nor Pod Identity; node-role credentials are not modelled")
	}
	sessionPolicy := pi.Policy != ""
	return &facts.ControllerRole{
		ServiceAccount: sa, RoleARN: pi.RoleARN, Source: facts.CredentialsPodIdentity,
		SessionPolicy: &sessionPolicy, TargetRoleARN: pi.TargetRoleARN,
	}, nil
}

// VPCCNI implements facts.Provider from the ServiceAccount kube-system/aws-node: none means another
// CNI; with the IRSA annotation, that role; else its EKS Pod Identity association's role; else the
// node's role.
func (p *Provider) VPCCNI(ctx context.Context) (*facts.CNI, error) {
	const f = facts.VPCCNI
	acct, err := p.serviceAccounts.Get(ctx, f, awsNodeNamespace, awsNodeName)
	if err != nil {
		return nil, err
	}
	present := acct != nil
	switch {
	case !present:
		return &facts.CNI{Present: &present}, nil
	case acct.RoleARN != "":
		return &facts.CNI{Present: &present, Credentials: facts.CredentialsIRSA, RoleARN: acct.RoleARN}, nil
	}
	pi, err := p.eks.PodIdentity(ctx, f, awsNodeNamespace, awsNodeName)
	if err != nil {
		return nil, err
	}
	if pi != nil {
		return &facts.CNI{Present: &present, Credentials: facts.CredentialsPodIdentity, RoleARN: pi.RoleARN}, nil
	}
	return &facts.CNI{Present: &present, Credentials: facts.CredentialsNodeRole}, nil
}

// Simulate implements facts.Provider with IAM SimulatePrincipalPolicy, one call per row.
func (p *Provider) Simulate(ctx context.Context, row facts.SimulationRow) ([]facts.Simulation, error) {
	return p.iam.Simulate(ctx, row)
}

// simulationsKnown tells whether the policy simulator can be asked, from a permission probe in the
// cluster's account (its ARN names it).
func (p *Provider) simulationsKnown(ctx context.Context) error {
	c, err := p.eks.Cluster(ctx)
	if err != nil {
		return awscall.Unknown(facts.Simulations, err)
	}
	return p.iam.SimulationsKnown(ctx, c.Partition, c.AccountID)
}
