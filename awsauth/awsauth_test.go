package awsauth

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// nodeRole is a typical Karpenter node role mapping, three lines long.
const nodeRole = "- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod\n" +
	"  username: system:node:{{EC2PrivateDNSName}}\n" +
	"  groups:\n" +
	"    - system:bootstrappers\n" +
	"    - system:nodes\n"

func TestParseValid(t *testing.T) {
	nodeGroups := []string{"system:bootstrappers", "system:nodes"}
	tests := []struct {
		name string
		data map[string]string
		want Config
	}{
		{
			name: "no data",
			data: nil,
			want: Config{},
		},
		{
			name: "mapRoles, mapUsers and mapAccounts",
			data: map[string]string{
				KeyMapRoles: nodeRole +
					"- rolearn: arn:aws:iam::111122223333:role/admin\n" +
					"  username: admin\n" +
					"  groups: [system:masters]\n",
				KeyMapUsers: "- userarn: arn:aws:iam::111122223333:user/ops\n" +
					"  username: ops\n" +
					"  groups:\n" +
					"  - system:masters\n",
				KeyMapAccounts: "- \"111122223333\"\n- 444455556666\n",
			},
			want: Config{
				MapRoles: []RoleMapping{
					{RoleARN: "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod", Username: "system:node:{{EC2PrivateDNSName}}", Groups: nodeGroups, Line: 1},
					{RoleARN: "arn:aws:iam::111122223333:role/admin", Username: "admin", Groups: []string{"system:masters"}, Line: 6},
				},
				MapUsers:    []UserMapping{{UserARN: "arn:aws:iam::111122223333:user/ops", Username: "ops", Groups: []string{"system:masters"}, Line: 1}},
				MapAccounts: []string{"111122223333", "444455556666"},
			},
		},
		{
			// EKS's authenticator decodes entries with encoding/json, which matches keys regardless of case.
			name: "keys in any case, as the authenticator reads them",
			data: map[string]string{
				KeyMapRoles: "- roleARN: arn:aws:iam::111122223333:role/a\n  UserName: a\n  Groups: [system:nodes]\n" +
					"- rOlEaRn: arn:aws:iam::111122223333:role/b\n  username: b\n",
				KeyMapUsers: "- UserArn: arn:aws:iam::111122223333:user/ops\n  USERNAME: ops\n",
			},
			want: Config{
				MapRoles: []RoleMapping{
					{RoleARN: "arn:aws:iam::111122223333:role/a", Username: "a", Groups: []string{"system:nodes"}, Line: 1},
					{RoleARN: "arn:aws:iam::111122223333:role/b", Username: "b", Line: 4},
				},
				MapUsers: []UserMapping{{UserARN: "arn:aws:iam::111122223333:user/ops", Username: "ops", Line: 1}},
			},
		},
		{
			name: "leading --- line counts as line 1",
			data: map[string]string{KeyMapRoles: "---\n" + nodeRole + "- rolearn: arn:aws:iam::111122223333:role/b\n  username: b\n"},
			want: Config{MapRoles: []RoleMapping{
				{RoleARN: "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod", Username: "system:node:{{EC2PrivateDNSName}}", Groups: nodeGroups, Line: 2},
				{RoleARN: "arn:aws:iam::111122223333:role/b", Username: "b", Line: 7},
			}},
		},
		{
			name: "leading comment and blank lines are counted",
			data: map[string]string{KeyMapRoles: "# managed by terraform\n\n" + nodeRole},
			want: Config{MapRoles: []RoleMapping{
				{RoleARN: "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod", Username: "system:node:{{EC2PrivateDNSName}}", Groups: nodeGroups, Line: 3},
			}},
		},
		{
			name: "flow style entries",
			data: map[string]string{KeyMapRoles: "[{rolearn: 'arn:aws:iam::111122223333:role/a', username: a, groups: [x, y]}]"},
			want: Config{MapRoles: []RoleMapping{{RoleARN: "arn:aws:iam::111122223333:role/a", Username: "a", Groups: []string{"x", "y"}, Line: 1}}},
		},
		{
			name: "groups missing, null or empty, and unknown keys ignored",
			data: map[string]string{KeyMapRoles: "- rolearn: a\n  username: a\n" +
				"- rolearn: b\n  username: b\n  groups:\n" +
				"- rolearn: c\n  username: c\n  groups: []\n  comment: extra keys are ignored\n"},
			want: Config{MapRoles: []RoleMapping{
				{RoleARN: "a", Username: "a", Line: 1},
				{RoleARN: "b", Username: "b", Line: 3},
				{RoleARN: "c", Username: "c", Line: 6},
			}},
		},
		{
			name: "empty, blank, null and empty-list values hold no entries",
			data: map[string]string{KeyMapRoles: "", KeyMapUsers: "  \n\t\n", KeyMapAccounts: "[]"},
			want: Config{},
		},
		{
			name: "a null value holds no entries",
			data: map[string]string{KeyMapRoles: "~\n", KeyMapUsers: "# nothing yet\n"},
			want: Config{},
		},
		{
			name: "other data keys are ignored",
			data: map[string]string{"mapRolesExtra": "not: [valid", "maproles": "{}"},
			want: Config{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := Parse(tc.data)
			if len(problems) != 0 {
				t.Fatalf("Parse returned problems %v, want none", problems)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse =\n  %#v\nwant\n  %#v", got, tc.want)
			}
		})
	}
}

