package facts

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/karpenter-guard/karpenter-guard/awsauth"
)

// Authentication modes of an EKS cluster.
const (
	ModeConfigMap       = "CONFIG_MAP"
	ModeAPI             = "API"
	ModeAPIAndConfigMap = "API_AND_CONFIG_MAP"
)

// Access entry types that let nodes join.
const (
	EntryEC2Linux   = "EC2_LINUX"
	EntryEC2Windows = "EC2_WINDOWS"
)

// Cluster is the cluster's identity and settings.
type Cluster struct {
	Name               string `yaml:"name" json:"name"`
	Region             string `yaml:"region" json:"region"`
	Partition          string `yaml:"partition" json:"partition"`
	AccountID          string `yaml:"accountID" json:"accountID"`
	Version            string `yaml:"version" json:"version"`
	AuthenticationMode string `yaml:"authenticationMode" json:"authenticationMode"`
	VPCID              string `yaml:"vpcID" json:"vpcID"`
	// PodIdentityAssociations counts the cluster's EKS Pod Identity associations but aws-node's
	// (nil: unknown).
	PodIdentityAssociations *int `yaml:"podIdentityAssociations,omitempty" json:"podIdentityAssociations,omitempty"`
	ClusterNetwork          `yaml:",inline" json:",inline"`
}

// HonoursAWSAuth reports whether the cluster's mode reads the aws-auth ConfigMap.
func (c *Cluster) HonoursAWSAuth() bool {
	return c.AuthenticationMode == ModeConfigMap || c.AuthenticationMode == ModeAPIAndConfigMap
}

// HonoursAccessEntries reports whether the cluster's mode reads access entries.
func (c *Cluster) HonoursAccessEntries() bool {
	return c.AuthenticationMode == ModeAPI || c.AuthenticationMode == ModeAPIAndConfigMap
}

// Minor returns the Kubernetes minor version (33 for "1.33"), or -1 when unparsable.
func (c *Cluster) Minor() int {
	major, minor, ok := strings.Cut(c.Version, ".")
	if !ok || major != "1" {
		return -1
	}
	if i := strings.IndexFunc(minor, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minor = minor[:i] // "1.33-eks-…": Sscanf's %d stopped at the first non-digit too
	}
	n, err := strconv.Atoi(minor)
	if err != nil {
		return -1
	}
	return n
}

// AccessEntry is an EKS access entry.
type AccessEntry struct {
	PrincipalARN     string    `yaml:"principalArn" json:"principalArn"`
	Type             string    `yaml:"type" json:"type"`
	Username         string    `yaml:"username,omitempty" json:"username,omitempty"`
	KubernetesGroups []string  `yaml:"kubernetesGroups,omitempty" json:"kubernetesGroups,omitempty"`
	CreatedAt        time.Time `yaml:"createdAt,omitempty" json:"createdAt,omitempty"`
}

// Role is an IAM role.
type Role struct {
	Name       string    `yaml:"name" json:"name"`
	Path       string    `yaml:"path,omitempty" json:"path,omitempty"`
	ARN        string    `yaml:"arn" json:"arn"`
	CreateDate time.Time `yaml:"createDate,omitempty" json:"createDate,omitempty"`
	// AssumeRolePolicyDocument is the role's trust policy as JSON (GetRole returns it URL-encoded;
	// this is the decoded text). "" is unknown.
	AssumeRolePolicyDocument string `yaml:"assumeRolePolicyDocument,omitempty" json:"assumeRolePolicyDocument,omitempty"`
}

// PathlessARN is the role's ARN without its IAM path: the identity EKS sees for nodes.
func (r *Role) PathlessARN() string {
	i := strings.Index(r.ARN, ":role/")
	if i < 0 || r.ARN[i+len(":role/"):] == r.Name { // no path: the ARN itself, without a copy
		return r.ARN
	}
	return r.ARN[:i] + ":role/" + r.Name
}

