package rules

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/network"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/noderole"
)

// controllerInputs is everything the controller table's rows of one EC2NodeClass are built from: the
// facts they ask, what the class selects with them, and what they read of the class, its NodePools
// and the configuration. The rows are a function of it alone (controllerInputs.rows), so the catalog
// remembers them by its key while none of it changes.
type controllerInputs struct {
	// principal is the controller role's ARN.
	principal string
	// policy is the cluster the controller policy's statements are rendered for.
	policy controllerPolicy
	// k8s is the cluster's Kubernetes version, "" when unknown.
	k8s string
	// class is the EC2NodeClass's name and specRole its spec.role.
	class, specRole string
	// al2023 is whether the class is of the AL2023 family; amiFamily whether it sets spec.amiFamily.
	al2023, amiFamily bool
	// tags are the class's spec.tags (specTags).
	tags map[string]string
	// pools are the NodePools that launch from the class (poolsServing).
	pools []servingPool
	// nodeRole is the node role to pass to EC2, "" when it does not resolve; nodeRoleField is where the
	// class names it and nodeRoleErr why it cannot be resolved.
	nodeRole, nodeRoleField, nodeRoleErr string
	// subnets and groups are the subnets and security groups the class selects, or why they are not
	// known. They, and images, are the evaluation's selections, shared with the other rules: read only.
	subnets               []facts.Subnet
	groups                []facts.SecurityGroup
	subnetsErr, groupsErr string
	// amiTerms are the alias and ssmParameter of each AMI selector term.
	amiTerms []amiTermRef
	// images are the images each AMI term resolves to, in order; imagesErr is why a term does not
	// resolve (the terms after it are not read).
	images    [][]facts.Image
	imagesErr string
	// queue is the configured interruption queue, "" when there is none.
	queue string
}

// amiTermRef is what the rows read of an AMI selector term.
type amiTermRef struct{ alias, ssmParameter string }

// controllerInputsOf asks the facts the rows of the class are built from: the controller's role, the
// cluster, the node role, the images the AMI terms resolve to and the subnets and security groups the
// class selects, and reads the NodePools that reference it. The error is set when no row can be built
// (the controller's role or the cluster is unknown, or the role is cross-account).
func controllerInputsOf(c *validators.Context, o *objects.Object) (*controllerInputs, error) {
	ctrl, err := c.Facts.KarpenterController(c)
	if err != nil {
		return nil, err
	}
	if ctrl.TargetRoleARN != "" {
		return nil, facts.Unknown(facts.KarpenterController, "cross-account role: not simulable")
	}
	cl, err := c.Facts.Cluster(c)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct{ name, value string }{{"name", cl.Name}, {"region", cl.Region}, {"partition", cl.Partition}, {"accountID", cl.AccountID}} {
		if f.value == "" {
			return nil, facts.Unknown(facts.Fact("cluster."+f.name), "not in the facts snapshot")
		}
	}
	spec := o.NodeClass.Spec
	in := &controllerInputs{
		principal: ctrl.RoleARN,
		policy: controllerPolicy{
			partition: cl.Partition, region: cl.Region, account: cl.AccountID, cluster: cl.Name,
			role: noderole.LastSegment(ctrl.RoleARN),
		},
		k8s:       cl.Version,
		class:     o.Name,
		specRole:  spec.Role,
		al2023:    ami.Family(o.NodeClass) == userdata.FamilyAL2023,
		amiFamily: spec.AMIFamily != "",
		tags:      specTags(o),
		pools:     poolsServing(c, o),
		queue:     interruptionQueue(c),
	}
	switch r, err := noderole.Resolve(c, o); {
	case err != nil:
		in.nodeRoleErr = err.Error()
	case r.Role != nil:
		in.nodeRole, in.nodeRoleField = r.Role.ARN, r.Field
	}
	if in.subnets, err = network.SelectedSubnets(c, o); err != nil {
		in.subnets, in.subnetsErr = nil, err.Error()
	}
	if in.groups, err = network.SelectedGroups(c, o); err != nil {
		in.groups, in.groupsErr = nil, err.Error()
	}
	in.amiTerms = make([]amiTermRef, len(spec.AMISelectorTerms))
	for i, t := range spec.AMISelectorTerms {
		in.amiTerms[i] = amiTermRef{alias: t.Alias, ssmParameter: t.SSMParameter}
	}
	for _, t := range spec.AMISelectorTerms {
		imgs, _, err := ami.ResolveTerm(c, t)
		if err != nil {
			in.imagesErr = err.Error()
			break
		}
		in.images = append(in.images, imgs)
	}
	return in, nil
}

