// Package config reads the GuardConfig file shared by the CLI, the webhook and the audit. Decoding is
// strict: an unknown key or a bad value is an error with its line, never silently ignored.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/internal/yamlbudget"
)

// APIVersion and Kind of the configuration document.
const (
	APIVersion = "karpenter-guard.io/v1alpha1"
	Kind       = "GuardConfig"
)

// Mode is the webhook's enforcement mode.
type Mode string

// Modes.
const (
	ModeEnforce Mode = "enforce"
	ModeWarn    Mode = "warn"
	ModeDryRun  Mode = "dry-run"
)

// Action is what a finding of a rule does.
type Action string

// Actions, strongest first.
const (
	ActionDeny  Action = "deny"
	ActionWarn  Action = "warn"
	ActionAudit Action = "audit"
	ActionOff   Action = "off"
)

// OnError is what the webhook does when a needed fact cannot be had in time.
type OnError string

// OnError values.
const (
	OnErrorWarn  OnError = "warn"
	OnErrorDeny  OnError = "deny"
	OnErrorAllow OnError = "allow"
)

// Config is a GuardConfig.
type Config struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Mode       Mode              `yaml:"mode"`
	Rules      map[string]Action `yaml:"rules"`
	AMIOwners  AMIOwners         `yaml:"amiOwners"`
	AWS        AWS               `yaml:"aws"`
	Karpenter  Karpenter         `yaml:"karpenter"`
	Subnets    Subnets           `yaml:"subnets"`

	// ModeSet is whether the document itself set mode (Default's enforce applies otherwise).
	ModeSet bool `yaml:"-"`
}

// AMIOwners configures the AMI owner rules.
type AMIOwners struct {
	// Allowed lists account ids or aliases (amazon, self); empty turns ami-owner-not-allowed off.
	Allowed []string `yaml:"allowed"`
	// DefaultOwner is the owner the ami-selector-missing-owner fix adds when nothing better is known;
	// empty means the fix is not offered for such terms.
	DefaultOwner string `yaml:"defaultOwner"`
}

// Karpenter describes the Karpenter installation the cluster runs, for the controller-permission rules.
type Karpenter struct {
	// ServiceAccount is the controller's ServiceAccount, namespace/name (default kube-system/karpenter):
	// its IRSA annotation or Pod Identity association names the controller's role.
	ServiceAccount string `yaml:"serviceAccount"`
	// ControllerRoleARN names the controller's role outright, when neither IRSA nor Pod Identity
	// tells it (or to check a role before it is installed).
	ControllerRoleARN string `yaml:"controllerRoleARN"`
	// InterruptionQueue is Karpenter's --interruption-queue (settings.interruptionQueue); empty when
	// interruption handling is off.
	InterruptionQueue string `yaml:"interruptionQueue"`
	// MinValuesPolicy is Karpenter's MIN_VALUES_POLICY: Strict (the default) refuses to launch when a
	// requirement's minValues cannot be met; BestEffort relaxes it.
	MinValuesPolicy string `yaml:"minValuesPolicy"`
}

// DefaultKarpenterServiceAccount is where Karpenter's Helm chart puts its ServiceAccount by default in
// the getting-started guide.
const DefaultKarpenterServiceAccount = "kube-system/karpenter"

// AWS configures live AWS lookups.
type AWS struct {
	Timeout          Duration `yaml:"timeout"`
	CacheTTL         Duration `yaml:"cacheTTL"`
	NegativeCacheTTL Duration `yaml:"negativeCacheTTL"`
	OnError          OnError  `yaml:"onError"`
	// RequestsPerSecond is karpenter-guard's own rate limit of each AWS service, for every request of
	// the process (reviews, audits, retries), well under AWS's own limits by default.
	RequestsPerSecond RequestsPerSecond `yaml:"requestsPerSecond"`
	// AuditCallBudget is the most AWS requests one in-cluster audit may send (default 1000); what does
	// not fit is not evaluated, and the next audit asks it.
	AuditCallBudget Calls `yaml:"auditCallBudget"`
}

// Calls is a number of AWS requests.
type Calls int

