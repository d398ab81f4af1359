// Package corpus generates realistic manifest sets for benchmarks: EC2NodeClasses and NodePools in the
// shapes teams write, about one in five carrying a problem the rules find.
package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// NodeClass returns one EC2NodeClass document; i varies names and, every fifth, adds problems.
func NodeClass(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: class-%d
  annotations:
    team: platform-%d
spec:
  amiSelectorTerms:
`, i, i%7)
	ud := UserData
	if i%5 == 0 {
		// The CRD requires amiFamily without an alias. The problems: a name without an owner (warn), and
		// an AL2 bootstrap call on AL2023 (deny).
		b.WriteString("    - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n  amiFamily: AL2023\n")
		ud = strings.Replace(ud, "#!/bin/bash\n", "#!/bin/bash\n/etc/eks/bootstrap.sh prod-eks\n", 1)
	} else {
		b.WriteString("    - alias: al2023@v20251112\n")
	}
	fmt.Fprintf(&b, `  role: KarpenterNodeRole-team-%d
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: prod-eks
        tier: private
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: prod-eks
  metadataOptions:
    httpEndpoint: enabled
    httpTokens: required
  blockDeviceMappings:
    - deviceName: /dev/xvda
      rootVolume: true
      ebs:
        volumeSize: 100Gi
        volumeType: gp3
        encrypted: true
  kubelet:
    maxPods: 110
  userData: |
`, i%13)
	for _, line := range strings.SplitAfter(ud, "\n") {
		if strings.TrimSpace(line) != "" {
			b.WriteString("    ")
		}
		b.WriteString(line)
	}
	return b.String()
}

// UserData is the userData of every corpus EC2NodeClass: a MIME document with a NodeConfig part and
// a shell part, the shape AL2023 users write.
const UserData = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    config:
      shutdownGracePeriod: 30s
--//
Content-Type: text/x-shellscript

#!/bin/bash
echo "vm.max_map_count=262144" >> /etc/sysctl.conf
--//--
`

// NodePool returns one NodePool document referencing class-i.
func NodePool(i int) string {
	limits := "  limits:\n    cpu: \"1000\"\n    memory: 1000Gi\n"
	if i%5 == 0 {
		limits = ""
	}
	return fmt.Sprintf(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: pool-%d
spec:
  template:
    metadata:
      labels:
        team: platform-%d
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: class-%d
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64", "arm64"]
      expireAfter: 720h
%s  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
`, i, i%7, i, limits)
}

// Write writes n objects (half EC2NodeClasses, half NodePools) into dir, perFile documents per file.
func Write(dir string, n, perFile int) error {
	var docs []string
	for i := 0; i < n/2; i++ {
		docs = append(docs, NodeClass(i), NodePool(i))
	}
	for f := 0; f*perFile < len(docs); f++ {
		end := min((f+1)*perFile, len(docs))
		p := filepath.Join(dir, fmt.Sprintf("manifests-%04d.yaml", f))
		if err := os.WriteFile(p, []byte(strings.Join(docs[f*perFile:end], "---\n")), 0o644); err != nil {
			return fmt.Errorf("write corpus: %w", err)
		}
	}
	return nil
}

// Facts returns a realistic snapshot for the corpus's cluster prod-eks: the team roles the corpus's
// EC2NodeClasses use among others, entries access entries, images images (the pinned AL2023 release and
// look-alikes), subnets subnets of which half carry the discovery tag.
func Facts(images, subnets, entries int) *facts.ClusterFacts {
	const account = "111122223333"
	cf := &facts.ClusterFacts{
		APIVersion: facts.SnapshotAPIVersion, Kind: facts.SnapshotKind,
		Cluster: &facts.Cluster{Name: "prod-eks", Region: "us-east-1", Partition: "aws", AccountID: account,
			Version: "1.33", AuthenticationMode: facts.ModeAPIAndConfigMap, VPCID: "vpc-0a1b2c3d"},
	}
	var roles []facts.Role
	var acc []facts.AccessEntry
	for i := 0; i < entries; i++ {
		name := fmt.Sprintf("KarpenterNodeRole-team-%d", i)
		arn := "arn:aws:iam::" + account + ":role/" + name
		roles = append(roles, facts.Role{Name: name, Path: "/", ARN: arn})
		acc = append(acc, facts.AccessEntry{PrincipalARN: arn, Type: facts.EntryEC2Linux})
	}
	roles = append(roles, facts.Role{Name: "AWSServiceRoleForEC2Spot", Path: "/aws-service-role/spot.amazonaws.com/",
		ARN: "arn:aws:iam::" + account + ":role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot"})
	var mapRoles strings.Builder
	for i := 0; i < 13 && i < entries; i++ {
		fmt.Fprintf(&mapRoles, "- rolearn: arn:aws:iam::%s:role/KarpenterNodeRole-team-%d\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n", account, i)
	}
	auth := map[string]string{"mapRoles": mapRoles.String()}
	imgs := []facts.Image{
		{ID: "ami-0al2023x86", Name: "amazon-eks-node-al2023-x86_64-standard-1.33-v20251112", OwnerID: "602401143452", OwnerAlias: "amazon", Architecture: "x86_64", State: "available"},
		{ID: "ami-0al2023arm", Name: "amazon-eks-node-al2023-arm64-standard-1.33-v20251112", OwnerID: "602401143452", OwnerAlias: "amazon", Architecture: "arm64", State: "available"},
	}
	for i := len(imgs); i < images; i++ {
		imgs = append(imgs, facts.Image{ID: fmt.Sprintf("ami-%017d", i), Name: fmt.Sprintf("amazon-eks-node-al2023-x86_64-standard-1.%d-v2025%04d", 28+i%6, 101+i),
			OwnerID: "602401143452", OwnerAlias: "amazon", Architecture: "x86_64", State: "available"})
	}
	ssm := map[string]string{
		"/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.33-v20251112/image_id": "ami-0al2023x86",
		"/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.33-v20251112/image_id":   "ami-0al2023arm",
	}
	var sns []facts.Subnet
	for i := 0; i < subnets; i++ {
		tags := map[string]string{"Name": fmt.Sprintf("subnet-%d", i)}
		if i%2 == 0 {
			tags["karpenter.sh/discovery"] = "prod-eks"
			tags["tier"] = "private"
		}
		sns = append(sns, facts.Subnet{ID: fmt.Sprintf("subnet-%08d", i), VPCID: "vpc-0a1b2c3d", AvailabilityZone: "us-east-1a", Tags: tags})
	}
	sgs := []facts.SecurityGroup{{ID: "sg-0node", Name: "eks-node", VPCID: "vpc-0a1b2c3d", Tags: map[string]string{"karpenter.sh/discovery": "prod-eks"}}}
	profiles := []facts.InstanceProfile{}
	cf.Roles, cf.AccessEntries, cf.AWSAuth, cf.Images, cf.SSMParameters = &roles, &acc, &auth, &imgs, &ssm
	cf.Subnets, cf.SecurityGroups, cf.InstanceProfiles = &sns, &sgs, &profiles
	return cf
}

// ControllerRoleARN is the Karpenter controller's role in the corpus cluster (WithIdentities).
const ControllerRoleARN = "arn:aws:iam::111122223333:role/KarpenterController"

// WithIdentities adds to cf the identity facts the permission rules need where it has none: the node
// roles' trust policy (EC2 may assume them), the controller's role (IRSA), aws-node on the node's role,
// no Pod Identity association, and an empty simulations section (the AWS fake then answers every
// question from Policies, or with an implicit deny without them). It returns cf.
func WithIdentities(cf *facts.ClusterFacts) *facts.ClusterFacts {
	if cf.Roles != nil {
		for i := range *cf.Roles {
			if r := &(*cf.Roles)[i]; r.AssumeRolePolicyDocument == "" {
				r.AssumeRolePolicyDocument = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
			}
		}
	}
	if cf.KarpenterController == nil {
		cf.KarpenterController = &facts.ControllerRole{ServiceAccount: "kube-system/karpenter", RoleARN: ControllerRoleARN, Source: facts.CredentialsIRSA}
	}
	if cf.VPCCNI == nil {
		present := true
		cf.VPCCNI = &facts.CNI{Present: &present, Credentials: facts.CredentialsNodeRole}
	}
	if cf.Cluster != nil && cf.Cluster.PodIdentityAssociations == nil {
		none := 0
		cf.Cluster.PodIdentityAssociations = &none
	}
	if cf.Simulations == nil {
		cf.Simulations = &[]facts.Simulation{}
	}
	return cf
}

// Policies gives the controller and every role of cf a policy that allows everything, so that the AWS
// fake's simulator answers every question "allowed", as for an account whose roles are not narrowed.
func Policies(cf *facts.ClusterFacts) fakeaws.Policies {
	const allowAll = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`
	p := fakeaws.Policies{ControllerRoleARN: {Policies: []string{allowAll}}}
	if cf.Roles != nil {
		for _, r := range *cf.Roles {
			p[r.ARN] = fakeaws.PrincipalPolicies{Policies: []string{allowAll}}
		}
	}
	return p
}

// WithNetwork adds to cf the network and capacity facts of a healthy cluster where it has none: the
// cluster's endpoint (public and private) and control plane (the node group's own cluster security
// group, two control-plane subnets), the subnets spread over the six zones of us-east-1 with CIDRs,
// free addresses and a route to a NAT gateway, the node group's rules, the VPC's DNS attributes, no
// VPC endpoints, the account's EBS encryption with AWS's key, no capacity reservation, and types as
// the region's instance types. It returns cf.
func WithNetwork(cf *facts.ClusterFacts, types []facts.InstanceType) *facts.ClusterFacts {
	yes := true
	zones := []string{"us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f"}
	ids := []string{"use1-az1", "use1-az2", "use1-az4", "use1-az6", "use1-az3", "use1-az5"}
	if c := cf.Cluster; c != nil && c.SubnetIDs == nil {
		c.EndpointPublicAccess, c.EndpointPrivateAccess, c.PublicAccessCidrs = &yes, &yes, []string{"0.0.0.0/0"}
		c.ClusterSecurityGroupID, c.SecurityGroupIDs = "sg-0node", []string{}
		c.SubnetIDs, c.IPFamily = []string{"subnet-cp000001", "subnet-cp000002"}, "ipv4"
	}
	port := func(p int) *int { return &p }
	if cf.SecurityGroups != nil {
		for i := range *cf.SecurityGroups {
			g := &(*cf.SecurityGroups)[i]
			if !g.RulesKnown() {
				g.Ingress = []facts.SecurityGroupRule{{Protocol: "-1", GroupIDs: []string{g.ID}}, {Protocol: "tcp", FromPort: port(443), ToPort: port(443), CIDRs: []string{"10.0.0.0/16"}}}
				g.Egress = []facts.SecurityGroupRule{{Protocol: "-1", CIDRs: []string{"0.0.0.0/0"}}}
			}
		}
	}
	if cf.Subnets != nil {
		free := 4000
		for i := range *cf.Subnets {
			s := &(*cf.Subnets)[i]
			if s.RouteTableID != "" {
				continue
			}
			z := (i / 2) % len(zones) // the discovery tag is on every other subnet: those span every zone
			s.AvailabilityZone, s.AvailabilityZoneID = zones[z], ids[z]
			s.CIDRBlock = fmt.Sprintf("10.0.%d.0/24", 16+i%200)
			s.AvailableIPAddressCount = &free
			s.RouteTableID = fmt.Sprintf("rtb-0priv%d", z)
			s.Routes = []facts.Route{{Destination: "0.0.0.0/0", Target: fmt.Sprintf("nat-0%d", z), State: facts.RouteActive}}
		}
		for i, id := range []string{"subnet-cp000001", "subnet-cp000002"} {
			if slices.ContainsFunc(*cf.Subnets, func(s facts.Subnet) bool { return s.ID == id }) {
				continue // added by an earlier call
			}
			*cf.Subnets = append(*cf.Subnets, facts.Subnet{ID: id, VPCID: "vpc-0a1b2c3d", AvailabilityZone: zones[i], Tags: map[string]string{"Name": "control-plane"},
				SubnetNetwork: facts.SubnetNetwork{AvailabilityZoneID: ids[i], CIDRBlock: fmt.Sprintf("10.0.%d.0/28", 250+i), AvailableIPAddressCount: &free,
					RouteTableID: fmt.Sprintf("rtb-0priv%d", i), Routes: []facts.Route{{Destination: "0.0.0.0/0", Target: fmt.Sprintf("nat-0%d", i), State: facts.RouteActive}}}})
		}
	}
	if cf.VPC == nil {
		cf.VPC = &facts.VPCAttributes{EnableDNSSupport: &yes, EnableDNSHostnames: &yes}
	}
	if cf.NATGateways == nil {
		nats := []facts.NATGateway{}
		for z := range zones {
			nats = append(nats, facts.NATGateway{ID: fmt.Sprintf("nat-0%d", z), State: "available", ConnectivityType: "public", PublicIPs: []string{fmt.Sprintf("203.0.113.%d", 10+z)}})
		}
		cf.NATGateways = &nats
	}
	if cf.VPCEndpoints == nil {
		cf.VPCEndpoints = &[]facts.VPCEndpoint{}
	}
	if cf.EBSDefaults == nil {
		cf.EBSDefaults = &facts.EBSEncryption{EncryptionByDefault: false, KMSKeyID: "arn:aws:kms:us-east-1:111122223333:alias/aws/ebs"}
	}
	if cf.KMSKeys == nil {
		cf.KMSKeys = &[]facts.KMSKey{}
	}
	if cf.CapacityReservations == nil {
		cf.CapacityReservations = &[]facts.CapacityReservation{}
	}
	if cf.ServiceQuotas == nil {
		cf.ServiceQuotas = &map[string]int{facts.QuotaSecurityGroupsPerENI: 5}
	}
	if cf.InstanceTypes == nil {
		ts := make([]facts.InstanceType, len(types))
		copy(ts, types)
		cf.InstanceTypes = &ts
	}
	return cf
}
