package rules_test

import (
	"strings"
)

// This file holds the shared ClusterFacts fixture of the fact rules' tests: the production cluster
// prod-eks (us-east-1, account 111122223333, Kubernetes 1.33, VPC vpc-0a1b2c3d) as
// `karpenter-guard facts export` would write it, built from sections that each case can replace.
// With no options the world is healthy: the node roles are authorized, the aliases resolve, the
// discovery tags select private subnets and the node security group of the cluster's VPC.

const (
	account     = "111122223333"
	clusterVPC  = "vpc-0a1b2c3d"
	otherVPC    = "vpc-0ffee1234"
	eksOwner    = "602401143452" // the EKS AMI account of us-east-1 (docs/design.md §4)
	winOwner    = "801119661308" // the Windows AMI account (ownerAlias amazon)
	nodeRole    = "KarpenterNodeRole-prod-eks"
	nodeRoleARN = "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks"
	// winRole is the Windows node role (EC2_WINDOWS entry, aws-auth with eks:kube-proxy-windows).
	winRole    = "KarpenterNodeRole-windows-prod-eks"
	winRoleARN = "arn:aws:iam::111122223333:role/KarpenterNodeRole-windows-prod-eks"
	// teamRole lives under an IAM path: EKS sees its nodes as teamRolePathless.
	teamRole         = "KarpenterNodeRole-platform"
	teamRoleARN      = "arn:aws:iam::111122223333:role/teams/platform/KarpenterNodeRole-platform"
	teamRolePathless = "arn:aws:iam::111122223333:role/KarpenterNodeRole-platform"
	// legacyRole exists but nothing authorizes it; legacyProfile holds it.
	legacyRole    = "LegacyNodeRole"
	legacyRoleARN = "arn:aws:iam::111122223333:role/LegacyNodeRole"
	nodeProfile   = "KarpenterNodeInstanceProfile-prod-eks"
	legacyProfile = "LegacyNodeInstanceProfile"
	emptyProfile  = "KarpenterNodeInstanceProfile-staging"
	adminRoleARN  = "arn:aws:iam::111122223333:role/PlatformAdmin"
	oldNodesARN   = "arn:aws:iam::111122223333:role/eksctl-prod-eks-nodegroup-ng-1-NodeInstanceRole"

	// Images.
	al2023x86   = "ami-0aa11bb22cc33dd44"
	al2023arm   = "ami-0aa11bb22cc33dd55"
	al2x86      = "ami-0bb22cc33dd44ee55"
	brX86       = "ami-0cc33dd44ee55ff66"
	brArm       = "ami-0cc33dd44ee55ff77"
	win2022     = "ami-0dd44ee55ff660011"
	lookAlike   = "ami-0ee55ff6600112233"
	teamImage   = "ami-0ff6600112233aa44"
	teamPending = "ami-0ff6600112233aa55"
	vendorImage = "ami-01122334455667788"

	// Subnets and security groups.
	privateA   = "subnet-0a1b2c3d4e5f60001"
	privateB   = "subnet-0a1b2c3d4e5f60002"
	publicA    = "subnet-0a1b2c3d4e5f60003"
	publicB    = "subnet-0a1b2c3d4e5f60004"
	sharedSub  = "subnet-0ffee12340000001"
	clusterSG  = "sg-0a1b2c3d4e5f60001"
	nodeSG     = "sg-0a1b2c3d4e5f60002"
	legacySG   = "sg-0ffee12340000001"
	nodeGroups = "[system:bootstrappers, system:nodes]"
)

// world is a ClusterFacts document under construction.
type world struct {
	cluster map[string]string // "" drops the field
	// sections holds each top-level section's YAML, key included; "" leaves the section out (unknown).
	sections map[string]string
}

type factsOpt func(*world)

