package rules

import (
	"fmt"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/noderole"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/trustpolicy"
)

// This file holds the node-role simulation table: what the node role must be allowed for nodes to join
// (J1–J3) and to run pods (W1–W4), one row per simulator call, with the principal the node role's ARN and
// no request context. node-role-join-permissions and node-role-runtime-permissions ask these rows.
//
//	J1 ec2:DescribeInstances on *: nodeadm with private-DNS naming
//	J2 ec2:DescribeNetworkInterfaces on *: the VPC CNI on the node role's credentials
//	J3 eks-auth:AssumeRoleForPodIdentity on the cluster: the VPC CNI on Pod Identity
//	W1 ecr:GetAuthorizationToken on *: always
//	W2 ecr:BatchGetImage, ecr:GetDownloadUrlForLayer on EKS's amazon-k8s-cni repository: always
//	W3 ec2:CreateNetworkInterface, ec2:AttachNetworkInterface, ec2:AssignPrivateIpAddresses on *, and
//	   ec2:CreateTags on network-interface/*: as J2
//	W4 eks-auth:AssumeRoleForPodIdentity on the cluster: the cluster has Pod Identity associations
//	   (other than aws-node's, which J3 covers)

// nodeRoleSubject is what decides the node-role rows of one EC2NodeClass.
type nodeRoleSubject struct {
	cluster *facts.Cluster
	role    *facts.Role
	// field is where the class names the role: spec.role or spec.instanceProfile.
	field string
	// describesInstances: nodeadm boots the nodes and names them after their private DNS name, which it
	// reads with ec2:DescribeInstances.
	describesInstances bool
	// cni is the VPC CNI (never nil).
	cni *facts.CNI
	// podIdentity is how many Pod Identity associations the cluster has but aws-node's; nil when not
	// known (only runtimeRows reads it).
	podIdentity *int
	// remembered are the catalog's node-role rows by what they are built from (rowsKey); nil builds
	// them every time.
	remembered *lru.Cache[string, nodeRoleRows]
}

// nodeRoleRows are the rows that apply to a class, and why it is not known whether others do.
type nodeRoleRows struct {
	rows []permissionRow
	// undecided names the rows whose use is not known, each with why ("J2, J3 (whether aws-node runs
	// is not known)"), and undecidedFact the fact that would tell.
	undecided     []string
	undecidedFact facts.Fact
}

// undecide records rows whose use the fact f would tell.
func (r *nodeRoleRows) undecide(rows string, f facts.Fact) {
	r.undecided = append(r.undecided, rows)
	if r.undecidedFact == "" {
		r.undecidedFact = f
	}
}

// cniOnNode says whether the VPC CNI runs on the node role's credentials (J2, W3) and on Pod Identity
// (J3); ok is false when that is not known.
func (s nodeRoleSubject) cniOnNode() (nodeRole, podIdentity, ok bool) {
	if s.cni.Present == nil {
		return false, false, false
	}
	if !*s.cni.Present {
		return false, false, true
	}
	switch s.cni.Credentials {
	case facts.CredentialsNodeRole:
		return true, false, true
	case facts.CredentialsPodIdentity:
		return false, true, true
	case facts.CredentialsIRSA:
		return false, false, true
	}
	return false, false, false
}

// cniUnknown says why the VPC CNI's rows are undecided.
func (s nodeRoleSubject) cniUnknown() string {
	if s.cni.Present == nil {
		return "whether aws-node runs is not known"
	}
	return fmt.Sprintf("aws-node's credentials %q are not known", s.cni.Credentials)
}

// joinRows returns the rows marked join that apply to the class: J1, J2, J3. Rows from the catalog's
// memory are shared, as are runtimeRows's: read them, never modify them.
func joinRows(s nodeRoleSubject) nodeRoleRows { return s.rows("join", buildJoinRows) }

// runtimeRows returns the rows marked runtime that apply to the class: W1, W2, W3, W4.
func runtimeRows(s nodeRoleSubject) nodeRoleRows { return s.rows("runtime", buildRuntimeRows) }

