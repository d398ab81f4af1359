package awsauth

import (
	"reflect"
	"strings"
	"testing"
)

// TestAuthenticatorFixtures rebuilds the ConfigMaps of aws-iam-authenticator's own tests and asserts
// the outcome those tests assert: which mappings survive, and that ParseMap returns no error (here: no
// problem the authenticator logs). The cases are the files of its pkg/mapper/configmap/yaml directory,
// read by TestConfigMap in yaml_test.go, and the data of TestParseMap, TestBadParseMap,
// TestBadParseMapSingleQuote and TestLoadConfigMap in configmap_test.go. Its aws-auth-missing-bar.yaml
// (mapRoles written as a YAML list, not a string) never reaches the parser: creating that ConfigMap
// fails, as aws-auth-malformed reports (validators/rules).
func TestAuthenticatorFixtures(t *testing.T) {
	const (
		nodeARN  = "arn:aws:iam::555555555555:role/devel-worker-nodes-NodeInstanceRole-74RF4UBDUKL6"
		adminARN = "arn:aws:iam::555555555555:user/admin"
	)
	// data renders the yaml directory's ConfigMap data with its three keys named as given.
	data := func(roles, users, accounts, rolearn, userarn, username, groups string, groupItems ...string) map[string]string {
		items := "    - system:bootstrappers\n    - system:nodes\n"
		if len(groupItems) > 0 {
			items = strings.Join(groupItems, "")
		}
		// The values as EKS sees them: the block scalars of the files without their indentation.
		return map[string]string{
			roles:    "- " + rolearn + ": " + nodeARN + "\n  " + username + ": system:node:{{EC2PrivateDNSName}}\n  " + groups + ":\n" + items,
			users:    "- " + userarn + ": " + adminARN + "\n  " + username + ": admin\n  " + groups + ":\n    - system:masters\n",
			accounts: "- 555555555555\n",
		}
	}
	valid := Config{
		MapRoles:    []RoleMapping{{RoleARN: nodeARN, Username: "system:node:{{EC2PrivateDNSName}}", Groups: []string{"system:bootstrappers", "system:nodes"}, Line: 1}},
		MapUsers:    []UserMapping{{UserARN: adminARN, Username: "admin", Groups: []string{"system:masters"}, Line: 1}},
		MapAccounts: []string{"555555555555"},
	}
	spaceOutOfPlace := valid
	spaceOutOfPlace.MapRoles = []RoleMapping{{RoleARN: nodeARN, Username: "system:node:{{EC2PrivateDNSName}}", Groups: []string{"system:bootstrappers - system:nodes"}, Line: 1}}

	tests := []struct {
		name string
		data map[string]string
		want Config
		// problems are the problems Read reports beyond the authenticator's own expectations.
		problems []string
	}{
		{name: "aws-auth.yaml", data: data(KeyMapRoles, KeyMapUsers, KeyMapAccounts, "rolearn", "userarn", "username", "groups"), want: valid},
		{name: "aws-auth-crazy-case-keys.yaml", data: data(KeyMapRoles, KeyMapUsers, KeyMapAccounts, "rOlEaRn", "uSeRaRn", "UsErNaMe", "gRoUpS"), want: valid},
		{name: "aws-auth-open-source-case-keys.yaml", data: data(KeyMapRoles, KeyMapUsers, KeyMapAccounts, "roleARN", "userARN", "username", "groups"), want: valid},
		{
			// Top-level keys are case-sensitive: nothing is mapped.
			name: "aws-auth-lower-case-top-keys.yaml", data: data("maproles", "mapusers", "mapaccounts", "rolearn", "userarn", "username", "groups"),
			problems: []string{
				"mapaccounts: EKS never reads this data key (did you mean mapAccounts?) [not-read]",
				"maproles: EKS never reads this data key (did you mean mapRoles?) [not-read]",
				"mapusers: EKS never reads this data key (did you mean mapUsers?) [not-read]",
			},
		},
		{
			name: "aws-auth-crazy-case-top-keys.yaml", data: data("MaPrOlEs", "mApUsErS", "MaPrCcOuNtS", "rolearn", "userarn", "username", "groups"),
			problems: []string{
				"MaPrCcOuNtS: EKS never reads this data key (did you mean mapAccounts?) [not-read]",
				"MaPrOlEs: EKS never reads this data key (did you mean mapRoles?) [not-read]",
				"mApUsErS: EKS never reads this data key (did you mean mapUsers?) [not-read]",
			},
		},
		{
			// An extra space before "- system:nodes": the mapping survives with the one group
			// "system:bootstrappers - system:nodes".
			name: "aws-auth-space-out-of-place.yaml",
			data: data(KeyMapRoles, KeyMapUsers, KeyMapAccounts, "rolearn", "userarn", "username", "groups", "    - system:bootstrappers\n     - system:nodes\n"),
			want: spaceOutOfPlace,
			problems: []string{
				`mapRoles line 4: group "system:bootstrappers - system:nodes" holds a list in one string [read-as-written]`,
			},
		},
		{
			name: "TestParseMap",
			data: map[string]string{
				KeyMapRoles: "- rolearn: arn:aws:iam::123456789101:role/test-NodeInstanceRole-1VWRHZ3GKZ1T4\n  username: system:node:{{EC2PrivateDNSName}}\n  groups:\n  - system:bootstrappers\n  - system:nodes\n" +
					"- sso:\n    permissionSetName: ViewOnlyAccess\n    accountID: \"012345678912\"\n    partition: aws-cn\n  username: user1\n  groups:\n  - system:basic-users\n",
				KeyMapUsers: "- userarn: arn:aws:iam::123456789101:user/Hello\n  username: Hello\n  groups:\n  - system:masters\n" +
					"- userarn: arn:aws:iam::123456789101:user/World\n  username: World\n  groups:\n  - system:masters\n",
			},
			want: Config{
				MapRoles: []RoleMapping{
					{RoleARN: "arn:aws:iam::123456789101:role/test-NodeInstanceRole-1VWRHZ3GKZ1T4", Username: "system:node:{{EC2PrivateDNSName}}", Groups: []string{"system:bootstrappers", "system:nodes"}, Line: 1},
					{SSO: &SSO{PermissionSetName: "ViewOnlyAccess", AccountID: "012345678912", Partition: "aws-cn"}, Username: "user1", Groups: []string{"system:basic-users"}, Line: 6},
				},
				MapUsers: []UserMapping{
					{UserARN: "arn:aws:iam::123456789101:user/Hello", Username: "Hello", Groups: []string{"system:masters"}, Line: 1},
					{UserARN: "arn:aws:iam::123456789101:user/World", Username: "World", Groups: []string{"system:masters"}, Line: 5},
				},
			},
			// The test only parses; matching is where a named partition goes wrong.
			problems: []string{`mapRoles line 6: sso names partition "aws-cn" [read-as-written]`},
		},
		{name: "TestBadParseMap", data: map[string]string{KeyMapAccounts: "", KeyMapRoles: `""`, KeyMapUsers: "``"}},
		{name: "TestBadParseMapSingleQuote", data: map[string]string{KeyMapAccounts: "''", KeyMapRoles: "''", KeyMapUsers: "''"}},
		{
			name: "TestLoadConfigMap",
			data: map[string]string{
				KeyMapUsers: "\n-\n  userarn: \"arn:iam:matlan\"\n  username: matlan\n  groups:\n    - loadedfromconfigmap\n    - \"system:master\"\n" +
					"-\n  groups:\n    - \"system:master\"\n  userarn: \"arn:aws:iam::012345678912:user/NIC\"\n  username: nic\n",
				KeyMapRoles:    "\n- rolearn: \"arn:iam:123:role/me\"\n  username: \"{{Session}}\"\n  groups:\n    - system:nodes\n",
				KeyMapAccounts: "\n- 123\n- 345\n",
			},
			want: Config{
				MapRoles: []RoleMapping{{RoleARN: "arn:iam:123:role/me", Username: "{{Session}}", Groups: []string{"system:nodes"}, Line: 2}},
				MapUsers: []UserMapping{
					{UserARN: "arn:iam:matlan", Username: "matlan", Groups: []string{"loadedfromconfigmap", "system:master"}, Line: 3},
					{UserARN: "arn:aws:iam::012345678912:user/NIC", Username: "nic", Groups: []string{"system:master"}, Line: 9},
				},
				MapAccounts: []string{"123", "345"},
			},
			problems: []string{
				`mapAccounts line 2: "123" is not a 12-digit account id [read-as-written]`,
				`mapAccounts line 3: "345" is not a 12-digit account id [read-as-written]`,
			},
		},
		{
			name: "TestLoadConfigMap, updated",
			data: map[string]string{
				KeyMapUsers: "\n-\n  groups:\n    - \"system:master\"\n    - \"test\"\n  userarn: \"arn:aws:iam::012345678912:user/NIC\"\n  username: nic\n" +
					"- userarn: \"arn:iam:beswar\"\n  username: beswar\n  groups:\n    - \"system:master\"\n" +
					"- userarn: \"arn:iam:nogroups\"\n  username: nogroups\n",
				KeyMapRoles: "\n- rolearn: \"arn:iam:123:role/me\"\n  username: \"{{Session}}\"\n  groups:\n    - system:nodes\n" +
					"- rolearn: \"arn:iam:123:role/you\"\n  username: \"test\"\n  groups:\n    - system:nodes\n",
				KeyMapAccounts: "\n- 567\n",
			},
			want: Config{
				MapRoles: []RoleMapping{
					{RoleARN: "arn:iam:123:role/me", Username: "{{Session}}", Groups: []string{"system:nodes"}, Line: 2},
					{RoleARN: "arn:iam:123:role/you", Username: "test", Groups: []string{"system:nodes"}, Line: 6},
				},
				MapUsers: []UserMapping{
					{UserARN: "arn:aws:iam::012345678912:user/NIC", Username: "nic", Groups: []string{"system:master", "test"}, Line: 3},
					{UserARN: "arn:iam:beswar", Username: "beswar", Groups: []string{"system:master"}, Line: 8},
					{UserARN: "arn:iam:nogroups", Username: "nogroups", Line: 12},
				},
				MapAccounts: []string{"567"},
			},
			problems: []string{`mapAccounts line 2: "567" is not a 12-digit account id [read-as-written]`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Read(tc.data)
			if !reflect.DeepEqual(r.Config, tc.want) {
				t.Errorf("Config =\n  %#v\nwant\n  %#v", r.Config, tc.want)
			}
			var got []string
			for _, p := range r.Problems {
				if p.Effect.Logged() {
					t.Errorf("%s: the authenticator's test expects no error, but it would log %s", tc.name, p)
				}
				got = append(got, p.String()+" ["+p.Effect.String()+"]")
			}
			if !reflect.DeepEqual(got, tc.problems) {
				t.Errorf("problems =\n  %q\nwant\n  %q", got, tc.problems)
			}
		})
	}
}
