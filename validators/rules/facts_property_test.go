package rules_test

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// propertyWorld is the prod-eks snapshot plus roles in every state of authorization, without the spot
// service-linked role, and in an account that does not encrypt new EBS volumes by default, so that
// every rule that reads facts fires on some object of propertyInput.
func propertyWorld(opts ...factsOpt) string {
	const created, recreated = "2025-06-01T10:00:00Z", "2025-09-15T14:30:00Z"
	base := []factsOpt{
		roles(
			role(nodeRole, "/", "2025-05-30T09:00:00Z"),
			role(winRole, "/", "2025-05-30T09:00:00Z"),
			role(legacyRole, "/", "2023-02-14T12:00:00Z"),
			role("KarpenterNodeRole-standard", "/", "2025-05-30T09:00:00Z"),
			role("KarpenterNodeRole-recreated", "/", recreated),
			role("KarpenterNodeRole-data", "/teams/data/", "2025-05-30T09:00:00Z"),
			role("KarpenterNodeRole-entry-only", "/", "2025-05-30T09:00:00Z"),
			role("KarpenterNodeRole-data-entry", "/teams/data/", "2025-05-30T09:00:00Z"),
			role("KarpenterNodeRole-windows-linux", "/", "2025-05-30T09:00:00Z"),
		),
		entries(
			entry(nodeRoleARN, "EC2_LINUX", created),
			entry(winRoleARN, "EC2_WINDOWS", created),
			entry("arn:aws:iam::111122223333:role/KarpenterNodeRole-standard", "STANDARD", created),
			entry("arn:aws:iam::111122223333:role/KarpenterNodeRole-recreated", "EC2_LINUX", created),
			entry("arn:aws:iam::111122223333:role/KarpenterNodeRole-entry-only", "EC2_LINUX", created),
			entry("arn:aws:iam::111122223333:role/KarpenterNodeRole-data-entry", "EC2_LINUX", created),
			entry("arn:aws:iam::111122223333:role/KarpenterNodeRole-windows-linux", "EC2_LINUX", created),
		),
		withAWSAuth(
			mapping(nodeRoleARN, nodeGroups),
			mapping(winRoleARN, windowsGroups),
			mapping("arn:aws:iam::111122223333:role/KarpenterNodeRole-recreated", nodeGroups),
			mapping("arn:aws:iam::111122223333:role/teams/data/KarpenterNodeRole-data", nodeGroups),
			mapping("arn:aws:iam::111122223333:role/teams/data/KarpenterNodeRole-data-entry", nodeGroups),
		),
		ebsDefaults(false),
	}
	return clusterFacts(append(base, opts...)...)
}