// rows returns the rows build makes of the subject for table, from the catalog's memory when a
// subject alike built them before. The rows are keyed (facts.SimulationRow.Keyed), so that the
// providers remember their answers by row.
func (s nodeRoleSubject) rows(table string, build func(nodeRoleSubject) nodeRoleRows) nodeRoleRows {
	if s.remembered == nil {
		return build(s)
	}
	key := s.rowsKey(table)
	if r, ok := s.remembered.Get(key); ok {
		return r
	}
	r := build(s)
	s.remembered.Add(key, r)
	return r
}

// rowsKey is the canonical form of what the rows of table are built from: the cluster, the node role,
// the naming, the VPC CNI and the Pod Identity associations.
func (s nodeRoleSubject) rowsKey(table string) string {
	k := make(keyWriter, 0, 256)
	k.str(table, s.cluster.Partition, s.cluster.Region, s.cluster.AccountID, s.cluster.Name, s.role.ARN, s.role.Name, s.cni.Credentials)
	k.flag(s.describesInstances, s.cni.Present != nil, s.cni.Present != nil && *s.cni.Present, s.podIdentity != nil)
	if s.podIdentity != nil {
		k.count(*s.podIdentity)
	}
	return string(k)
}

// nodeRoleRowCache remembers the node-role rows of the catalog's recent subjects: the rows of every
// class of one node role are alike, and building them renders their messages.
var nodeRoleRowCache = &validators.Resource[*lru.Cache[string, nodeRoleRows]]{Name: "node role permission rows", New: func() *lru.Cache[string, nodeRoleRows] {
	c, err := lru.New[string, nodeRoleRows](maxRememberedNodeRoleRows)
	if err != nil {
		panic(fmt.Sprintf("node role row cache of %d: %v", maxRememberedNodeRoleRows, err)) // only for a size below 1
	}
	return c
}}

// maxRememberedNodeRoleRows is how many node-role row tables a catalog remembers, two per subject
// (join and runtime) of a few rows each.
const maxRememberedNodeRoleRows = 256

// buildJoinRows builds joinRows.
func buildJoinRows(s nodeRoleSubject) nodeRoleRows {
	var out nodeRoleRows
	if s.describesInstances {
		out.rows = append(out.rows, s.row("J1", []string{"ec2:DescribeInstances"}, []string{"*"},
			"nodeadm resolves the node's name with ec2:DescribeInstances, retries for up to 10 minutes and then fails init, so the node never joins (see `journalctl -u nodeadm-config` on the instance)",
			workerNodePolicy))
	}
	onNode, onPodIdentity, known := s.cniOnNode()
	switch {
	case !known:
		out.undecide("J2, J3 ("+s.cniUnknown()+")", facts.VPCCNI)
	case onNode:
		out.rows = append(out.rows, s.row("J2", []string{"ec2:DescribeNetworkInterfaces"}, []string{"*"},
			"aws-node's ipamd cannot list the node's network interfaces, never writes the CNI configuration, and the node stays NotReady with \"cni plugin not initialized\" (see `kubectl logs -n kube-system -l k8s-app=aws-node`)",
			cniPolicy))
	case onPodIdentity:
		out.rows = append(out.rows, s.row("J3", []string{"eks-auth:AssumeRoleForPodIdentity"}, []string{s.clusterARN()},
			"the EKS Pod Identity agent cannot get aws-node its credentials, so aws-node never configures the CNI and the node stays NotReady (see `kubectl logs -n kube-system -l app.kubernetes.io/name=eks-pod-identity-agent`)",
			workerNodePolicy))
	}
	return out
}