// RequestsPerSecond is a sustained rate per AWS service; each service may also send a burst of
// BurstSeconds times its rate at once after a quiet time.
type RequestsPerSecond struct {
	// IAM is shared by every caller of the account: throttling it stalls Terraform, consoles and
	// Karpenter's own instance-profile work too (default 10).
	IAM float64 `yaml:"iam"`
	// STS is asked once per credential check (default 5).
	STS float64 `yaml:"sts"`
	// EKS describes the cluster, its access entries and Pod Identity associations (default 5).
	EKS float64 `yaml:"eks"`
	// EC2 Describe* calls share the account's bucket of non-mutating EC2 actions (default 10).
	EC2 float64 `yaml:"ec2"`
	// SSM resolves AMI aliases and parameters (default 10).
	SSM float64 `yaml:"ssm"`
	// KMS describes the EBS encryption keys (default 10).
	KMS float64 `yaml:"kms"`
	// ServiceQuotas reads the EC2 quotas; its limits are the lowest of all (default 2).
	ServiceQuotas float64 `yaml:"serviceQuotas"`
}

// BurstSeconds is how many seconds' worth of requests a service may send at once after a quiet time:
// a cold review asks its questions together, well under the few hundred calls after which AWS starts
// throttling a burst.
const BurstSeconds = 4

// DefaultAuditCallBudget is aws.auditCallBudget when the file does not set it.
const DefaultAuditCallBudget = 1000

// DefaultRequestsPerSecond are aws.requestsPerSecond when the file does not set them: well under
// what AWS lets an account do, since karpenter-guard shares the account's limits with everything
// else in it. EC2's documented bucket of non-mutating actions refills at 20 a second; IAM documents
// none, and users see it throttle SimulatePrincipalPolicy after about 180 calls in a burst.
func DefaultRequestsPerSecond() RequestsPerSecond {
	return RequestsPerSecond{IAM: 10, STS: 5, EKS: 5, EC2: 10, SSM: 10, KMS: 10, ServiceQuotas: 2}
}

// ByService returns the rates by service, keyed as the AWS SDK's service IDs are in lower case
// without spaces ("iam", "servicequotas").
func (r RequestsPerSecond) ByService() map[string]float64 {
	return map[string]float64{"iam": r.IAM, "sts": r.STS, "eks": r.EKS, "ec2": r.EC2, "ssm": r.SSM, "kms": r.KMS, "servicequotas": r.ServiceQuotas}
}

// Subnets configures the subnet rules.
type Subnets struct {
	// MinFreeIPs is the fewest free addresses a zone's best node subnet may have before
	// subnet-free-ips-low warns (default 32: with the VPC CNI's defaults one node takes its primary
	// address and a whole ENI of secondary ones).
	MinFreeIPs int `yaml:"minFreeIPs"`
}

// Karpenter's minValues policies.
const (
	MinValuesStrict     = "Strict"
	MinValuesBestEffort = "BestEffort"
)

// DefaultMinFreeIPs is subnets.minFreeIPs when the file does not set it.
const DefaultMinFreeIPs = 32

// Duration is a time.Duration written as "2s" or "5m".
type Duration struct{ time.Duration }

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("line %d: expected a duration such as 2s or 5m", n.Line)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return fmt.Errorf("line %d: %q is not a positive duration such as 2s or 5m", n.Line, s)
	}
	d.Duration = v
	return nil
}

// MarshalYAML implements yaml.Marshaler.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// Default returns the configuration used when no file is given.
func Default() *Config {
	return &Config{
		APIVersion: APIVersion,
		Kind:       Kind,
		Mode:       ModeEnforce,
		Rules:      map[string]Action{},
		AMIOwners:  AMIOwners{},
		AWS: AWS{
			Timeout:           Duration{2 * time.Second},
			CacheTTL:          Duration{5 * time.Minute},
			NegativeCacheTTL:  Duration{30 * time.Second},
			OnError:           OnErrorWarn,
			RequestsPerSecond: DefaultRequestsPerSecond(),
			AuditCallBudget:   DefaultAuditCallBudget,
		},
		Karpenter: Karpenter{ServiceAccount: DefaultKarpenterServiceAccount, MinValuesPolicy: MinValuesStrict},
		Subnets:   Subnets{MinFreeIPs: DefaultMinFreeIPs},
	}
}

