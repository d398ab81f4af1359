package rules

import (
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
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
	text := ""
	if o.NodeClass.Spec.UserData != nil {
		text = *o.NodeClass.Spec.UserData
	}
	if len(text) > userdata.MaxRemembered {
		return namingOf(ud)
	}
	namings := validators.Shared(c, nodeNamings)
	k := namingKey{ami.BootFamily(o.NodeClass), text}
	if n, ok := namings.Get(k); ok {
		return n
	}
	n := namingOf(ud)
	namings.Add(k, n)
	return n
}

// namingOf reads the naming from parsed userData: instance-id when a NodeConfig turns the gate on.
func namingOf(ud userdata.UserData) nodeNaming {
	if on, _ := ud.FeatureGate(instanceIDGate); on {
		return namingInstanceID
	}
	return namingPrivateDNS
}

// namingKey is userData text parsed for the family whose boot agent reads it.
type namingKey struct{ family, text string }

// nodeNamings remembers the naming the catalog's recent userData texts give, by family and text, as
// userDataParser remembers their parses (as many texts, each at most userdata.MaxRemembered long):
// reading the feature gate decodes every NodeConfig document as YAML, and the node-identity,
// authorization and VPC-endpoint rules all ask for the naming on every evaluation.
var nodeNamings = &validators.Resource[*lru.Cache[namingKey, nodeNaming]]{Name: "node naming by userData", New: func() *lru.Cache[namingKey, nodeNaming] {
	c, err := lru.New[namingKey, nodeNaming](maxRememberedNamings)
	if err != nil {
		panic(fmt.Sprintf("node naming cache of %d: %v", maxRememberedNamings, err)) // only for a size below 1
	}
	return c
}}

// maxRememberedNamings is how many userData texts nodeNamings remembers, as many as userDataParser.
const maxRememberedNamings = 256

// bootsWithNodeadm reports whether nodeadm boots the class's nodes: the AL2023 family, or amiFamily
// Custom whose userData holds a NodeConfig (an image whose boot agent reads one).
func bootsWithNodeadm(c *validators.Context, o *objects.Object) bool {
	switch ami.BootFamily(o.NodeClass) {
	case userdata.FamilyAL2023:
		return true
	case userdata.FamilyCustom:
		ud, err := parseUserData(c, o)
		return err == nil && ud.HasNodeConfig()
	}
	return false
}
