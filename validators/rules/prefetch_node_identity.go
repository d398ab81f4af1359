package rules

import (
	"context"
	"strconv"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// nodeIdentity adds the questions the node-identity rules ask about an EC2NodeClass beyond the node
// role and its mappings (which nodeClass asks): for node-role-join-permissions and
// node-role-runtime-permissions, as nodeRoleSubjectOf and the row builders ask them, the cluster, the
// node role, the VPC CNI, the cluster's Pod Identity associations (runtime rows, unless aws-node uses
// Pod Identity) and the simulator's answer to each row. Nothing is asked when a fact the rules need
// cannot be had: the engine does not run them then.
func (q *aheadQuestions) nodeIdentity(c *validators.Context, o *objects.Object, rf *ruleFacts) {
	join, runtime := rf.runs(nodeRoleJoinPermissions.ID), rf.runs(nodeRoleRuntimePermissions.ID)
	if !join && !runtime {
		return
	}
	spec := o.NodeClass.Spec
	if spec.Role == "" && spec.InstanceProfile == "" {
		return
	}
	// Read here, not in the question: the userData analysis is the evaluation's, which the questions,
	// asked concurrently, must not touch.
	describes := describesInstances(c, o)
	remembered := validators.Shared(c, nodeRoleRowCache)
	key := "node role rows " + strings.ToLower(spec.Role) + " " + strings.ToLower(spec.InstanceProfile) + " " + strconv.FormatBool(describes)
	q.add(key, func(ctx context.Context) {
		for _, f := range []facts.Fact{facts.Roles, facts.Simulations, facts.VPCCNI} {
			if q.p.Known(ctx, f) != nil {
				return
			}
		}
		cluster, err := q.p.Cluster(ctx)
		if err != nil || cluster.Name == "" || cluster.Region == "" || cluster.AccountID == "" {
			return
		}
		role := q.resolveRole(ctx, spec)
		if role == nil {
			return
		}
		cni, err := q.p.VPCCNI(ctx)
		if err != nil {
			return
		}
		s := nodeRoleSubject{cluster: cluster, role: role, cni: cni, describesInstances: describes, remembered: remembered}
		var rows []permissionRow
		if join {
			rows = append(rows, joinRows(s).rows...)
		}
		if runtime {
			if _, onPodIdentity, _ := s.cniOnNode(); !onPodIdentity {
				if n, err := q.p.PodIdentityAssociations(ctx); err == nil {
					s.podIdentity = &n
				}
			}
			rows = append(rows, runtimeRows(s).rows...)
		}
		var calls []func(context.Context)
		for _, r := range rows {
			for _, call := range r.calls() {
				calls = append(calls, func(ctx context.Context) { _, _ = q.p.Simulate(ctx, call) })
			}
		}
		facts.Ask(ctx, facts.AskLimit, calls...)
	})
}

// resolveRole resolves the node role as resolveRole does, from the answers of the provider: spec.role,
// or the role inside spec.instanceProfile; nil when it does not resolve.
func (q *aheadQuestions) resolveRole(ctx context.Context, spec objects.EC2NodeClassSpec) *facts.Role {
	name := ""
	switch {
	case spec.Role != "":
		name = lastSegment(spec.Role)
	case spec.InstanceProfile != "":
		p, err := q.p.InstanceProfile(ctx, lastSegment(spec.InstanceProfile))
		if err != nil || p == nil || len(p.Roles) == 0 {
			return nil
		}
		name = p.Roles[0]
	}
	r, err := q.p.Role(ctx, name)
	if err != nil {
		return nil
	}
	return r
}

// nodeIdentityRules are the rules about the node role's identity and permissions (join readiness).
func nodeIdentityRules() []*validators.Rule {
	return []*validators.Rule{
		nodeRoleTrustPolicy,
		nodeRoleJoinPermissions,
		nodeRoleRuntimePermissions,
		nodeUsernameMismatch,
		windowsNodeMissingKubeProxyGroup,
	}
}