// PrincipalMatcher returns whether an access entry's principal ARN names the role: EKS keys entries
// to the ARN given at creation, which may carry the role's path or not (compared case-insensitively).
// The path-less ARN is built once, for scanning many principals.
func (r *Role) PrincipalMatcher() func(principalARN string) bool {
	arn, pathless := r.ARN, r.PathlessARN()
	return func(p string) bool { return strings.EqualFold(p, arn) || strings.EqualFold(p, pathless) }
}

// InstanceProfile is an IAM instance profile.
type InstanceProfile struct {
	Name  string   `yaml:"name" json:"name"`
	ARN   string   `yaml:"arn,omitempty" json:"arn,omitempty"`
	Roles []string `yaml:"roles" json:"roles"`
}

// Image is an EC2 image.
type Image struct {
	ID           string            `yaml:"id" json:"id"`
	Name         string            `yaml:"name" json:"name"`
	OwnerID      string            `yaml:"ownerID" json:"ownerID"`
	OwnerAlias   string            `yaml:"ownerAlias,omitempty" json:"ownerAlias,omitempty"`
	Architecture string            `yaml:"architecture" json:"architecture"`
	State        string            `yaml:"state" json:"state"`
	CreationDate string            `yaml:"creationDate,omitempty" json:"creationDate,omitempty"`
	Tags         map[string]string `yaml:"tags,omitempty" json:"tags,omitempty"`
}

// Owner names the image's owner the way an AMI term would: the alias when AWS owns it, else the account.
func (i Image) Owner() string {
	if i.OwnerAlias != "" {
		return i.OwnerAlias
	}
	return i.OwnerID
}

// Subnet is an EC2 subnet.
type Subnet struct {
	ID                  string            `yaml:"id" json:"id"`
	VPCID               string            `yaml:"vpcID" json:"vpcID"`
	AvailabilityZone    string            `yaml:"availabilityZone" json:"availabilityZone"`
	MapPublicIPOnLaunch bool              `yaml:"mapPublicIpOnLaunch" json:"mapPublicIpOnLaunch"`
	Public              bool              `yaml:"public" json:"public"`
	Tags                map[string]string `yaml:"tags,omitempty" json:"tags,omitempty"`
	SubnetNetwork       `yaml:",inline" json:",inline"`
}

// SecurityGroup is an EC2 security group.
type SecurityGroup struct {
	ID                 string            `yaml:"id" json:"id"`
	Name               string            `yaml:"name" json:"name"`
	VPCID              string            `yaml:"vpcID" json:"vpcID"`
	Tags               map[string]string `yaml:"tags,omitempty" json:"tags,omitempty"`
	SecurityGroupRules `yaml:",inline" json:",inline"`
}

// EBSEncryption is the account's EBS encryption by default in one region (EC2
// GetEbsEncryptionByDefault and GetEbsDefaultKmsKeyId). With EncryptionByDefault on, EC2 encrypts
// every new EBS volume, whatever the launch asks (an `encrypted: false` included); with it off, a new
// volume whose launch does not set encrypted is unencrypted, and one restored from a snapshot (an
// AMI's root volume) is as encrypted as the snapshot.
type EBSEncryption struct {
	EncryptionByDefault bool `yaml:"encryptionByDefault" json:"encryptionByDefault"`
	// KMSKeyID is the key EC2 encrypts with when the launch names none, as GetEbsDefaultKmsKeyId
	// returns it: an ARN, the alias arn:…:alias/aws/ebs until the account sets another.
	KMSKeyID string `yaml:"kmsKeyID,omitempty" json:"kmsKeyID,omitempty"`
}

// ImageTerm is an AMI selector term other than an alias: fields are ANDed.
type ImageTerm struct {
	ID           string
	Name         string
	Owner        string
	SSMParameter string
	Tags         map[string]string
}

// SelectorTerm is a subnet or security-group selector term: fields are ANDed.
type SelectorTerm struct {
	ID   string
	Name string
	Tags map[string]string
}

