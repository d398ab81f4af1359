package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// This file holds what the two controller-permission rules share: the rows of the controller
// simulation table (L1–L12, launch; D1–D6, degraded) for one EC2NodeClass, as questions to the IAM
// policy simulator for the Karpenter controller's role. Each question carries exactly the context the
// table gives its row, because the snapshot answers a question by its key (facts.SimulationQuestion.Key)
// and a context with one key more or less is another question.
//
// Rows tagged with T (the tags Karpenter puts on what it launches: spec.tags, the cluster's ownership
// tag, eks:eks-cluster-name, karpenter.sh/nodepool and karpenter.k8s.aws/ec2nodeclass) are built once
// per NodePool that references the class, with karpenter.sh/nodepool "" when none does (Karpenter's
// own validation then launches on-demand). Where a table row needs two contexts, or the policy grants
// its actions in two statements, it is built as several rows of the same name, each with the statement
// that grants it as its fix; L4, whose RunInstances does not apply to the fleet, is one row of two
// calls. Capacity reservations and placement groups are not among the facts yet, so the table's
// capacity-reservation, placement-group and DescribeCapacityReservations questions are not asked.

// controllerRow is one row of the controller table for one class.
type controllerRow struct {
	permissionRow
	// field is the path of the field a finding of the row points at.
	field []any
}

// degraded reports whether the row is one controller-runtime-permissions reads (D1–D6) rather than
// controller-launch-permissions (L1–L12).
func (r controllerRow) degraded() bool { return strings.HasPrefix(r.ID, "D") }

// unaskedRow is a row that could not be built because a fact it is built from is unknown.
type unaskedRow struct {
	id, reason string
}

// controllerRowSet is what the controller-permission rules ask about one class.
type controllerRowSet struct {
	// who names the principal in messages.
	who     string
	rows    []controllerRow
	unasked []unaskedRow
	// launch and degraded are rows split by the rule that asks them (controller-launch-permissions,
	// controller-runtime-permissions), each with its permission rows, split once for every evaluation
	// that reads the set.
	launch, degraded ruleRows
	// err is set when no row can be built (the controller's role or the cluster is unknown, or the
	// role is cross-account).
	err error
}

// ruleRows are the rows of one of the two rules: asked[i] is rows[i].permissionRow.
type ruleRows struct {
	rows  []controllerRow
	asked []permissionRow
}

// forRule returns the rows of controller-runtime-permissions when degraded, else those of
// controller-launch-permissions.
func (s *controllerRowSet) forRule(degraded bool) ruleRows {
	if degraded {
		return s.degraded
	}
	return s.launch
}

// controllerRowSets are the rows of each EC2NodeClass, for one evaluation: both rules read them.
var controllerRowSets = &validators.Analysis[*objects.Object, controllerRowSet]{Name: "controller permission rows"}

// controllerRows returns the controller table's rows for an EC2NodeClass, once per evaluation, and
// from the catalog's memory when what they are built from has not changed.
func controllerRows(c *validators.Context, o *objects.Object) controllerRowSet {
	return validators.Memo(c, controllerRowSets, o, func() controllerRowSet {
		return rememberedControllerRows(c, o, validators.Shared(c, controllerRowCache))
	})
}

// buildControllerRows builds the rows afresh: it asks the controller's role, the cluster, the node
// role, the images the AMI terms resolve to, the subnets and security groups the class selects, and
// reads the NodePools that reference the class (controllerInputsOf).
func buildControllerRows(c *validators.Context, o *objects.Object) controllerRowSet {
	in, err := controllerInputsOf(c, o)
	if err != nil {
		return controllerRowSet{err: err}
	}
	return in.rows()
}

// rows builds the rows of the class the inputs were read from.
func (in *controllerInputs) rows() controllerRowSet {
	b := &rowBuilder{
		set:    controllerRowSet{who: "the Karpenter controller role " + in.principal},
		seen:   map[string]bool{},
		in:     in,
		policy: in.policy,
	}
	b.passRole()
	for _, p := range in.pools {
		b.launchWithTags(p, b.tags(p.name))
	}
	b.launchTargets()
	b.describes()
	b.amiParameters()
	if in.specRole != "" {
		b.instanceProfile()
	}
	if in.al2023 {
		b.describeCluster()
	}
	b.runtime()
	for _, r := range b.set.rows {
		rr := &b.set.launch
		if r.degraded() {
			rr = &b.set.degraded
		}
		rr.rows = append(rr.rows, r)
		rr.asked = append(rr.asked, r.permissionRow)
	}
	return b.set
}

