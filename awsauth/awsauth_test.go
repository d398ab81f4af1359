package awsauth

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// nodeRole is a typical Karpenter node role mapping, five lines long.
const nodeRole = "- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod\n" +
	"  username: system:node:{{EC2PrivateDNSName}}\n" +
	"  groups:\n" +
	"    - system:bootstrappers\n" +
	"    - system:nodes\n"

var nodeGroups = []string{"system:bootstrappers", "system:nodes"}

// nodeMapping is nodeRole as EKS keeps it, at a line.
func nodeMapping(line int) RoleMapping {
	return RoleMapping{RoleARN: "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod", Username: "system:node:{{EC2PrivateDNSName}}", Groups: nodeGroups, Line: line}
}

// show renders problems one a line: String(), the effect and the outcome.
func show(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%s [%s] %s\n", p, p.Effect, p.Outcome)
	}
	return b.String()
}

// TestReadConfig: what EKS matches identities against, case by case.
func TestReadConfig(t *testing.T) {
	tests := []struct {
		name string
		data map[string]string
		want Config
	}{
		{name: "no data", data: nil, want: Config{}},
		{
			name: "mapRoles, mapUsers and mapAccounts",
			data: map[string]string{
				KeyMapRoles: nodeRole +
					"- rolearn: arn:aws:iam::111122223333:role/admin\n" +
					"  username: admin\n" +
					"  groups: [system:masters]\n",
				KeyMapUsers:    "- userarn: arn:aws:iam::111122223333:user/ops\n  username: ops\n  groups:\n  - system:masters\n",
				KeyMapAccounts: "- \"111122223333\"\n- 444455556666\n",
			},
			want: Config{
				MapRoles: []RoleMapping{nodeMapping(1), {RoleARN: "arn:aws:iam::111122223333:role/admin", Username: "admin", Groups: []string{"system:masters"}, Line: 6}},
				MapUsers: []UserMapping{{UserARN: "arn:aws:iam::111122223333:user/ops", Username: "ops", Groups: []string{"system:masters"}, Line: 1}},
				// yaml.v2 keeps an unquoted number as written.
				MapAccounts: []string{"111122223333", "444455556666"},
			},
		},
		{
			// The bug this package was rewritten for: one bad entry costs only itself.
			name: "an entry EKS drops leaves the others",
			data: map[string]string{KeyMapRoles: nodeRole + "- username: orphan\n  groups: [system:masters]\n" +
				"- rolearn: arn:aws:iam::111122223333:role/admin\n  username: admin\n"},
			want: Config{MapRoles: []RoleMapping{nodeMapping(1), {RoleARN: "arn:aws:iam::111122223333:role/admin", Username: "admin", Line: 8}}},
		},
		{
			// encoding/json matches keys in any case; of several keys for one field, the last in
			// the sorted order sigs.k8s.io/yaml writes JSON in wins.
			name: "entry keys in any case",
			data: map[string]string{
				KeyMapRoles: "- roleARN: arn:aws:iam::111122223333:role/a\n  UserName: a\n  Groups: [system:nodes]\n" +
					"- rOlEaRn: arn:aws:iam::111122223333:role/b\n  username: b\n" +
					"- RoleArn: arn:aws:iam::111122223333:role/ignored\n  rolearn: arn:aws:iam::111122223333:role/c\n  username: c\n",
				KeyMapUsers: "- UserArn: arn:aws:iam::111122223333:user/ops\n  USERNAME: ops\n",
			},
			want: Config{
				MapRoles: []RoleMapping{
					{RoleARN: "arn:aws:iam::111122223333:role/a", Username: "a", Groups: []string{"system:nodes"}, Line: 1},
					{RoleARN: "arn:aws:iam::111122223333:role/b", Username: "b", Line: 4},
					{RoleARN: "arn:aws:iam::111122223333:role/c", Username: "c", Line: 6},
				},
				MapUsers: []UserMapping{{UserARN: "arn:aws:iam::111122223333:user/ops", Username: "ops", Line: 1}},
			},
		},
		{
			name: "a key written twice: yaml.v2 keeps the last",
			data: map[string]string{KeyMapRoles: "- rolearn: arn:aws:iam::111122223333:role/a\n  username: first\n  username: second\n"},
			want: Config{MapRoles: []RoleMapping{{RoleARN: "arn:aws:iam::111122223333:role/a", Username: "second", Line: 1}}},
		},
		{
			name: "leading --- line counts as line 1",
			data: map[string]string{KeyMapRoles: "---\n" + nodeRole + "- rolearn: arn:aws:iam::111122223333:role/b\n  username: b\n"},
			want: Config{MapRoles: []RoleMapping{nodeMapping(2), {RoleARN: "arn:aws:iam::111122223333:role/b", Username: "b", Line: 7}}},
		},
		{
			name: "only the first YAML document is read",
			data: map[string]string{KeyMapRoles: nodeRole + "---\n- rolearn: arn:aws:iam::111122223333:role/b\n  username: b\n"},
			want: Config{MapRoles: []RoleMapping{nodeMapping(1)}},
		},
		{
			name: "leading comment and blank lines are counted",
			data: map[string]string{KeyMapRoles: "# managed by terraform\n\n" + nodeRole},
			want: Config{MapRoles: []RoleMapping{nodeMapping(3)}},
		},
		{
			name: "flow style entries",
			data: map[string]string{KeyMapRoles: "[{rolearn: 'arn:aws:iam::111122223333:role/a', username: a, groups: [dev, ops]}]"},
			want: Config{MapRoles: []RoleMapping{{RoleARN: "arn:aws:iam::111122223333:role/a", Username: "a", Groups: []string{"dev", "ops"}, Line: 1}}},
		},
		{
			// YAML 1.1 reads y, yes and on as booleans; encoding/json leaves a boolean group empty and
			// a boolean username unset, and keeps the entry.
			name: "YAML 1.1 booleans",
			data: map[string]string{KeyMapRoles: "- rolearn: arn:aws:iam::111122223333:role/a\n  username: yes\n  groups: [x, y]\n"},
			want: Config{MapRoles: []RoleMapping{{RoleARN: "arn:aws:iam::111122223333:role/a", Groups: []string{"x", ""}, Line: 1}}},
		},
		{
			name: "groups missing, null or empty, and unknown keys ignored",
			data: map[string]string{KeyMapRoles: "- rolearn: a\n  username: a\n" +
				"- rolearn: b\n  username: b\n  groups:\n" +
				"- rolearn: c\n  username: c\n  groups: []\n  comment: extra keys are ignored\n"},
			want: Config{MapRoles: []RoleMapping{
				{RoleARN: "a", Username: "a", Line: 1},
				{RoleARN: "b", Username: "b", Line: 3},
				{RoleARN: "c", Username: "c", Groups: []string{}, Line: 6},
			}},
		},
		{
			name: "entries without username are kept",
			data: map[string]string{KeyMapRoles: "- rolearn: a\n- rolearn: b\n  username: ~\n- rolearn: c\n  username: [c]\n  groups: [g]\n"},
			want: Config{MapRoles: []RoleMapping{{RoleARN: "a", Line: 1}, {RoleARN: "b", Line: 2}, {RoleARN: "c", Groups: []string{"g"}, Line: 4}}},
		},
		{
			name: "fields of the wrong type are left empty",
			data: map[string]string{KeyMapRoles: "- rolearn: a\n  username: a\n  groups: system:masters\n" +
				"- rolearn: [b]\n  username: b\n" +
				"- rolearn: c\n  username: c\n  groups: [x, [y], {z: 1}, 5, ~]\n  userid: 7\n"},
			want: Config{MapRoles: []RoleMapping{
				{RoleARN: "a", Username: "a", Line: 1},
				{RoleARN: "c", Username: "c", Groups: []string{"x", "", "", "", ""}, Line: 6},
			}},
		},
		{
			name: "a later entry for the same rolearn replaces an earlier one, whatever the case",
			data: map[string]string{KeyMapRoles: "- rolearn: arn:aws:iam::111122223333:role/A\n  username: first\n" +
				"- rolearn: arn:aws:iam::111122223333:role/b\n  username: b\n" +
				"- rolearn: arn:aws:iam::111122223333:role/a\n  username: second\n"},
			want: Config{MapRoles: []RoleMapping{
				{RoleARN: "arn:aws:iam::111122223333:role/b", Username: "b", Line: 3},
				{RoleARN: "arn:aws:iam::111122223333:role/a", Username: "second", Line: 5},
			}},
		},
		{
			name: "users: a later entry for the same userarn replaces an earlier one; another case is another entry",
			data: map[string]string{KeyMapUsers: "- userarn: arn:aws:iam::111122223333:user/Bob\n  username: a\n" +
				"- userarn: arn:aws:iam::111122223333:user/bob\n  username: b\n" +
				"- userarn: arn:aws:iam::111122223333:user/bob\n  username: c\n"},
			want: Config{MapUsers: []UserMapping{
				{UserARN: "arn:aws:iam::111122223333:user/Bob", Username: "a", Line: 1},
				{UserARN: "arn:aws:iam::111122223333:user/bob", Username: "c", Line: 5},
			}},
		},
		{
			name: "sso entries",
			data: map[string]string{KeyMapRoles: "- sso: {permissionSetName: ViewOnlyAccess, accountID: \"111122223333\"}\n  username: viewer\n" +
				"- sso: {permissionSetName: Admin, accountID: 111122223333}\n  username: unquoted-account\n" +
				"- rolearn: arn:aws:iam::111122223333:role/a\n  sso: {permissionSetName: Admin, accountID: \"111122223333\"}\n  username: both\n" +
				"- sso: {permissionSetName: \"Admin*\", accountID: \"111122223333\"}\n  username: bad-name\n" +
				"- sso: {permissionSetName: Admin, accountID: \"111122223333\", partition: aws-nk}\n  username: bad-partition\n"},
			want: Config{MapRoles: []RoleMapping{{SSO: &SSO{PermissionSetName: "ViewOnlyAccess", AccountID: "111122223333"}, Username: "viewer", Line: 1}}},
		},
		{
			name: "empty, blank, null and empty-list values hold no entries",
			data: map[string]string{KeyMapRoles: "", KeyMapUsers: "  \n\t\n", KeyMapAccounts: "[]"},
			want: Config{MapAccounts: []string{}},
		},
		{
			name: "values the authenticator skips",
			data: map[string]string{KeyMapRoles: `""`, KeyMapUsers: " '' ", KeyMapAccounts: "``"},
			want: Config{},
		},
		{
			name: "a null value holds no entries",
			data: map[string]string{KeyMapRoles: "~\n", KeyMapUsers: "# nothing yet\n"},
			want: Config{},
		},
		{
			name: "other data keys are ignored",
			data: map[string]string{"mapRolesExtra": "not: [valid", "maproles": nodeRole, "MapRoles": nodeRole},
			want: Config{},
		},
		{
			name: "mapAccounts keeps scalars as written and drops lists and mappings",
			data: map[string]string{KeyMapAccounts: "- 011122223333\n- [444455556666]\n- {id: 1}\n- ~\n- \"555566667777\"\n"},
			want: Config{MapAccounts: []string{"011122223333", "", "555566667777"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Read(tc.data).Config
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Read(...).Config =\n  %#v\nwant\n  %#v", got, tc.want)
			}
		})
	}
}

