package facts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/internal/yamlbudget"
	"github.com/karpenter-guard/karpenter-guard/internal/yamlpos"
)

// Snapshot document identity.
const (
	SnapshotAPIVersion = "karpenter-guard.io/v1alpha1"
	SnapshotKind       = "ClusterFacts"
)

// ClusterFacts is the snapshot document (docs/facts.md). A nil section is unknown; a present one, even
// empty, is authoritative and complete.
type ClusterFacts struct {
	APIVersion       string             `yaml:"apiVersion" json:"apiVersion"`
	Kind             string             `yaml:"kind" json:"kind"`
	Cluster          *Cluster           `yaml:"cluster,omitempty" json:"cluster,omitempty"`
	AccessEntries    *[]AccessEntry     `yaml:"accessEntries,omitempty" json:"accessEntries,omitempty"`
	AWSAuth          *map[string]string `yaml:"awsAuth,omitempty" json:"awsAuth,omitempty"`
	Roles            *[]Role            `yaml:"roles,omitempty" json:"roles,omitempty"`
	InstanceProfiles *[]InstanceProfile `yaml:"instanceProfiles,omitempty" json:"instanceProfiles,omitempty"`
	Images           *[]Image           `yaml:"images,omitempty" json:"images,omitempty"`
	SSMParameters    *map[string]string `yaml:"ssmParameters,omitempty" json:"ssmParameters,omitempty"`
	Subnets          *[]Subnet          `yaml:"subnets,omitempty" json:"subnets,omitempty"`
	SecurityGroups   *[]SecurityGroup   `yaml:"securityGroups,omitempty" json:"securityGroups,omitempty"`
	EBSDefaults      *EBSEncryption     `yaml:"ebsDefaults,omitempty" json:"ebsDefaults,omitempty"`
	// KarpenterController and VPCCNI are the identities Karpenter's controller and aws-node act as.
	KarpenterController *ControllerRole `yaml:"karpenterController,omitempty" json:"karpenterController,omitempty"`
	VPCCNI              *CNI            `yaml:"vpcCNI,omitempty" json:"vpcCNI,omitempty"`
	// Simulations is a lookup: the policy simulator's answers to the questions asked; a question
	// without an entry is unknown, not denied.
	Simulations *[]Simulation `yaml:"simulations,omitempty" json:"simulations,omitempty"`
	// The network and capacity sections (network.go): decoded, not yet read by any rule.
	VPC                  *VPCAttributes         `yaml:"vpc,omitempty" json:"vpc,omitempty"`
	NATGateways          *[]NATGateway          `yaml:"natGateways,omitempty" json:"natGateways,omitempty"`
	VPCEndpoints         *[]VPCEndpoint         `yaml:"vpcEndpoints,omitempty" json:"vpcEndpoints,omitempty"`
	KMSKeys              *[]KMSKey              `yaml:"kmsKeys,omitempty" json:"kmsKeys,omitempty"`
	ServiceQuotas        *map[string]int        `yaml:"serviceQuotas,omitempty" json:"serviceQuotas,omitempty"`
	CapacityReservations *[]CapacityReservation `yaml:"capacityReservations,omitempty" json:"capacityReservations,omitempty"`
	InstanceTypes        *[]InstanceType        `yaml:"instanceTypes,omitempty" json:"instanceTypes,omitempty"`
}

// SnapshotError is a problem in a snapshot, with its line in the file.
type SnapshotError struct {
	Line    int
	Message string
}

func (e *SnapshotError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Message) }

