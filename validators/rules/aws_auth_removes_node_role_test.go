package rules_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/golden"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// awsAuthConfigMap renders kube-system/aws-auth with a mapRoles value holding the mappings.
func awsAuthConfigMap(mappings ...string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aws-auth\n  namespace: kube-system\ndata:\n  mapRoles: |\n" +
		indent(strings.Join(mappings, ""), "    ")
}

func parseOne(t *testing.T, name, doc string) *objects.Object {
	t.Helper()
	objs, _, errs := manifest.Parse(name, []byte(doc))
	if len(errs) > 0 || len(objs) != 1 {
		t.Fatalf("%s: %v", name, errs)
	}
	return objs[0]
}

// TestAWSAuthRemovesNodeRole: an UPDATE or DELETE of aws-auth that takes away what authorizes an
// existing EC2NodeClass's node role is refused, naming the classes; edits that leave every role
// authorized, roles an access entry authorizes, and mode API are quiet. Each case runs with the
// snapshot and with the live provider through the AWS fake.
func TestAWSAuthRemovesNodeRole(t *testing.T) {
	classes := docs(
		nodeClass("default", strings.Replace(baseSpec, "KarpenterNodeRole-prod", nodeRole, 1)),
		nodeClass("gpu", strings.Replace(baseSpec, "KarpenterNodeRole-prod", nodeRole, 1)),
		nodeClass("windows", "amiSelectorTerms:\n  - alias: windows2022@latest\nrole: "+winRole+"\n"),
		nodeClass("team", strings.Replace(baseSpec, "KarpenterNodeRole-prod", teamRole, 1)),
	)
	all := defaultMappings()
	without := func(arn string) []string {
		var out []string
		for _, m := range all {
			if !strings.Contains(m, arn+"\n") {
				out = append(out, m)
			}
		}
		return out
	}
	noEntries := entries(entry(adminRoleARN, "STANDARD", "2025-05-01T08:00:00Z"))
	cases := []struct {
		name     string
		op       string
		old, new string // aws-auth ConfigMaps; new "" for DELETE
		facts    []factsOpt
		fires    int
		contains string
	}{
		{"drops the node role (config-map mode)", validators.OperationUpdate, awsAuthConfigMap(all...), awsAuthConfigMap(without(nodeRoleARN)...),
			[]factsOpt{mode("CONFIG_MAP")}, 1, `EC2NodeClasses "default", "gpu"`},
		{"drops a group of the windows role", validators.OperationUpdate, awsAuthConfigMap(all...),
			awsAuthConfigMap(append(without(winRoleARN), mapping(winRoleARN, nodeGroups))...),
			[]factsOpt{mode("CONFIG_MAP")}, 1, "leaves the mapping of node role " + winRoleARN + " without eks:kube-proxy-windows"},
		{"deleting aws-auth", validators.OperationDelete, awsAuthConfigMap(all...), "",
			[]factsOpt{mode("CONFIG_MAP")}, 3, "deleting aws-auth drops the mapping of"},
		{"mixed mode, no access entries", validators.OperationUpdate, awsAuthConfigMap(all...), awsAuthConfigMap(without(teamRolePathless)...),
			[]factsOpt{noEntries}, 1, `EC2NodeClass "team"`},
		// EKS keeps an entry without username and groups: it maps the role, to nothing nodes can use.
		{"an edit that leaves the node entry without username and groups", validators.OperationUpdate, awsAuthConfigMap(all...), awsAuthConfigMap("- rolearn: " + nodeRoleARN + "\n"),
			[]factsOpt{mode("CONFIG_MAP")}, 3, "(mapRoles line 1: entry has no username: EKS keeps the entry and maps the role to the empty username)"},
		// aws-auth as EKS reads it: the entry EKS drops maps nothing, the others still count.
		{"an edit that makes EKS drop the node entry", validators.OperationUpdate, awsAuthConfigMap(all...),
			awsAuthConfigMap(append(without(nodeRoleARN), "- rolearn: "+nodeRoleARN+"\n  sso: {permissionSetName: Nodes, accountID: \"111122223333\"}\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: "+nodeGroups+"\n")...),
			[]factsOpt{mode("CONFIG_MAP")}, 1, "entry has both rolearn and sso; EKS accepts only one of them: EKS drops this entry and keeps the others"},
		{"an edit that makes EKS drop the node entry, its rolearn unreadable", validators.OperationUpdate, awsAuthConfigMap(all...),
			awsAuthConfigMap(append(without(nodeRoleARN), "- rolearn: ["+nodeRoleARN+"]\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: "+nodeGroups+"\n")...),
			[]factsOpt{mode("CONFIG_MAP")}, 1, "drops the mapping of node role " + nodeRoleARN},
		{"an edit that glues the node groups into one", validators.OperationUpdate, awsAuthConfigMap(all...),
			awsAuthConfigMap(append(without(nodeRoleARN), "- rolearn: "+nodeRoleARN+"\n  username: system:node:{{EC2PrivateDNSName}}\n  groups:\n    - system:bootstrappers\n     - system:nodes\n")...),
			[]factsOpt{mode("CONFIG_MAP")}, 1, `holds a list in one string: EKS maps the entry to the one group "system:bootstrappers - system:nodes"`},
		{"an edit that moves the node role under maproles", validators.OperationUpdate, awsAuthConfigMap(all...),
			strings.Replace(awsAuthConfigMap(all...), "  mapRoles: |", "  maproles: |", 1),
			[]factsOpt{mode("CONFIG_MAP")}, 3, "its entry is under data.maproles, which EKS never reads"},
		// Before, EKS kept the node role's entry beside one it dropped: the edit still takes it away.
		{"a ConfigMap with a dropped entry still authorized the others", validators.OperationUpdate,
			awsAuthConfigMap(append(all, "- username: orphan\n")...), awsAuthConfigMap(append(without(nodeRoleARN), "- username: orphan\n")...),
			[]factsOpt{mode("CONFIG_MAP")}, 1, `EC2NodeClasses "default", "gpu"`},
		{"access entries decide in mixed mode", validators.OperationUpdate, awsAuthConfigMap(all...), awsAuthConfigMap(without(nodeRoleARN)...),
			nil, 0, ""},
		{"mode API ignores aws-auth", validators.OperationUpdate, awsAuthConfigMap(all...), awsAuthConfigMap(),
			[]factsOpt{mode("API")}, 0, ""},
		{"an unrelated mapping removed", validators.OperationUpdate, awsAuthConfigMap(all...), awsAuthConfigMap(without(oldNodesARN)...),
			[]factsOpt{mode("CONFIG_MAP")}, 0, ""},
		{"already unmapped before", validators.OperationUpdate, awsAuthConfigMap(without(nodeRoleARN)...), awsAuthConfigMap(without(nodeRoleARN)...),
			[]factsOpt{mode("CONFIG_MAP")}, 0, ""},
		{"a create is not a removal", validators.OperationCreate, "", awsAuthConfigMap(), []factsOpt{mode("CONFIG_MAP")}, 0, ""},
	}
	cat := rules.Default()
	var out strings.Builder
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			input := manifestObjects(t, classes)
			var o, old *objects.Object
			if tc.old != "" {
				old = parseOne(t, "", tc.old)
			}
			if tc.new != "" {
				o = parseOne(t, "", tc.new)
			} else {
				o = old
			}
			cf, err := facts.DecodeSnapshotFile([]byte(clusterFacts(tc.facts...)))
			if err != nil {
				t.Fatal(err)
			}
			synced := func(context.Context) error { return nil }
			providers := map[string]facts.Provider{
				"snapshot": facts.WithClusterNodeClasses(facts.NewSnapshot(cf), synced),
				"live":     facts.WithClusterNodeClasses(livetest.Start(t, cf, livetest.Options{}).Provider, synced),
			}
			var got map[string]string = map[string]string{}
			for name, p := range providers {
				res := cat.Evaluate(&validators.Context{Context: context.Background(), Config: config.Default(), Facts: p, Input: input,
					Scope: validators.ScopeAdmission, Operation: tc.op, Old: old}, []*objects.Object{o})
				var fs []validators.Finding
				for _, f := range res.Findings {
					if f.Rule == "aws-auth-removes-node-role" {
						fs = append(fs, f)
					}
				}
				for _, n := range res.NotEvaluated {
					t.Errorf("%s: not evaluated: %s %s", name, n.Rule, n.Reason)
				}
				if len(fs) != tc.fires {
					t.Fatalf("%s: fired %d times, want %d:\n%s", name, len(fs), tc.fires, render(fs))
				}
				if tc.fires > 0 && !strings.Contains(render(fs), tc.contains) {
					t.Errorf("%s: findings lack %q:\n%s", name, tc.contains, render(fs))
				}
				got[name] = render(fs)
			}
			if got["snapshot"] != got["live"] {
				t.Errorf("snapshot and live disagree:\n%s\n%s", got["snapshot"], got["live"])
			}
			if tc.fires > 0 {
				fmt.Fprintf(&out, "## %s\n%s", tc.name, got["snapshot"])
			}
		})
	}
	golden.Compare(t, filepath.Join("testdata", "aws-auth-removes-node-role.golden"), out.String(), *update)
}

func manifestObjects(t *testing.T, in string) []*objects.Object {
	t.Helper()
	return readString(t, "cluster.yaml", in).Objects
}
