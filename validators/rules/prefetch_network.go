package rules

import (
	"context"
	"slices"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// This file asks ahead the questions of the network and capacity rules. Each chain asks what the
// rules' helpers ask, through those same helpers run on a context of its own (an evaluation's
// analyses are not shared across goroutines): the questions depend on earlier answers (the control
// plane's groups on the cluster, the VPC endpoints on the subnets' routes, the instance types on the
// pool's zones and AMIs), and a live provider's cache answers the rules afterwards.

// network adds the questions of the network rules about one EC2NodeClass.
func (q *aheadQuestions) network(c *validators.Context, o *objects.Object, rf *ruleFacts) {
	own := func(ctx context.Context) *validators.Context {
		return &validators.Context{Context: ctx, Config: c.Config, Facts: q.p, Input: c.Input, Scope: c.Scope}
	}
	key := "network " + o.Name + " " + o.File
	if rf.touches(facts.ClusterControlPlaneNetwork) || rf.touches(facts.NATGateways) || rf.touches(facts.VPCEndpoints) || rf.touches(facts.VPC) || rf.touches(facts.ServiceQuotas) {
		q.add(key, func(ctx context.Context) {
			oc := own(ctx)
			cl, err := q.p.Cluster(ctx)
			if err != nil {
				return
			}
			groups, gerr := selectedGroups(oc, o)
			subnets, serr := selectedSubnets(oc, o)
			if rf.touches(facts.ServiceQuotas) && gerr == nil && len(groups) > defaultGroupsPerENI {
				_, _ = q.p.ServiceQuota(ctx, facts.QuotaSecurityGroupsPerENI)
			}
			if rf.touches(facts.VPC) && q.p.Known(ctx, facts.ClusterEndpointAccess) == nil && *cl.EndpointPrivateAccess {
				_, _ = q.p.VPC(ctx)
			}
			if cl.IPFamily == "ipv6" || q.p.Known(ctx, facts.ClusterIPFamily) != nil || serr != nil || len(subnets) == 0 {
				return
			}
			if rf.touches(facts.ClusterControlPlaneNetwork) && gerr == nil && len(groups) > 0 && q.p.Known(ctx, facts.ClusterControlPlaneNetwork) == nil {
				_, _ = controlPlaneNetwork(oc)
			}
			if rf.touches(facts.NATGateways) && q.p.Known(ctx, facts.ClusterEndpointAccess) == nil && !*cl.EndpointPrivateAccess &&
				len(cl.PublicAccessCidrs) > 0 && !slices.Contains(cl.PublicAccessCidrs, "0.0.0.0/0") {
				_, _ = q.p.NATGateways(ctx)
			}
			if rf.touches(facts.VPCEndpoints) {
				q.endpoints(oc, o)
			}
		})
	}
	if rf.touches(facts.KMSKeys) && rf.runs(ebsKMSKeyUnusable.ID) {
		q.add("kms "+key, func(ctx context.Context) {
			uses, _ := kmsKeyUses(own(ctx), o)
			for _, u := range uses {
				_, _ = q.p.KMSKey(ctx, u.ref)
			}
		})
	}
	if rf.touches(facts.CapacityReservations) && len(o.NodeClass.Spec.CapacityReservationSelectorTerms) > 0 {
		q.add("capacity reservations", func(ctx context.Context) { _, _ = q.p.CapacityReservations(ctx) })
	}
}

// endpoints asks the VPC endpoints and their groups when a node subnet has no way out, as
// isolatedSubnets and endpointFinder do.
func (q *aheadQuestions) endpoints(oc *validators.Context, o *objects.Object) {
	isolated, f, err := isolatedSubnets(oc, o)
	if err != nil || len(isolated) == 0 {
		return
	}
	services := []string{"ecr.api", "ecr.dkr", "s3"}
	if js, _ := joinServices(oc, o); len(js) > 0 {
		for _, s := range js {
			services = append(services, s.name)
		}
	}
	for _, s := range isolated {
		cidr, _ := subnetCIDR(s)
		for _, svc := range services {
			if svc == "s3" && f.gatewayFor("s3", s.RouteTableID) {
				continue
			}
			_, _, _ = f.interfaceFor(svc, cidr)
		}
	}
}

// nodePoolNetwork adds the instance-type question of a NodePool whose EC2NodeClass can serve it, as
// requirementsFinding asks it.
func (q *aheadQuestions) nodePoolNetwork(c *validators.Context, o *objects.Object, rf *ruleFacts) {
	if !rf.touches(facts.InstanceTypes) || !rf.runs(nodepoolRequirementsUnsatisfiable.ID) {
		return
	}
	js, err := poolsToJudge(c, o)
	if err != nil || len(js) == 0 {
		return
	}
	q.add("instance types for "+o.Name+" "+o.File, func(ctx context.Context) {
		oc := &validators.Context{Context: ctx, Config: c.Config, Facts: q.p, Input: c.Input, Scope: c.Scope}
		for _, j := range js {
			if wouldAskInstanceTypes(oc, o, j) {
				_, _ = q.p.InstanceTypes(ctx)
				if len(j.class.NodeClass.Spec.CapacityReservationSelectorTerms) > 0 {
					_, _ = q.p.CapacityReservations(ctx)
				}
				return
			}
		}
	})
}

// wouldAskInstanceTypes reports whether requirementsFinding reaches the instance types for j.
func wouldAskInstanceTypes(c *validators.Context, o *objects.Object, j poolJudgement) bool {
	if f, err := zonesFinding(c, o, j); err != nil || len(f) > 0 {
		return false
	}
	if f, err := amiFinding(c, o, j); err != nil || len(f) > 0 {
		return false
	}
	zones, _, err := classZones(c, j.class)
	if err != nil || len(zones) == 0 {
		return false
	}
	arches, err := classArchitectures(c, j.class)
	return err == nil && len(arches) > 0
}