// key is the inputs' canonical form: inputs with equal keys build equal rows. Each string and list is
// written after its length, so that no two inputs write the same key.
func (in *controllerInputs) key() string {
	k := make(keyWriter, 0, 1024)
	k.str(in.principal)
	p := in.policy
	k.str(p.partition, p.region, p.account, p.cluster, p.role)
	k.str(in.k8s, in.class, in.specRole)
	k.flag(in.al2023, in.amiFamily)
	k.count(len(in.tags))
	for _, name := range slices.Sorted(maps.Keys(in.tags)) {
		k.str(name, in.tags[name])
	}
	k.count(len(in.pools))
	for _, pool := range in.pools {
		k.str(pool.name)
		k.flag(pool.spot)
	}
	k.str(in.nodeRole, in.nodeRoleField, in.nodeRoleErr)
	k.count(len(in.subnets))
	for _, s := range in.subnets {
		k.str(s.ID)
	}
	k.count(len(in.groups))
	for _, g := range in.groups {
		k.str(g.ID)
	}
	k.str(in.subnetsErr, in.groupsErr)
	k.count(len(in.amiTerms))
	for _, t := range in.amiTerms {
		k.str(t.alias, t.ssmParameter)
	}
	k.count(len(in.images))
	for _, imgs := range in.images {
		k.count(len(imgs))
		for _, img := range imgs {
			k.str(img.ID)
		}
	}
	k.str(in.imagesErr, in.queue)
	return string(k)
}

// keyWriter writes a key: strings, each after its length, flags and counts, as varints. It is written
// by hand because keys are written on every evaluation, to be looked up: a reflective encoder
// (encoding/json, encoding/gob) would cost more than much of what the lookup saves.
type keyWriter []byte

func (k *keyWriter) str(ss ...string) {
	for _, s := range ss {
		*k = binary.AppendUvarint(*k, uint64(len(s)))
		*k = append(*k, s...)
	}
}

func (k *keyWriter) flag(bs ...bool) {
	for _, b := range bs {
		if b {
			*k = append(*k, 1)
		} else {
			*k = append(*k, 0)
		}
	}
}

func (k *keyWriter) count(n int) { *k = binary.AppendUvarint(*k, uint64(n)) }

// controllerRowCache remembers the controller rows of the catalog's recent classes by their inputs'
// key: the webhook re-reviews a class whose edit left its rows alone and the audit re-evaluates every
// class each interval, and building a class's rows (tens of them, each with its request context and
// the rendered policy statement of its fix, and hashing each for the simulator) is most of what the
// permission rules cost. Rows hold no fact answer, only the questions, so a remembered row set is
// asked again on every evaluation.
var controllerRowCache = &validators.Resource[*lru.Cache[string, controllerRowSet]]{
	Name: "controller permission rows",
	New: func() *lru.Cache[string, controllerRowSet] {
		c, err := lru.New[string, controllerRowSet](maxRememberedRowSets)
		if err != nil {
			panic(fmt.Sprintf("controller row cache of %d: %v", maxRememberedRowSets, err)) // only for a size below 1
		}
		return c
	},
}

// maxRememberedRowSets is how many classes' controller rows a catalog remembers: about 50 KiB each
// for a class of one NodePool (23 rows, most of it their request contexts and rendered fixes), so
// at most about 6 MiB. Clusters have a few EC2NodeClasses, and the webhook's recent ones are fewer.
const maxRememberedRowSets = 128

// rememberedControllerRows returns the rows of the class built from the inputs the facts give now,
// from cache when the same inputs built them before.
func rememberedControllerRows(c *validators.Context, o *objects.Object, cache *lru.Cache[string, controllerRowSet]) controllerRowSet {
	in, err := controllerInputsOf(c, o)
	if err != nil {
		return controllerRowSet{err: err}
	}
	key := in.key()
	if set, ok := cache.Get(key); ok {
		return set
	}
	set := in.rows()
	cache.Add(key, set)
	return set
}