// ActionFor returns the configured action for a rule, or def when the file does not override it.
func (c *Config) ActionFor(rule string, def Action) Action {
	if a, ok := c.Rules[rule]; ok {
		return a
	}
	return def
}

// LoadFile reads and validates a configuration file. knownRules lists the rule IDs of the catalog.
func LoadFile(path string, knownRules []string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := Parse(data, knownRules)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes and validates a configuration document over the defaults.
func Parse(data []byte, knownRules []string) (*Config, error) {
	// yaml.v3 bounds aliases while it decodes the values too, but words a cycle without a line and an
	// oversized document without saying where.
	if err := yamlbudget.CheckStream(data); err != nil {
		return nil, err
	}
	c := Default()
	c.APIVersion, c.Kind = "", "" // the file must say what it is; only Default() fills them in
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty configuration: expected a GuardConfig document")
		}
		return nil, errors.New(cleanYAMLError(err))
	}
	for {
		var extra yaml.Node
		err := dec.Decode(&extra)
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil && emptyDocument(&extra) {
			continue // a trailing --- holds no second document
		}
		return nil, errors.New("more than one document: a configuration file holds exactly one GuardConfig")
	}
	var set struct {
		Mode *string `yaml:"mode"`
	}
	c.ModeSet = yaml.Unmarshal(data, &set) == nil && set.Mode != nil
	var problems []string
	if c.APIVersion != APIVersion || c.Kind != Kind {
		problems = append(problems, fmt.Sprintf("apiVersion/kind must be %s/%s, got %q/%q", APIVersion, Kind, c.APIVersion, c.Kind))
	}
	switch c.Mode {
	case ModeEnforce, ModeWarn, ModeDryRun:
	default:
		problems = append(problems, fmt.Sprintf("mode %q: expected enforce, warn or dry-run", c.Mode))
	}
	known := map[string]bool{}
	for _, r := range knownRules {
		known[r] = true
	}
	for id, a := range c.Rules {
		if !known[id] {
			problems = append(problems, fmt.Sprintf("rules: unknown rule %q (see `karpenter-guard rules`)", id))
		}
		switch a {
		case ActionDeny, ActionWarn, ActionAudit, ActionOff:
		default:
			problems = append(problems, fmt.Sprintf("rules.%s: action %q: expected deny, warn, audit or off", id, a))
		}
	}
	for _, o := range c.AMIOwners.Allowed {
		if !validOwner(o) {
			problems = append(problems, fmt.Sprintf("amiOwners.allowed: %q is neither a 12-digit account id nor an alias (amazon, self, aws-marketplace)", o))
		}
	}
	if o := c.AMIOwners.DefaultOwner; o != "" && !validOwner(o) {
		problems = append(problems, fmt.Sprintf("amiOwners.defaultOwner: %q is neither a 12-digit account id nor an alias (amazon, self, aws-marketplace)", o))
	}
	if ns, name, ok := strings.Cut(c.Karpenter.ServiceAccount, "/"); !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		problems = append(problems, fmt.Sprintf("karpenter.serviceAccount %q: expected namespace/name, such as kube-system/karpenter", c.Karpenter.ServiceAccount))
	}
	if a := c.Karpenter.ControllerRoleARN; a != "" && !roleARNRE.MatchString(a) {
		problems = append(problems, fmt.Sprintf("karpenter.controllerRoleARN %q: expected an IAM role ARN such as arn:aws:iam::111122223333:role/KarpenterController", a))
	}
	if q := c.Karpenter.InterruptionQueue; strings.ContainsAny(q, ":/ ") {
		problems = append(problems, fmt.Sprintf("karpenter.interruptionQueue %q: expected the SQS queue's name (Karpenter's settings.interruptionQueue), not its URL or ARN", q))
	}
	switch c.Karpenter.MinValuesPolicy {
	case MinValuesStrict, MinValuesBestEffort:
	default:
		problems = append(problems, fmt.Sprintf("karpenter.minValuesPolicy %q: expected Strict or BestEffort (Karpenter's MIN_VALUES_POLICY)", c.Karpenter.MinValuesPolicy))
	}
	if c.Subnets.MinFreeIPs < 0 {
		problems = append(problems, fmt.Sprintf("subnets.minFreeIPs %d: expected a number of addresses, 0 or more", c.Subnets.MinFreeIPs))
	}
	switch c.AWS.OnError {
	case OnErrorWarn, OnErrorDeny, OnErrorAllow:
	default:
		problems = append(problems, fmt.Sprintf("aws.onError %q: expected warn, deny or allow", c.AWS.OnError))
	}
	for _, r := range []struct {
		key  string
		rate float64
	}{{"iam", c.AWS.RequestsPerSecond.IAM}, {"sts", c.AWS.RequestsPerSecond.STS}, {"eks", c.AWS.RequestsPerSecond.EKS},
		{"ec2", c.AWS.RequestsPerSecond.EC2}, {"ssm", c.AWS.RequestsPerSecond.SSM}, {"kms", c.AWS.RequestsPerSecond.KMS},
		{"serviceQuotas", c.AWS.RequestsPerSecond.ServiceQuotas}} {
		if r.rate <= 0 {
			problems = append(problems, fmt.Sprintf("aws.requestsPerSecond.%s %v: expected a rate above 0 (requests per second; 0.5 is one every 2s)", r.key, r.rate))
		}
	}
	if c.AWS.AuditCallBudget < 1 {
		problems = append(problems, fmt.Sprintf("aws.auditCallBudget %d: expected a number of AWS calls, 1 or more", c.AWS.AuditCallBudget))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, errors.New(strings.Join(problems, "; "))
	}
	return c, nil
}

