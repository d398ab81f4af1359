package schemas_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/invopop/jsonschema"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/golden"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/report"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

var update = flag.Bool("update", false, "rewrite the schemas from the Go types")

// module is the import path the Go comments of the types are found under.
const module = "github.com/karpenter-guard/karpenter-guard"

// The schemas' dialect: draft-07, which every yaml-language-server reads; nothing below needs a
// later draft.
const draft07 = "http://json-schema.org/draft-07/schema#"

// schemaID is where a schema of the main branch is served; the modeline in the docs names a release's.
func schemaID(file string) jsonschema.ID {
	return jsonschema.ID("https://raw.githubusercontent.com/karpenter-guard/karpenter-guard/main/schemas/" + file)
}

// Patterns the decoders check, repeated so that an editor flags a value before karpenter-guard does.
const (
	durationPattern = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	ownerPattern    = `^([0-9]{12}|amazon|self|aws-marketplace)$`
	roleARNPattern  = `^arn:aws[a-z-]*:iam::[0-9]{12}:role/(.+/)?[\w+=,.@-]+$`
)

// reflector returns invopop/jsonschema's reflector as the schemas use it: every type inline (the
// files are small, and inline schemas read best in an editor's hover), no property beyond the Go
// type's, descriptions from the Go comments of the packages given (paths from the repository root).
func reflector(t *testing.T, tag string, requiredFromTags bool, mapper func(reflect.Type) *jsonschema.Schema, packages ...string) *jsonschema.Reflector {
	t.Helper()
	r := &jsonschema.Reflector{
		FieldNameTag:               tag,
		RequiredFromJSONSchemaTags: requiredFromTags,
		DoNotReference:             true,
		ExpandedStruct:             true,
		Anonymous:                  true,
		Mapper:                     mapper,
	}
	for _, p := range packages {
		if err := r.AddGoComments(module, p); err != nil {
			t.Fatalf("Go comments of %s: %v", p, err)
		}
	}
	return r
}

// prop returns the schema of the property at path, failing the test when there is none.
func prop(t *testing.T, s *jsonschema.Schema, path ...string) *jsonschema.Schema {
	t.Helper()
	for _, p := range path {
		if p == "[]" {
			s = s.Items
		} else if s.Properties != nil {
			next, ok := s.Properties.Get(p)
			if !ok {
				t.Fatalf("no property %v in the schema", path)
			}
			s = next
		} else {
			s = nil
		}
		if s == nil {
			t.Fatalf("no property %v in the schema", path)
		}
	}
	return s
}

