package rules

import (
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// This file holds how an EC2NodeClass's nodes are named, which decides the Kubernetes username their
// kubelet must authenticate as: the Node authorizer accepts a kubelet only as system:node:<its node name>.

// nodeNaming is how nodeadm names a node.
type nodeNaming string

const (
	// namingPrivateDNS names the node after the instance's private DNS name (ip-10-0-1-2.ec2.internal),
	// which nodeadm reads with ec2:DescribeInstances; every family but nodeadm's with the gate below.
	namingPrivateDNS nodeNaming = "private-dns"
	// namingInstanceID names the node after the instance ID (i-0123…), with nodeadm's feature gate
	// InstanceIdNodeName (nodeadm's examples in awslabs/amazon-eks-ami, "Using instance ID as node
	// name").
	namingInstanceID nodeNaming = "instance-id"
)

// instanceIDGate is nodeadm's feature gate that names nodes after their instance ID.
const instanceIDGate = "InstanceIdNodeName"

// username is the Kubernetes username a mapping must give the node role's kubelet, as aws-auth and
// access entries write it.
func (n nodeNaming) username() string {
	if n == namingInstanceID {
		return "system:node:{{SessionName}}"
	}
	return "system:node:{{EC2PrivateDNSName}}"
}

// accepts reports whether a mapping's username lets the kubelet register under this naming. With
// instance-ID naming the role session's name is the instance ID, which holds no character that
// {{SessionName}} would rewrite, so {{SessionNameRaw}} is the same name.
func (n nodeNaming) accepts(username string) bool {
	if n == namingInstanceID && username == "system:node:{{SessionNameRaw}}" {
		return true
	}
	return username == n.username()
}

// describe says in words what the node is named after.
func (n nodeNaming) describe() string {
	if n == namingInstanceID {
		return "named after their instance ID (the NodeConfig feature gate " + instanceIDGate + ")"
	}
	return "named after their private DNS name"
}

// nodeNamingOf returns how the class's nodes are named: instance-id when nodeadm boots them (the
// AL2023 family, or amiFamily Custom whose userData holds a NodeConfig) and a NodeConfig in the
// userData turns InstanceIdNodeName on; otherwise private-dns. userData that does not parse names
// nothing (userdata-invalid reports it), so it leaves the default.
func nodeNamingOf(c *validators.Context, o *objects.Object) nodeNaming {
	if !bootsWithNodeadm(c, o) {
		return namingPrivateDNS
	}
	ud, err := parseUserData(c, o)
	if err != nil {
		return namingPrivateDNS
	}
	if on, _ := ud.FeatureGate(instanceIDGate); on {
		return namingInstanceID
	}
	return namingPrivateDNS
}

// bootsWithNodeadm reports whether nodeadm boots the class's nodes: the AL2023 family, or amiFamily
// Custom whose userData holds a NodeConfig (an image whose boot agent reads one).
func bootsWithNodeadm(c *validators.Context, o *objects.Object) bool {
	switch bootFamily(o.NodeClass) {
	case userdata.FamilyAL2023:
		return true
	case userdata.FamilyCustom:
		ud, err := parseUserData(c, o)
		return err == nil && ud.HasNodeConfig()
	}
	return false
}
