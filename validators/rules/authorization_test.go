package rules_test

import (
	"fmt"
	"testing"
)

// TestNodeRoleDecisionTable walks docs/design.md §3 ("How a node joins") for every authentication mode,
// state of aws-auth, access entry type, OS family and node naming, with a path-less and a pathed node
// role, and checks the whole catalog: exactly the node-role rules the table predicts fire (or are not
// evaluated), and nothing else does (the rules that read facts this world leaves out, such as the node
// role's trust policy and simulations, are left aside). The oracle below is written from
// docs/design.md, not from the rules.
func TestNodeRoleDecisionTable(t *testing.T) {
	type nodeRoleT struct {
		name, arn, pathless string
	}
	rolesUnderTest := []nodeRoleT{
		{nodeRole, nodeRoleARN, nodeRoleARN},
		{teamRole, teamRoleARN, teamRolePathless},
	}
	type osT struct {
		name    string
		ami     string // amiSelectorTerms block (with amiFamily when set)
		windows bool
		al2023  bool
		// instanceID: nodeadm names the nodes after their instance ID (userData sets the gate).
		instanceID bool
	}
	families := []osT{
		{"al2023", "amiSelectorTerms:\n  - alias: al2023@latest\n", false, true, false},
		{"al2023-instance-id", "amiSelectorTerms:\n  - alias: al2023@latest\n", false, true, true},
		{"bottlerocket", "amiSelectorTerms:\n  - alias: bottlerocket@latest\n", false, false, false},
		{"windows-alias", "amiSelectorTerms:\n  - alias: windows2022@latest\n", true, false, false},
		{"windows-family", "amiFamily: Windows2022\namiSelectorTerms:\n  - name: Windows_Server-2022-English-Core-EKS_Optimized-1.33-*\n    owner: amazon\n", true, false, false},
	}
	const (
		awsUnknown     = "unknown"      // awsAuth absent from the snapshot
		awsNoConfigMap = "no-configmap" // awsAuth: {}
		awsMaps        = "maps"         // path-less ARN, both node groups (and kube-proxy-windows for Windows), username system:node:{{EC2PrivateDNSName}}
		awsNoBoot      = "no-bootstrappers"
		awsLinuxGroups = "linux-groups" // Windows role mapped with the Linux groups only
		awsPathOnly    = "path-only"    // rolearn with the role's IAM path
		awsUnmapped    = "unmapped"     // mapRoles holds other roles only
	)
	awsStates := []string{awsUnknown, awsNoConfigMap, awsMaps, awsNoBoot, awsLinuxGroups, awsPathOnly, awsUnmapped}
	modes := []string{"CONFIG_MAP", "API", "API_AND_CONFIG_MAP"}
	entryTypes := []string{"", "EC2_LINUX", "STANDARD", "EC2_WINDOWS", "EC2"}

	const (
		notAuthorized = "node-role-not-authorized"
		entryType     = "node-role-access-entry-type"
		entryStale    = "node-role-access-entry-stale"
		hasPath       = "aws-auth-rolearn-has-path"
		hybrid        = "al2023-hybrid-auth"
		username      = "node-username-mismatch"
		windowsGroup  = "windows-node-missing-kube-proxy-group"
	)

	n := 0
	for _, r := range rolesUnderTest {
		for _, fam := range families {
			for _, m := range modes {
				for _, aws := range awsStates {
					if aws == awsPathOnly && r.arn == r.pathless {
						continue // a role without a path has no pathed ARN
					}
					if aws == awsLinuxGroups && !fam.windows {
						continue // the same as awsMaps for Linux
					}
					for _, et := range entryTypes {
						// The world: only the role under test is mapped or has an entry (other principals
						// are there, as in a real cluster, and must not be mistaken for it).
						groups := nodeGroups
						if fam.windows {
							groups = "[system:bootstrappers, system:nodes, eks:kube-proxy-windows]"
						}
						opts := []factsOpt{mode(m)}
						other := mapping(oldNodesARN, nodeGroups)
						switch aws {
						case awsUnknown:
							opts = append(opts, without("awsAuth"))
						case awsNoConfigMap:
							opts = append(opts, noConfigMap())
						case awsMaps:
							opts = append(opts, withAWSAuth(other, mapping(r.pathless, groups)))
						case awsNoBoot:
							g := "[system:nodes]"
							if fam.windows {
								g = "[system:nodes, eks:kube-proxy-windows]"
							}
							opts = append(opts, withAWSAuth(other, mapping(r.pathless, g)))
						case awsLinuxGroups:
							opts = append(opts, withAWSAuth(other, mapping(r.pathless, nodeGroups)))
						case awsPathOnly:
							opts = append(opts, withAWSAuth(other, mapping(r.arn, groups)))
						case awsUnmapped:
							opts = append(opts, withAWSAuth(other))
						}
						es := []string{entry(adminRoleARN, "STANDARD", "2025-05-01T08:00:00Z")}
						if et != "" {
							es = append(es, entry(r.arn, et, "2025-06-01T10:00:00Z"))
						}
						opts = append(opts, entries(es...))

						// The oracle (docs/design.md §3). Entry types that let nodes join: EC2_LINUX for
						// any family, EC2_WINDOWS for Windows, EC2 for nodes named after their instance
						// ID. Whether the username fits the nodes' names, and whether Windows nodes carry
						// eks:kube-proxy-windows, are rules of their own.
						joins := et == "EC2_LINUX" || (et == "EC2_WINDOWS" && fam.windows) || (et == "EC2" && fam.instanceID)
						wantUser := "system:node:{{EC2PrivateDNSName}}"
						if fam.instanceID {
							wantUser = "system:node:{{SessionName}}"
						}
						entryUser := "system:node:{{EC2PrivateDNSName}}" // what EKS gives EC2_LINUX and EC2_WINDOWS entries
						if et == "EC2" {
							entryUser = "system:node:{{SessionName}}"
						}
						readsEntries := m != "CONFIG_MAP"
						readsAWSAuth := m != "API"
						entryCounts := readsEntries && et != "" // an entry wins over aws-auth for the same role
						mappingOK := aws == awsMaps || aws == awsLinuxGroups
						pathlessMapping := mappingOK || aws == awsNoBoot
						exp := map[string]string{}
						switch {
						case entryCounts && !joins:
							exp[entryType] = fired
						case entryCounts:
							// covered by its entry
							if entryUser != wantUser {
								exp[username] = fired
							}
							if fam.windows && et == "EC2_LINUX" {
								exp[windowsGroup] = fired
							}
						case readsAWSAuth && aws == awsUnknown:
							exp[notAuthorized] = notEv
							exp[username] = notEv
							if fam.windows {
								exp[windowsGroup] = notEv
							}
						case readsAWSAuth && aws == awsPathOnly:
							exp[hasPath] = fired
						case readsAWSAuth && mappingOK:
							// covered by aws-auth
							if fam.instanceID {
								exp[username] = fired
							}
							if aws == awsLinuxGroups {
								exp[windowsGroup] = fired
							}
						default:
							exp[notAuthorized] = fired
							if readsAWSAuth && pathlessMapping && fam.instanceID {
								exp[username] = fired
							}
						}
						// Rules that always read aws-auth are not evaluated without it.
						if aws == awsUnknown {
							exp[hasPath] = notEv
							exp[hybrid] = notEv
						} else if fam.al2023 && entryCounts && joins && !(m == "API_AND_CONFIG_MAP" && mappingOK) {
							exp[hybrid] = fired
						}

						name := fmt.Sprintf("%s/%s/%s/aws-auth=%s/entry=%s", r.name, fam.name, m, aws, et)
						if et == "" {
							name += "none"
						}
						spec := specWith(al2023Alias, fam.ami, defaultRole, "role: "+r.name+"\n")
						if fam.instanceID {
							spec = withUserData(spec, "", instanceIDNodeConfig)
						}
						res := evalFacts(t, nodeClass("nodes", spec), clusterFacts(opts...), "")
						got := withoutIdentityRules(outcomes(res, false))
						if describeOutcomes(got) != describeOutcomes(exp) {
							t.Errorf("%s:\n  got  %s\n  want %s", name, describeOutcomes(got), describeOutcomes(exp))
						}
						n++
					}
				}
			}
		}
	}
	if n < 500 {
		t.Errorf("only %d combinations checked", n)
	}
}