// AWSAuthData is the kube-system/aws-auth ConfigMap: its data as stored, and that data parsed the way
// EKS reads it. Providers parse once per version of the ConfigMap, not once per question: every
// EC2NodeClass of every admission request asks.
type AWSAuthData struct {
	Data   map[string]string
	Config awsauth.Config

	// roles indexes Config.MapRoles by rolearn, built on first use: a ConfigMap of many mappings is
	// asked once per EC2NodeClass reviewed.
	rolesOnce sync.Once
	roles     foldIndex
}

// RoleMapping returns the first mapRoles entry whose rolearn is arn, ignoring case (strings.EqualFold),
// or nil.
func (d *AWSAuthData) RoleMapping(arn string) *awsauth.RoleMapping {
	rolearn := func(i int) string { return d.Config.MapRoles[i].RoleARN }
	d.rolesOnce.Do(func() { d.roles = newFoldIndex(len(d.Config.MapRoles), rolearn) })
	if i := firstFold(d.roles, len(d.Config.MapRoles), rolearn, arn); i >= 0 {
		return &d.Config.MapRoles[i]
	}
	return nil
}

// ParseAWSAuth reads aws-auth data the way EKS's authenticator does: the fact is what EKS keeps (the
// entries that pass its checks, each key whose value parses, the last entry for an ARN), never
// nothing because part of the data is wrong, since EKS never rejects the ConfigMap as a whole. What it
// drops or misreads is not lost to the rules: Data keeps the ConfigMap as stored, for a message to say
// why a role has no mapping.
func ParseAWSAuth(data map[string]string) *AWSAuthData {
	return &AWSAuthData{Data: data, Config: awsauth.Read(data).Config}
}

// String is the term as selector YAML, its fields quoted and tags sorted: canonical (equal for equal
// terms, unambiguous whatever the values hold), so it is both the key of caches and how messages and
// notes name the term.
func (t ImageTerm) String() string {
	w := termWriter{buf: make([]byte, 0, 64)}
	w.field("id", t.ID)
	w.field("name", t.Name)
	w.field("owner", t.Owner)
	w.field("ssmParameter", t.SSMParameter)
	return w.end(t.Tags)
}

// String is the term as selector YAML, its fields quoted and tags sorted (see ImageTerm.String).
func (t SelectorTerm) String() string {
	w := termWriter{buf: make([]byte, 0, 64)}
	w.field("id", t.ID)
	w.field("name", t.Name)
	return w.end(t.Tags)
}

// sortedKeys appends the keys of m to ks and sorts them.
func sortedKeys(ks []string, m map[string]string) []string {
	ks = slices.AppendSeq(ks, maps.Keys(m))
	slices.Sort(ks)
	return ks
}

// termWriter writes a term's String: it runs for every selector question of every review.
type termWriter struct{ buf []byte }

func (w *termWriter) sep() {
	if len(w.buf) == 0 {
		w.buf = append(w.buf, '{')
	} else {
		w.buf = append(w.buf, ", "...)
	}
}

func (w *termWriter) field(name, value string) {
	if value == "" {
		return
	}
	w.sep()
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, ": "...)
	w.buf = appendQuoted(w.buf, value)
}

// appendQuoted appends s in double quotes, escaped as strconv.Quote does; the common value (printable
// ASCII without quotes or backslashes) is copied as it is, since keys are built on every question.
func appendQuoted(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return strconv.AppendQuote(buf, s)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

func (w *termWriter) end(tags map[string]string) string {
	if len(tags) > 0 {
		w.sep()
		w.buf = append(w.buf, "tags: {"...)
		var buf [8]string // a selector's few tags are sorted without allocating
		for i, k := range sortedKeys(buf[:0], tags) {
			if i > 0 {
				w.buf = append(w.buf, ", "...)
			}
			w.buf = appendQuoted(w.buf, k)
			w.buf = append(w.buf, ": "...)
			w.buf = appendQuoted(w.buf, tags[k])
		}
		w.buf = append(w.buf, '}')
	}
	if len(w.buf) == 0 {
		return "{}"
	}
	return string(append(w.buf, '}'))
}
