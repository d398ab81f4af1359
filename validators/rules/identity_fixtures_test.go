package rules_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// This file holds the fixtures of the node-identity rules: trust policies, the vpcCNI section, the Pod
// Identity count and simulator answers for the node role, written in the snapshot's own format. The
// prod-eks world of facts_fixture_test.go holds none of them, so that its cases keep running through the
// live provider too, which does not ask them yet; the identity rules' cases add them.

const (
	// ec2Trust is the trust policy of a node role: EC2 may assume it.
	ec2Trust = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	// clusterARN is prod-eks's ARN, the resource of eks-auth:AssumeRoleForPodIdentity.
	clusterARN = "arn:aws:eks:us-east-1:111122223333:cluster/prod-eks"
	// cniRepository is the VPC CNI image's repository in EKS's us-east-1 registry.
	cniRepository = "arn:aws:ecr:us-east-1:602401143452:repository/amazon-k8s-cni"
	// eniARNs are the network interfaces of prod-eks's account and region.
	eniARNs = "arn:aws:ec2:us-east-1:111122223333:network-interface/*"
)

// trustedRole renders an IAM role with a trust policy ("" leaves it out: unknown).
func trustedRole(name, path, doc string) string {
	r := strings.TrimSuffix(role(name, path, "2025-05-30T09:00:00Z"), "\n")
	if doc == "" {
		return r + "\n"
	}
	quoted, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return r + "\n  assumeRolePolicyDocument: " + string(quoted) + "\n"
}

// withTrust replaces the roles by the default ones, the node role carrying the trust policy doc.
func withTrust(doc string) factsOpt {
	return roles(
		trustedRole(nodeRole, "/", doc),
		trustedRole(winRole, "/", ec2Trust),
		trustedRole(teamRole, "/teams/platform/", ec2Trust),
		trustedRole(legacyRole, "/", ec2Trust),
		role("AWSServiceRoleForEC2Spot", "/aws-service-role/spot.amazonaws.com/", "2022-03-01T00:00:00Z"),
	)
}

// cni renders the vpcCNI section: whether aws-node runs ("" leaves present out: unknown) and with
// whose credentials.
func cni(present, credentials string) string {
	s := "vpcCNI:\n"
	if present != "" {
		s += "  present: " + present + "\n"
	}
	if credentials != "" {
		s += "  credentials: " + credentials + "\n"
	}
	if credentials == facts.CredentialsIRSA || credentials == facts.CredentialsPodIdentity {
		s += "  roleArn: arn:aws:iam::111122223333:role/AmazonEKS-VPC-CNI-prod-eks\n"
	}
	if s == "vpcCNI:\n" {
		return "vpcCNI: {}\n"
	}
	return s
}

// podIdentity sets cluster.podIdentityAssociations ("" leaves it out: unknown).
func podIdentity(n string) factsOpt { return clusterField("podIdentityAssociations", n) }

// nodeRoleQuestion is one question of the node-role table for prod-eks, as a snapshot entry keys it.
type nodeRoleQuestion struct{ row, action, resource string }

// nodeRoleTable is the node-role simulation table for prod-eks, written from the table in docs, not
// from the rules: J1–J3 join, W1–W4 runtime; no request context.
var nodeRoleTable = []nodeRoleQuestion{
	{"J1", "ec2:DescribeInstances", "*"},
	{"J2", "ec2:DescribeNetworkInterfaces", "*"},
	{"J3", "eks-auth:AssumeRoleForPodIdentity", clusterARN}, // W4 asks the same
	{"W1", "ecr:GetAuthorizationToken", "*"},
	{"W2", "ecr:BatchGetImage", cniRepository},
	{"W2", "ecr:GetDownloadUrlForLayer", cniRepository},
	{"W3", "ec2:CreateNetworkInterface", "*"},
	{"W3", "ec2:AttachNetworkInterface", "*"},
	{"W3", "ec2:AssignPrivateIpAddresses", "*"},
	{"W3", "ec2:CreateTags", eniARNs},
}

// sim changes the simulator's answer to the node role's questions of one action.
type sim struct {
	action string
	// decision is implicitDeny or explicitDeny; "" leaves the question out of the snapshot (unknown).
	decision string
	missing  []string
}

func deny(action string) sim { return sim{action: action, decision: facts.DecisionImplicitDeny} }
func explicitDeny(action string) sim {
	return sim{action: action, decision: facts.DecisionExplicitDeny}
}
func unknownSim(action string) sim { return sim{action: action} }
func denyMissing(action string, keys ...string) sim {
	return sim{action, facts.DecisionImplicitDeny, keys}
}