func TestParseProblems(t *testing.T) {
	const mappingMsg = "entry must be a mapping with rolearn, username and groups"
	tests := []struct {
		name      string
		data      map[string]string
		want      []Problem
		wantRoles []RoleMapping // entries that still parse
	}{
		{
			name: "invalid YAML: tab indentation, after a leading ---",
			data: map[string]string{KeyMapRoles: "---\n- rolearn: arn:aws:iam::111122223333:role/a\n\tusername: a\n"},
			want: []Problem{{Key: KeyMapRoles, Line: 3, Message: "not valid YAML: found a tab character that violates indentation"}},
		},
		{
			name: "invalid YAML: character that cannot start a token",
			data: map[string]string{KeyMapRoles: nodeRole + "- rolearn: arn:aws:iam::111122223333:role/b\n  username: @b\n"},
			want: []Problem{{Key: KeyMapRoles, Line: 7, Message: "not valid YAML: found character that cannot start any token"}},
		},
		{
			name: "invalid YAML: unterminated quoted string points at its opening line",
			data: map[string]string{KeyMapUsers: "- userarn: \"arn:aws:iam::111122223333:user/a\n  username: a\n"},
			want: []Problem{{Key: KeyMapUsers, Line: 1, Message: "not valid YAML: found unexpected end of stream"}},
		},
		{
			name: "invalid YAML on the first line still has a line",
			data: map[string]string{KeyMapRoles: "- rolearn: a: b\n"},
			want: []Problem{{Key: KeyMapRoles, Line: 1, Message: "not valid YAML: mapping values are not allowed in this context"}},
		},
		{
			name: "a single mapping instead of a list",
			data: map[string]string{KeyMapRoles: "rolearn: arn:aws:iam::111122223333:role/a\nusername: a\n"},
			want: []Problem{{Key: KeyMapRoles, Line: 1, Message: "must be a YAML list of entries"}},
		},
		{
			name: "a single mapping after a leading ---",
			data: map[string]string{KeyMapRoles: "---\nrolearn: arn:aws:iam::111122223333:role/a\n"},
			want: []Problem{{Key: KeyMapRoles, Line: 2, Message: "must be a YAML list of entries"}},
		},
		{
			name: "a scalar instead of a list",
			data: map[string]string{KeyMapUsers: "\n\narn:aws:iam::111122223333:user/a\n"},
			want: []Problem{{Key: KeyMapUsers, Line: 3, Message: "must be a YAML list of entries"}},
		},
		{
			name: "entries that are not mappings",
			data: map[string]string{KeyMapRoles: "- arn:aws:iam::111122223333:role/a\n- [a, b]\n"},
			want: []Problem{
				{Key: KeyMapRoles, Line: 1, Message: mappingMsg},
				{Key: KeyMapRoles, Line: 2, Message: mappingMsg},
			},
		},
		{
			name: "missing username, misspelt key, after a leading ---",
			data: map[string]string{KeyMapRoles: "---\n" + nodeRole +
				"- rolearn: arn:aws:iam::111122223333:role/b\n  usernmae: b\n  groups: [system:nodes]\n"},
			want: []Problem{{Key: KeyMapRoles, Line: 7, Message: "entry has no username"}},
			wantRoles: []RoleMapping{{RoleARN: "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod", Username: "system:node:{{EC2PrivateDNSName}}",
				Groups: []string{"system:bootstrappers", "system:nodes"}, Line: 2}},
		},
		{
			name: "missing rolearn and username",
			data: map[string]string{KeyMapRoles: "- groups: [system:nodes]\n"},
			want: []Problem{
				{Key: KeyMapRoles, Line: 1, Message: "entry has no rolearn"},
				{Key: KeyMapRoles, Line: 1, Message: "entry has no username"},
			},
		},
		{
			name: "empty rolearn and empty username",
			data: map[string]string{KeyMapRoles: "- rolearn: \"\"\n  username:\n"},
			want: []Problem{
				{Key: KeyMapRoles, Line: 1, Message: "entry has no rolearn"},
				{Key: KeyMapRoles, Line: 1, Message: "entry has no username"},
			},
		},
		{
			name: "null rolearn and username are missing, not the strings ~ and null",
			data: map[string]string{KeyMapRoles: "- rolearn: ~\n  username: null\n- rolearn: \"null\"\n  username: \"~\"\n"},
			want: []Problem{
				{Key: KeyMapRoles, Line: 1, Message: "entry has no rolearn"},
				{Key: KeyMapRoles, Line: 1, Message: "entry has no username"},
			},
			wantRoles: []RoleMapping{{RoleARN: "null", Username: "~", Line: 3}},
		},
		{
			name: "rolearn and username that are not strings",
			data: map[string]string{KeyMapRoles: "- rolearn:\n    - arn:aws:iam::111122223333:role/a\n  username: {name: a}\n"},
			want: []Problem{
				{Key: KeyMapRoles, Line: 2, Message: "rolearn must be a string"},
				{Key: KeyMapRoles, Line: 3, Message: "username must be a string"},
				{Key: KeyMapRoles, Line: 1, Message: "entry has no rolearn"},
				{Key: KeyMapRoles, Line: 1, Message: "entry has no username"},
			},
		},
		{
			name: "groups as a string",
			data: map[string]string{KeyMapUsers: "- userarn: arn:aws:iam::111122223333:user/ops\n  username: ops\n  groups: system:masters\n"},
			want: []Problem{{Key: KeyMapUsers, Line: 3, Message: "groups must be a list of strings"}},
		},
		{
			name: "groups as a mapping",
			data: map[string]string{KeyMapRoles: "- rolearn: a\n  username: a\n  groups:\n    system:nodes: true\n"},
			want: []Problem{{Key: KeyMapRoles, Line: 4, Message: "groups must be a list of strings"}},
		},
		{
			name: "groups with a nested list and a mapping element, each at its line",
			data: map[string]string{KeyMapRoles: "- rolearn: a\n  username: a\n  groups:\n    - system:nodes\n    - [system:masters]\n    - name: x\n"},
			want: []Problem{
				{Key: KeyMapRoles, Line: 5, Message: "groups must be a list of strings"},
				{Key: KeyMapRoles, Line: 6, Message: "groups must be a list of strings"},
			},
		},
		{
			name: "mapUsers entries name userarn",
			data: map[string]string{KeyMapUsers: "- username: ops\n- arn:aws:iam::111122223333:user/ops\n- rolearn: arn:aws:iam::111122223333:role/a\n  username: a\n"},
			want: []Problem{
				{Key: KeyMapUsers, Line: 1, Message: "entry has no userarn"},
				{Key: KeyMapUsers, Line: 2, Message: "entry must be a mapping with userarn, username and groups"},
				{Key: KeyMapUsers, Line: 3, Message: "entry has no userarn"},
			},
		},
		{
			name: "mapAccounts entries that are not account ids",
			data: map[string]string{KeyMapAccounts: "- \"111122223333\"\n- [444455556666]\n- {id: 1}\n- \"\"\n- ~\n-\n"},
			want: []Problem{
				{Key: KeyMapAccounts, Line: 2, Message: "entry must be an AWS account id"},
				{Key: KeyMapAccounts, Line: 3, Message: "entry must be an AWS account id"},
				{Key: KeyMapAccounts, Line: 4, Message: "entry must be an AWS account id"},
				{Key: KeyMapAccounts, Line: 5, Message: "entry must be an AWS account id"},
				{Key: KeyMapAccounts, Line: 6, Message: "entry must be an AWS account id"},
			},
		},
		{
			name: "mapAccounts as a single id",
			data: map[string]string{KeyMapAccounts: "111122223333\n"},
			want: []Problem{{Key: KeyMapAccounts, Line: 1, Message: "must be a YAML list of entries"}},
		},
		{
			name: "problems in every key come in key order",
			data: map[string]string{
				KeyMapAccounts: "- {}\n",
				KeyMapUsers:    "- userarn: u\n",
				KeyMapRoles:    "- username: r\n",
			},
			want: []Problem{
				{Key: KeyMapRoles, Line: 1, Message: "entry has no rolearn"},
				{Key: KeyMapUsers, Line: 1, Message: "entry has no username"},
				{Key: KeyMapAccounts, Line: 1, Message: "entry must be an AWS account id"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, got := Parse(tc.data)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("problems =\n  %#v\nwant\n  %#v", got, tc.want)
			}
			if !reflect.DeepEqual(cfg.MapRoles, tc.wantRoles) {
				t.Errorf("MapRoles =\n  %#v\nwant\n  %#v", cfg.MapRoles, tc.wantRoles)
			}
		})
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
				_, got := Parse(map[string]string{KeyMapRoles: pre.text + m.text})
				want := []Problem{{Key: KeyMapRoles, Line: strings.Count(pre.text, "\n") + m.line, Message: "not valid YAML: " + m.msg}}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("problems =\n  %#v\nwant\n  %#v", got, want)
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
			_, got := Parse(map[string]string{KeyMapRoles: tc.value})
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("Parse took %v on a %d-byte value, want well under 10s", d, len(tc.value))
			}
			if len(got) != 1 || got[0].Line != tc.wantLine || !strings.HasPrefix(got[0].Message, "not valid YAML: ") {
				t.Errorf("problems = %v, want one \"not valid YAML\" problem on line %d", got, tc.wantLine)
			}
		})
	}
}