func enum(values ...string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

// guardConfigSchema is the GuardConfig's schema, from config.Config and the catalog's rule IDs.
func guardConfigSchema(t *testing.T) *jsonschema.Schema {
	mapper := func(typ reflect.Type) *jsonschema.Schema {
		switch typ {
		case reflect.TypeOf(config.Duration{}):
			return &jsonschema.Schema{Type: "string", Pattern: durationPattern, Description: "A duration such as 2s or 5m."}
		case reflect.TypeOf(config.Mode("")):
			return &jsonschema.Schema{Type: "string", Enum: enum(string(config.ModeEnforce), string(config.ModeWarn), string(config.ModeDryRun))}
		case reflect.TypeOf(config.Action("")):
			return &jsonschema.Schema{Type: "string", Enum: enum(string(config.ActionDeny), string(config.ActionWarn), string(config.ActionAudit), string(config.ActionOff))}
		case reflect.TypeOf(config.OnError("")):
			return &jsonschema.Schema{Type: "string", Enum: enum(string(config.OnErrorWarn), string(config.OnErrorDeny), string(config.OnErrorAllow))}
		}
		return nil
	}
	s := reflector(t, "yaml", true, mapper, "config").Reflect(&config.Config{})
	s.Version, s.ID = draft07, schemaID("guardconfig.schema.json")
	s.Title = "GuardConfig"
	s.Description = "karpenter-guard's configuration: rule actions, AMI owners, the AWS budget, Karpenter's settings. " +
		"karpenter-guard refuses unknown keys, unknown rule IDs and bad values."
	s.Required = []string{"apiVersion", "kind"}
	prop(t, s, "apiVersion").Const = config.APIVersion
	prop(t, s, "kind").Const = config.Kind
	prop(t, s, "mode").Description = "The webhook's mode; the CLI ignores it. Set it here or with serve --mode, not both."
	prop(t, s, "rules").Description = "Per-rule action, by rule ID (`karpenter-guard rules` lists them): deny, warn, audit or off."
	prop(t, s, "rules").PropertyNames = &jsonschema.Schema{Enum: enum(rules.Default().IDs()...)}
	prop(t, s, "amiOwners", "allowed", "[]").Pattern = ownerPattern
	prop(t, s, "amiOwners", "defaultOwner").Pattern = ownerPattern
	prop(t, s, "aws", "timeout").Description = "How long each AWS call may take (2s)."
	prop(t, s, "aws", "cacheTTL").Description = "How long an answer from AWS is kept (5m)."
	prop(t, s, "aws", "negativeCacheTTL").Description = "How long a failed or empty answer is kept (30s)."
	prop(t, s, "aws", "onError").Description = "What the webhook does when a fact it needs cannot be had in time (warn)."
	prop(t, s, "karpenter", "serviceAccount").Pattern = `^[^/]+/[^/]+$`
	prop(t, s, "karpenter", "controllerRoleARN").Pattern = `^$|` + roleARNPattern
	prop(t, s, "karpenter", "interruptionQueue").Pattern = `^[^:/ ]*$`
	prop(t, s, "karpenter", "minValuesPolicy").Enum = enum(config.MinValuesStrict, config.MinValuesBestEffort)
	zero := json.Number("0")
	prop(t, s, "subnets", "minFreeIPs").Minimum = zero
	for _, svc := range []string{"iam", "sts", "eks", "ec2", "ssm", "kms", "serviceQuotas"} {
		prop(t, s, "aws", "requestsPerSecond", svc).ExclusiveMinimum = zero
	}
	prop(t, s, "aws", "auditCallBudget").Minimum = json.Number("1")
	return s
}

// clusterFactsSchema is the ClusterFacts snapshot's schema, from facts.ClusterFacts.
func clusterFactsSchema(t *testing.T) *jsonschema.Schema {
	s := reflector(t, "yaml", true, nil, "facts").Reflect(&facts.ClusterFacts{})
	s.Version, s.ID = draft07, schemaID("clusterfacts.schema.json")
	s.Title = "ClusterFacts"
	s.Description = "A snapshot of what karpenter-guard's rules need to know about an EKS cluster and its AWS account " +
		"(karpenter-guard facts export writes one). A section left out is unknown; a section present, even empty, is the whole truth."
	s.Required = []string{"apiVersion", "kind"}
	prop(t, s, "apiVersion").Const = facts.SnapshotAPIVersion
	prop(t, s, "kind").Const = facts.SnapshotKind
	prop(t, s, "cluster", "authenticationMode").Enum = enum(facts.ModeConfigMap, facts.ModeAPI, facts.ModeAPIAndConfigMap)
	prop(t, s, "cluster", "accountID").Pattern = `^[0-9]{12}$`
	prop(t, s, "cluster", "version").Pattern = `^1\.[0-9]+$`
	prop(t, s, "accessEntries", "[]", "type").Enum = enum("STANDARD", "EC2_LINUX", "EC2_WINDOWS", "FARGATE_LINUX", "HYBRID_LINUX", "EC2", "HYPERPOD_LINUX")
	prop(t, s, "images", "[]", "state").Enum = enum("available", "pending", "failed", "deregistered", "disabled", "invalid", "transient", "error")
	prop(t, s, "images", "[]", "architecture").Enum = enum("x86_64", "arm64", "i386", "x86_64_mac", "arm64_mac")
	prop(t, s, "karpenterController", "source").Enum = enum("irsa", "podIdentity", "config")
	prop(t, s, "vpcCNI", "credentials").Enum = enum("nodeRole", "irsa", "podIdentity")
	prop(t, s, "simulations", "[]", "decision").Enum = enum("allowed", "implicitDeny", "explicitDeny")
	// The keys the decoder requires of each entry (it reports an entry without one).
	for section, required := range map[string][]string{
		"accessEntries":    {"principalArn"},
		"roles":            {"name"},
		"instanceProfiles": {"name"},
		"images":           {"id"},
		"subnets":          {"id"},
		"securityGroups":   {"id"},
		"simulations":      {"principal", "action", "resource"},
	} {
		prop(t, s, section, "[]").Required = required
	}
	return s
}

// jsonReport is the JSON report as report.WriteJSON writes it.
type jsonReport struct {
	SchemaVersion string                    `json:"schemaVersion"`
	Findings      []jsonFinding             `json:"findings"`
	NotEvaluated  []validators.NotEvaluated `json:"notEvaluated"`
	Skipped       []validators.Skipped      `json:"skipped"`
	Errors        []manifest.Error          `json:"errors"`
	Unread        []manifest.Unread         `json:"unread"`
	Notes         []string                  `json:"notes,omitempty"`
	Summary       report.Summary            `json:"summary"`
}

// jsonFinding is a finding of the JSON report: the finding, and the line of its field.
type jsonFinding struct {
	validators.Finding
	Line int `json:"line,omitempty"`
}

// reportSchema is the schema of `check -o json` and `audit -o json`, from the report's types.
func reportSchema(t *testing.T) *jsonschema.Schema {
	mapper := func(typ reflect.Type) *jsonschema.Schema {
		if typ == reflect.TypeOf(config.Action("")) {
			return &jsonschema.Schema{Type: "string", Enum: enum(string(config.ActionDeny), string(config.ActionWarn), string(config.ActionAudit))}
		}
		return nil
	}
	s := reflector(t, "json", false, mapper, "report", "validators", "objects", "manifest").Reflect(&jsonReport{})
	s.Version, s.ID = draft07, schemaID("report.schema.json")
	s.Title = "karpenter-guard report " + report.SchemaVersion
	s.Description = "What `karpenter-guard check -o json` and `audit -o json` print. Within one schemaVersion fields are only " +
		"added; a rename, a new type or a removal comes with a new schemaVersion."
	prop(t, s, "schemaVersion").Const = report.SchemaVersion
	prop(t, s, "findings", "[]", "line").Description = "The file line of the finding's field (the object's line when the field is absent)."
	return s
}

// schemaFiles are the schemas of schemas/, by file name.
func schemaFiles(t *testing.T) map[string]*jsonschema.Schema {
	t.Chdir("..") // the Go comments are read from the packages' directories
	out := map[string]*jsonschema.Schema{
		"guardconfig.schema.json":  guardConfigSchema(t),
		"clusterfacts.schema.json": clusterFactsSchema(t),
		"report.schema.json":       reportSchema(t),
	}
	for _, s := range out {
		oneLineDescriptions(s)
	}
	return out
}

// oneLineDescriptions joins the lines of every description (Go comments are wrapped at 100 columns;
// an editor's hover wraps at its own width).
func oneLineDescriptions(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.Description = strings.Join(strings.Fields(s.Description), " ")
	if s.Properties != nil {
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			oneLineDescriptions(p.Value)
		}
	}
	oneLineDescriptions(s.Items)
	oneLineDescriptions(s.AdditionalProperties)
	oneLineDescriptions(s.PropertyNames)
}

// TestSchemasGolden keeps the schemas in schemas/ equal to what the Go types generate: a field added,
// renamed or retyped, a rule added, or a comment changed fails here until `make readme` (or
// go test ./schemas -update) writes them again.
func TestSchemasGolden(t *testing.T) {
	for name, s := range schemaFiles(t) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		golden.Compare(t, filepath.Join("schemas", name), b.String(), *update)
	}
}
