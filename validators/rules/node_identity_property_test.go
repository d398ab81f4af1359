package rules_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// TestNodeIdentityUnknownFactsNeverPassSilently is TestUnknownFactsNeverPassSilently for the rules that
// read the node-identity facts (left out of the prod-eks world): starting from a world where each fires
// on some class, making any fact they read unknown reports every rule that Needs it as not evaluated,
// never turns a finding into silence, and never creates one.
func TestNodeIdentityUnknownFactsNeverPassSilently(t *testing.T) {
	ids := []string{"node-role-trust-policy", "node-role-join-permissions", "node-role-runtime-permissions"}
	arn := func(name string) string { return "arn:aws:iam::111122223333:role/" + name }
	world := func(remove string) string {
		var opts []factsOpt
		cniSection := cni("true", facts.CredentialsNodeRole)
		sims := simulations(nodeRoleARN) +
			strings.TrimPrefix(simulations(arn("KarpenterNodeRole-untrusted")), "simulations:\n") +
			strings.TrimPrefix(simulations(arn("KarpenterNodeRole-no-describe"), deny("ec2:DescribeInstances")), "simulations:\n") +
			strings.TrimPrefix(simulations(arn("KarpenterNodeRole-no-ecr"), deny("ecr:GetAuthorizationToken")), "simulations:\n")
		roleList := roles(
			trustedRole(nodeRole, "/", ec2Trust),
			trustedRole("KarpenterNodeRole-untrusted", "/", `{"Version":"2012-10-17","Statement":[]}`),
			trustedRole("KarpenterNodeRole-no-describe", "/", ec2Trust),
			trustedRole("KarpenterNodeRole-no-ecr", "/", ec2Trust),
		)
		switch remove {
		case "roles":
			opts = append(opts, without("roles"))
		case "instanceProfiles":
			opts = append(opts, roleList, without("instanceProfiles"))
		case "vpcCNI":
			opts, cniSection = append(opts, roleList), ""
		case "simulations":
			opts, sims = append(opts, roleList), ""
		case "cluster.podIdentityAssociations":
			opts = append(opts, roleList, podIdentity(""))
		case "cluster":
			opts = append(opts, roleList, noCluster())
		default:
			opts = append(opts, roleList)
		}
		return identityFacts(opts, cniSection, sims)
	}
	in := docs(
		nodeClass("healthy", eksSpec),
		nodeClass("healthy-profile", withRole("instanceProfile: "+nodeProfile+"\n")),
		nodeClass("untrusted", withRole("role: KarpenterNodeRole-untrusted\n")),
		nodeClass("no-describe", withRole("role: KarpenterNodeRole-no-describe\n")),
		nodeClass("no-ecr", withRole("role: KarpenterNodeRole-no-ecr\n")),
	)
	classes := []string{"healthy", "healthy-profile", "untrusted", "no-describe", "no-ecr"}
	only := func(m map[string]string) map[string]string {
		for k := range m {
			id, _, _ := strings.Cut(k, "/")
			if !slices.Contains(ids, id) {
				delete(m, k)
			}
		}
		return m
	}
	baseline := only(outcomes(evalFacts(t, in, world(""), ""), true))
	want := map[string]string{
		"node-role-trust-policy/untrusted":       fired,
		"node-role-join-permissions/no-describe": fired,
		"node-role-runtime-permissions/no-ecr":   fired,
	}
	if describeOutcomes(baseline) != describeOutcomes(want) {
		t.Fatalf("full facts:\n  got  %s\n  want %s", describeOutcomes(baseline), describeOutcomes(want))
	}
	needs := map[string][]string{
		"roles":                           ids,
		"vpcCNI":                          ids[1:],
		"simulations":                     ids[1:],
		"instanceProfiles":                nil, // read only for healthy-profile
		"cluster.podIdentityAssociations": nil, // read only by the runtime rows
		"cluster":                         nil, // asked, not needed: not evaluated where read
	}
	eval := func(removed string) map[string]string {
		if removed == "cluster.podIdentityAssociations" {
			return only(outcomes(evalSnapshotOnly(t, in, world(removed)), true)) // associationsLive
		}
		return only(outcomes(evalFacts(t, in, world(removed), ""), true))
	}
	for removed, needed := range needs {
		got := eval(removed)
		for _, id := range needed {
			for _, class := range classes {
				if got[id+"/"+class] != notEv {
					t.Errorf("without %s: %s on %s is %q, want not evaluated", removed, id, class, outcomeOr(got[id+"/"+class]))
				}
			}
		}
		for k, v := range baseline {
			if v == fired && got[k] == "" {
				t.Errorf("without %s: %s passes silently (it fired with full facts)", removed, k)
			}
		}
		for k, v := range got {
			if strings.HasPrefix(v, fired) && baseline[k] != fired {
				t.Errorf("without %s: %s fires, but not with full facts", removed, k)
			}
		}
	}
	// What only some classes read: those classes are not evaluated.
	for removed, k := range map[string]string{
		"instanceProfiles":                "node-role-trust-policy/healthy-profile",
		"cluster.podIdentityAssociations": "node-role-runtime-permissions/healthy",
		"cluster":                         "node-role-join-permissions/healthy",
	} {
		if got := eval(removed); got[k] != notEv {
			t.Errorf("without %s: %s is %q, want not evaluated", removed, k, outcomeOr(got[k]))
		}
	}
}