// DecodeSnapshotFile decodes a snapshot file holding exactly one ClusterFacts document (empty documents,
// such as after a trailing "---", are ignored).
func DecodeSnapshotFile(data []byte) (*ClusterFacts, error) {
	data, whole := utf8Text(data)
	if !whole {
		return nil, &SnapshotError{Line: bytes.Count(data, []byte("\n")) + 1, Message: "invalid UTF-16: the file ends in the middle of a character"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root *yaml.Node
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			line, msg := yamlpos.SyntaxError(err)
			return nil, &SnapshotError{Line: yamlpos.ErrorLine(data, line, msg, firstSyntaxError), Message: "invalid YAML: " + msg}
		}
		if len(doc.Content) == 0 || emptyDocument(doc.Content[0]) {
			continue
		}
		yamlpos.FileLines(data, doc.Content[0])
		if root != nil {
			return nil, &SnapshotError{Line: doc.Content[0].Line, Message: "more than one document: a facts file holds one ClusterFacts"}
		}
		root = doc.Content[0]
	}
	if root == nil {
		return nil, &SnapshotError{Line: 1, Message: "empty file: expected a ClusterFacts document"}
	}
	return DecodeSnapshot(root, 0)
}

// emptyDocument reports whether a document's root is nothing at all (not even an explicit ~ or null).
func emptyDocument(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Value == "" && n.Style == 0 && n.Anchor == ""
}

// DecodeSnapshot decodes and validates a ClusterFacts mapping node. Node lines plus lineOffset are file
// lines. Aliases that expand past the YAML budget (package yamlbudget), unknown fields, wrong types,
// invalid modes, duplicate ids and malformed ARNs are errors.
func DecodeSnapshot(root *yaml.Node, lineOffset int) (*ClusterFacts, error) {
	if err := yamlbudget.Check(root); err != nil {
		var be *yamlbudget.Error
		if errors.As(err, &be) {
			return nil, &SnapshotError{Line: lineOffset + max(be.Line, 1), Message: be.Message}
		}
		return nil, &SnapshotError{Line: lineOffset + max(root.Line, 1), Message: err.Error()}
	}
	if root.Kind != yaml.MappingNode {
		return nil, &SnapshotError{Line: lineOffset + max(root.Line, 1), Message: "expected a ClusterFacts mapping with apiVersion " + SnapshotAPIVersion + " and kind " + SnapshotKind}
	}
	// yaml.Node.Decode has no strict mode: check unknown fields and types on the nodes first, with
	// their own lines (schema.go), then decode.
	sc := schemaChecker{offset: lineOffset}
	sc.check(root, reflect.TypeOf(ClusterFacts{}), "")
	if err := joinErrors(sc.errs); err != nil {
		return nil, err
	}
	var cf ClusterFacts
	if err := root.Decode(&cf); err != nil {
		return nil, &SnapshotError{Line: yamlErrLine(err, lineOffset, lineOffset+root.Line), Message: cleanYAMLError(err)}
	}
	v := validator{root: root, offset: lineOffset}
	v.check(&cf)
	if err := joinErrors(v.errs); err != nil {
		return nil, err
	}
	return &cf, nil
}

// joinErrors returns nil, or one SnapshotError at the first line naming every problem in line order.
func joinErrors(errs []*SnapshotError) error {
	if len(errs) == 0 {
		return nil
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	const most = 10 // a file that is not a snapshot at all would give a message per line
	msgs := []string{errs[0].Message}
	for _, e := range errs[1:min(len(errs), most)] {
		msgs = append(msgs, e.Error())
	}
	if len(errs) > most {
		msgs = append(msgs, fmt.Sprintf("and %d more problems", len(errs)-most))
	}
	return &SnapshotError{Line: errs[0].Line, Message: strings.Join(msgs, "; ")}
}

var (
	accountRE = regexp.MustCompile(`^\d{12}$`)
	versionRE = regexp.MustCompile(`^1\.\d+$`)
	roleARNRE = regexp.MustCompile(`^arn:aws[a-z-]*:iam::\d{12}:role/(.+/)?[\w+=,.@-]+$`)
	principRE = regexp.MustCompile(`^arn:aws[a-z-]*:(iam::\d{12}:(role|user)/(.+/)?[\w+=,.@-]+|sts::\d{12}:assumed-role/.+)$`)
	profileRE = regexp.MustCompile(`^arn:aws[a-z-]*:iam::\d{12}:instance-profile/(.+/)?[\w+=,.@-]+$`)
	// kmsKeyRE is a KMS key or alias ARN, as GetEbsDefaultKmsKeyId returns the default key.
	kmsKeyRE = regexp.MustCompile(`^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)/[\w/:+=,.@-]+$`)
	// EC2's ImageState and ArchitectureValues.
	imageStates        = map[string]bool{"available": true, "pending": true, "failed": true, "deregistered": true, "disabled": true, "invalid": true, "transient": true, "error": true}
	imageArchitectures = map[string]bool{"x86_64": true, "arm64": true, "i386": true, "x86_64_mac": true, "arm64_mac": true}
	entryTypes         = map[string]bool{"STANDARD": true, "EC2_LINUX": true, "EC2_WINDOWS": true, "FARGATE_LINUX": true, "HYBRID_LINUX": true, "EC2": true, "HYPERPOD_LINUX": true}
)

type validator struct {
	root   *yaml.Node
	offset int
	errs   []*SnapshotError
}

// at returns the file line of the node at path, or of the nearest existing parent.
func (v *validator) at(path ...any) int {
	n := v.root
	line := n.Line
	for _, p := range path {
		var next *yaml.Node
		switch k := p.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == k {
						next = n.Content[i+1]
						line = n.Content[i].Line
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && k < len(n.Content) {
				next = n.Content[k]
				line = next.Line
			}
		}
		if next == nil {
			break
		}
		n = next
		for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
			n = n.Alias
		}
	}
	return v.offset + line
}