// buildRuntimeRows builds runtimeRows. W4 asks what J3 asks; when J3 applies,
// node-role-join-permissions reports it, so W4 is left out.
func buildRuntimeRows(s nodeRoleSubject) nodeRoleRows {
	out := nodeRoleRows{rows: []permissionRow{
		s.row("W1", []string{"ecr:GetAuthorizationToken"}, []string{"*"},
			"the kubelet's ECR credential provider gets no token, so images from private ECR registries (aws-node, kube-proxy, add-ons) fail with ErrImagePull unless the AMI has them cached (see `journalctl -u kubelet` on the instance)",
			registryPullPolicy),
		s.row("W2", []string{"ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"}, []string{s.cniRepositoryARN()},
			fmt.Sprintf("the VPC CNI image (repository amazon-k8s-cni of EKS's registry account %s) cannot be pulled, so aws-node fails with ErrImagePull unless the AMI has it cached (see `kubectl describe pod -n kube-system -l k8s-app=aws-node`)",
				eksImageAccount(s.cluster.Region)),
			registryPullPolicy),
	}}
	onNode, onPodIdentity, known := s.cniOnNode()
	switch {
	case !known:
		out.undecide("W3, W4 ("+s.cniUnknown()+")", facts.VPCCNI)
		return out
	case onNode:
		// The cluster's IP family is not among the facts yet: IPv4 is assumed, which asks
		// ec2:AssignPrivateIpAddresses where an IPv6 cluster needs ec2:AssignIpv6Addresses.
		w3 := s.row("W3", []string{"ec2:CreateNetworkInterface", "ec2:AttachNetworkInterface", "ec2:AssignPrivateIpAddresses"}, []string{"*"},
			"aws-node's ipamd cannot create or attach network interfaces or assign addresses, so pods beyond the addresses of the node's first interface get none (\"failed to assign an IP address to container\" in `kubectl describe pod`)",
			cniPolicy)
		w3.Also = []facts.SimulationRow{facts.SimulationRow{Principal: s.role.ARN, Actions: []string{"ec2:CreateTags"},
			Resources: []string{fmt.Sprintf("arn:%s:ec2:%s:%s:network-interface/*", s.partition(), s.cluster.Region, s.cluster.AccountID)}}.Keyed()}
		out.rows = append(out.rows, w3)
	}
	if onPodIdentity {
		return out
	}
	switch {
	case s.podIdentity == nil:
		out.undecide("W4 (the cluster's Pod Identity associations are not known)", facts.ClusterPodIdentityAssociations)
	case *s.podIdentity > 0:
		out.rows = append(out.rows, s.row("W4", []string{"eks-auth:AssumeRoleForPodIdentity"}, []string{s.clusterARN()},
			fmt.Sprintf("the EKS Pod Identity agent cannot exchange the node's credentials for those of the cluster's %d Pod Identity associations, so their pods get no AWS credentials (see `kubectl logs -n kube-system -l app.kubernetes.io/name=eks-pod-identity-agent`)", *s.podIdentity),
			workerNodePolicy))
	}
	return out
}

// AWS managed policies the fixes attach.
const (
	workerNodePolicy   = "AmazonEKSWorkerNodePolicy"
	cniPolicy          = "AmazonEKS_CNI_Policy"
	registryPullPolicy = "AmazonEC2ContainerRegistryPullOnly"
)

// row builds one row: the node role may call every action on every resource, in no request context.
func (s nodeRoleSubject) row(id string, actions, resources []string, effect, policy string) permissionRow {
	return permissionRow{
		ID:     id,
		Row:    facts.SimulationRow{Principal: s.role.ARN, Actions: actions, Resources: resources}.Keyed(),
		Effect: effect,
		Fix:    fmt.Sprintf("aws iam attach-role-policy --role-name %s --policy-arn arn:%s:iam::aws:policy/%s", s.role.Name, s.partition(), policy),
	}
}

// partition is the cluster's partition, else the node role's.
func (s nodeRoleSubject) partition() string {
	if s.cluster.Partition != "" {
		return s.cluster.Partition
	}
	return trustpolicy.ARNPartition(s.role.ARN)
}

// clusterARN is the cluster's ARN, the resource of eks-auth:AssumeRoleForPodIdentity.
func (s nodeRoleSubject) clusterARN() string {
	return fmt.Sprintf("arn:%s:eks:%s:%s:cluster/%s", s.partition(), s.cluster.Region, s.cluster.AccountID, s.cluster.Name)
}

// cniRepositoryARN is the ECR repository of the VPC CNI image in EKS's registry of the cluster's
// region.
func (s nodeRoleSubject) cniRepositoryARN() string {
	return fmt.Sprintf("arn:%s:ecr:%s:%s:repository/amazon-k8s-cni", s.partition(), s.cluster.Region, eksImageAccount(s.cluster.Region))
}