// TestNodeRoleAccessEntriesUnknown: without the accessEntries section, modes that read entries cannot
// decide; CONFIG_MAP can (EKS ignores entries there).
func TestNodeRoleAccessEntriesUnknown(t *testing.T) {
	for _, tc := range []struct {
		mode string
		aws  factsOpt
		want map[string]string
	}{
		{"CONFIG_MAP", withAWSAuth(mapping(nodeRoleARN, nodeGroups)), map[string]string{}},
		{"CONFIG_MAP", withAWSAuth(mapping(oldNodesARN, nodeGroups)), map[string]string{"node-role-not-authorized": fired}},
		{"API", withAWSAuth(mapping(nodeRoleARN, nodeGroups)), map[string]string{
			"node-role-not-authorized": notEv, "node-role-access-entry-type": notEv, "node-role-access-entry-stale": notEv, "al2023-hybrid-auth": notEv, "node-username-mismatch": notEv}},
		{"API_AND_CONFIG_MAP", withAWSAuth(mapping(nodeRoleARN, nodeGroups)), map[string]string{
			"node-role-not-authorized": notEv, "node-role-access-entry-type": notEv, "node-role-access-entry-stale": notEv, "al2023-hybrid-auth": notEv, "node-username-mismatch": notEv}},
	} {
		res := evalFacts(t, nodeClass("nodes", eksSpec), clusterFacts(mode(tc.mode), tc.aws, without("accessEntries")), "")
		if got := withoutIdentityRules(outcomes(res, false)); describeOutcomes(got) != describeOutcomes(tc.want) {
			t.Errorf("mode %s without accessEntries:\n  got  %s\n  want %s", tc.mode, describeOutcomes(got), describeOutcomes(tc.want))
		}
	}
}