func (v *validator) errorf(line int, format string, args ...any) {
	v.errs = append(v.errs, &SnapshotError{Line: line, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) check(cf *ClusterFacts) {
	if cf.APIVersion != SnapshotAPIVersion {
		v.errorf(v.at("apiVersion"), "apiVersion %q: expected apiVersion %s and kind %s", cf.APIVersion, SnapshotAPIVersion, SnapshotKind)
	} else if cf.Kind != SnapshotKind {
		v.errorf(v.at("kind"), "kind %q: expected apiVersion %s and kind %s", cf.Kind, SnapshotAPIVersion, SnapshotKind)
	}
	if c := cf.Cluster; c != nil {
		switch c.AuthenticationMode {
		case "", ModeConfigMap, ModeAPI, ModeAPIAndConfigMap:
		default:
			v.errorf(v.at("cluster", "authenticationMode"), "cluster.authenticationMode %q: expected CONFIG_MAP, API or API_AND_CONFIG_MAP", c.AuthenticationMode)
		}
		if c.AccountID != "" && !accountRE.MatchString(c.AccountID) {
			v.errorf(v.at("cluster", "accountID"), "cluster.accountID %q: expected 12 digits (quote it: \"012345678901\")", c.AccountID)
		}
		if c.Version != "" && !versionRE.MatchString(c.Version) {
			v.errorf(v.at("cluster", "version"), "cluster.version %q: expected the Kubernetes minor such as \"1.33\" (quote it)", c.Version)
		}
	}
	if cf.AccessEntries != nil {
		seen := map[string]int{}
		for i, e := range *cf.AccessEntries {
			if !principRE.MatchString(e.PrincipalARN) {
				v.errorf(v.at("accessEntries", i, "principalArn"), "accessEntries[%d].principalArn %q is not an IAM role or user ARN", i, e.PrincipalARN)
			}
			if !entryTypes[e.Type] {
				v.errorf(v.at("accessEntries", i, "type"), "accessEntries[%d].type %q: expected STANDARD, EC2_LINUX, EC2_WINDOWS, FARGATE_LINUX, HYBRID_LINUX, EC2 or HYPERPOD_LINUX", i, e.Type)
			}
			v.unique(seen, strings.ToLower(e.PrincipalARN), "accessEntries", i, "principalArn")
		}
	}
	if cf.Roles != nil {
		seen := map[string]int{}
		for i, r := range *cf.Roles {
			if !roleARNRE.MatchString(r.ARN) || !strings.HasSuffix(r.ARN, "/"+r.Name) {
				v.errorf(v.at("roles", i, "arn"), "roles[%d].arn %q is not the ARN of a role named %q", i, r.ARN, r.Name)
			}
			v.unique(seen, strings.ToLower(r.Name), "roles", i, "name")
		}
	}
	if cf.InstanceProfiles != nil {
		seen := map[string]int{}
		for i, p := range *cf.InstanceProfiles {
			if p.ARN != "" && (!profileRE.MatchString(p.ARN) || !strings.HasSuffix(p.ARN, "/"+p.Name)) {
				v.errorf(v.at("instanceProfiles", i, "arn"), "instanceProfiles[%d].arn %q is not the ARN of an instance profile named %q", i, p.ARN, p.Name)
			}
			v.unique(seen, strings.ToLower(p.Name), "instanceProfiles", i, "name")
		}
	}
	if cf.Images != nil {
		seen := map[string]int{}
		for i, img := range *cf.Images {
			v.unique(seen, img.ID, "images", i, "id")
			if img.State != "" && !imageStates[img.State] {
				v.errorf(v.at("images", i, "state"), "images[%d].state %q: expected available, pending, failed, deregistered, disabled, invalid, transient or error (only available images are selected)", i, img.State)
			}
			if img.Architecture != "" && !imageArchitectures[img.Architecture] {
				v.errorf(v.at("images", i, "architecture"), "images[%d].architecture %q: expected x86_64, arm64, i386, x86_64_mac or arm64_mac", i, img.Architecture)
			}
		}
	}
	if cf.Subnets != nil {
		seen := map[string]int{}
		for i, s := range *cf.Subnets {
			v.unique(seen, s.ID, "subnets", i, "id")
			v.subnetNetwork(i, s.SubnetNetwork)
		}
	}
	if cf.SecurityGroups != nil {
		seen := map[string]int{}
		for i, g := range *cf.SecurityGroups {
			v.unique(seen, g.ID, "securityGroups", i, "id")
		}
	}
	if kc := cf.KarpenterController; kc != nil {
		if !roleARNRE.MatchString(kc.RoleARN) {
			v.errorf(v.at("karpenterController", "roleArn"), "karpenterController.roleArn %q is not an IAM role ARN", kc.RoleARN)
		}
		if kc.TargetRoleARN != "" && !roleARNRE.MatchString(kc.TargetRoleARN) {
			v.errorf(v.at("karpenterController", "targetRoleArn"), "karpenterController.targetRoleArn %q is not an IAM role ARN", kc.TargetRoleARN)
		}
		switch kc.Source {
		case CredentialsConfig, CredentialsIRSA, CredentialsPodIdentity:
		default:
			v.errorf(v.at("karpenterController", "source"), "karpenterController.source %q: expected irsa, podIdentity or config", kc.Source)
		}
		if ns, name, ok := strings.Cut(kc.ServiceAccount, "/"); kc.ServiceAccount != "" && (!ok || ns == "" || name == "") {
			v.errorf(v.at("karpenterController", "serviceAccount"), "karpenterController.serviceAccount %q: expected namespace/name, such as kube-system/karpenter", kc.ServiceAccount)
		}
	}
	if cni := cf.VPCCNI; cni != nil {
		switch cni.Credentials {
		case "", CredentialsNodeRole:
		case CredentialsIRSA, CredentialsPodIdentity:
			if !roleARNRE.MatchString(cni.RoleARN) {
				at := v.at("vpcCNI", "roleArn")
				if cni.RoleARN == "" {
					at = v.at("vpcCNI", "credentials")
				}
				v.errorf(at, "vpcCNI.roleArn %q: credentials %s need the IAM role ARN aws-node acts as", cni.RoleARN, cni.Credentials)
			}
		default:
			v.errorf(v.at("vpcCNI", "credentials"), "vpcCNI.credentials %q: expected nodeRole, irsa or podIdentity", cni.Credentials)
		}
	}
	if cf.Simulations != nil {
		seen := map[string]int{}
		for i, sim := range *cf.Simulations {
			switch sim.Decision {
			case DecisionAllowed, DecisionImplicitDeny, DecisionExplicitDeny:
			default:
				v.errorf(v.at("simulations", i, "decision"), "simulations[%d].decision %q: expected allowed, implicitDeny or explicitDeny", i, sim.Decision)
			}
			if sim.Principal == "" || sim.Action == "" || sim.Resource == "" {
				v.errorf(v.at("simulations", i), "simulations[%d] needs principal, action and resource", i)
				continue
			}
			k := sim.Question().Key()
			if j, dup := seen[k]; dup {
				v.errorf(v.at("simulations", i), "simulations[%d] asks the same question as simulations[%d] (principal, action, resource and context)", i, j)
				continue
			}
			seen[k] = i
		}
	}
	v.network(cf)
	if d := cf.EBSDefaults; d != nil && d.KMSKeyID != "" && !kmsKeyRE.MatchString(d.KMSKeyID) {
		v.errorf(v.at("ebsDefaults", "kmsKeyID"), "ebsDefaults.kmsKeyID %q: expected the ARN of a KMS key or alias, as GetEbsDefaultKmsKeyId returns it (arn:aws:kms:REGION:ACCOUNT:alias/aws/ebs)", d.KMSKeyID)
	}
}

func (v *validator) unique(seen map[string]int, key, section string, i int, field string) {
	if key == "" {
		v.errorf(v.at(section, i), "%s[%d] has no %s", section, i, field)
		return
	}
	if j, dup := seen[key]; dup {
		v.errorf(v.at(section, i, field), "%s[%d].%s %q duplicates %s[%d]", section, i, field, key, section, j)
		return
	}
	seen[key] = i
}

// yamlErrLine returns the file line of a yaml.v3 decoding error ("line N: ..."), or fallback when it
// names none.
func yamlErrLine(err error, offset, fallback int) int {
	if m := yamlpos.LineRE.FindStringSubmatch(err.Error()); m != nil {
		if n, _ := strconv.Atoi(m[1]); n > 0 {
			return n + offset
		}
	}
	return fallback
}

// cleanYAMLError turns yaml.v3's messages into the snapshot's words, without their line prefixes (the
// SnapshotError carries the line).
func cleanYAMLError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n")
	msg = strings.TrimPrefix(msg, "yaml: ")
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(yamlpos.LineRE.ReplaceAllString(l, ""))
		if l == "" {
			continue
		}
		l = strings.NewReplacer("into bool", "into a boolean (true or false)", "into time.Time", "into a timestamp such as \"2025-06-01T10:00:00Z\"",
			"into []facts.", "into a list of ", "into map[string]string", "into a mapping of strings", "into facts.", "into a mapping: ").Replace(l)
		out = append(out, l)
	}
	return strings.Join(out, "; ")
}

