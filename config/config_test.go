package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// knownRules stands in for the rule catalog.
var knownRules = []string{"subnet-public", "al2023-hybrid-auth", "nodepool-no-limits"}

// header is the apiVersion and kind every configuration starts with.
const header = "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\n"

// fullExample is the documented example configuration.
const fullExample = header + `mode: enforce
rules:
  subnet-public: deny
  al2023-hybrid-auth: off
amiOwners:
  allowed: [amazon, self]
  defaultOwner: amazon
aws:
  timeout: 2s
  cacheTTL: 5m
  negativeCacheTTL: 30s
  onError: warn
`

func TestParseValid(t *testing.T) {
	withDefaults := func(edit func(c *Config)) *Config {
		c := Default()
		edit(c)
		return c
	}
	tests := []struct {
		name string
		in   string
		want *Config
	}{
		{
			name: "full example",
			in:   fullExample,
			want: &Config{
				APIVersion: APIVersion,
				Kind:       Kind,
				Mode:       ModeEnforce,
				ModeSet:    true,
				Rules:      map[string]Action{"subnet-public": ActionDeny, "al2023-hybrid-auth": ActionOff},
				AMIOwners:  AMIOwners{Allowed: []string{"amazon", "self"}, DefaultOwner: "amazon"},
				AWS: AWS{
					Timeout:           Duration{2 * time.Second},
					CacheTTL:          Duration{5 * time.Minute},
					NegativeCacheTTL:  Duration{30 * time.Second},
					OnError:           OnErrorWarn,
					RequestsPerSecond: RequestsPerSecond{IAM: 10, STS: 5, EKS: 5, EC2: 10, SSM: 10, KMS: 10, ServiceQuotas: 2},
					AuditCallBudget:   1000,
				},
				Karpenter: Karpenter{ServiceAccount: DefaultKarpenterServiceAccount, MinValuesPolicy: MinValuesStrict},
				Subnets:   Subnets{MinFreeIPs: DefaultMinFreeIPs},
			},
		},
		{
			name: "only apiVersion and kind gives the defaults",
			in:   header,
			want: Default(),
		},
		{
			name: "leading --- and a trailing empty document",
			in:   "---\n" + header + "---\n# nothing here\n",
			want: Default(),
		},
		{
			name: "document end marker",
			in:   header + "...\n",
			want: Default(),
		},
		{
			name: "mode warn and every action",
			in:   header + "mode: warn\nrules:\n  subnet-public: warn\n  al2023-hybrid-auth: audit\n  nodepool-no-limits: deny\n",
			want: withDefaults(func(c *Config) {
				c.Mode, c.ModeSet = ModeWarn, true
				c.Rules = map[string]Action{"subnet-public": ActionWarn, "al2023-hybrid-auth": ActionAudit, "nodepool-no-limits": ActionDeny}
			}),
		},
		{
			name: "mode dry-run and onError deny",
			in:   header + "mode: dry-run\naws:\n  onError: deny\n",
			want: withDefaults(func(c *Config) { c.Mode, c.ModeSet = ModeDryRun, true; c.AWS.OnError = OnErrorDeny }),
		},
		{
			name: "onError allow and durations only partly given",
			in:   header + "aws:\n  timeout: 1500ms\n  onError: allow\n",
			want: withDefaults(func(c *Config) { c.AWS.Timeout = Duration{1500 * time.Millisecond}; c.AWS.OnError = OnErrorAllow }),
		},
		{
			name: "compound duration",
			in:   header + "aws:\n  cacheTTL: 1h30m\n",
			want: withDefaults(func(c *Config) { c.AWS.CacheTTL = Duration{90 * time.Minute} }),
		},
		{
			name: "one service's rate and the audit budget; the other services keep their defaults",
			in:   header + "aws:\n  requestsPerSecond:\n    iam: 2.5\n  auditCallBudget: 300\n",
			want: withDefaults(func(c *Config) { c.AWS.RequestsPerSecond.IAM = 2.5; c.AWS.AuditCallBudget = 300 }),
		},
		{
			name: "account ids, quoted or not, keep their leading zeros",
			in:   header + "amiOwners:\n  allowed: [\"111122223333\", 012345678901, aws-marketplace]\n  defaultOwner: 012345678901\n",
			want: withDefaults(func(c *Config) {
				c.AMIOwners = AMIOwners{Allowed: []string{"111122223333", "012345678901", "aws-marketplace"}, DefaultOwner: "012345678901"}
			}),
		},
		{
			name: "null sections keep the defaults",
			in:   header + "rules:\naws:\n  timeout: ~\n",
			want: withDefaults(func(c *Config) { c.Rules = nil }),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in), knownRules)
			if err != nil {
				t.Fatalf("Parse returned error %q, want none", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse =\n  %+v\nwant\n  %+v", got, tc.want)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	const owner = " is neither a 12-digit account id nor an alias (amazon, self, aws-marketplace)"
	tests := []struct {
		name    string
		in      string
		known   []string
		wantErr string
	}{
		{
			name:    "empty input",
			in:      "",
			wantErr: "empty configuration: expected a GuardConfig document",
		},
		{
			name:    "only comments and blank lines",
			in:      "# karpenter-guard\n\n   \n",
			wantErr: "empty configuration: expected a GuardConfig document",
		},
		{
			name:    "only a document marker",
			in:      "---\n",
			wantErr: `apiVersion/kind must be karpenter-guard.io/v1alpha1/GuardConfig, got ""/""`,
		},
		{
			name:    "no apiVersion and kind",
			in:      "mode: warn\n",
			wantErr: `apiVersion/kind must be karpenter-guard.io/v1alpha1/GuardConfig, got ""/""`,
		},
		{
			name:    "empty mapping",
			in:      "{}\n",
			wantErr: `apiVersion/kind must be karpenter-guard.io/v1alpha1/GuardConfig, got ""/""`,
		},
		{
			name:    "wrong apiVersion",
			in:      "apiVersion: karpenter-guard.io/v1\nkind: GuardConfig\n",
			wantErr: `apiVersion/kind must be karpenter-guard.io/v1alpha1/GuardConfig, got "karpenter-guard.io/v1"/"GuardConfig"`,
		},
		{
			name:    "wrong kind",
			in:      "apiVersion: karpenter-guard.io/v1alpha1\nkind: NodePool\n",
			wantErr: `apiVersion/kind must be karpenter-guard.io/v1alpha1/GuardConfig, got "karpenter-guard.io/v1alpha1"/"NodePool"`,
		},
		{
			name:    "two documents",
			in:      header + "---\n" + header + "mode: warn\n",
			wantErr: "more than one document: a configuration file holds exactly one GuardConfig",
		},
		{
			name:    "a second document that is not valid YAML",
			in:      header + "---\n[\n",
			wantErr: "more than one document: a configuration file holds exactly one GuardConfig",
		},
		{
			name:    "unknown top-level key",
			in:      header + "mode: warn\nrule:\n  subnet-public: deny\n",
			wantErr: "line 4: field rule is not a GuardConfig key",
		},
		{
			name:    "keys are case-sensitive",
			in:      header + "Mode: warn\n",
			wantErr: "line 3: field Mode is not a GuardConfig key",
		},
		{
			name:    "unknown aws key",
			in:      header + "aws:\n  timeout: 2s\n  retries: 3\n",
			wantErr: "line 5: field retries is not a key of aws",
		},
		{
			name:    "unknown amiOwners key and allowed as a string, both reported",
			in:      header + "amiOwners:\n  allowed: amazon\n  owner: self\n",
			wantErr: "line 4: cannot unmarshal !!str `amazon` into amiOwners.allowed: expected a list of account ids or aliases; line 5: field owner is not a key of amiOwners",
		},
		{
			name:    "duplicate key",
			in:      header + "mode: warn\nmode: enforce\n",
			wantErr: `line 4: mapping key "mode" already defined at line 3`,
		},
		{
			name:    "invalid YAML",
			in:      header + "rules: [\n",
			wantErr: "line 3: did not find expected node content",
		},
		{
			name:    "tab indentation",
			in:      header + "aws:\n\ttimeout: 2s\n",
			wantErr: "line 4: found character that cannot start any token",
		},
		{
			name:    "karpenter service account without a namespace",
			in:      header + "karpenter:\n  serviceAccount: karpenter\n",
			wantErr: `karpenter.serviceAccount "karpenter": expected namespace/name, such as kube-system/karpenter`,
		},
		{
			name:    "karpenter controller role that is not a role ARN",
			in:      header + "karpenter:\n  controllerRoleARN: KarpenterController\n",
			wantErr: `karpenter.controllerRoleARN "KarpenterController": expected an IAM role ARN such as arn:aws:iam::111122223333:role/KarpenterController`,
		},
		{
			name:    "karpenter interruption queue given as a URL",
			in:      header + "karpenter:\n  interruptionQueue: https://sqs.us-east-1.amazonaws.com/111122223333/prod\n",
			wantErr: `karpenter.interruptionQueue "https://sqs.us-east-1.amazonaws.com/111122223333/prod": expected the SQS queue's name (Karpenter's settings.interruptionQueue), not its URL or ARN`,
		},
		{
			name:    "minValuesPolicy in the wrong case",
			in:      header + "karpenter:\n  minValuesPolicy: strict\n",
			wantErr: `karpenter.minValuesPolicy "strict": expected Strict or BestEffort (Karpenter's MIN_VALUES_POLICY)`,
		},
		{
			name:    "negative minFreeIPs",
			in:      header + "subnets:\n  minFreeIPs: -1\n",
			wantErr: `subnets.minFreeIPs -1: expected a number of addresses, 0 or more`,
		},
		{
			name:    "minFreeIPs not a number",
			in:      header + "subnets:\n  minFreeIPs: many\n",
			wantErr: `line 4: cannot unmarshal !!str ` + "`many`" + ` into subnets.minFreeIPs: expected a whole number`,
		},
		{
			name:    "unknown karpenter key",
			in:      header + "karpenter:\n  role: x\n",
			wantErr: `line 4: field role is not a key of karpenter`,
		},
		{
			name:    "a list instead of a mapping",
			in:      "- apiVersion: karpenter-guard.io/v1alpha1\n",
			wantErr: "line 1: cannot unmarshal !!seq into a GuardConfig: expected a mapping with apiVersion, kind, mode, rules, amiOwners, aws, karpenter and subnets",
		},
		{
			name:    "kind as a list",
			in:      "apiVersion: karpenter-guard.io/v1alpha1\nkind: [GuardConfig]\n",
			wantErr: "line 2: cannot unmarshal !!seq into a text field: expected a string",
		},
		{
			name:    "mode as a list",
			in:      header + "mode: [warn]\n",
			wantErr: "line 3: cannot unmarshal !!seq into mode: expected enforce, warn or dry-run",
		},
		{
			name:    "unknown mode",
			in:      header + "mode: strict\n",
			wantErr: `mode "strict": expected enforce, warn or dry-run`,
		},
		{
			name:    "empty mode",
			in:      header + "mode: \"\"\n",
			wantErr: `mode "": expected enforce, warn or dry-run`,
		},
		{
			name:    "rules as a list",
			in:      header + "rules: [subnet-public]\n",
			wantErr: "line 3: cannot unmarshal !!seq into rules: expected a mapping of rule ID to deny, warn, audit or off",
		},
		{
			name:    "rule action as a list",
			in:      header + "rules:\n  subnet-public: [deny]\n",
			wantErr: "line 4: cannot unmarshal !!seq into a rule action: expected deny, warn, audit or off",
		},
		{
			name:    "unknown rule",
			in:      header + "rules:\n  subnet-publc: deny\n",
			wantErr: "rules: unknown rule \"subnet-publc\" (see `karpenter-guard rules`)",
		},
		{
			name:    "every rule is unknown without a catalog",
			in:      header + "rules:\n  subnet-public: deny\n",
			known:   []string{},
			wantErr: "rules: unknown rule \"subnet-public\" (see `karpenter-guard rules`)",
		},
		{
			name:    "unknown action",
			in:      header + "rules:\n  subnet-public: block\n",
			wantErr: `rules.subnet-public: action "block": expected deny, warn, audit or off`,
		},
		{
			name:    "YAML 1.1 boolean is not an action",
			in:      header + "rules:\n  subnet-public: no\n",
			wantErr: `rules.subnet-public: action "no": expected deny, warn, audit or off`,
		},
		{
			name:    "amiOwners as a string",
			in:      header + "amiOwners: amazon\n",
			wantErr: "line 3: cannot unmarshal !!str `amazon` into amiOwners: expected a mapping with allowed and defaultOwner",
		},
		{
			name:    "allowed owner that is neither account nor alias",
			in:      header + "amiOwners:\n  allowed: [amazon, \"1234\", \"0111222233334\", \"\", Amazon]\n",
			wantErr: `amiOwners.allowed: ""` + owner + `; amiOwners.allowed: "0111222233334"` + owner + `; amiOwners.allowed: "1234"` + owner + `; amiOwners.allowed: "Amazon"` + owner,
		},
		{
			name:    "allowed owner as a list",
			in:      header + "amiOwners:\n  allowed: [[amazon]]\n",
			wantErr: "line 4: cannot unmarshal !!seq into a text field: expected a string",
		},
		{
			name:    "bad default owner",
			in:      header + "amiOwners:\n  defaultOwner: me\n",
			wantErr: `amiOwners.defaultOwner: "me"` + owner,
		},
		{
			name:    "aws as a number",
			in:      header + "aws: 5\n",
			wantErr: "line 3: cannot unmarshal !!int `5` into aws: expected a mapping with timeout, cacheTTL, negativeCacheTTL, onError, requestsPerSecond and auditCallBudget",
		},
		{
			name:    "zero rate",
			in:      header + "aws:\n  requestsPerSecond:\n    iam: 0\n",
			wantErr: "aws.requestsPerSecond.iam 0: expected a rate above 0 (requests per second; 0.5 is one every 2s)",
		},
		{
			name:    "unknown service",
			in:      header + "aws:\n  requestsPerSecond:\n    s3: 5\n",
			wantErr: "line 5: field s3 is not a key of aws.requestsPerSecond",
		},
		{
			name:    "rate as text",
			in:      header + "aws:\n  requestsPerSecond:\n    ec2: fast\n",
			wantErr: "line 5: cannot unmarshal !!str `fast` into a rate: expected a number of requests per second",
		},
		{
			name:    "zero audit budget",
			in:      header + "aws:\n  auditCallBudget: 0\n",
			wantErr: "aws.auditCallBudget 0: expected a number of AWS calls, 1 or more",
		},
		{
			name:    "audit budget as text",
			in:      header + "aws:\n  auditCallBudget: lots\n",
			wantErr: "line 4: cannot unmarshal !!str `lots` into aws.auditCallBudget: expected a whole number of AWS calls",
		},
		{
			name:    "duration without unit",
			in:      header + "aws:\n  timeout: 2\n",
			wantErr: `line 4: "2" is not a positive duration such as 2s or 5m`,
		},
		{
			name:    "zero duration",
			in:      header + "aws:\n  cacheTTL: 0s\n",
			wantErr: `line 4: "0s" is not a positive duration such as 2s or 5m`,
		},
		{
			name:    "negative duration",
			in:      header + "aws:\n  negativeCacheTTL: -30s\n",
			wantErr: `line 4: "-30s" is not a positive duration such as 2s or 5m`,
		},
		{
			name:    "duration in days",
			in:      header + "aws:\n  cacheTTL: 1d\n",
			wantErr: `line 4: "1d" is not a positive duration such as 2s or 5m`,
		},
		{
			name:    "duration as a mapping",
			in:      header + "aws:\n  timeout:\n    seconds: 2\n",
			wantErr: "line 5: expected a duration such as 2s or 5m",
		},
		{
			name:    "unknown onError",
			in:      header + "aws:\n  onError: retry\n",
			wantErr: `aws.onError "retry": expected warn, deny or allow`,
		},
		{
			name:    "empty onError",
			in:      header + "aws:\n  onError: \"\"\n",
			wantErr: `aws.onError "": expected warn, deny or allow`,
		},
		{
			name:    "onError as a list",
			in:      header + "aws:\n  onError: [warn]\n",
			wantErr: "line 4: cannot unmarshal !!seq into aws.onError: expected warn, deny or allow",
		},
		{
			name: "every validation problem at once, sorted",
			in: "apiVersion: v1\nkind: ConfigMap\nmode: off\nrules:\n  nope: block\n" +
				"amiOwners:\n  allowed: [me]\n  defaultOwner: you\naws:\n  onError: panic\n",
			wantErr: `amiOwners.allowed: "me"` + owner +
				`; amiOwners.defaultOwner: "you"` + owner +
				`; apiVersion/kind must be karpenter-guard.io/v1alpha1/GuardConfig, got "v1"/"ConfigMap"` +
				`; aws.onError "panic": expected warn, deny or allow` +
				`; mode "off": expected enforce, warn or dry-run` +
				`; rules.nope: action "block": expected deny, warn, audit or off` +
				"; rules: unknown rule \"nope\" (see `karpenter-guard rules`)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			known := knownRules
			if tc.known != nil {
				known = tc.known
			}
			got, err := Parse([]byte(tc.in), known)
			if err == nil {
				t.Fatalf("Parse = %+v, want error %q", got, tc.wantErr)
			}
			if got != nil {
				t.Errorf("Parse returned %+v alongside the error, want nil", got)
			}
			if err.Error() != tc.wantErr {
				t.Errorf("error\n  got  %q\n  want %q", err, tc.wantErr)
			}
			for _, leak := range []string{"config.", "map[string]", "[]string", "\n"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q contains %q: Go types and line breaks mean nothing to a user", err, leak)
				}
			}
		})
	}
}