func TestParseKeepsGoodEntries(t *testing.T) {
	cfg, problems := Parse(map[string]string{
		KeyMapUsers:    "- userarn: arn:aws:iam::111122223333:user/a\n  username: a\n- userarn: arn:aws:iam::111122223333:user/b\n",
		KeyMapAccounts: "- \"111122223333\"\n- []\n",
	})
	wantUsers := []UserMapping{{UserARN: "arn:aws:iam::111122223333:user/a", Username: "a", Line: 1}}
	if !reflect.DeepEqual(cfg.MapUsers, wantUsers) {
		t.Errorf("MapUsers = %#v, want %#v", cfg.MapUsers, wantUsers)
	}
	if want := []string{"111122223333"}; !reflect.DeepEqual(cfg.MapAccounts, want) {
		t.Errorf("MapAccounts = %#v, want %#v", cfg.MapAccounts, want)
	}
	want := []Problem{
		{Key: KeyMapUsers, Line: 3, Message: "entry has no username"},
		{Key: KeyMapAccounts, Line: 2, Message: "entry must be an AWS account id"},
	}
	if !reflect.DeepEqual(problems, want) {
		t.Errorf("problems = %#v, want %#v", problems, want)
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		name string
		p    Problem
		want string
	}{
		{"with line", Problem{Key: KeyMapRoles, Line: 4, Message: "entry has no username"}, "mapRoles line 4: entry has no username"},
		{"whole value", Problem{Key: KeyMapAccounts, Message: "must be a YAML list of entries"}, "mapAccounts: must be a YAML list of entries"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}