// Snapshot is the provider backed by a ClusterFacts document. It never changes after construction, so
// one Snapshot serves any number of concurrent evaluations.
type Snapshot struct {
	facts *ClusterFacts
	// selections memoises the answers to selector terms: the webhook asks the same few terms of the
	// same snapshot on every request, and matching a name pattern against every image is the costliest
	// question a snapshot answers.
	selections *termMemo
	// awsAuth is facts.AWSAuth read once, as EKS reads it.
	awsAuth *AWSAuthData
	// simulations indexes the simulations section by SimulationQuestion.Key.
	simulations map[string]*Simulation
	// rowAnswers remembers the answers to keyed rows (SimulationRow.Keyed) by digest, as selections
	// remembers selections (see Simulate).
	rowAnswers termMemo
	// roles, profiles and principals index the names of the roles and instance profiles and the
	// principals of the access entries (see foldIndex).
	roles, profiles, principals foldIndex
}

// NewSnapshot returns the provider for a decoded snapshot.
func NewSnapshot(cf *ClusterFacts) *Snapshot {
	s := &Snapshot{facts: cf, selections: &termMemo{}}
	if cf.AWSAuth != nil && len(*cf.AWSAuth) > 0 {
		s.awsAuth = ParseAWSAuth(*cf.AWSAuth)
	}
	if cf.Roles != nil {
		s.roles = newFoldIndex(len(*cf.Roles), s.roleName)
	}
	if cf.InstanceProfiles != nil {
		s.profiles = newFoldIndex(len(*cf.InstanceProfiles), s.profileName)
	}
	if cf.AccessEntries != nil {
		s.principals = newFoldIndex(len(*cf.AccessEntries), s.principal)
	}
	if cf.Simulations != nil {
		s.simulations = make(map[string]*Simulation, len(*cf.Simulations))
		for i := range *cf.Simulations {
			sim := &(*cf.Simulations)[i]
			if k := sim.Question().Key(); s.simulations[k] == nil {
				s.simulations[k] = sim
			}
		}
	}
	return s
}