// TestReadProblems: what each problem says, where, what EKS does about it.
func TestReadProblems(t *testing.T) {
	const drops = "[drops-entry] EKS drops this entry and keeps the others"
	tests := []struct {
		name string
		data map[string]string
		want []string
	}{
		{
			name: "invalid YAML: tab indentation, after a leading ---",
			data: map[string]string{KeyMapRoles: "---\n- rolearn: arn:aws:iam::111122223333:role/a\n\tusername: a\n"},
			want: []string{"mapRoles line 3: not valid YAML: found a tab character that violates indentation [ignores-value] EKS keeps no entry of mapRoles (it still reads the other keys)"},
		},
		{
			name: "invalid YAML: unterminated quoted string points at its opening line",
			data: map[string]string{KeyMapUsers: "- userarn: \"arn:aws:iam::111122223333:user/a\n  username: a\n"},
			want: []string{"mapUsers line 1: not valid YAML: found unexpected end of stream [ignores-value] EKS keeps no entry of mapUsers (it still reads the other keys)"},
		},
		{
			name: "YAML that JSON cannot hold",
			data: map[string]string{KeyMapRoles: "- rolearn: a\n  username: .inf\n", KeyMapUsers: "- userarn: a\n  ~: x\n"},
			want: []string{
				"mapRoles line 2: a number is infinite or NaN (.inf, .nan), which JSON cannot hold [ignores-value] EKS keeps no entry of mapRoles (it still reads the other keys)",
				"mapUsers line 2: a mapping key is null or a list or mapping, which JSON cannot hold [ignores-value] EKS keeps no entry of mapUsers (it still reads the other keys)",
			},
		},
		{
			name: "not a list",
			data: map[string]string{KeyMapRoles: "---\nrolearn: arn:aws:iam::111122223333:role/a\n", KeyMapUsers: "\n\narn:aws:iam::111122223333:user/a\n", KeyMapAccounts: "111122223333\n"},
			want: []string{
				"mapRoles line 2: must be a YAML list of entries, not a mapping [ignores-value] EKS keeps no entry of mapRoles (it still reads the other keys)",
				"mapUsers line 3: must be a YAML list of entries, not a string [ignores-value] EKS keeps no entry of mapUsers (it still reads the other keys)",
				"mapAccounts line 1: must be a YAML list of account ids, not a number [ignores-value] EKS keeps no entry of mapAccounts (it still reads the other keys)",
			},
		},
		{
			name: "a value that starts with { is JSON",
			data: map[string]string{KeyMapRoles: ` {"rolearn": "a"}`, KeyMapUsers: "\n{userarn: a}"},
			want: []string{
				"mapRoles line 1: must be a YAML list of entries, not a mapping [ignores-value] EKS keeps no entry of mapRoles (it still reads the other keys)",
				"mapUsers line 2: not valid JSON (a value that starts with { is read as JSON): invalid character 'u' looking for beginning of object key string [ignores-value] EKS keeps no entry of mapUsers (it still reads the other keys)",
			},
		},
		{
			name: "entries that are not mappings",
			data: map[string]string{KeyMapRoles: "- arn:aws:iam::111122223333:role/a\n- [a, b]\n- ~\n"},
			want: []string{
				"mapRoles line 1: entry is a string, not a mapping " + drops,
				"mapRoles line 2: entry is a list, not a mapping " + drops,
				"mapRoles line 3: entry is empty " + drops,
			},
		},
		{
			name: "no rolearn, for every reason",
			data: map[string]string{KeyMapRoles: "- username: a\n" +
				"- rolearn: \"\"\n" +
				"- rolearn: ~\n" +
				"- rolearn:\n    - arn:aws:iam::111122223333:role/a\n" +
				"- role_arn: arn:aws:iam::111122223333:role/a\n" +
				"- sso: ViewOnlyAccess\n" +
				"- rolearn: arn:aws:iam::111122223333:role/b\n  sso: []\n" +
				"- rolearn: [arn:aws:iam::111122223333:role/c]\n  sso: {permissionSetName: A, accountID: \"111122223333\"}\n  username: c\n"},
			want: []string{
				"mapRoles line 1: entry has no rolearn " + drops,
				"mapRoles line 2: rolearn is empty " + drops,
				"mapRoles line 3: entry has no rolearn " + drops,
				"mapRoles line 4: rolearn is a list, not a string " + drops,
				`mapRoles line 6: entry has no rolearn (EKS never reads key "role_arn") ` + drops,
				"mapRoles line 7: sso is a string, not a mapping " + drops,
				"mapRoles line 9: entry has both rolearn and sso; EKS accepts only one of them (sso is a list, not a mapping, which still counts) " + drops,
				"mapRoles line 10: rolearn is a list, not a string [loses-field] EKS keeps the entry without rolearn (it matches by sso)",
			},
		},
		{
			name: "sso the authenticator rejects, or keeps to match nothing",
			data: map[string]string{KeyMapRoles: "- rolearn: arn:aws:iam::111122223333:role/a\n  sso: {permissionSetName: A, accountID: \"111122223333\"}\n" +
				"- sso: {permissionSetName: A, accountID: 111122223333}\n" +
				"- sso: {permissionSetName: A, accountID: \"1111\"}\n" +
				"- sso: {permissionSetName: \"A*\", accountID: \"111122223333\"}\n" +
				"- sso: {permissionSetName: A, accountID: \"111122223333\", partition: aws-nk}\n" +
				"- sso: {permissionSetName: A, accountID: \"111122223333\", partition: aws-cn}\n  username: viewer\n"},
			want: []string{
				"mapRoles line 2: entry has both rolearn and sso; EKS accepts only one of them " + drops,
				"mapRoles line 3: sso.accountID is a number, not a string (quote it) " + drops,
				`mapRoles line 4: sso.accountID "1111" is not a 12-digit account id ` + drops,
				`mapRoles line 5: sso.permissionSetName "A*" is not a permission set name (1 to 32 letters, digits and +=,.@_-) ` + drops,
				`mapRoles line 6: sso.partition "aws-nk" is not an AWS partition ` + drops,
				`mapRoles line 7: sso names partition "aws-cn" [read-as-written] EKS keeps the entry, but the ARN pattern it builds from sso then has an empty partition, so it matches no role`,
			},
		},
		{
			name: "no username: kept",
			data: map[string]string{KeyMapRoles: "---\n" + nodeRole +
				"- rolearn: arn:aws:iam::111122223333:role/b\n  usernmae: b\n  groups: [system:nodes]\n" +
				"- rolearn: arn:aws:iam::111122223333:role/c\n  username: [c]\n" +
				"- rolearn: arn:aws:iam::111122223333:role/d\n  username: \"\"\n",
				KeyMapUsers: "- userarn: arn:aws:iam::111122223333:user/u\n"},
			want: []string{
				`mapRoles line 8: entry has no username (EKS never reads key "usernmae") [no-username] EKS keeps the entry and maps the role to the empty username`,
				"mapRoles line 11: entry has no username: username is a list, not a string [no-username] EKS keeps the entry and maps the role to the empty username",
				"mapRoles line 13: entry has no username [no-username] EKS keeps the entry and maps the role to the empty username",
				"mapUsers line 1: entry has no username [no-username] EKS keeps the entry and maps the user to the empty username",
			},
		},
		{
			// aws-iam-authenticator's aws-auth-space-out-of-place.yaml, and the same mistake one
			// level up.
			name: "groups that parse as one string",
			data: map[string]string{KeyMapRoles: "- rolearn: arn:aws:iam::111122223333:role/a\n  username: a\n  groups:\n    - system:bootstrappers\n     - system:nodes\n" +
				"- rolearn: arn:aws:iam::111122223333:role/b\n  username: b\n  groups: system:bootstrappers\n    - system:nodes\n" +
				"- rolearn: arn:aws:iam::111122223333:role/c\n  username: c\n  groups: [\"system:masters, dev\"]\n"},
			want: []string{
				`mapRoles line 4: group "system:bootstrappers - system:nodes" holds a list in one string [read-as-written] EKS maps the entry to the one group "system:bootstrappers - system:nodes", not to system:bootstrappers and system:nodes`,
				`mapRoles line 8: groups is a string, not a list: "system:bootstrappers - system:nodes" reads as one string [loses-field] EKS keeps the entry without groups`,
				`mapRoles line 12: group "system:masters, dev" holds a list in one string [read-as-written] EKS maps the entry to the one group "system:masters, dev", not to system:masters and dev`,
			},
		},
		{
			name: "groups EKS cannot read as written",
			data: map[string]string{KeyMapUsers: "- userarn: arn:aws:iam::111122223333:user/ops\n  username: ops\n  groups: system:masters\n" +
				"- userarn: arn:aws:iam::111122223333:user/dev\n  username: dev\n  groups:\n    system:nodes: true\n" +
				"- userarn: arn:aws:iam::111122223333:user/x\n  username: x\n  groups:\n    - system:nodes\n    - [system:masters]\n    - 5\n    - on\n    -\n" +
				"- userarn: arn:aws:iam::111122223333:user/y\n  username: why\n  group: [dev]\n"},
			want: []string{
				"mapUsers line 3: groups is a string, not a list [loses-field] EKS keeps the entry without groups",
				"mapUsers line 7: groups is a mapping, not a list [loses-field] EKS keeps the entry without groups",
				"mapUsers line 12: group 2 is a list, not a string [loses-field] EKS keeps the entry with an empty group in its place",
				"mapUsers line 13: group 3 is a number, not a string (quote it) [loses-field] EKS keeps the entry with an empty group in its place",
				"mapUsers line 14: group 4 is a boolean, not a string (YAML 1.1 reads true, yes, on, y and their opposites as booleans: quote it) [loses-field] EKS keeps the entry with an empty group in its place",
				`mapUsers line 15: group 5 is empty [read-as-written] EKS keeps it as a group named ""`,
				`mapUsers line 18: entry has no groups (EKS never reads key "group") [not-read] EKS keeps the entry without groups`,
			},
		},
		{
			name: "entry keys EKS never reads, or reads once",
			data: map[string]string{KeyMapRoles: "- rolearn: arn:aws:iam::111122223333:role/a\n  username: a\n  groups: [dev]\n  comment: managed by hand\n  grups: [ops]\n" +
				"- RoleArn: arn:aws:iam::111122223333:role/old\n  rolearn: arn:aws:iam::111122223333:role/b\n  username: b\n" +
				"- rolearn: arn:aws:iam::111122223333:role/c\n  username: first\n  username: c\n" +
				"- ROLEARN: arn:aws:iam::111122223333:role/d\n  rolearn: [arn:aws:iam::111122223333:role/e]\n  username: d\n"},
			want: []string{
				`mapRoles line 4: unknown key "comment" [not-read] EKS never reads it`,
				`mapRoles line 5: unknown key "grups" (did you mean groups?) [not-read] EKS never reads it`,
				`mapRoles line 6: keys "RoleArn" and "rolearn" both set rolearn [not-read] EKS reads rolearn from "rolearn" and ignores "RoleArn"`,
				`mapRoles line 10: key "username" is written again at line 11 [not-read] EKS reads only the last of them`,
				// The later key's value has the wrong type: encoding/json keeps the earlier one.
				`mapRoles line 13: keys "rolearn" and "ROLEARN" both set rolearn [not-read] EKS reads rolearn from "ROLEARN" and ignores "rolearn"`,
			},
		},
		{
			name: "entries a later one replaces",
			data: map[string]string{
				KeyMapRoles: "- rolearn: arn:aws:iam::111122223333:role/A\n  username: a\n- rolearn: arn:aws:iam::111122223333:role/a\n  username: a\n" +
					"- sso: {permissionSetName: P, accountID: \"111122223333\", partition: aws-cn}\n  username: s\n" +
					"- sso: {permissionSetName: P, accountID: \"111122223333\", partition: aws-us-gov}\n  username: s\n",
				KeyMapUsers: "- userarn: arn:aws:iam::111122223333:user/Bob\n  username: a\n- userarn: arn:aws:iam::111122223333:user/bob\n  username: b\n",
			},
			want: []string{
				"mapRoles line 1: rolearn arn:aws:iam::111122223333:role/A is mapped again at line 3 [overridden] EKS keeps only the last entry for an ARN, so this one has no effect",
				`mapRoles line 5: sso names partition "aws-cn" [read-as-written] EKS keeps the entry, but the ARN pattern it builds from sso then has an empty partition, so it matches no role`,
				"mapRoles line 5: sso of account 111122223333 and permission set P (whatever partition it names) is mapped again at line 7 [overridden] EKS keeps only the last entry for an ARN, so this one has no effect",
				`mapRoles line 7: sso names partition "aws-us-gov" [read-as-written] EKS keeps the entry, but the ARN pattern it builds from sso then has an empty partition, so it matches no role`,
				"mapUsers line 1: userarn arn:aws:iam::111122223333:user/Bob differs only in case from userarn arn:aws:iam::111122223333:user/bob [ambiguous] EKS keeps both and matches a user against whichever it finds first, in random order",
				"mapUsers line 3: userarn arn:aws:iam::111122223333:user/bob differs only in case from userarn arn:aws:iam::111122223333:user/Bob [ambiguous] EKS keeps both and matches a user against whichever it finds first, in random order",
			},
		},
		{
			name: "mapAccounts entries",
			data: map[string]string{KeyMapAccounts: "- \"111122223333\"\n- [444455556666]\n- {id: 1}\n- \"\"\n- ~\n- 1111\n"},
			want: []string{
				"mapAccounts line 2: entry is a list, not an account id " + drops,
				"mapAccounts line 3: entry is a mapping, not an account id " + drops,
				"mapAccounts line 4: entry is empty [read-as-written] EKS keeps it, but no identity's account id equals it",
				"mapAccounts line 5: entry is empty [read-as-written] EKS keeps it, but no identity's account id equals it",
				`mapAccounts line 6: "1111" is not a 12-digit account id [read-as-written] EKS keeps it, but no identity's account id equals it`,
			},
		},
		{
			name: "data keys EKS never reads",
			data: map[string]string{"maproles": nodeRole, "MapUsers": "", "mapRole": "", "map_accounts": "", "notes": "hello"},
			want: []string{
				"MapUsers: EKS never reads this data key (did you mean mapUsers?) [not-read] EKS reads only mapRoles, mapUsers and mapAccounts, with exactly that case, and ignores this key",
				"mapRole: EKS never reads this data key (did you mean mapRoles?) [not-read] EKS reads only mapRoles, mapUsers and mapAccounts, with exactly that case, and ignores this key",
				"map_accounts: EKS never reads this data key (did you mean mapAccounts?) [not-read] EKS reads only mapRoles, mapUsers and mapAccounts, with exactly that case, and ignores this key",
				"maproles: EKS never reads this data key (did you mean mapRoles?) [not-read] EKS reads only mapRoles, mapUsers and mapAccounts, with exactly that case, and ignores this key",
				"notes: EKS never reads this data key [not-read] EKS reads only mapRoles, mapUsers and mapAccounts, with exactly that case, and ignores this key",
			},
		},
		{
			name: "problems in every key come in key order, then the keys EKS never reads",
			data: map[string]string{"Maproles": "", KeyMapAccounts: "- {}\n", KeyMapUsers: "- userarn: u\n", KeyMapRoles: "- username: r\n"},
			want: []string{
				"mapRoles line 1: entry has no rolearn " + drops,
				"mapUsers line 1: entry has no username [no-username] EKS keeps the entry and maps the user to the empty username",
				"mapAccounts line 1: entry is a mapping, not an account id " + drops,
				"Maproles: EKS never reads this data key (did you mean mapRoles?) [not-read] EKS reads only mapRoles, mapUsers and mapAccounts, with exactly that case, and ignores this key",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := show(Read(tc.data).Problems)
			want := strings.Join(tc.want, "\n")
			if want != "" {
				want += "\n"
			}
			if got != want {
				t.Errorf("problems:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestReadEntries: every mapRoles entry as written, kept or not, and whether it is written for nodes.
func TestReadEntries(t *testing.T) {
	r := Read(map[string]string{KeyMapRoles: nodeRole +
		"- rolearn: arn:aws:iam::111122223333:role/admin\n  username: admin\n  groups: [system:masters]\n" +
		"- rolearn: [arn:aws:iam::111122223333:role/Broken]\n  username: system:node:{{EC2PrivateDNSName}}\n" +
		"- rolearn: arn:aws:iam::111122223333:role/Glued\n  username: x\n  groups:\n    - system:bootstrappers\n     - system:nodes\n" +
		"- system:bootstrappers\n"})
	want := []Entry{
		{Index: 0, Line: 1, ARN: "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod", Nodes: true, Kept: true},
		{Index: 1, Line: 6, ARN: "arn:aws:iam::111122223333:role/admin", Kept: true},
		{Index: 2, Line: 9, Nodes: true},
		{Index: 3, Line: 11, ARN: "arn:aws:iam::111122223333:role/Glued", Nodes: true, Kept: true},
		{Index: 4, Line: 16, Nodes: true},
	}
	if !reflect.DeepEqual(r.Roles, want) {
		t.Errorf("Roles =\n  %+v\nwant\n  %+v", r.Roles, want)
	}
	for _, p := range r.Problems {
		if p.Entry == nil || *p.Entry != r.Roles[p.Entry.Index] {
			t.Errorf("problem %s names entry %+v, want the entry as in Roles", p, p.Entry)
		}
	}
}

// TestParse: Parse keeps what Read keeps, and only the problems that make the ConfigMap malformed.
func TestParse(t *testing.T) {
	data := map[string]string{
		KeyMapRoles:    "- rolearn: arn:aws:iam::111122223333:role/x\n- rolearn: a\n  username: a\n  groups: [\"a - b\"]\n  comment: c\n",
		KeyMapUsers:    "- userarn: [u]\n",
		KeyMapAccounts: "- 1\n",
		"maproles":     "",
	}
	cfg, problems := Parse(data)
	if r := Read(data); !reflect.DeepEqual(cfg, r.Config) {
		t.Errorf("Parse config %#v, Read config %#v", cfg, r.Config)
	}
	want := "mapRoles line 1: entry has no username [no-username] EKS keeps the entry and maps the role to the empty username\n" +
		"mapUsers line 1: userarn is a list, not a string [drops-entry] EKS drops this entry and keeps the others\n"
	if got := show(problems); got != want {
		t.Errorf("Parse problems:\n%s\nwant:\n%s", got, want)
	}
	// The facts layer quotes the first problem: it names the key, the line and the message only.
	if got := problems[0].String(); got != "mapRoles line 1: entry has no username" {
		t.Errorf("String() = %q", got)
	}
}

func TestEffects(t *testing.T) {
	for e := IgnoresValue; e <= Ambiguous; e++ {
		if strings.HasPrefix(e.String(), "Effect(") {
			t.Errorf("effect %d has no name", int(e))
		}
		if e.Logged() && !e.Malformed() {
			t.Errorf("%s is logged by the authenticator but not malformed", e)
		}
	}
	if Effect(0).String() != "Effect(0)" {
		t.Errorf("the zero effect is named %q", Effect(0))
	}
}

// TestParseSyntaxErrorLines puts typical mistakes after different preambles: yaml's own "line N" is
// often a line early, and several lines early after a leading ---, so each case checks the exact line.
func TestParseSyntaxErrorLines(t *testing.T) {
	preambles := []struct {
		name string
		text string
	}{
		{"no preamble", ""},
		{"leading ---", "---\n"},
		{"leading comment", "# generated\n"},
		{"--- and a good entry", "---\n" + nodeRole},
		{"good entry", nodeRole},
	}
	mistakes := []struct {
		name string
		text string // a bad entry
		line int    // the bad line inside text
		msg  string
	}{
		{"tab indentation", "- rolearn: b\n\tusername: b\n", 2, "found a tab character that violates indentation"},
		{"@ starts a value", "- rolearn: b\n  username: @b\n", 2, "found character that cannot start any token"},
		{"unclosed flow sequence", "- rolearn: b\n  username: b\n  groups: [x\n", 3, "did not find expected ',' or ']'"},
		{"extra bracket", "- rolearn: b\n  username: b\n  groups: [x]]\n", 3, "did not find expected key"},
		{"key indented too little", "- rolearn: b\n  username: b\n groups: [x]\n", 3, "did not find expected '-' indicator"},
		{"key indented too much", "- rolearn: b\n   username: b\n  groups: [x]\n", 2, "mapping values are not allowed in this context"},
		{"list item inside a mapping", "- rolearn: b\n  - username: b\n", 2, "did not find expected key"},
		{"unclosed flow mapping", "- rolearn: b\n  username: {a: b\n", 2, "did not find expected ',' or '}'"},
		{"unknown alias", "- rolearn: b\n  username: *x\n", 2, "unknown anchor 'x' referenced"},
		{"unterminated quote", "- rolearn: \"b\n  username: b\n", 1, "found unexpected end of stream"},
	}
	for _, pre := range preambles {
		for _, m := range mistakes {
			t.Run(pre.name+"/"+m.name, func(t *testing.T) {
				problems := Read(map[string]string{KeyMapRoles: pre.text + m.text}).Problems
				want := fmt.Sprintf("mapRoles line %d: not valid YAML: %s", strings.Count(pre.text, "\n")+m.line, m.msg)
				if len(problems) != 1 || problems[0].String() != want || problems[0].Effect != IgnoresValue {
					t.Errorf("problems =\n%s\nwant one ignores-value problem %q", show(problems), want)
				}
			})
		}
	}
}

// TestParseLargeInvalidValue checks that finding the line of a syntax error stays fast on a value
// too large to re-parse line by line, and still names a line.
func TestParseLargeInvalidValue(t *testing.T) {
	tests := []struct {
		name     string
		value    string
		wantLine int
	}{
		// Re-parsing every prefix would take minutes; yaml's own line (the end) is reported instead.
		{"unterminated quote on line 1", "- rolearn: \"b\n" + strings.Repeat(nodeRole, 4000), 20002},
		// The longest parsing prefix is found quickly when the error is near the end.
		{"tab on the last line", strings.Repeat(nodeRole, 4000) + "\t- x\n", 20001},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			got := Read(map[string]string{KeyMapRoles: tc.value}).Problems
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("Read took %v on a %d-byte value, want well under 10s", d, len(tc.value))
			}
			if len(got) != 1 || got[0].Line != tc.wantLine || !strings.HasPrefix(got[0].Message, "not valid YAML: ") {
				t.Errorf("problems = %v, want one \"not valid YAML\" problem on line %d", got, tc.wantLine)
			}
		})
	}
}

// TestReadLargeValue: a large valid mapRoles reads in reasonable time.
func TestReadLargeValue(t *testing.T) {
	start := time.Now()
	r := Read(map[string]string{KeyMapRoles: strings.Repeat(nodeRole+"- rolearn: arn:aws:iam::111122223333:role/x\n  username: x\n  comment: y\n", 2000)})
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Read took %v", d)
	}
	if len(r.Config.MapRoles) != 2 || len(r.Roles) != 4000 {
		t.Errorf("kept %d mappings of %d entries, want the last 2 of 4000", len(r.Config.MapRoles), len(r.Roles))
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		name string
		p    Problem
		want string
	}{
		{"with line", Problem{Key: KeyMapRoles, Line: 4, Message: "entry has no username"}, "mapRoles line 4: entry has no username"},
		{"whole value", Problem{Key: KeyMapAccounts, Message: "must be a YAML list of account ids, not a number"}, "mapAccounts: must be a YAML list of account ids, not a number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestListInOne(t *testing.T) {
	tests := []struct {
		group string
		want  []string
	}{
		{"system:bootstrappers - system:nodes", []string{"system:bootstrappers", "system:nodes"}},
		{"- system:nodes", []string{"system:nodes"}},
		{"system:bootstrappers,system:nodes", []string{"system:bootstrappers", "system:nodes"}},
		{"system:bootstrappers system:nodes", []string{"system:bootstrappers", "system:nodes"}},
		{"system:masters", nil},
		{"team-a", nil},
		{"Domain Admins", nil},
		{"", nil},
	}
	for _, tc := range tests {
		if got := listInOne(tc.group); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("listInOne(%q) = %q, want %q", tc.group, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	tests := []struct{ key, want string }{
		{"maproles", KeyMapRoles}, {"MapRoles", KeyMapRoles}, {"mapRole", KeyMapRoles}, {"map-roles", KeyMapRoles},
		{"MaPrCcOuNtS", KeyMapAccounts}, {"mapUser", KeyMapUsers}, {"roles", ""}, {"notes", ""}, {"map", ""},
	}
	for _, tc := range tests {
		if got := closest(tc.key, Keys(), normalizeDataKey); got != tc.want {
			t.Errorf("closest(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}