// runtime adds D1–D6: cleaning up instance profiles, instances and launch templates, the Describe and
// pricing calls, the tagging controller's tags and the interruption queue.
func (b *rowBuilder) runtime() {
	in := b.in
	b.add(controllerRow{permissionRow: permissionRow{
		ID:     "D1",
		Row:    b.row([]string{"iam:ListInstanceProfiles"}, []string{"*"}, nil),
		Effect: "deleting the EC2NodeClass hangs on its finalizer, and the instance profiles Karpenter created are never garbage-collected",
		Fix:    b.policy.listInstanceProfiles(),
	}, field: classField()})
	if in.specRole != "" {
		b.add(controllerRow{permissionRow: permissionRow{
			ID:     "D2",
			Row:    b.row([]string{"iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"}, []string{b.policy.instanceProfiles()}, simContext{}.resourceTags(b.profileTags())),
			Effect: "changing spec.role or deleting the EC2NodeClass fails: Karpenter cannot take the role out of its instance profile or delete the profile, and the class's finalizer hangs",
			Fix:    b.policy.instanceProfileActions(),
		}, field: []any{"spec", "role"}})
	}
	for _, p := range in.pools {
		t := b.tags(p.name)
		b.add(controllerRow{permissionRow: permissionRow{
			ID:     "D3",
			Row:    b.row([]string{"ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"}, []string{b.ec2("instance/*"), b.ec2("launch-template/*")}, simContext{}.resourceTags(t).region(b.policy.region)),
			Effect: fmt.Sprintf("Karpenter cannot terminate the nodes of %s or delete their launch templates: instances keep running (and billing) after their NodeClaims are deleted", poolPhrase(p.name)),
			Fix:    b.policy.scopedDeletion(),
		}, field: classField()})
	}
	// D4's Describe calls are granted by one statement but break different things: a row each.
	describes := []struct{ action, effect string }{
		{"ec2:DescribeInstances", "instance garbage collection fails: instances left behind by deleted NodeClaims keep running (and billing)"},
		{"ec2:DescribeInstanceStatus", "nodes whose instances fail EC2 status checks or have scheduled events are not cordoned and drained"},
	}
	if slices.ContainsFunc(in.pools, func(p servingPool) bool { return p.spot }) {
		describes = append(describes, struct{ action, effect string }{"ec2:DescribeSpotPriceHistory", "spot prices are not updated and Karpenter falls back to its built-in price table, so it picks spot instances on stale prices"})
	}
	for _, d := range describes {
		b.add(controllerRow{permissionRow: permissionRow{
			ID:     "D4",
			Row:    b.row([]string{d.action}, []string{"*"}, simContext{}.region(b.policy.region)),
			Effect: d.effect,
			Fix:    b.policy.regionalRead(),
		}, field: classField()})
	}
	b.add(controllerRow{permissionRow: permissionRow{
		ID:     "D4",
		Row:    b.row([]string{"pricing:GetProducts"}, []string{"*"}, nil),
		Effect: "on-demand price updates fail and Karpenter falls back to its built-in price table, so its cost decisions use stale prices",
		Fix:    b.policy.pricingRead(),
	}, field: classField()})
	for _, p := range in.pools {
		b.add(controllerRow{permissionRow: permissionRow{
			ID:     "D5",
			Row:    b.row([]string{"ec2:CreateTags"}, []string{b.ec2("instance/*")}, simContext{}.resourceTags(b.tags(p.name)).region(b.policy.region).with(facts.ContextTagKeys, taggingControllerKeys()...)),
			Effect: fmt.Sprintf("the tagging controller cannot add the Name and karpenter.sh/nodeclaim tags to the nodes of %s", poolPhrase(p.name)),
			Fix:    b.policy.resourceTagging(),
		}, field: classField()})
	}
	if q := in.queue; q != "" {
		arn := "arn:" + b.policy.partition + ":sqs:" + b.policy.region + ":" + b.policy.account + ":" + q
		b.add(controllerRow{permissionRow: permissionRow{
			ID:     "D6",
			Row:    b.row([]string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueUrl"}, []string{arn}, nil),
			Effect: fmt.Sprintf("interruption handling stops: Karpenter no longer reads spot interruption, rebalance and scheduled-change events from queue %s, so nodes are not drained ahead of them", q),
			Fix:    b.policy.interruptionQueue(arn),
		}, field: classField()})
	}
}

// classField is where a finding about the class as a whole points.
func classField() []any { return []any{"metadata", "name"} }

// rowBuilder collects the rows of one class, each once.
type rowBuilder struct {
	set    controllerRowSet
	seen   map[string]bool
	in     *controllerInputs
	policy controllerPolicy
}

// add adds a row unless the same questions were added already (two NodePools, one set of tags). Its
// calls are keyed (facts.SimulationRow.Keyed): the row set is remembered and asked again, and the
// digests serve as the row's key here.
func (b *rowBuilder) add(r controllerRow) {
	if len(r.Row.Resources) == 0 {
		return
	}
	r.Row = r.Row.Keyed()
	key := r.ID + "\n" + r.Row.Digest() // the row's key runs to kilobytes; the set keeps one per row
	if len(r.Also) > 0 {
		also := make([]facts.SimulationRow, len(r.Also))
		for i, call := range r.Also {
			also[i] = call.Keyed()
			key += "\n" + also[i].Digest()
		}
		r.Also = also
	}
	if b.seen[key] {
		return
	}
	b.seen[key] = true
	b.set.rows = append(b.set.rows, r)
}

// unasked records that row id could not be built, because reason.
func (b *rowBuilder) unasked(id, reason string) {
	b.set.unasked = append(b.set.unasked, unaskedRow{id: id, reason: reason})
}

// row returns the simulator call for the controller role.
func (b *rowBuilder) row(actions, resources []string, ctx simContext) facts.SimulationRow {
	return facts.SimulationRow{Principal: b.in.principal, Actions: actions, Resources: resources, Context: ctx}
}

// ec2 returns arn:P:ec2:R:A:<resource>, an EC2 resource of the cluster's account and region.
func (b *rowBuilder) ec2(resource string) string {
	p := b.policy
	return "arn:" + p.partition + ":ec2:" + p.region + ":" + p.account + ":" + resource
}

// tags returns T for a NodePool: the class's spec.tags with Karpenter's own tags over them
// (pkg/utils/utils.go GetTags in aws/karpenter-provider-aws).
func (b *rowBuilder) tags(pool string) map[string]string {
	t := b.classTags()
	t[b.policy.clusterTag()] = "owned"
	t["eks:eks-cluster-name"] = b.policy.cluster
	t["karpenter.sh/nodepool"] = pool
	t["karpenter.k8s.aws/ec2nodeclass"] = b.in.class
	return t
}

// profileTags returns T_ip, the tags of the instance profile Karpenter creates for spec.role
// (EC2NodeClass.InstanceProfileTags).
func (b *rowBuilder) profileTags() map[string]string {
	t := b.classTags()
	t[b.policy.clusterTag()] = "owned"
	t["eks:eks-cluster-name"] = b.policy.cluster
	t["karpenter.k8s.aws/ec2nodeclass"] = b.in.class
	t["topology.kubernetes.io/region"] = b.policy.region
	return t
}

// classTags returns a copy of the class's spec.tags, with room for Karpenter's.
func (b *rowBuilder) classTags() map[string]string {
	t := make(map[string]string, len(b.in.tags)+4)
	maps.Copy(t, b.in.tags)
	return t
}

// specTags returns a copy of the class's spec.tags (values written as numbers read as text).
func specTags(o *objects.Object) map[string]string {
	raw, _ := o.Fields.Value("spec", "tags").(map[string]any)
	out := make(map[string]string, len(raw)+4)
	for k, v := range raw {
		switch v := v.(type) {
		case nil:
		case string:
			out[k] = v
		default:
			out[k] = fmt.Sprint(v)
		}
	}
	return out
}

// passRole adds L1: passing the node role to EC2 with every launch.
func (b *rowBuilder) passRole() {
	in := b.in
	switch {
	case in.nodeRoleErr != "":
		b.unasked("L1", in.nodeRoleErr)
		return
	case in.nodeRole == "":
		// No role to pass: node-role-not-found, instance-profile-not-found or instance-profile-no-role
		// denies the class already, and no permission would make it launch.
		return
	}
	b.add(controllerRow{permissionRow: permissionRow{
		ID:     "L1",
		Row:    b.row([]string{"iam:PassRole"}, []string{in.nodeRole}, simContext{"iam:PassedToService": {ec2Principal(b.policy.partition)}}),
		Effect: `every launch fails: CreateFleet returns UnauthorizedOperation for iam:PassRole, and the NodeClaim shows "launching nodeclaim ... not authorized to perform: iam:PassRole"`,
		Fix:    b.policy.passRole(in.nodeRole),
	}, field: []any{"spec", strings.TrimPrefix(in.nodeRoleField, "spec.")}})
}

// launchWithTags adds the rows whose context is the launch's tags for one NodePool: L2–L6.
func (b *rowBuilder) launchWithTags(p servingPool, t map[string]string) {
	region := b.policy.region
	created := []string{b.ec2("fleet/*"), b.ec2("instance/*"), b.ec2("volume/*"), b.ec2("network-interface/*")}
	if p.spot {
		created = append(created, b.ec2("spot-instances-request/*"))
	}
	lt := []string{b.ec2("launch-template/*")}
	who := poolPhrase(p.name)
	b.add(controllerRow{permissionRow: permissionRow{
		ID:     "L2",
		Row:    b.row([]string{"ec2:CreateLaunchTemplate"}, lt, simContext{}.requestTags(t).region(region)),
		Effect: fmt.Sprintf("Karpenter cannot create launch templates for %s: the EC2NodeClass reports ValidationSucceeded=False (CreateLaunchTemplateAuthCheckFailed) and none of its NodeClaims launch", who),
		Fix:    b.policy.instanceActionsWithTags(),
	}, field: classField()})
	b.add(controllerRow{permissionRow: permissionRow{
		ID:     "L3",
		Row:    b.row([]string{"ec2:CreateTags"}, lt, simContext{}.requestTags(t).region(region).with("ec2:CreateAction", "CreateLaunchTemplate")),
		Effect: fmt.Sprintf("creating a launch template with its tags fails with UnauthorizedOperation for %s: the EC2NodeClass reports ValidationSucceeded=False (CreateLaunchTemplateAuthCheckFailed) and none of its NodeClaims launch", who),
		Fix:    b.policy.resourceCreationTagging(),
	}, field: classField()})
	b.add(controllerRow{permissionRow: permissionRow{
		ID:     "L4",
		Row:    b.row([]string{"ec2:CreateFleet"}, created, simContext{}.requestTags(t).region(region)),
		Also:   []facts.SimulationRow{b.row([]string{"ec2:RunInstances"}, created[1:], simContext{}.requestTags(t).region(region))},
		Effect: fmt.Sprintf("every CreateFleet for %s (type instant, which also needs ec2:RunInstances on what it creates) fails with UnauthorizedOperation: the EC2NodeClass reports ValidationSucceeded=False (CreateFleetAuthCheckFailed or RunInstancesAuthCheckFailed) and its NodeClaims never launch", who),
		Fix:    b.policy.instanceActionsWithTags(),
	}, field: classField()})
	b.add(controllerRow{permissionRow: permissionRow{
		ID:     "L5",
		Row:    b.row([]string{"ec2:CreateTags"}, created, simContext{}.requestTags(t).region(region).with("ec2:CreateAction", "CreateFleet")),
		Effect: fmt.Sprintf("CreateFleet cannot tag the instances, volumes and network interfaces it creates for %s, so every launch fails with UnauthorizedOperation (ValidationSucceeded=False, CreateFleetAuthCheckFailed)", who),
		Fix:    b.policy.resourceCreationTagging(),
	}, field: classField()})
	b.add(controllerRow{permissionRow: permissionRow{
		ID:     "L6",
		Row:    b.row([]string{"ec2:CreateFleet", "ec2:RunInstances"}, lt, simContext{}.resourceTags(t).region(region)),
		Effect: fmt.Sprintf("CreateFleet may not launch from the launch templates Karpenter creates for %s, so every launch fails with UnauthorizedOperation (ValidationSucceeded=False, CreateFleetAuthCheckFailed)", who),
		Fix:    b.policy.launchTemplateAccess(),
	}, field: classField()})
}

// launchTargets adds L7: launching into the class's subnets and security groups, from the images its
// AMI terms resolve to (every architecture) and their snapshots. Each of the three is its own row, so
// that an unknown one leaves the others asked and a finding points at the selector concerned.
func (b *rowBuilder) launchTargets() {
	in := b.in
	actions := []string{"ec2:CreateFleet", "ec2:RunInstances"}
	region := simContext{}.region(b.policy.region)
	fail := "fails with UnauthorizedOperation: the EC2NodeClass reports ValidationSucceeded=False (CreateFleetAuthCheckFailed) and NodeClaims never launch"
	if in.subnetsErr != "" {
		b.unasked("L7", in.subnetsErr)
	} else {
		arns := make([]string, len(in.subnets))
		for i, s := range in.subnets {
			arns[i] = b.ec2("subnet/" + s.ID)
		}
		b.add(controllerRow{permissionRow: permissionRow{
			ID: "L7", Row: b.row(actions, arns, region), Effect: "every launch into a denied subnet " + fail, Fix: b.policy.instanceAccess(),
		}, field: []any{"spec", "subnetSelectorTerms"}})
	}
	if in.groupsErr != "" {
		b.unasked("L7", in.groupsErr)
	} else {
		arns := make([]string, len(in.groups))
		for i, g := range in.groups {
			arns[i] = b.ec2("security-group/" + g.ID)
		}
		b.add(controllerRow{permissionRow: permissionRow{
			ID: "L7", Row: b.row(actions, arns, region), Effect: "every launch puts all of the class's security groups on the node, so every launch " + fail, Fix: b.policy.instanceAccess(),
		}, field: []any{"spec", "securityGroupSelectorTerms"}})
	}
	if in.imagesErr != "" {
		b.unasked("L7", in.imagesErr)
		return
	}
	var arns []string
	for _, imgs := range in.images {
		for _, img := range imgs {
			arn := "arn:" + b.policy.partition + ":ec2:" + b.policy.region + "::image/" + img.ID
			if !slices.Contains(arns, arn) {
				arns = append(arns, arn)
			}
		}
	}
	if len(arns) == 0 {
		return // no image to launch from: the AMI rules report it
	}
	arns = append(arns, "arn:"+b.policy.partition+":ec2:"+b.policy.region+"::snapshot/*")
	b.add(controllerRow{permissionRow: permissionRow{
		ID: "L7", Row: b.row(actions, arns, region), Effect: "every launch from a denied image " + fail, Fix: b.policy.instanceAccess(),
	}, field: []any{"spec", "amiSelectorTerms"}})
}

// describes adds L8: the discovery calls every class needs.
func (b *rowBuilder) describes() {
	b.add(controllerRow{permissionRow: permissionRow{
		ID: "L8",
		Row: b.row([]string{"ec2:DescribeImages", "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups", "ec2:DescribeInstanceTypes",
			"ec2:DescribeInstanceTypeOfferings", "ec2:DescribeLaunchTemplates"}, []string{"*"}, simContext{}.region(b.policy.region)),
		Effect: "Karpenter cannot discover the class's images, subnets, security groups or instance types, or find its launch templates: AMIsReady, SubnetsReady or SecurityGroupsReady stays False and nothing launches",
		Fix:    b.policy.regionalRead(),
	}, field: classField()})
}

// amiParameters adds L9: reading the SSM parameters an alias resolves through (for the cluster's
// Kubernetes version) and those the ssmParameter terms name.
func (b *rowBuilder) amiParameters() {
	p := b.policy
	var public, own []string
	for _, t := range b.in.amiTerms {
		switch {
		case t.alias != "":
			if b.in.k8s == "" {
				b.unasked("L9", facts.Unknown(facts.ClusterVersion, "not in the facts snapshot").Error())
				continue
			}
			fam, ver, _ := strings.Cut(t.alias, "@")
			params := facts.AliasParameters(strings.ToLower(fam), ver, b.in.k8s)
			for _, arch := range []string{"x86_64", "arm64"} {
				if name, ok := params[arch]; ok {
					public = append(public, "arn:"+p.partition+":ssm:"+p.region+"::parameter"+name)
				}
			}
		case t.ssmParameter != "":
			own = append(own, p.parameterARN(t.ssmParameter))
		}
	}
	b.add(controllerRow{permissionRow: permissionRow{
		ID:     "L9",
		Row:    b.row([]string{"ssm:GetParameter"}, public, nil),
		Effect: `Karpenter cannot read the alias's parameter, so the alias loses that image (AMIsReady=False, "failed to discover any AMIs for alias", when it can read none) and nothing launches from it`,
		Fix:    p.ssmRead(),
	}, field: []any{"spec", "amiSelectorTerms"}})
	b.add(controllerRow{permissionRow: permissionRow{
		ID:     "L9",
		Row:    b.row([]string{"ssm:GetParameter"}, own, nil),
		Effect: "Karpenter cannot read the parameters the ssmParameter terms name, so those terms select no image (AMIsReady=False when no other term does) and nothing launches from them",
		Fix:    p.amiParameterRead(own),
	}, field: []any{"spec", "amiSelectorTerms"}})
}

// parameterARN is the ARN of the SSM parameter an ssmParameter term names: the ARN as given, a public
// parameter under /aws/service/ (which belongs to no account), or one of the cluster's account.
func (p controllerPolicy) parameterARN(name string) string {
	switch {
	case strings.HasPrefix(name, "arn:"):
		return name
	case strings.HasPrefix(name, "/aws/service/"):
		return "arn:" + p.partition + ":ssm:" + p.region + "::parameter" + name
	}
	return "arn:" + p.partition + ":ssm:" + p.region + ":" + p.account + ":parameter/" + strings.TrimPrefix(name, "/")
}

// instanceProfile adds L10 and L11: creating, tagging and filling the instance profile Karpenter
// makes for spec.role. GetInstanceProfile, CreateInstanceProfile and TagInstanceProfile are granted by
// three statements, so they are three rows.
func (b *rowBuilder) instanceProfile() {
	t := b.profileTags()
	profiles := []string{b.policy.instanceProfiles()}
	role := b.in.specRole
	effect := fmt.Sprintf("Karpenter cannot create the instance profile for role %s: InstanceProfileReady stays Unknown, the EC2NodeClass never becomes Ready and nothing launches", role)
	field := []any{"spec", "role"}
	b.add(controllerRow{permissionRow: permissionRow{
		ID: "L10", Row: b.row([]string{"iam:GetInstanceProfile"}, profiles, simContext{}.requestTags(t)), Effect: effect, Fix: b.policy.instanceProfileRead(),
	}, field: field})
	b.add(controllerRow{permissionRow: permissionRow{
		ID: "L10", Row: b.row([]string{"iam:CreateInstanceProfile"}, profiles, simContext{}.requestTags(t)), Effect: effect, Fix: b.policy.instanceProfileCreation(),
	}, field: field})
	b.add(controllerRow{permissionRow: permissionRow{
		ID: "L10", Row: b.row([]string{"iam:TagInstanceProfile"}, profiles, simContext{}.requestTags(t).resourceTags(t)), Effect: effect, Fix: b.policy.instanceProfileTagging(),
	}, field: field})
	b.add(controllerRow{permissionRow: permissionRow{
		ID:     "L11",
		Row:    b.row([]string{"iam:AddRoleToInstanceProfile"}, profiles, simContext{}.resourceTags(t)),
		Effect: fmt.Sprintf("Karpenter cannot put role %s into the instance profile it creates: InstanceProfileReady stays Unknown, the EC2NodeClass never becomes Ready and nothing launches", role),
		Fix:    b.policy.instanceProfileActions(),
	}, field: field})
}

// describeCluster adds L12: AL2023's NodeConfig needs the cluster's service CIDR, which Karpenter reads
// with DescribeCluster.
func (b *rowBuilder) describeCluster() {
	p := b.policy
	field := []any{"spec", "amiSelectorTerms"}
	if b.in.amiFamily {
		field = []any{"spec", "amiFamily"}
	}
	b.add(controllerRow{permissionRow: permissionRow{
		ID:     "L12",
		Row:    b.row([]string{"eks:DescribeCluster"}, []string{"arn:" + p.partition + ":eks:" + p.region + ":" + p.account + ":cluster/" + p.cluster}, nil),
		Effect: "Karpenter cannot read the cluster's service CIDR for the AL2023 NodeConfig: the EC2NodeClass reports ValidationSucceeded=False (ClusterCIDRResolutionFailed) and nothing launches",
		Fix:    p.describeCluster(),
	}, field: field})
}

// servingPool is a NodePool that launches from the class, as far as the table goes.
type servingPool struct {
	name string
	// spot is true when the pool admits spot capacity.
	spot bool
}

// poolsServing returns the NodePools that reference the class, each once, or one pool named "" that
// launches on-demand when none does (Karpenter validates a class that way).
func poolsServing(c *validators.Context, o *objects.Object) []servingPool {
	var out []servingPool
	for _, p := range c.NodePoolsOf(o.Name) {
		if !slices.ContainsFunc(out, func(s servingPool) bool { return s.name == p.Name }) {
			out = append(out, servingPool{name: p.Name, spot: poolAllowsSpot(p.NodePool)})
		}
	}
	if len(out) == 0 {
		out = append(out, servingPool{})
	}
	return out
}

// poolAllowsSpot reports whether a NodePool admits spot capacity: its capacity-type requirements do
// (allowsSpot: a pool without one admits spot, and Karpenter then prefers it), and so does its template
// label, when it sets one.
func poolAllowsSpot(np *objects.NodePool) bool {
	if v, ok := np.Spec.Template.Metadata.Labels[capacityTypeKey]; ok && v != "spot" {
		return false
	}
	_, spot := allowsSpot(np.Spec.Template.Spec.Requirements)
	return spot
}

// poolPhrase names a pool in messages: NodePool "default", or what "" stands for.
func poolPhrase(name string) string {
	if name == "" {
		return "the class's NodePools (none references it yet)"
	}
	return fmt.Sprintf("NodePool %q", name)
}

// interruptionQueue returns the configured interruption queue, "" when there is none.
func interruptionQueue(c *validators.Context) string {
	if c.Config == nil {
		return ""
	}
	return c.Config.Karpenter.InterruptionQueue
}

// simContext is a simulation's request context under construction: context key → values.
type simContext map[string][]string

// requestTags adds req(T) without the region: aws:RequestTag/<k> for each tag, and aws:TagKeys.
func (s simContext) requestTags(tags map[string]string) simContext {
	for k, v := range tags {
		s["aws:RequestTag/"+k] = []string{v}
	}
	s[facts.ContextTagKeys] = slices.Sorted(maps.Keys(tags))
	return s
}

// resourceTags adds aws:ResourceTag/<k> for each tag.
func (s simContext) resourceTags(tags map[string]string) simContext {
	for k, v := range tags {
		s["aws:ResourceTag/"+k] = []string{v}
	}
	return s
}

// region adds aws:RequestedRegion.
func (s simContext) region(r string) simContext { return s.with("aws:RequestedRegion", r) }

// with sets one key.
func (s simContext) with(key string, values ...string) simContext {
	s[key] = values
	return s
}

// controllerFindings returns the findings of the rows of one rule (degraded: the D rows) for a class.
// Each denied row is a finding at its own field; when none is, the rule is not evaluated if a row
// could not be answered or built.
func controllerFindings(c *validators.Context, o *objects.Object, degraded bool) ([]validators.Finding, error) {
	set := controllerRows(c, o)
	if set.err != nil {
		return nil, set.err
	}
	rows := set.forRule(degraded)
	verdicts, err := simulateRows(c, rows.asked)
	if err != nil {
		return nil, err
	}
	var out []validators.Finding
	var unknown []rowVerdict
	for i, v := range verdicts {
		if len(v.denied) == 0 && len(v.uncertain) == 0 {
			if v.unknown != "" {
				unknown = append(unknown, v)
			}
			continue
		}
		// One verdict with a denial always makes a finding, never an error.
		field := rows.rows[i].field
		fs, _ := permissionFindings(objects.Path(field...), o.Fields.Line(field...), set.who, []rowVerdict{v})
		out = append(out, fs...)
	}
	for _, u := range set.unasked {
		if strings.HasPrefix(u.id, "D") == degraded {
			unknown = append(unknown, rowVerdict{row: &permissionRow{ID: u.id}, unknown: u.reason})
		}
	}
	if len(out) > 0 || len(unknown) == 0 {
		return out, nil
	}
	return permissionFindings("", 0, set.who, unknown)
}