func (s *Snapshot) roleName(i int) string    { return (*s.facts.Roles)[i].Name }
func (s *Snapshot) profileName(i int) string { return (*s.facts.InstanceProfiles)[i].Name }
func (s *Snapshot) principal(i int) string   { return (*s.facts.AccessEntries)[i].PrincipalARN }

// Facts returns the snapshot document.
func (s *Snapshot) Facts() *ClusterFacts { return s.facts }

const notInSnapshot = "not in the facts snapshot"

// Known implements Provider.
func (s *Snapshot) Known(_ context.Context, f Fact) error {
	cf := s.facts
	known := false
	switch f {
	case ClusterAuthenticationMode:
		known = cf.Cluster != nil && cf.Cluster.AuthenticationMode != ""
	case ClusterVersion:
		known = cf.Cluster != nil && cf.Cluster.Version != ""
	case ClusterVPCID:
		known = cf.Cluster != nil && cf.Cluster.VPCID != ""
	case AccessEntries:
		// In mode CONFIG_MAP there are no access entries to know: EKS does not read them.
		known = cf.AccessEntries != nil || (cf.Cluster != nil && cf.Cluster.AuthenticationMode == ModeConfigMap)
	case AWSAuth:
		known = cf.AWSAuth != nil
	case Roles:
		known = cf.Roles != nil
	case InstanceProfiles:
		known = cf.InstanceProfiles != nil
	case Images:
		known = cf.Images != nil
	case SSMParameters:
		known = cf.SSMParameters != nil
	case Subnets:
		known = cf.Subnets != nil
	case SecurityGroups:
		known = cf.SecurityGroups != nil
	case EBSDefaults:
		known = cf.EBSDefaults != nil
	case ClusterPodIdentityAssociations:
		known = cf.Cluster != nil && cf.Cluster.PodIdentityAssociations != nil
	case KarpenterController:
		known = cf.KarpenterController != nil
	case VPCCNI:
		known = cf.VPCCNI != nil
	case Simulations:
		known = cf.Simulations != nil
	case ClusterEndpointAccess:
		known = cf.Cluster != nil && cf.Cluster.EndpointPublicAccess != nil && cf.Cluster.EndpointPrivateAccess != nil
	case ClusterControlPlaneNetwork:
		known = cf.Cluster != nil && cf.Cluster.ClusterSecurityGroupID != "" && len(cf.Cluster.SubnetIDs) > 0
	case ClusterIPFamily:
		known = cf.Cluster != nil && cf.Cluster.IPFamily != ""
	case VPC:
		known = cf.VPC != nil && cf.VPC.EnableDNSSupport != nil && cf.VPC.EnableDNSHostnames != nil
	case NATGateways:
		known = cf.NATGateways != nil
	case VPCEndpoints:
		known = cf.VPCEndpoints != nil
	case KMSKeys:
		known = cf.KMSKeys != nil
	case ServiceQuotas:
		known = cf.ServiceQuotas != nil
	case CapacityReservations:
		known = cf.CapacityReservations != nil
	case InstanceTypes:
		known = cf.InstanceTypes != nil
	}
	if !known {
		return Unknown(f, notInSnapshot)
	}
	return nil
}

