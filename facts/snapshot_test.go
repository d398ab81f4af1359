package facts

import (
	"encoding/binary"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	yaml "go.yaml.in/yaml/v3"
)

// utf16LE and utf16BE encode s as UTF-16 with a byte order mark, as Windows PowerShell writes files.
func utf16LE(s string) string { return utf16With(s, binary.LittleEndian, 0xFF, 0xFE) }
func utf16BE(s string) string { return utf16With(s, binary.BigEndian, 0xFE, 0xFF) }

func utf16With(s string, order binary.AppendByteOrder, bom ...byte) string {
	out := append([]byte(nil), bom...)
	for _, u := range utf16.Encode([]rune(s)) {
		out = order.AppendUint16(out, u)
	}
	return string(out)
}

// lines joins YAML lines, so a test can count them: the n-th argument is line n of the file.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

const (
	hdrAPI  = "apiVersion: karpenter-guard.io/v1alpha1"
	hdrKind = "kind: ClusterFacts"
)

// TestDecodeSnapshotFileExample: the full example of docs/facts.md (the first of its section Format,
// kept as testdata/cluster-facts.yaml, and the same there) decodes to exactly the facts it shows.
func TestDecodeSnapshotFileExample(t *testing.T) {
	data, err := os.ReadFile("testdata/cluster-facts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/facts.md")
	if err != nil {
		t.Fatal(err)
	}
	_, format, _ := strings.Cut(string(doc), "\n## Format\n")
	if _, block, ok := strings.Cut(format, "```yaml\n"); !ok || !strings.HasPrefix(block, string(data)+"```") {
		t.Errorf("the example of docs/facts.md is not testdata/cluster-facts.yaml: make them equal again")
	}
	cf, err := DecodeSnapshotFile(data)
	if err != nil {
		t.Fatalf("the docs/facts.md example is refused: %v", err)
	}
	ts := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	want := &ClusterFacts{
		APIVersion: SnapshotAPIVersion,
		Kind:       SnapshotKind,
		Cluster: &Cluster{Name: "prod-eks", Region: "us-east-1", Partition: "aws", AccountID: "111122223333",
			Version: "1.33", AuthenticationMode: ModeAPIAndConfigMap, VPCID: "vpc-0a1b2c3d", PodIdentityAssociations: ptr(3)},
		AccessEntries: &[]AccessEntry{{
			PrincipalARN: "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks", Type: EntryEC2Linux,
			Username: "system:node:{{EC2PrivateDNSName}}", KubernetesGroups: []string{}, CreatedAt: ts("2025-06-01T10:00:00Z"),
		}},
		AWSAuth: &map[string]string{"mapRoles": "- rolearn: arn:aws:iam::111122223333:role/eks-node-role\n" +
			"  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n"},
		Roles: &[]Role{
			{Name: "KarpenterNodeRole-prod-eks", Path: "/", ARN: "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks", CreateDate: ts("2025-05-30T09:00:00Z"),
				AssumeRolePolicyDocument: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`},
			{Name: "AWSServiceRoleForEC2Spot", Path: "/aws-service-role/spot.amazonaws.com/", ARN: "arn:aws:iam::111122223333:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot"},
		},
		InstanceProfiles: &[]InstanceProfile{{Name: "KarpenterNodeInstanceProfile-prod-eks",
			ARN: "arn:aws:iam::111122223333:instance-profile/KarpenterNodeInstanceProfile-prod-eks", Roles: []string{"KarpenterNodeRole-prod-eks"}}},
		Images: &[]Image{{ID: "ami-0aa11bb22cc33dd44", Name: "amazon-eks-node-al2023-x86_64-standard-1.33-v20251112", OwnerID: "602401143452",
			OwnerAlias: "amazon", Architecture: "x86_64", State: "available", CreationDate: "2025-11-12T00:00:00Z", Tags: map[string]string{}}},
		SSMParameters: &map[string]string{"/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id": "ami-0aa11bb22cc33dd44"},
		Subnets: &[]Subnet{{ID: "subnet-0private1", VPCID: "vpc-0a1b2c3d", AvailabilityZone: "us-east-1a",
			Tags: map[string]string{"karpenter.sh/discovery": "prod-eks", "Name": "private-a"}}},
		SecurityGroups: &[]SecurityGroup{{ID: "sg-0node", Name: "eks-node", VPCID: "vpc-0a1b2c3d", Tags: map[string]string{"karpenter.sh/discovery": "prod-eks"}}},
		EBSDefaults:    &EBSEncryption{EncryptionByDefault: false, KMSKeyID: "arn:aws:kms:us-east-1:111122223333:alias/aws/ebs"},
		KarpenterController: &ControllerRole{ServiceAccount: "kube-system/karpenter", RoleARN: "arn:aws:iam::111122223333:role/KarpenterController-prod-eks",
			Source: CredentialsPodIdentity, SessionPolicy: ptr(false)},
		VPCCNI: &CNI{Present: ptr(true), Credentials: CredentialsNodeRole},
		Simulations: &[]Simulation{{Principal: "arn:aws:iam::111122223333:role/KarpenterController-prod-eks", Action: "iam:PassRole",
			Resource: "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks", Context: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}},
			Decision: DecisionAllowed, MissingContextValues: []string{}}},
	}
	if !reflect.DeepEqual(cf, want) {
		got, _ := yaml.Marshal(cf)
		exp, _ := yaml.Marshal(want)
		t.Errorf("decoded example differs\n--- got\n%s\n--- want\n%s", got, exp)
	}
}

func ptr[T any](v T) *T { return &v }

// TestDecodeSnapshotFileErrors: every bad snapshot is refused with the file line of the culprit and a
// message saying what is wrong and what is expected.
func TestDecodeSnapshotFileErrors(t *testing.T) {
	cases := []struct {
		name string
		in   string
		line int
		want []string // substrings of the message
	}{
		{"empty file", "", 1, []string{"empty file", "expected a ClusterFacts document"}},
		{"comments only", "# nothing\n\n# here\n", 1, []string{"empty file"}},
		{"only document markers", "---\n---\n", 1, []string{"empty file"}},
		{"two documents", lines(hdrAPI, hdrKind, "---", hdrAPI, hdrKind), 4,
			[]string{"more than one document", "one ClusterFacts"}},
		{"second document is invalid YAML", lines(hdrAPI, hdrKind, "---", "a: [", "b: c"), 5,
			[]string{"invalid YAML"}},
		{"invalid YAML: unclosed flow sequence", lines(hdrAPI, hdrKind, "roles: [", "images: []"), 4,
			[]string{"invalid YAML", "did not find expected"}},
		{"invalid YAML: bad indentation", lines(hdrAPI, hdrKind, "cluster:", "  name: a", "   region: b"), 5,
			[]string{"invalid YAML", "mapping values are not allowed"}},
		{"invalid YAML: tab indentation", lines(hdrAPI, hdrKind, "cluster:", "  name: a", "\tregion: b"), 5,
			[]string{"invalid YAML", "tab character"}},
		// yaml.v3 also breaks lines at a lone CR and at U+2028: lines are counted by LF, as the manifest
		// reader and editors' line numbers do.
		{"U+2028 in a string", lines(hdrAPI, hdrKind, "cluster:", "  region: \"a\u2028b\"", "  vpcId: x"), 5,
			[]string{`unknown field "vpcId" in cluster`}},
		{"lone CR in a string", lines(hdrAPI, hdrKind, "cluster:", "  region: \"a\rb\"", "  name: a", "  name: b"), 6,
			[]string{`cluster: key "name" appears twice (first at line 5)`}},
		{"UTF-16 with a byte order mark", utf16LE(lines(hdrAPI, hdrKind, "cluster:", "  name: é", "  vpcId: x")), 5,
			[]string{`unknown field "vpcId" in cluster`}},
		{"UTF-16 cut in a character", utf16LE(lines(hdrAPI, hdrKind))[:11], 1,
			[]string{"invalid UTF-16"}},
		{"many problems: the first ten and a count", lines(hdrAPI, hdrKind, "a: 1", "b: 1", "c: 1", "d: 1", "e: 1", "f: 1", "g: 1", "h: 1", "i: 1", "j: 1", "k: 1", "l: 1"), 3,
			[]string{`unknown field "a"`, `line 12: unknown field "j"`, "and 2 more problems"}},
		{"not a mapping", lines("- " + hdrAPI), 1, []string{"expected a ClusterFacts mapping"}},
		{"scalar document", lines("hello"), 1, []string{"expected a ClusterFacts mapping"}},

		{"wrong apiVersion", lines("apiVersion: karpenter-guard.io/v1", hdrKind), 1,
			[]string{`apiVersion "karpenter-guard.io/v1"`, "expected apiVersion karpenter-guard.io/v1alpha1 and kind ClusterFacts"}},
		{"wrong kind", lines(hdrAPI, "kind: ClusterFact"), 2,
			[]string{`kind "ClusterFact"`, "expected apiVersion karpenter-guard.io/v1alpha1 and kind ClusterFacts"}},
		{"no apiVersion nor kind", lines("cluster:", "  name: a"), 1, []string{`apiVersion ""`, "expected apiVersion"}},

		{"unknown top-level field", lines(hdrAPI, hdrKind, "cluster:", "  name: a", "subnet: []"), 5,
			[]string{`unknown field "subnet" in ClusterFacts`, "expected apiVersion, kind, cluster, accessEntries, awsAuth, roles, instanceProfiles, images, ssmParameters, subnets, securityGroups, ebsDefaults, karpenterController, vpcCNI, simulations"}},
		{"podIdentityAssociations quoted", lines(hdrAPI, hdrKind, "cluster:", "  podIdentityAssociations: \"3\""), 4,
			[]string{`cluster.podIdentityAssociations: "3": expected a whole number such as 5`}},
		{"podIdentityAssociations negative", lines(hdrAPI, hdrKind, "cluster:", "  podIdentityAssociations: -1"), 4,
			[]string{`cluster.podIdentityAssociations: -1 (a number): expected a whole number such as 5`}},
		{"podIdentityAssociations a fraction", lines(hdrAPI, hdrKind, "cluster:", "  podIdentityAssociations: 1.5"), 4,
			[]string{`cluster.podIdentityAssociations: 1.5 (a number): expected a whole number such as 5`}},
		{"podIdentityAssociations in hex", lines(hdrAPI, hdrKind, "cluster:", "  podIdentityAssociations: 0x10"), 4,
			[]string{`cluster.podIdentityAssociations: 0x10 (a number): expected a whole number such as 5`}},
		{"karpenterController role not an ARN", lines(hdrAPI, hdrKind, "karpenterController:", "  roleArn: KarpenterController", "  source: irsa"), 4,
			[]string{`karpenterController.roleArn "KarpenterController" is not an IAM role ARN`}},
		{"karpenterController unknown source", lines(hdrAPI, hdrKind, "karpenterController:", "  roleArn: arn:aws:iam::111122223333:role/k", "  source: IRSA"), 5,
			[]string{`karpenterController.source "IRSA": expected irsa, podIdentity or config`}},
		{"karpenterController serviceAccount without a namespace", lines(hdrAPI, hdrKind, "karpenterController:", "  serviceAccount: karpenter", "  roleArn: arn:aws:iam::111122223333:role/k", "  source: irsa"), 4,
			[]string{`karpenterController.serviceAccount "karpenter": expected namespace/name`}},
		{"vpcCNI irsa without a role", lines(hdrAPI, hdrKind, "vpcCNI:", "  present: true", "  credentials: irsa"), 5,
			[]string{`vpcCNI.roleArn "": credentials irsa need the IAM role ARN aws-node acts as`}},
		{"vpcCNI present not a boolean", lines(hdrAPI, hdrKind, "vpcCNI:", "  present: yes"), 4,
			[]string{`vpcCNI.present: "yes": expected true or false`}},
		{"simulation with an unknown decision", lines(hdrAPI, hdrKind, "simulations:", "  - principal: arn:aws:iam::111122223333:role/k", "    action: iam:PassRole", "    resource: '*'", "    decision: denied"), 7,
			[]string{`simulations[0].decision "denied": expected allowed, implicitDeny or explicitDeny`}},
		{"simulation without a resource", lines(hdrAPI, hdrKind, "simulations:", "  - principal: arn:aws:iam::111122223333:role/k", "    action: iam:PassRole", "    decision: allowed"), 4,
			[]string{`simulations[0] needs principal, action and resource`}},
		{"simulation context value not a list", lines(hdrAPI, hdrKind, "simulations:", "  - principal: arn:aws:iam::111122223333:role/k", "    action: iam:PassRole", "    resource: '*'", "    context: {iam:PassedToService: ec2.amazonaws.com}", "    decision: allowed"), 7,
			[]string{`simulations[0].context["iam:PassedToService"]: "ec2.amazonaws.com": expected a list of strings`}},
		{"the same simulation twice, context in another order", lines(hdrAPI, hdrKind, "simulations:",
			"  - {principal: 'arn:aws:iam::111122223333:role/k', action: ec2:RunInstances, resource: '*', context: {a: [x, y], b: [z]}, decision: allowed}",
			"  - {principal: 'arn:aws:iam::111122223333:role/k', action: EC2:RunInstances, resource: '*', context: {b: [z], a: [y, x]}, decision: implicitDeny}"), 5,
			[]string{`simulations[1] asks the same question as simulations[0]`}},
		{"ebsDefaults without a value", lines(hdrAPI, hdrKind, "ebsDefaults:"), 3,
			[]string{"ebsDefaults has no value: expected a mapping with encryptionByDefault, kmsKeyID; leave ebsDefaults out when it is unknown"}},
		{"ebsDefaults encryptionByDefault not a boolean", lines(hdrAPI, hdrKind, "ebsDefaults:", "  encryptionByDefault: \"yes\""), 4,
			[]string{`ebsDefaults.encryptionByDefault: "yes": expected true or false`}},
		{"ebsDefaults unknown field", lines(hdrAPI, hdrKind, "ebsDefaults:", "  encrypted: true"), 4,
			[]string{`unknown field "encrypted" in ebsDefaults: expected encryptionByDefault, kmsKeyID`}},
		{"ebsDefaults kmsKeyID not an ARN", lines(hdrAPI, hdrKind, "ebsDefaults:", "  encryptionByDefault: true", "  kmsKeyID: alias/aws/ebs"), 5,
			[]string{`ebsDefaults.kmsKeyID "alias/aws/ebs": expected the ARN of a KMS key or alias, as GetEbsDefaultKmsKeyId returns it`}},
		{"unknown cluster field", lines(hdrAPI, hdrKind, "cluster:", "  name: a", "  vpcId: vpc-1"), 5,
			[]string{`unknown field "vpcId" in cluster`, "name, region, partition, accountID, version, authenticationMode, vpcID", `did you mean "vpcID"?`}},
		// The same key appears earlier as a tag key and as a field of images[0]'s tags: the line must be
		// that of images[1].ownerId.
		{"unknown nested field after the same key elsewhere", lines(hdrAPI, hdrKind,
			"images:",
			"  - id: ami-1",
			"    ownerID: \"602401143452\"",
			"    tags: {ownerId: me}",
			"  - id: ami-2",
			"    name: x",
			"    ownerId: \"602401143452\""), 9,
			[]string{`unknown field "ownerId" in images[1]`, "expected id, name, ownerID, ownerAlias, architecture, state, creationDate, tags", `did you mean "ownerID"?`}},
		{"unknown field in an access entry", lines(hdrAPI, hdrKind, "accessEntries:", "  - principalArn: arn:aws:iam::111122223333:role/r", "    type: EC2_LINUX", "    groups: [a]"), 6,
			[]string{`unknown field "groups" in accessEntries[0]`, "principalArn, type, username, kubernetesGroups, createdAt"}},
		{"duplicate key", lines(hdrAPI, hdrKind, "cluster:", "  name: a", "  region: x", "  name: b"), 6,
			[]string{`cluster: key "name" appears twice (first at line 4)`}},
		{"non-string key", lines(hdrAPI, hdrKind, "subnets:", "  - id: subnet-1", "    tags: {1234: x}"), 5,
			[]string{"subnets[0].tags: key 1234 (a number): expected a string key"}},

		{"accountID as a number", lines(hdrAPI, hdrKind, "cluster:", "  name: a", "  accountID: 111122223333"), 5,
			[]string{"cluster.accountID: 111122223333 (a number): expected a string", `quote it: "111122223333"`}},
		{"version as a number", lines(hdrAPI, hdrKind, "cluster:", "  version: 1.30"), 4,
			[]string{"cluster.version: 1.30 (a number): expected a string", `quote it: "1.30"`}},
		{"accountID not 12 digits", lines(hdrAPI, hdrKind, "cluster:", "  name: a", `  accountID: "11112222333"`), 5,
			[]string{`cluster.accountID "11112222333": expected 12 digits`}},
		{"version not a minor", lines(hdrAPI, hdrKind, "cluster:", `  version: "v1.33"`), 4,
			[]string{`cluster.version "v1.33": expected the Kubernetes minor such as "1.33"`}},
		// A string "yes" appears earlier (a tag value): the line must be the one of public.
		{"public as the string yes", lines(hdrAPI, hdrKind, "subnets:",
			"  - id: subnet-1",
			`    tags: {private: "yes"}`,
			`    public: false`,
			"  - id: subnet-2",
			`    public: "yes"`), 8,
			[]string{`subnets[1].public: "yes": expected true or false`}},
		{"public as plain yes", lines(hdrAPI, hdrKind, "subnets:", "  - id: subnet-1", "    public: yes"), 5,
			[]string{`subnets[0].public: "yes": expected true or false`}},
		{"mapPublicIpOnLaunch null", lines(hdrAPI, hdrKind, "subnets:", "  - id: subnet-1", "    mapPublicIpOnLaunch: ~"), 5,
			[]string{"subnets[0].mapPublicIpOnLaunch: null: expected true or false"}},
		{"createdAt not a timestamp", lines(hdrAPI, hdrKind, "accessEntries:",
			"  - principalArn: arn:aws:iam::111122223333:role/r",
			"    type: EC2_LINUX",
			`    createdAt: "yesterday"`), 6,
			[]string{`accessEntries[0].createdAt: "yesterday" is not a timestamp: expected a timestamp such as "2025-06-01T10:00:00Z"`}},
		{"createDate a number", lines(hdrAPI, hdrKind, "roles:", "  - name: r", "    arn: arn:aws:iam::111122223333:role/r", "    createDate: 20250601"), 6,
			[]string{"roles[0].createDate: 20250601 (a number): expected a timestamp"}},
		{"tags as a list", lines(hdrAPI, hdrKind, "subnets:", "  - id: subnet-1", "    tags:", "      - karpenter.sh/discovery"), 6,
			[]string{"subnets[0].tags: a list: expected a mapping of strings to strings"}},
		{"tag value a number", lines(hdrAPI, hdrKind, "securityGroups:", "  - id: sg-1", "    tags: {cost-center: 1234}"), 5,
			[]string{`securityGroups[0].tags["cost-center"]: 1234 (a number): expected a string`}},
		{"kubernetesGroups a string", lines(hdrAPI, hdrKind, "accessEntries:", "  - principalArn: arn:aws:iam::111122223333:role/r", "    type: STANDARD", "    kubernetesGroups: system:masters"), 6,
			[]string{`accessEntries[0].kubernetesGroups: "system:masters": expected a list of strings`}},
		{"roles a mapping", lines(hdrAPI, hdrKind, "roles:", "  name: r"), 4,
			[]string{"roles: a mapping: expected a list"}},
		{"awsAuth a list", lines(hdrAPI, hdrKind, "awsAuth:", "  - mapRoles"), 4,
			[]string{"awsAuth: a list: expected a mapping of strings to strings"}},
		{"section without value", lines(hdrAPI, hdrKind, "roles:", "images: []"), 3,
			[]string{"roles has no value: expected a list; write [] when there are none; leave roles out when it is unknown"}},
		{"cluster a string", lines(hdrAPI, hdrKind, "cluster: prod"), 3,
			[]string{`cluster: "prod": expected a mapping with name, region`}},
		{"list item a string", lines(hdrAPI, hdrKind, "roles:", "  - r"), 4,
			[]string{`roles[0]: "r": expected a mapping with name, path, arn, createDate`}},
		{"custom tag", lines(hdrAPI, hdrKind, "cluster:", "  name: !Ref Cluster"), 4,
			[]string{`cluster.name: "Cluster" (tagged !Ref): expected a string`}},

		{"explicit tag the value does not fit", lines(hdrAPI, hdrKind, "subnets:", "  - id: subnet-1", "    public: !!bool yes"), 5,
			[]string{`subnets[0].public: "yes" tagged !!bool: cannot decode`}},
		{"explicit timestamp tag on a bad date", lines(hdrAPI, hdrKind, "roles:", "  - name: r", "    createDate: !!timestamp soon"), 5,
			[]string{`roles[0].createDate: "soon" tagged !!timestamp`}},
		{"alias cycle", lines(hdrAPI, hdrKind, "roles: &r [*r]"), 3,
			[]string{"alias *r is inside the value of its own anchor &r (line 3), so that value never ends"}},
		{"merge of a scalar", lines(hdrAPI, hdrKind, "subnets:", "  - id: subnet-1", "    <<: defaults"), 5,
			[]string{`merge key (<<): "defaults": expected a mapping or a list of mappings`}},
		{"merge of an alias to a list", lines(hdrAPI, hdrKind, "securityGroups: &l [{id: sg-1}]", "subnets:", "  - id: subnet-1", "    <<: *l"), 6,
			[]string{"merge key (<<): an alias to a list: expected a mapping or a list of mappings"}},
		{"merge of a list holding a scalar", lines(hdrAPI, hdrKind, "subnets:", "  - id: subnet-1", "    <<: [{vpcID: vpc-1}, x]"), 5,
			[]string{`merge key (<<): "x": expected a mapping`}},
		{"unknown field brought by a merge", lines(hdrAPI, hdrKind, "images:",
			"  - id: ami-1",
			"    tags: &t",
			"      team: a",
			"  - <<: *t",
			"    id: ami-2"), 6,
			[]string{`unknown field "team" in images[1]`}},
		{"misspelt image state", lines(hdrAPI, hdrKind, "images:", "  - id: ami-1", "    state: availble"), 5,
			[]string{`images[0].state "availble"`, "expected available"}},
		{"unknown image architecture", lines(hdrAPI, hdrKind, "images:", "  - id: ami-1", "    state: available", "    architecture: aarch64"), 6,
			[]string{`images[0].architecture "aarch64"`, "expected x86_64, arm64"}},
		{"invalid authenticationMode", lines(hdrAPI, hdrKind, "cluster:", "  name: a", "  authenticationMode: CONFIGMAP"), 5,
			[]string{`cluster.authenticationMode "CONFIGMAP": expected CONFIG_MAP, API or API_AND_CONFIG_MAP`}},
		{"invalid access entry type", lines(hdrAPI, hdrKind, "accessEntries:", "  - principalArn: arn:aws:iam::111122223333:role/r", "    type: EC2_LINUXX"), 5,
			[]string{`accessEntries[0].type "EC2_LINUXX": expected STANDARD, EC2_LINUX`}},

		{"duplicate image ids", lines(hdrAPI, hdrKind, "images:", "  - id: ami-1", "    name: a", "  - id: ami-2", "  - id: ami-1"), 7,
			[]string{`images[2].id "ami-1" duplicates images[0]`}},
		{"image without id", lines(hdrAPI, hdrKind, "images:", "  - id: ami-1", "  - name: a"), 5,
			[]string{"images[1] has no id"}},
		{"duplicate subnet ids", lines(hdrAPI, hdrKind, "subnets:", "  - id: subnet-1", "  - id: subnet-1"), 5,
			[]string{`subnets[1].id "subnet-1" duplicates subnets[0]`}},
		{"duplicate security group ids", lines(hdrAPI, hdrKind, "securityGroups:", "  - id: sg-1", "    name: a", "  - id: sg-1", "    name: b"), 6,
			[]string{`securityGroups[1].id "sg-1" duplicates securityGroups[0]`}},
		{"duplicate role names, case-insensitively", lines(hdrAPI, hdrKind, "roles:",
			"  - name: NodeRole",
			"    arn: arn:aws:iam::111122223333:role/NodeRole",
			"  - name: noderole",
			"    arn: arn:aws:iam::111122223333:role/noderole"), 6,
			[]string{`roles[1].name "noderole" duplicates roles[0]`}},
		{"duplicate instance profiles", lines(hdrAPI, hdrKind, "instanceProfiles:", "  - name: P", "    roles: []", "  - name: p", "    roles: []"), 6,
			[]string{`instanceProfiles[1].name "p" duplicates instanceProfiles[0]`}},
		{"duplicate access entries", lines(hdrAPI, hdrKind, "accessEntries:",
			"  - principalArn: arn:aws:iam::111122223333:role/r",
			"    type: EC2_LINUX",
			"  - principalArn: arn:aws:iam::111122223333:role/r",
			"    type: STANDARD"), 6,
			[]string{`accessEntries[1].principalArn "arn:aws:iam::111122223333:role/r" duplicates accessEntries[0]`}},

		{"role arn of another role", lines(hdrAPI, hdrKind, "roles:", "  - name: NodeRole", "    arn: arn:aws:iam::111122223333:role/OtherRole"), 5,
			[]string{`roles[0].arn "arn:aws:iam::111122223333:role/OtherRole" is not the ARN of a role named "NodeRole"`}},
		{"role arn of an instance profile", lines(hdrAPI, hdrKind, "roles:", "  - name: NodeRole", "    arn: arn:aws:iam::111122223333:instance-profile/NodeRole"), 5,
			[]string{`roles[0].arn "arn:aws:iam::111122223333:instance-profile/NodeRole" is not the ARN of a role named "NodeRole"`}},
		{"role arn with a short account", lines(hdrAPI, hdrKind, "roles:", "  - name: NodeRole", "    arn: arn:aws:iam::1111:role/NodeRole"), 5,
			[]string{`is not the ARN of a role named "NodeRole"`}},
		{"principalArn a role name", lines(hdrAPI, hdrKind, "accessEntries:", "  - principalArn: KarpenterNodeRole", "    type: EC2_LINUX"), 4,
			[]string{`accessEntries[0].principalArn "KarpenterNodeRole" is not an IAM role or user ARN`}},
		{"principalArn an EKS ARN", lines(hdrAPI, hdrKind, "accessEntries:", "  - principalArn: arn:aws:eks:us-east-1:111122223333:cluster/prod", "    type: EC2_LINUX"), 4,
			[]string{"is not an IAM role or user ARN"}},
		{"instance profile arn of a role", lines(hdrAPI, hdrKind, "instanceProfiles:", "  - name: P", "    arn: arn:aws:iam::111122223333:role/P", "    roles: []"), 5,
			[]string{`instanceProfiles[0].arn "arn:aws:iam::111122223333:role/P" is not the ARN of an instance profile named "P"`}},
		{"instance profile arn of another profile", lines(hdrAPI, hdrKind, "instanceProfiles:", "  - name: P", "    arn: arn:aws:iam::111122223333:instance-profile/Q"), 5,
			[]string{`is not the ARN of an instance profile named "P"`}},

		{"several problems: first line, every message", lines(hdrAPI, hdrKind, "cluster:",
			"  authenticationMode: api",
			"subnets:",
			"  - id: subnet-1",
			"  - id: subnet-1"), 4,
			[]string{`cluster.authenticationMode "api"`, `line 7: subnets[1].id "subnet-1" duplicates subnets[0]`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cf, err := DecodeSnapshotFile([]byte(tc.in))
			if err == nil {
				t.Fatalf("accepted, want an error at line %d; decoded %+v", tc.line, cf)
			}
			var se *SnapshotError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v, want a *SnapshotError", err, err)
			}
			if se.Line != tc.line {
				t.Errorf("line %d, want %d (message %q)", se.Line, tc.line, se.Message)
			}
			for _, w := range tc.want {
				if !strings.Contains(se.Message, w) {
					t.Errorf("message %q lacks %q", se.Message, w)
				}
			}
			if strings.HasPrefix(se.Message, "line ") {
				t.Errorf("message %q repeats the line: the SnapshotError carries it", se.Message)
			}
		})
	}
}

// TestDecodeSnapshotFileAccepts: valid variations that must not be refused, with what they decode to.
func TestDecodeSnapshotFileAccepts(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		check func(t *testing.T, cf *ClusterFacts)
	}{
		{"minimal", lines(hdrAPI, hdrKind), func(t *testing.T, cf *ClusterFacts) {
			if cf.Cluster != nil || cf.Roles != nil || cf.AWSAuth != nil || cf.Images != nil {
				t.Errorf("absent sections must stay nil: %+v", cf)
			}
		}},
		{"UTF-16 big-endian", utf16BE(lines(hdrAPI, hdrKind, "cluster:", "  name: prod-é")), func(t *testing.T, cf *ClusterFacts) {
			if cf.Cluster == nil || cf.Cluster.Name != "prod-é" {
				t.Errorf("cluster %+v", cf.Cluster)
			}
		}},
		{"trailing document marker", lines(hdrAPI, hdrKind, "---"), nil},
		{"leading document marker", lines("---", hdrAPI, hdrKind), nil},
		{"empty sections", lines(hdrAPI, hdrKind, "roles: []", "awsAuth: {}", "images: []", "ssmParameters: {}"), func(t *testing.T, cf *ClusterFacts) {
			if cf.Roles == nil || len(*cf.Roles) != 0 || cf.AWSAuth == nil || len(*cf.AWSAuth) != 0 || cf.Images == nil || cf.SSMParameters == nil {
				t.Errorf("present empty sections must be non-nil and empty: %+v", cf)
			}
		}},
		{"JSON", `{"apiVersion": "karpenter-guard.io/v1alpha1", "kind": "ClusterFacts", "cluster": {"accountID": "012345678901", "version": "1.30"},
		  "subnets": [{"id": "subnet-1", "public": true, "tags": {"a": "b"}}]}`, func(t *testing.T, cf *ClusterFacts) {
			if cf.Cluster.AccountID != "012345678901" || cf.Cluster.Version != "1.30" || !(*cf.Subnets)[0].Public {
				t.Errorf("JSON snapshot decoded wrong: %+v %+v", cf.Cluster, *cf.Subnets)
			}
		}},
		{"unquoted timestamp and null strings", lines(hdrAPI, hdrKind, "accessEntries:",
			"  - principalArn: arn:aws:iam::111122223333:user/admin",
			"    type: STANDARD",
			"    username: ~",
			"    createdAt: 2025-06-01T10:00:00Z",
			"images:",
			"  - id: ami-1",
			"    creationDate: 2025-11-12T00:00:00Z",
			"    ownerAlias:"), func(t *testing.T, cf *ClusterFacts) {
			e := (*cf.AccessEntries)[0]
			if !e.CreatedAt.Equal(time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)) || e.Username != "" {
				t.Errorf("entry %+v", e)
			}
			if img := (*cf.Images)[0]; img.CreationDate != "2025-11-12T00:00:00Z" || img.OwnerAlias != "" {
				t.Errorf("image %+v", img)
			}
		}},
		{"anchors, aliases and merge keys", lines(hdrAPI, hdrKind, "subnets:",
			"  - &base",
			"    id: subnet-1",
			"    vpcID: vpc-1",
			"    tags: &tags {karpenter.sh/discovery: prod}",
			"  - <<: *base",
			"    id: subnet-2",
			"    tags: *tags"), func(t *testing.T, cf *ClusterFacts) {
			s := *cf.Subnets
			if len(s) != 2 || s[1].ID != "subnet-2" || s[1].VPCID != "vpc-1" || s[1].Tags["karpenter.sh/discovery"] != "prod" {
				t.Errorf("subnets %+v", s)
			}
		}},
		{"ebsDefaults with a key ARN", lines(hdrAPI, hdrKind, "ebsDefaults:", "  encryptionByDefault: true",
			"  kmsKeyID: arn:aws-us-gov:kms:us-gov-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"), func(t *testing.T, cf *ClusterFacts) {
			if d := cf.EBSDefaults; d == nil || !d.EncryptionByDefault || d.KMSKeyID != "arn:aws-us-gov:kms:us-gov-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab" {
				t.Errorf("ebsDefaults %+v", d)
			}
		}},
		{"ebsDefaults without a key", lines(hdrAPI, hdrKind, "ebsDefaults: {encryptionByDefault: false}"), func(t *testing.T, cf *ClusterFacts) {
			if d := cf.EBSDefaults; d == nil || d.EncryptionByDefault || d.KMSKeyID != "" {
				t.Errorf("ebsDefaults %+v", d)
			}
		}},
		{"assumed-role and user principals, role with a path", lines(hdrAPI, hdrKind, "accessEntries:",
			"  - principalArn: arn:aws:sts::111122223333:assumed-role/Admin/session",
			"    type: STANDARD",
			"  - principalArn: arn:aws-cn:iam::111122223333:user/ops/alice",
			"    type: STANDARD",
			"roles:",
			"  - name: AWSServiceRoleForEC2Spot",
			"    path: /aws-service-role/spot.amazonaws.com/",
			"    arn: arn:aws:iam::111122223333:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cf, err := DecodeSnapshotFile([]byte(tc.in))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.check != nil {
				tc.check(t, cf)
			}
		})
	}
}

// TestDecodeSnapshotLineOffset: a ClusterFacts document that is the third document of a file, decoded
// on its own as the manifest reader does (its text from its "---" line, lineOffset = lines before it),
// reports file lines.
func TestDecodeSnapshotLineOffset(t *testing.T) {
	before := lines(
		"apiVersion: v1",
		"kind: ConfigMap",
		"metadata: {name: a}",
		"---",
		"apiVersion: karpenter.sh/v1",
		"kind: NodePool",
		"metadata: {name: b}",
		"---", // line 8: the third document starts here
	)
	cases := []struct {
		name string
		doc  string // the third document, after its "---" line
		line int    // in the whole file
		want string
	}{
		{"unknown field", lines(hdrAPI, hdrKind, "cluster:", "  name: a", "  vpcId: x"), 13, `unknown field "vpcId" in cluster`},
		{"wrong type", lines(hdrAPI, hdrKind, "subnets:", "  - id: s", `    public: "yes"`), 13, `subnets[0].public: "yes"`},
		{"invalid mode", lines(hdrAPI, hdrKind, "cluster:", "  authenticationMode: X"), 12, `cluster.authenticationMode "X"`},
		{"duplicate id", lines(hdrAPI, hdrKind, "images:", "  - id: ami-1", "  - id: ami-1"), 13, `images[1].id "ami-1" duplicates images[0]`},
		{"wrong kind", lines(hdrAPI, "kind: NodePool"), 10, `kind "NodePool"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := before + tc.doc
			offset := strings.Count(before, "\n") - 1 // the document's text starts with its "---" line
			var n yaml.Node
			if err := yaml.Unmarshal([]byte("---\n"+tc.doc), &n); err != nil {
				t.Fatal(err)
			}
			_, err := DecodeSnapshot(n.Content[0], offset)
			var se *SnapshotError
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a *SnapshotError", err)
			}
			if se.Line != tc.line {
				t.Errorf("line %d, want %d (%q)\n%s", se.Line, tc.line, se.Message, file)
			}
			if got := strings.Split(file, "\n")[se.Line-1]; !strings.Contains(se.Message, tc.want) {
				t.Errorf("message %q lacks %q (file line %d is %q)", se.Message, tc.want, se.Line, got)
			}
			// The same document decoded within the whole stream (node lines already file lines, offset 0)
			// reports the same line.
			dec := yaml.NewDecoder(strings.NewReader(file))
			var doc yaml.Node
			for i := 0; i < 3; i++ {
				if err := dec.Decode(&doc); err != nil {
					t.Fatal(err)
				}
			}
			_, err = DecodeSnapshot(doc.Content[0], 0)
			if !errors.As(err, &se) || se.Line != tc.line {
				t.Errorf("decoded within the stream: %v, want line %d", err, tc.line)
			}
		})
	}
}