// eksImageAccounts are the accounts of EKS's image registries in the regions that do not use the
// default one (the EKS user guide's add-on image addresses; awslabs/amazon-eks-ami's get-ecr-uri.sh).
var eksImageAccounts = map[string]string{
	"af-south-1":      "877085696533",
	"ap-east-1":       "800184023465",
	"ap-east-2":       "533267051163",
	"ap-south-2":      "900889452093",
	"ap-southeast-3":  "296578399912",
	"ap-southeast-4":  "491585149902",
	"ap-southeast-5":  "151610086707",
	"ap-southeast-6":  "333609536671",
	"ap-southeast-7":  "121268973566",
	"ca-west-1":       "761377655185",
	"cn-north-1":      "918309763551",
	"cn-northwest-1":  "961992271922",
	"eu-central-2":    "900612956339",
	"eu-south-1":      "590381155156",
	"eu-south-2":      "455263428931",
	"il-central-1":    "066635153087",
	"me-central-1":    "759879836304",
	"me-south-1":      "558608220178",
	"mx-central-1":    "730335286997",
	"us-gov-east-1":   "151742754352",
	"us-gov-west-1":   "013241004608",
	"us-iso-east-1":   "725322719131",
	"us-iso-west-1":   "608367168043",
	"us-isob-east-1":  "187977181151",
	"eu-isoe-west-1":  "249663109785",
	"us-isof-south-1": "676585237158",
}

// eksImageAccount is the account of EKS's image registry in a region: 602401143452 in the standard
// commercial regions, another in opt-in, China, GovCloud and isolated ones.
func eksImageAccount(region string) string {
	if a, ok := eksImageAccounts[region]; ok {
		return a
	}
	return "602401143452"
}

// nodeRoleSubjectOf gathers what decides the node-role rows of an EC2NodeClass: the cluster, the node
// role, the naming and the VPC CNI, and with podIdentity the cluster's Pod Identity associations. A nil
// subject with a nil error means the role does not resolve (other rules report that).
func nodeRoleSubjectOf(c *validators.Context, o *objects.Object, podIdentity bool) (*nodeRoleSubject, error) {
	cluster, err := c.Facts.Cluster(c)
	if err != nil {
		return nil, err
	}
	if cluster.Name == "" || cluster.Region == "" || cluster.AccountID == "" {
		return nil, facts.Unknown("cluster", "the cluster's name, region or account is not known")
	}
	r, err := noderole.Resolve(c, o)
	if err != nil || r.Role == nil {
		return nil, err
	}
	cni, err := c.Facts.VPCCNI(c)
	if err != nil {
		return nil, err
	}
	s := &nodeRoleSubject{cluster: cluster, role: r.Role, field: r.Field, cni: cni, describesInstances: describesInstances(c, o),
		remembered: validators.Shared(c, nodeRoleRowCache)}
	if podIdentity {
		if _, onPodIdentity, _ := s.cniOnNode(); !onPodIdentity {
			if n, err := c.Facts.PodIdentityAssociations(c); err == nil {
				s.podIdentity = &n
			} else if !facts.IsUnknown(err) {
				return nil, err
			}
		}
	}
	return s, nil
}

// describesInstances reports whether the class's nodes read their name with ec2:DescribeInstances:
// nodeadm boots them and names them after their private DNS name.
func describesInstances(c *validators.Context, o *objects.Object) bool {
	return bootsWithNodeadm(c, o) && nodeNamingOf(c, o) == namingPrivateDNS
}

// nodeRolePermissionFindings asks the rows and returns the findings of a node-role permission rule: a
// row proved denied fires even when others are unknown; with none denied, any row that could not be
// answered or decided makes the rule not evaluated, naming them.
func nodeRolePermissionFindings(c *validators.Context, o *objects.Object, s *nodeRoleSubject, rows nodeRoleRows) ([]validators.Finding, error) {
	verdicts, err := simulateRows(c, rows.rows)
	if err != nil {
		return nil, err
	}
	line := o.Fields.Line("spec", strings.TrimPrefix(s.field, "spec."))
	out, err := permissionFindings(s.field, line, "node role "+s.role.ARN, verdicts)
	if len(out) > 0 || len(rows.undecided) == 0 {
		return out, err
	}
	reason := "cannot tell whether the node role needs " + strings.Join(rows.undecided, ", ")
	if err != nil {
		return nil, facts.Unknown(facts.Simulations, facts.Reason(err)+"; "+reason)
	}
	return nil, facts.Unknown(rows.undecidedFact, reason)
}