// Cluster implements Provider.
func (s *Snapshot) Cluster(context.Context) (*Cluster, error) {
	if s.facts.Cluster == nil {
		return nil, Unknown("cluster", notInSnapshot)
	}
	return s.facts.Cluster, nil
}

// AccessEntry implements Provider.
func (s *Snapshot) AccessEntry(ctx context.Context, role *Role) (*AccessEntry, error) {
	if err := s.Known(ctx, AccessEntries); err != nil {
		return nil, err
	}
	if s.facts.AccessEntries == nil {
		return nil, nil
	}
	// The first entry keyed to the role's ARN or to its path-less ARN (Role.PrincipalMatcher).
	n := len(*s.facts.AccessEntries)
	i := firstFold(s.principals, n, s.principal, role.ARN)
	if pathless := role.PathlessARN(); !strings.EqualFold(pathless, role.ARN) {
		if j := firstFold(s.principals, n, s.principal, pathless); j >= 0 && (i < 0 || j < i) {
			i = j
		}
	}
	if i < 0 {
		return nil, nil
	}
	return &(*s.facts.AccessEntries)[i], nil
}

// AWSAuth implements Provider.
func (s *Snapshot) AWSAuth(ctx context.Context) (*AWSAuthData, error) {
	if err := s.Known(ctx, AWSAuth); err != nil {
		return nil, err
	}
	return s.awsAuth, nil
}