func TestParseDoesNotChangeDefault(t *testing.T) {
	if _, err := Parse([]byte(header+"mode: warn\nrules:\n  subnet-public: off\n"), knownRules); err != nil {
		t.Fatal(err)
	}
	d := Default()
	if d.Mode != ModeEnforce || len(d.Rules) != 0 || d.APIVersion != APIVersion || d.Kind != Kind {
		t.Errorf("Default() after Parse = %+v, want the built-in defaults", d)
	}
}

func TestDefault(t *testing.T) {
	d := Default()
	want := &Config{
		APIVersion: "karpenter-guard.io/v1alpha1",
		Kind:       "GuardConfig",
		Mode:       ModeEnforce,
		Rules:      map[string]Action{},
		AWS: AWS{
			Timeout:           Duration{2 * time.Second},
			CacheTTL:          Duration{5 * time.Minute},
			NegativeCacheTTL:  Duration{30 * time.Second},
			OnError:           OnErrorWarn,
			RequestsPerSecond: RequestsPerSecond{IAM: 10, STS: 5, EKS: 5, EC2: 10, SSM: 10, KMS: 10, ServiceQuotas: 2},
			AuditCallBudget:   1000,
		},
		Karpenter: Karpenter{ServiceAccount: "kube-system/karpenter", MinValuesPolicy: "Strict"},
		Subnets:   Subnets{MinFreeIPs: 32},
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("Default() =\n  %+v\nwant\n  %+v", d, want)
	}
	d.Rules["subnet-public"] = ActionOff
	if len(Default().Rules) != 0 {
		t.Error("Default() shares its Rules map between calls")
	}
}