var (
	clusterKeys = []string{"name", "region", "partition", "accountID", "version", "authenticationMode", "vpcID", "podIdentityAssociations",
		"endpointPublicAccess", "endpointPrivateAccess", "publicAccessCidrs", "clusterSecurityGroupID", "securityGroupIDs", "subnetIDs", "ipFamily"}
	sectionOrder = []string{"accessEntries", "awsAuth", "roles", "instanceProfiles", "images", "ssmParameters", "subnets", "securityGroups", "ebsDefaults",
		"vpc", "natGateways", "vpcEndpoints", "kmsKeys", "serviceQuotas", "capacityReservations", "instanceTypes", "vpcCNI"}
)

// clusterFacts renders the prod-eks snapshot with the options applied.
func clusterFacts(opts ...factsOpt) string {
	w := &world{
		cluster: map[string]string{
			"name": "prod-eks", "region": "us-east-1", "partition": "aws", "accountID": `"` + account + `"`,
			"version": `"1.33"`, "authenticationMode": "API_AND_CONFIG_MAP", "vpcID": clusterVPC,
		},
		sections: map[string]string{
			"accessEntries":    list("accessEntries", defaultEntries()...),
			"awsAuth":          mapRoles(defaultMappings()...),
			"roles":            list("roles", defaultRoles()...),
			"instanceProfiles": list("instanceProfiles", defaultProfiles()...),
			"images":           list("images", defaultImages()...),
			"ssmParameters":    defaultSSM,
			"subnets":          list("subnets", defaultSubnets()...),
			"securityGroups":   list("securityGroups", defaultGroups()...),
			"ebsDefaults":      defaultEBS,
			// The network and capacity sections: unknown unless a case's options give them
			// (network_fixtures_test.go).
			"vpc": "", "natGateways": "", "vpcEndpoints": "", "kmsKeys": "", "serviceQuotas": "",
			"capacityReservations": "", "instanceTypes": "", "vpcCNI": "",
		},
	}
	for _, o := range opts {
		o(w)
	}
	var b strings.Builder
	b.WriteString("apiVersion: karpenter-guard.io/v1alpha1\nkind: ClusterFacts\n")
	if w.cluster != nil {
		b.WriteString("cluster:\n")
		for _, k := range clusterKeys {
			if v := w.cluster[k]; v != "" {
				b.WriteString("  " + k + ": " + v + "\n")
			}
		}
	}
	for _, s := range sectionOrder {
		b.WriteString(w.sections[s])
	}
	return b.String()
}

// mode sets cluster.authenticationMode ("" makes it unknown).
func mode(m string) factsOpt { return func(w *world) { w.cluster["authenticationMode"] = m } }

// k8sVersion sets cluster.version ("" makes it unknown).
func k8sVersion(v string) factsOpt {
	return func(w *world) {
		if v != "" {
			v = `"` + v + `"`
		}
		w.cluster["version"] = v
	}
}

// clusterField sets (or with "" drops) one field of the cluster section.
func clusterField(k, v string) factsOpt { return func(w *world) { w.cluster[k] = v } }

// noCluster leaves the cluster section out.
func noCluster() factsOpt { return func(w *world) { w.cluster = nil } }

// without leaves sections out: they become unknown.
func without(sections ...string) factsOpt {
	return func(w *world) {
		for _, s := range sections {
			if _, ok := w.sections[s]; !ok {
				panic("no section " + s)
			}
			w.sections[s] = ""
		}
	}
}

// section replaces a section with the given YAML (key included).
func section(name, yaml string) factsOpt {
	return func(w *world) {
		if _, ok := w.sections[name]; !ok {
			panic("no section " + name)
		}
		w.sections[name] = yaml
	}
}

// entries replaces the access entries; none at all renders `accessEntries: []` (known: none exist).
func entries(items ...string) factsOpt {
	return section("accessEntries", list("accessEntries", items...))
}

// withAWSAuth replaces the aws-auth data by a mapRoles value holding the given entries.
func withAWSAuth(mappings ...string) factsOpt { return section("awsAuth", mapRoles(mappings...)) }

// noConfigMap says the cluster has no aws-auth ConfigMap (known, empty).
func noConfigMap() factsOpt { return section("awsAuth", "awsAuth: {}\n") }