// Role implements Provider.
func (s *Snapshot) Role(ctx context.Context, name string) (*Role, error) {
	if err := s.Known(ctx, Roles); err != nil {
		return nil, err
	}
	if i := firstFold(s.roles, len(*s.facts.Roles), s.roleName, name); i >= 0 {
		return &(*s.facts.Roles)[i], nil
	}
	return nil, nil
}

// InstanceProfile implements Provider.
func (s *Snapshot) InstanceProfile(ctx context.Context, name string) (*InstanceProfile, error) {
	if err := s.Known(ctx, InstanceProfiles); err != nil {
		return nil, err
	}
	if i := firstFold(s.profiles, len(*s.facts.InstanceProfiles), s.profileName, name); i >= 0 {
		return &(*s.facts.InstanceProfiles)[i], nil
	}
	return nil, nil
}

// Images implements Provider.
func (s *Snapshot) Images(ctx context.Context, t ImageTerm) ([]Image, error) {
	if err := s.Known(ctx, Images); err != nil {
		return nil, err
	}
	t, ok, err := ResolveImageTerm(ctx, s, t)
	if err != nil || !ok {
		return nil, err
	}
	account := ""
	if s.facts.Cluster != nil {
		account = s.facts.Cluster.AccountID
	}
	return selectMemo(s.selections, "image "+t.String(), *s.facts.Images, func(img Image) bool { return MatchImage(t, img, account) }, SortImages), nil
}

// SSMParameter implements Provider.
func (s *Snapshot) SSMParameter(ctx context.Context, name string) (string, bool, error) {
	if err := s.Known(ctx, SSMParameters); err != nil {
		return "", false, err
	}
	v, ok := (*s.facts.SSMParameters)[name]
	return v, ok, nil
}

// Subnets implements Provider.
func (s *Snapshot) Subnets(ctx context.Context, t SelectorTerm) ([]Subnet, error) {
	if err := s.Known(ctx, Subnets); err != nil {
		return nil, err
	}
	return selectMemo(s.selections, "subnet "+t.String(), *s.facts.Subnets, func(sn Subnet) bool { return MatchSubnet(t, sn) }, SortSubnets), nil
}

// SecurityGroups implements Provider.
func (s *Snapshot) SecurityGroups(ctx context.Context, t SelectorTerm) ([]SecurityGroup, error) {
	if err := s.Known(ctx, SecurityGroups); err != nil {
		return nil, err
	}
	return selectMemo(s.selections, "sg "+t.String(), *s.facts.SecurityGroups, func(g SecurityGroup) bool { return MatchSecurityGroup(t, g) }, SortSecurityGroups), nil
}

// EBSDefaults implements Provider.
func (s *Snapshot) EBSDefaults(ctx context.Context) (*EBSEncryption, error) {
	if err := s.Known(ctx, EBSDefaults); err != nil {
		return nil, err
	}
	return s.facts.EBSDefaults, nil
}

// PodIdentityAssociations implements Provider.
func (s *Snapshot) PodIdentityAssociations(ctx context.Context) (int, error) {
	if err := s.Known(ctx, ClusterPodIdentityAssociations); err != nil {
		return 0, err
	}
	return *s.facts.Cluster.PodIdentityAssociations, nil
}