var (
	accountRE = regexp.MustCompile(`^\d{12}$`)
	roleARNRE = regexp.MustCompile(`^arn:aws[a-z-]*:iam::\d{12}:role/(.+/)?[\w+=,.@-]+$`)
)

func validOwner(o string) bool {
	return o == "amazon" || o == "self" || o == "aws-marketplace" || accountRE.MatchString(o)
}

// emptyDocument reports whether a decoded YAML document holds nothing (only "---" or comments).
func emptyDocument(n *yaml.Node) bool {
	return len(n.Content) == 0 || (n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Tag == "!!null")
}

// typeNames replaces the Go types in yaml's "cannot unmarshal" errors with what the file should hold.
var typeNames = strings.NewReplacer(
	"into config.Config", "into a GuardConfig: expected a mapping with apiVersion, kind, mode, rules, amiOwners, aws, karpenter and subnets",
	"into config.Karpenter", "into karpenter: expected a mapping with serviceAccount, controllerRoleARN, interruptionQueue and minValuesPolicy",
	"into config.Subnets", "into subnets: expected a mapping with minFreeIPs",
	"into config.Mode", "into mode: expected enforce, warn or dry-run",
	"into map[string]config.Action", "into rules: expected a mapping of rule ID to deny, warn, audit or off",
	"into config.Action", "into a rule action: expected deny, warn, audit or off",
	"into config.AMIOwners", "into amiOwners: expected a mapping with allowed and defaultOwner",
	"into []string", "into amiOwners.allowed: expected a list of account ids or aliases",
	"into config.AWS", "into aws: expected a mapping with timeout, cacheTTL, negativeCacheTTL, onError, requestsPerSecond and auditCallBudget",
	"into config.RequestsPerSecond", "into aws.requestsPerSecond: expected a mapping with iam, sts, eks, ec2, ssm, kms and serviceQuotas",
	"into float64", "into a rate: expected a number of requests per second",
	"into config.OnError", "into aws.onError: expected warn, deny or allow",
	"into string", "into a text field: expected a string",
	"into int", "into subnets.minFreeIPs: expected a whole number",
	"into config.Calls", "into aws.auditCallBudget: expected a whole number of AWS calls",
)

func cleanYAMLError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n")
	msg = strings.TrimPrefix(msg, "yaml: ")
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		l = strings.Replace(l, "not found in type config.Config", "is not a GuardConfig key", 1)
		l = strings.Replace(l, "not found in type config.AWS", "is not a key of aws", 1)
		l = strings.Replace(l, "not found in type config.RequestsPerSecond", "is not a key of aws.requestsPerSecond", 1)
		l = strings.Replace(l, "not found in type config.AMIOwners", "is not a key of amiOwners", 1)
		l = strings.Replace(l, "not found in type config.Karpenter", "is not a key of karpenter", 1)
		l = typeNames.Replace(l)
		out = append(out, l)
	}
	return strings.Join(out, "; ")
}