func TestActionFor(t *testing.T) {
	c, err := Parse([]byte(fullExample), knownRules)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rule string
		def  Action
		want Action
	}{
		{"subnet-public", ActionWarn, ActionDeny},
		{"al2023-hybrid-auth", ActionDeny, ActionOff},
		{"nodepool-no-limits", ActionAudit, ActionAudit},
		{"not-configured", ActionWarn, ActionWarn},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			if got := c.ActionFor(tc.rule, tc.def); got != tc.want {
				t.Errorf("ActionFor(%q, %q) = %q, want %q", tc.rule, tc.def, got, tc.want)
			}
		})
	}
	var empty Config // a nil Rules map, as after "rules:" with no value
	if got := empty.ActionFor("subnet-public", ActionDeny); got != ActionDeny {
		t.Errorf("ActionFor on a nil Rules map = %q, want the default %q", got, ActionDeny)
	}
}

func TestDurationRoundTrip(t *testing.T) {
	out, err := yaml.Marshal(Default())
	if err != nil {
		t.Fatalf("Marshal(Default()): %v", err)
	}
	for _, want := range []string{"timeout: 2s", "cacheTTL: 5m0s", "negativeCacheTTL: 30s"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("Marshal(Default()) =\n%s\nwant it to contain %q", out, want)
		}
	}
	back, err := Parse(out, knownRules)
	if err != nil {
		t.Fatalf("Parse(Marshal(Default())): %v\n%s", err, out)
	}
	if back.AWS != Default().AWS || back.Mode != ModeEnforce || len(back.Rules) != 0 || len(back.AMIOwners.Allowed) != 0 {
		t.Errorf("Parse(Marshal(Default())) = %+v, want the defaults", back)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	badRule := filepath.Join(dir, "bad-rule.yaml")
	if err := os.WriteFile(badRule, []byte(header+"rules:\n  no-such-rule: deny\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	tests := []struct {
		name    string
		path    string
		wantErr string // substring; empty means success
	}{
		{"documented example", filepath.Join("testdata", "guard.yaml"), ""},
		{"unknown key names the file and the line", filepath.Join("testdata", "unknown-key.yaml"), "config testdata/unknown-key.yaml: line 5: field retries is not a key of aws"},
		{"unknown rule names the file", badRule, "config " + badRule + ": rules: unknown rule \"no-such-rule\""},
		{"missing file", missing, "read config: open " + missing + ": "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadFile(tc.path, knownRules)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("LoadFile(%q): %v", tc.path, err)
				}
				want, err := Parse([]byte(fullExample), knownRules)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(c, want) {
					t.Errorf("LoadFile(%q) = %+v, want %+v", tc.path, c, want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("LoadFile(%q) error = %v, want it to contain %q", tc.path, err, tc.wantErr)
			}
			if c != nil {
				t.Errorf("LoadFile returned %+v alongside the error, want nil", c)
			}
		})
	}
}