// KarpenterController implements Provider.
func (s *Snapshot) KarpenterController(ctx context.Context) (*ControllerRole, error) {
	if err := s.Known(ctx, KarpenterController); err != nil {
		return nil, err
	}
	return s.facts.KarpenterController, nil
}

// VPCCNI implements Provider.
func (s *Snapshot) VPCCNI(ctx context.Context) (*CNI, error) {
	if err := s.Known(ctx, VPCCNI); err != nil {
		return nil, err
	}
	return s.facts.VPCCNI, nil
}

// Simulate implements Provider: each question is looked up by its key; one without an entry is
// answered with an empty Decision (unknown). A keyed row (SimulationRow.Keyed) is answered from
// memory when the snapshot answered it before, at most maxMemoRows rows: the webhook and the audit
// ask the same rows of every unchanged EC2NodeClass on every evaluation. Those answers are shared:
// read them, never modify them.
func (s *Snapshot) Simulate(ctx context.Context, row SimulationRow) ([]Simulation, error) {
	if err := s.Known(ctx, Simulations); err != nil {
		return nil, err
	}
	if row.digest == "" {
		return s.answer(row), nil
	}
	if v, ok := s.rowAnswers.answers.Load(row.digest); ok {
		// Rows of one digest ask the same questions. Answers name the principal, actions and resources
		// as the row that asked spelled them, so they are reused only for a row that spells them
		// alike; their context is the first row's, equal to this one's in canonical form.
		if a := v.(*answeredRow); a.row.Principal == row.Principal && slices.Equal(a.row.Actions, row.Actions) && slices.Equal(a.row.Resources, row.Resources) {
			return a.sims, nil
		}
	}
	sims := s.answer(row)
	if s.rowAnswers.size.Load() < maxMemoRows {
		if _, loaded := s.rowAnswers.answers.LoadOrStore(row.digest, &answeredRow{row: row, sims: sims}); !loaded {
			s.rowAnswers.size.Add(1)
		}
	}
	return sims, nil
}

// maxMemoRows is how many keyed rows a snapshot remembers the answers to: the rows of about 40
// EC2NodeClasses, each a few KiB with the row's context the answers share.
const maxMemoRows = 1024

// answeredRow is a keyed row the snapshot answered, and its answers.
type answeredRow struct {
	row  SimulationRow
	sims []Simulation
}

// answer looks each question of the row up by its key, the row's context put in canonical form once
// for all its questions.
func (s *Snapshot) answer(row SimulationRow) []Simulation {
	out := make([]Simulation, 0, len(row.Actions)*len(row.Resources))
	ctx := contextKey(row.Context)
	for _, a := range row.Actions {
		for _, res := range row.Resources {
			q := SimulationQuestion{Principal: row.Principal, Action: a, Resource: res, Context: row.Context}
			if sim := s.simulations[questionKey(row.Principal, a, res, ctx)]; sim != nil {
				out = append(out, q.Answer(sim.Decision, sim.MissingContextValues))
			} else {
				out = append(out, q.Answer("", nil))
			}
		}
	}
	return out
}

// termMemo remembers what a selector term selected in an immutable snapshot (or, as rowAnswers, the
// answers to keyed simulation rows, at most maxMemoRows). It holds at most maxMemoTerms answers, so
// that a stream of distinct terms cannot grow it without bound; past that, answers are computed and
// not kept.
type termMemo struct {
	answers sync.Map // key → selection (a slice) or *answeredRow; never changes once stored
	size    atomic.Int64
}

const maxMemoTerms = 4096

// selectMemo returns the items of all that match, in order's order, remembered in m under key.
func selectMemo[T any](m *termMemo, key string, all []T, match func(T) bool, order func([]T)) []T {
	if v, ok := m.answers.Load(key); ok {
		return v.([]T)
	}
	var out []T
	for _, x := range all {
		if match(x) {
			out = append(out, x)
		}
	}
	order(out)
	if m.size.Load() < maxMemoTerms {
		if _, loaded := m.answers.LoadOrStore(key, out); !loaded {
			m.size.Add(1)
		}
	}
	return out
}