// simulations renders the simulations section for principal: every question of the node-role table
// allowed, but those the answers change.
func simulations(principal string, answers ...sim) string {
	var b strings.Builder
	b.WriteString("simulations:\n")
	for _, q := range nodeRoleTable {
		decision, missing := facts.DecisionAllowed, []string(nil)
		for _, a := range answers {
			if strings.EqualFold(a.action, q.action) {
				decision, missing = a.decision, a.missing
			}
		}
		if decision == "" {
			continue
		}
		b.WriteString("  - principal: " + principal + "\n    action: " + q.action + "\n    resource: \"" + q.resource + "\"\n    decision: " + decision + "\n")
		if len(missing) > 0 {
			b.WriteString("    missingContextValues: [" + strings.Join(missing, ", ") + "]\n")
		}
	}
	return b.String()
}

// identityFacts is the prod-eks snapshot with two Pod Identity associations (opts may change that) and
// the given vpcCNI and simulations sections ("" leaves one out: unknown).
func identityFacts(opts []factsOpt, cniSection, simulationsSection string) string {
	return clusterFacts(append([]factsOpt{podIdentity("2")}, opts...)...) + cniSection + simulationsSection
}

// nodeRoleFacts is identityFacts with aws-node on the node role and every node-role question allowed
// but those the answers change.
func nodeRoleFacts(opts []factsOpt, answers ...sim) string {
	return identityFacts(opts, cni("true", facts.CredentialsNodeRole), simulations(nodeRoleARN, answers...))
}

// joinReadinessFacts are the facts the prod-eks world leaves out: the identities, simulations and the
// network and capacity facts.
var joinReadinessFacts = []facts.Fact{facts.Simulations, facts.VPCCNI, facts.KarpenterController, facts.ClusterIPFamily,
	facts.ClusterEndpointAccess, facts.ClusterControlPlaneNetwork, facts.VPC, facts.NATGateways, facts.VPCEndpoints,
	facts.KMSKeys, facts.ServiceQuotas, facts.CapacityReservations, facts.InstanceTypes}

// identityRules are the rules of join readiness that read facts the prod-eks world leaves out (trust
// policies, the VPC CNI, the controller's role, simulations, the network and capacity facts): in that
// world they are not evaluated, and the tests of the other rules leave them aside.
func identityRules() []string {
	var out []string
	for _, r := range rules.Default().Rules() {
		if r.ID == "node-role-trust-policy" || slices.ContainsFunc(slices.Concat(r.Needs, r.MayNeed), func(f facts.Fact) bool {
			return slices.Contains(joinReadinessFacts, f)
		}) {
			out = append(out, r.ID)
		}
	}
	return out
}

// withoutIdentityRules drops the outcomes of identityRules (keys "rule" or "rule/object").
func withoutIdentityRules(m map[string]string) map[string]string {
	ids := identityRules()
	for k := range m {
		id, _, _ := strings.Cut(k, "/")
		if slices.Contains(ids, id) {
			delete(m, k)
		}
	}
	return m
}

// instanceIDNodeConfig is AL2023 userData naming nodes after their instance ID.
const instanceIDNodeConfig = `apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  featureGates:
    InstanceIdNodeName: true
`

// instanceIDSpec is eksSpec (AL2023) with nodes named after their instance ID.
var instanceIDSpec = withUserData(eksSpec, "", instanceIDNodeConfig)

// customNodeadmSpec is an amiFamily Custom class whose userData is a NodeConfig: nodeadm boots it.
var customNodeadmSpec = withUserData(withAMI("amiFamily: Custom\namiSelectorTerms:\n  - id: "+al2023x86+"\n"), "",
	"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      maxPods: 110\n")

// Why some identity worlds are snapshot-only (ruleCase.snapshotOnly).
const (
	unansweredLive   = "IAM answers every simulation question; only a snapshot leaves one unanswered"
	cniKnownLive     = "the live provider always knows whether aws-node runs and with whose credentials"
	associationsLive = "the live provider tells aws-node's credentials from the Pod Identity associations, so it knows them whenever it knows vpcCNI"
)

// evalSnapshotOnly is evalFacts (no GuardConfig) for a world the live provider cannot see (see
// ruleCase.snapshotOnly): the snapshot alone.
func evalSnapshotOnly(t *testing.T, in, snapshot string) validators.Result {
	t.Helper()
	cf, err := facts.DecodeSnapshotFile([]byte(snapshot))
	if err != nil {
		t.Fatalf("facts: %v\n%s", err, snapshot)
	}
	set := readString(t, "in.yaml", in)
	return rules.Default().Evaluate(&validators.Context{Context: context.Background(), Config: config.Default(), Facts: facts.NewSnapshot(cf), Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
}