// roles replaces the roles; profiles and images likewise.
func roles(items ...string) factsOpt { return section("roles", list("roles", items...)) }
func profiles(items ...string) factsOpt {
	return section("instanceProfiles", list("instanceProfiles", items...))
}
func images(items ...string) factsOpt  { return section("images", list("images", items...)) }
func subnets(items ...string) factsOpt { return section("subnets", list("subnets", items...)) }

// list renders a sequence section; each item is one mapping written without the leading "- ".
func list(key string, items ...string) string {
	if len(items) == 0 {
		return key + ": []\n"
	}
	var b strings.Builder
	b.WriteString(key + ":\n")
	for _, it := range items {
		b.WriteString(indent(it, "  "))
	}
	return b.String()
}

// listItem renders one sequence item: "- first line", the others indented below it.
func listItem(lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		if i == 0 {
			b.WriteString("- " + l + "\n")
			continue
		}
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// entry renders an access entry for a principal.
func entry(principal, typ, createdAt string) string {
	lines := []string{"principalArn: " + principal, "type: " + typ}
	switch typ {
	case "EC2_LINUX", "EC2_WINDOWS":
		lines = append(lines, "username: system:node:{{EC2PrivateDNSName}}")
	case "STANDARD":
		lines = append(lines, "username: "+principal)
	}
	lines = append(lines, `createdAt: "`+createdAt+`"`)
	return listItem(lines...)
}

// role renders an IAM role; path "" means "/".
func role(name, path, createDate string) string {
	if path == "" {
		path = "/"
	}
	lines := []string{"name: " + name, "path: " + path, "arn: arn:aws:iam::" + account + ":role" + path + name}
	if createDate != "" {
		lines = append(lines, `createDate: "`+createDate+`"`)
	}
	return listItem(lines...)
}

// profile renders an instance profile holding roles.
func profile(name string, roles ...string) string {
	return listItem("name: "+name, "arn: arn:aws:iam::"+account+":instance-profile/"+name, "roles: ["+strings.Join(roles, ", ")+"]")
}

// image renders an EC2 image; alias is the owner alias ("amazon" for AWS, "" for accounts).
func image(id, name, ownerID, alias, arch, state, tags string) string {
	lines := []string{"id: " + id, "name: " + name, `ownerID: "` + ownerID + `"`}
	if alias != "" {
		lines = append(lines, "ownerAlias: "+alias)
	}
	lines = append(lines, "architecture: "+arch, "state: "+state, `creationDate: "2025-11-12T00:00:00Z"`)
	if tags != "" {
		lines = append(lines, "tags: "+tags)
	}
	return listItem(lines...)
}

func subnet(id, vpc, az string, mapPublic, public bool, tags string) string {
	b := map[bool]string{true: "true", false: "false"}
	return listItem("id: "+id, "vpcID: "+vpc, "availabilityZone: "+az, "mapPublicIpOnLaunch: "+b[mapPublic], "public: "+b[public], "tags: "+tags)
}

func group(id, name, vpc, tags string) string {
	return listItem("id: "+id, "name: "+name, "vpcID: "+vpc, "tags: "+tags)
}

// mapping renders one aws-auth mapRoles entry for a node role.
func mapping(roleARN, groups string) string {
	return "- rolearn: " + roleARN + "\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: " + groups + "\n"
}

// mapRoles renders the awsAuth section with a mapRoles value.
func mapRoles(mappings ...string) string {
	return "awsAuth:\n  mapRoles: |\n" + indent(strings.Join(mappings, ""), "    ")
}

func defaultEntries() []string {
	return []string{
		entry(adminRoleARN, "STANDARD", "2025-05-01T08:00:00Z"),
		entry(nodeRoleARN, "EC2_LINUX", "2025-06-01T10:00:00Z"),
		entry(teamRoleARN, "EC2_LINUX", "2025-06-01T10:00:00Z"),
		entry(winRoleARN, "EC2_WINDOWS", "2025-06-01T10:00:00Z"),
	}
}

func defaultMappings() []string {
	return []string{
		mapping(oldNodesARN, nodeGroups),
		mapping(nodeRoleARN, nodeGroups),
		mapping(teamRolePathless, nodeGroups),
		mapping(winRoleARN, "[system:bootstrappers, system:nodes, eks:kube-proxy-windows]"),
	}
}

func defaultRoles() []string {
	return []string{
		role(nodeRole, "/", "2025-05-30T09:00:00Z"),
		role(winRole, "/", "2025-05-30T09:00:00Z"),
		role(teamRole, "/teams/platform/", "2025-05-30T09:00:00Z"),
		role(legacyRole, "/", "2023-02-14T12:00:00Z"),
		role("PlatformAdmin", "/", "2024-01-10T12:00:00Z"),
		role("AWSServiceRoleForEC2Spot", "/aws-service-role/spot.amazonaws.com/", "2022-03-01T00:00:00Z"),
	}
}

func defaultProfiles() []string {
	return []string{
		profile(nodeProfile, nodeRole),
		profile(legacyProfile, legacyRole),
		profile(emptyProfile),
	}
}

func defaultImages() []string {
	return []string{
		image(al2023x86, "amazon-eks-node-al2023-x86_64-standard-1.33-v20251112", eksOwner, "amazon", "x86_64", "available", ""),
		image(al2023arm, "amazon-eks-node-al2023-arm64-standard-1.33-v20251112", eksOwner, "amazon", "arm64", "available", ""),
		image(al2x86, "amazon-eks-node-1.32-v20251108", eksOwner, "amazon", "x86_64", "available", ""),
		image(brX86, "bottlerocket-aws-k8s-1.33-x86_64-v1.50.0-1c3b5e3a", eksOwner, "amazon", "x86_64", "available", ""),
		image(brArm, "bottlerocket-aws-k8s-1.33-aarch64-v1.50.0-1c3b5e3a", eksOwner, "amazon", "arm64", "available", ""),
		image(win2022, "Windows_Server-2022-English-Core-EKS_Optimized-1.33-2025.11.12", winOwner, "amazon", "x86_64", "available", ""),
		// An image of the account itself named like a public EKS AMI (an old test copy): a name
		// term without owner picks it too.
		image(lookAlike, "amazon-eks-node-al2023-x86_64-standard-1.33-v20251201", account, "", "x86_64", "available", ""),
		image(teamImage, "platform-team-base-2025.11", account, "", "x86_64", "available", "{team: platform}"),
		image(teamPending, "platform-team-base-2025.12", account, "", "x86_64", "pending", "{team: platform}"),
		image(vendorImage, "cis-hardened-al2023-1.33-20251101", "210987654321", "", "x86_64", "available", "{vendor: cis}"),
	}
}

const defaultSSM = `ssmParameters:
  /aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id: ami-0aa11bb22cc33dd44
  /aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/recommended/image_id: ami-0aa11bb22cc33dd55
  /aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.33-v20251112/image_id: ami-0aa11bb22cc33dd44
  /aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.33-v20251112/image_id: ami-0aa11bb22cc33dd55
  /aws/service/bottlerocket/aws-k8s-1.33/x86_64/latest/image_id: ami-0cc33dd44ee55ff66
  /aws/service/bottlerocket/aws-k8s-1.33/arm64/latest/image_id: ami-0cc33dd44ee55ff77
  /aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.33/image_id: ami-0dd44ee55ff660011
  /aws/service/eks/optimized-ami/1.32/amazon-linux-2/recommended/image_id: ami-0bb22cc33dd44ee55
`

// EKS published no AL2 AMIs for 1.33 (docs/design.md §4), so the AL2 parameters above are 1.32's: al2@latest
// resolves only when a case sets the cluster to 1.32.

func defaultSubnets() []string {
	return []string{
		subnet(privateA, clusterVPC, "us-east-1a", false, false, "{karpenter.sh/discovery: prod-eks, Name: prod-eks-private-us-east-1a}"),
		subnet(privateB, clusterVPC, "us-east-1b", false, false, "{karpenter.sh/discovery: prod-eks, Name: prod-eks-private-us-east-1b}"),
		subnet(publicA, clusterVPC, "us-east-1a", true, true, "{kubernetes.io/role/elb: \"1\", Name: prod-eks-public-us-east-1a}"),
		subnet(publicB, clusterVPC, "us-east-1b", false, true, "{kubernetes.io/role/elb: \"1\", Name: prod-eks-public-us-east-1b}"),
		subnet(sharedSub, otherVPC, "us-east-1a", false, false, "{karpenter.sh/discovery: prod-eks-legacy, Name: shared-services-a}"),
	}
}

// defaultEBS is the account's EBS encryption by default: on, with AWS's own key.
const defaultEBS = "ebsDefaults:\n  encryptionByDefault: true\n  kmsKeyID: arn:aws:kms:us-east-1:111122223333:alias/aws/ebs\n"

func defaultGroups() []string {
	return []string{
		group(clusterSG, "eks-cluster-sg-prod-eks-1234567890", clusterVPC, "{aws:eks:cluster-name: prod-eks, kubernetes.io/cluster/prod-eks: owned}"),
		group(nodeSG, "prod-eks-node", clusterVPC, "{karpenter.sh/discovery: prod-eks}"),
		group(legacySG, "legacy-nodes", otherVPC, "{karpenter.sh/discovery: prod-eks-legacy}"),
	}
}

// eksSpec is a healthy EC2NodeClass spec for prod-eks; specWith replaces its lines.
const eksSpec = `amiSelectorTerms:
  - alias: al2023@latest
role: KarpenterNodeRole-prod-eks
subnetSelectorTerms:
  - tags:
      karpenter.sh/discovery: prod-eks
securityGroupSelectorTerms:
  - tags:
      karpenter.sh/discovery: prod-eks
`

// specWith returns eksSpec with old replaced by new (old must occur).
func specWith(pairs ...string) string {
	s := eksSpec
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			panic("specWith: " + pairs[i] + " not in the spec")
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

const (
	al2023Alias = "amiSelectorTerms:\n  - alias: al2023@latest\n"
	defaultRole = "role: KarpenterNodeRole-prod-eks\n"
	subnetTerms = "subnetSelectorTerms:\n  - tags:\n      karpenter.sh/discovery: prod-eks\n"
	groupTerms  = "securityGroupSelectorTerms:\n  - tags:\n      karpenter.sh/discovery: prod-eks\n"
)

// withAMI replaces the alias term by the given amiSelectorTerms block (amiFamily included if any).
func withAMI(block string) string { return specWith(al2023Alias, block) }

// withRole replaces the role line (by "instanceProfile: …" for instance-profile cases).
func withRole(line string) string { return specWith(defaultRole, line) }

const (
	windowsAlias  = "amiSelectorTerms:\n  - alias: windows2022@latest\n"
	windowsGroups = "[system:bootstrappers, system:nodes, eks:kube-proxy-windows]"
	// roleRecreated is when the node role was deleted and created again, after its access entry was made.
	roleRecreated = "2025-09-15T14:30:00Z"
)

// windowsSpec is a Windows 2022 class booting with role.
func windowsSpec(role string) string {
	return specWith(al2023Alias, windowsAlias, defaultRole, "role: "+role+"\n")
}

// subnetSel and groupSel replace eksSpec's subnet or security-group terms.
func subnetSel(terms string) string {
	return specWith(subnetTerms, "subnetSelectorTerms:\n"+terms)
}

func groupSel(terms string) string {
	return specWith(groupTerms, "securityGroupSelectorTerms:\n"+terms)
}

// amiTerms is eksSpec with its amiSelectorTerms block (amiFamily included) replaced.
func amiTerms(block string) string { return withAMI(block) }