// propertyInput holds healthy objects and one object per fact rule that breaks it.
func propertyInput() string {
	al2023 := func(terms string) string { return amiTerms("amiFamily: AL2023\namiSelectorTerms:\n" + terms) }
	return docs(
		nodeClass("healthy", eksSpec),
		nodeClass("healthy-windows", windowsSpec(winRole)),
		nodeClass("healthy-profile", withRole("instanceProfile: "+nodeProfile+"\n")),
		nodeClass("healthy-team-image", al2023("  - name: platform-team-base-*\n    owner: self\n")),
		nodeClass("healthy-team-image-by-account", al2023("  - tags:\n      team: platform\n    owner: \"111122223333\"\n")),
		nodeClass("not-authorized", withRole("role: "+legacyRole+"\n")),
		nodeClass("not-authorized-profile", withRole("instanceProfile: "+legacyProfile+"\n")),
		nodeClass("entry-type", withRole("role: KarpenterNodeRole-standard\n")),
		nodeClass("entry-stale", withRole("role: KarpenterNodeRole-recreated\n")),
		nodeClass("pathed-mapping", withRole("role: KarpenterNodeRole-data\n")),
		nodeClass("entry-only", withRole("role: KarpenterNodeRole-entry-only\n")),
		// A pathed mapping that decides nothing: the role's access entry wins. Only the mode says so,
		// so without it the mapping must not be reported.
		nodeClass("pathed-mapping-entry-wins", withRole("role: KarpenterNodeRole-data-entry\n")),
		// Nodes named after their instance ID, authorized by an entry that names them by DNS name; Windows
		// nodes authorized by an EC2_LINUX entry.
		nodeClass("username", instanceIDSpec),
		nodeClass("windows-linux-entry", windowsSpec("KarpenterNodeRole-windows-linux")),
		nodeClass("role-missing", withRole("role: KarpenterNodeRole-prod\n")),
		nodeClass("profile-missing", withRole("instanceProfile: KarpenterNodeInstanceProfile-prod\n")),
		nodeClass("profile-empty", withRole("instanceProfile: "+emptyProfile+"\n")),
		nodeClass("ami-typo", al2023("  - name: amazon-eks-node-al2023-x86-64-*\n    owner: amazon\n")),
		nodeClass("ami-version", amiTerms("amiSelectorTerms:\n  - alias: al2023@v20240101\n")),
		nodeClass("vendor-image", al2023("  - tags:\n      vendor: cis\n")),
		nodeClass("look-alike", al2023("  - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n")),
		nodeClass("al2-image", al2023("  - name: amazon-eks-node-1.32-*\n    owner: amazon\n")),
		nodeClass("al2-alias", amiTerms("amiSelectorTerms:\n  - alias: al2@latest\n")),
		nodeClass("subnet-typo", subnetSel("  - tags:\n      karpenter.sh/discovery: prod-eks-cluster\n")),
		nodeClass("group-typo", groupSel("  - name: prod-eks-nodes\n")),
		nodeClass("legacy-vpc", subnetSel("  - id: "+sharedSub+"\n")),
		nodeClass("public", subnetSel("  - id: "+publicA+"\n")),
		// Volumes left unencrypted, one with encrypted left out (only the EBS defaults tell), one with
		// encrypted: false beside it (reported whatever is known).
		nodeClass("ebs-unset", eksSpec+"blockDeviceMappings:\n  - deviceName: /dev/xvda\n    ebs:\n      volumeSize: 100Gi\n"),
		nodeClass("ebs-false-and-unset", eksSpec+"blockDeviceMappings:\n  - deviceName: /dev/xvda\n    ebs:\n      volumeSize: 100Gi\n      encrypted: false\n"+
			"  - deviceName: /dev/xvdb\n    ebs:\n      volumeSize: 20Gi\n"),
		capacityPool("spot", "- key: karpenter.sh/capacity-type\n  operator: In\n  values: [\"spot\"]\n"),
		capacityPool("on-demand", "- key: karpenter.sh/capacity-type\n  operator: In\n  values: [\"on-demand\"]\n"),
		capacityPool("any-capacity", ""),
		// Pools that cannot launch with their class: a zone without a subnet, arm64 on Windows.
		poolWith("zone-without-subnets", "healthy", "- key: topology.kubernetes.io/zone\n  operator: In\n  values: [\"us-east-1c\"]\n"),
		poolWith("arm-on-windows", "healthy-windows", "- key: kubernetes.io/arch\n  operator: In\n  values: [\"arm64\"]\n"),
	)
}

// removals makes each fact unknown in turn; "cluster" drops the whole cluster section.
var removals = map[string]factsOpt{
	string(facts.ClusterAuthenticationMode): mode(""),
	string(facts.ClusterVersion):            k8sVersion(""),
	string(facts.ClusterVPCID):              clusterField("vpcID", ""),
	string(facts.AccessEntries):             without("accessEntries"),
	string(facts.AWSAuth):                   without("awsAuth"),
	string(facts.Roles):                     without("roles"),
	string(facts.InstanceProfiles):          without("instanceProfiles"),
	string(facts.Images):                    without("images"),
	string(facts.SSMParameters):             without("ssmParameters"),
	string(facts.Subnets):                   without("subnets"),
	string(facts.SecurityGroups):            without("securityGroups"),
	string(facts.EBSDefaults):               without("ebsDefaults"),
	"cluster":                               noCluster(),
}

