package eks

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// PodIdentity is an EKS Pod Identity association: the role a ServiceAccount's pods get.
type PodIdentity struct {
	// RoleARN is the association's role, which the Pod Identity agent assumes.
	RoleARN string
	// TargetRoleARN is the cross-account role assumed from RoleARN in turn ("" when none).
	TargetRoleARN string
	// Policy is the session policy that narrows the role's permissions ("" when none).
	Policy string
}

// association is one entry of ListPodIdentityAssociations.
type association struct {
	id, namespace, serviceAccount string
}

// The ServiceAccount of the VPC CNI, whose association does not count among the cluster's: it is not
// a pod the Pod Identity agent serves on the node's behalf.
const (
	awsNodeNamespace = "kube-system"
	awsNodeName      = "aws-node"
)

// PodIdentityAssociations counts the cluster's Pod Identity associations, aws-node's left out, with
// EKS ListPodIdentityAssociations.
func (p *Provider) PodIdentityAssociations(ctx context.Context) (int, error) {
	list, err := p.associations(ctx, facts.ClusterPodIdentityAssociations, "", "")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range list {
		if a.namespace != awsNodeNamespace || a.serviceAccount != awsNodeName {
			n++
		}
	}
	return n, nil
}

// PodIdentity returns the Pod Identity association of the ServiceAccount namespace/name, for fact f:
// ListPodIdentityAssociations filtered to it, then DescribePodIdentityAssociation; nil when it has
// none. EKS allows one association per ServiceAccount.
func (p *Provider) PodIdentity(ctx context.Context, f facts.Fact, namespace, name string) (*PodIdentity, error) {
	list, err := p.associations(ctx, f, namespace, name)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	id := list[0].id
	q := awscall.Question{Fact: f, Action: "eks:DescribePodIdentityAssociation", Key: id}
	return awscall.Lookup(ctx, p.caller, p.podIdentities, q, func(ctx context.Context) (*PodIdentity, bool, error) {
		out, err := p.api.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{ClusterName: aws.String(p.name), AssociationId: aws.String(id)})
		if awscall.Classify(err) == awscall.OutcomeNotFound {
			return nil, true, nil // deleted since the list
		}
		if err != nil {
			return nil, false, err
		}
		a := out.Association
		if a == nil {
			return nil, false, errors.New("DescribePodIdentityAssociation answered without an association")
		}
		return &PodIdentity{RoleARN: aws.ToString(a.RoleArn), TargetRoleARN: aws.ToString(a.TargetRoleArn), Policy: aws.ToString(a.Policy)}, false, nil
	})
}

// associations lists the cluster's Pod Identity associations (one paginated call), those of the
// ServiceAccount namespace/name only when name is set, for fact f. An empty list is a "does not
// exist" answer, kept for the negative TTL: an association made a minute ago should count soon.
func (p *Provider) associations(ctx context.Context, f facts.Fact, namespace, name string) ([]association, error) {
	key := p.name
	in := &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String(p.name)}
	if name != "" {
		key += " " + namespace + "/" + name
		in.Namespace, in.ServiceAccount = aws.String(namespace), aws.String(name)
	}
	q := awscall.Question{Fact: f, Action: "eks:ListPodIdentityAssociations", Key: key}
	return awscall.Lookup(ctx, p.caller, p.associationLists, q, func(ctx context.Context) ([]association, bool, error) {
		var list []association
		pages := eks.NewListPodIdentityAssociationsPaginator(p.api, in)
		for pages.HasMorePages() {
			out, err := pages.NextPage(ctx)
			if awscall.Classify(err) == awscall.OutcomeNotFound {
				return nil, false, &ClusterNotFoundError{Name: p.name, Region: p.region}
			}
			if err != nil {
				return nil, false, err
			}
			for _, a := range out.Associations {
				if name != "" && (aws.ToString(a.Namespace) != namespace || aws.ToString(a.ServiceAccount) != name) {
					continue // the filter is EKS's; a summary outside it is not this ServiceAccount's
				}
				list = append(list, association{id: aws.ToString(a.AssociationId), namespace: aws.ToString(a.Namespace), serviceAccount: aws.ToString(a.ServiceAccount)})
			}
		}
		return list, len(list) == 0, nil
	})
}