// TestUnknownFactsNeverPassSilently: starting from a full snapshot in which every rule that reads facts
// fires somewhere, making any one section unknown
//   - reports every rule that Needs it as not evaluated for every object of the rule's kind;
//   - never turns a finding into silence: each (rule, object) that fired still fires or is not evaluated;
//   - never creates a finding that the full facts did not give.
func TestUnknownFactsNeverPassSilently(t *testing.T) {
	const cfg = "amiOwners:\n  allowed: [amazon, self]\n"
	in := propertyInput()
	full := evalFacts(t, in, propertyWorld(), cfg)
	baseline := withoutIdentityRules(outcomes(full, true))
	for k, v := range baseline {
		if strings.Contains(v, notEv) {
			t.Fatalf("with full facts nothing should be not evaluated: %s is %s", k, v)
		}
	}

	cat := rules.Default()
	kinds := map[string]string{validators.KindEC2NodeClass: "EC2NodeClass", validators.KindNodePool: "NodePool"}
	objectsOf := map[string][]string{}
	set := readString(t, "in.yaml", in)
	for _, o := range set.Objects {
		objectsOf[o.Kind] = append(objectsOf[o.Kind], o.Name)
	}

	// Every rule that reads facts must fire on some object, or the property below proves nothing.
	var factRules []*validators.Rule
	for _, r := range cat.Rules() {
		if len(r.Needs)+len(r.MayNeed) == 0 || r.Scope == validators.ScopeAdmission || slices.Contains(identityRules(), r.ID) {
			continue
		}
		factRules = append(factRules, r)
		found := false
		for k := range baseline {
			found = found || strings.HasPrefix(k, r.ID+"/")
		}
		if !found {
			t.Errorf("%s fires on no object of the property input: add one that breaks it", r.ID)
		}
	}
	if len(factRules) < 17 {
		t.Errorf("only %d rules read facts", len(factRules))
	}
	// Every fact a rule reads is made unknown in turn below (the cluster's EC2NodeClasses are the
	// webhook's and the audit's, never a snapshot's, and so are its NodePools).
	for _, r := range factRules {
		for _, f := range slices.Concat(r.Needs, r.MayNeed) {
			if _, ok := removals[string(f)]; !ok && f != facts.ClusterNodeClasses && f != facts.ClusterNodePools {
				t.Errorf("%s reads %s, which removals never makes unknown", r.ID, f)
			}
		}
	}

	names := make([]string, 0, len(removals))
	for n := range removals {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, removed := range names {
		res := evalFacts(t, in, propertyWorld(removals[removed]), cfg)
		got := withoutIdentityRules(outcomes(res, true))
		// Rules that Need the removed fact are not evaluated on every object they apply to.
		for _, r := range factRules {
			needs := false
			for _, f := range r.Needs {
				needs = needs || string(f) == removed || (removed == "cluster" && strings.HasPrefix(string(f), "cluster."))
			}
			if !needs || (r.Enabled != nil && !r.Enabled(mustConfig(t, cfg))) {
				continue
			}
			for _, k := range r.Kinds {
				for _, name := range objectsOf[kinds[k]] {
					if got[r.ID+"/"+name] != notEv {
						t.Errorf("without %s: %s on %s is %q, want not evaluated", removed, r.ID, name, outcomeOr(got[r.ID+"/"+name]))
					}
				}
			}
		}
		// What fired still fires or is not evaluated.
		for k, v := range baseline {
			if v == fired && got[k] == "" {
				t.Errorf("without %s: %s passes silently (it fired with full facts)", removed, k)
			}
		}
		// Unknown facts never produce a finding the full facts did not.
		for k, v := range got {
			if strings.HasPrefix(v, fired) && baseline[k] != fired {
				t.Errorf("without %s: %s fires, but not with full facts", removed, k)
			}
		}
	}
}

func outcomeOr(s string) string {
	if s == "" {
		return quiet
	}
	return s
}

func mustConfig(t *testing.T, body string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte("apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\n"+body), rules.Default().IDs())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
