package rules

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// questionLog is a provider that writes down every question asked of the one it wraps, and asks to be
// asked ahead when ahead is set. Safe for concurrent use, as asking ahead needs.
type questionLog struct {
	facts.Provider
	ahead bool

	mu    sync.Mutex
	asked map[string]bool
}

func newQuestionLog(p facts.Provider, ahead bool) *questionLog {
	return &questionLog{Provider: p, ahead: ahead, asked: map[string]bool{}}
}

func (l *questionLog) note(q string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked[q] = true
}

func (l *questionLog) questions() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var qs []string
	for q := range l.asked {
		qs = append(qs, q)
	}
	slices.Sort(qs)
	return qs
}

func (l *questionLog) AskAhead() bool { return l.ahead }

func (l *questionLog) Known(ctx context.Context, f facts.Fact) error {
	l.note("Known " + string(f))
	return l.Provider.Known(ctx, f)
}

func (l *questionLog) Cluster(ctx context.Context) (*facts.Cluster, error) {
	l.note("Cluster")
	return l.Provider.Cluster(ctx)
}

func (l *questionLog) AccessEntry(ctx context.Context, r *facts.Role) (*facts.AccessEntry, error) {
	l.note("AccessEntry " + r.ARN)
	return l.Provider.AccessEntry(ctx, r)
}

func (l *questionLog) AWSAuth(ctx context.Context) (*facts.AWSAuthData, error) {
	l.note("AWSAuth")
	return l.Provider.AWSAuth(ctx)
}

func (l *questionLog) Role(ctx context.Context, name string) (*facts.Role, error) {
	l.note("Role " + strings.ToLower(name))
	return l.Provider.Role(ctx, name)
}

func (l *questionLog) InstanceProfile(ctx context.Context, name string) (*facts.InstanceProfile, error) {
	l.note("InstanceProfile " + strings.ToLower(name))
	return l.Provider.InstanceProfile(ctx, name)
}

func (l *questionLog) Images(ctx context.Context, t facts.ImageTerm) ([]facts.Image, error) {
	l.note("Images " + t.String())
	return l.Provider.Images(ctx, t)
}

func (l *questionLog) SSMParameter(ctx context.Context, name string) (string, bool, error) {
	l.note("SSMParameter " + name)
	return l.Provider.SSMParameter(ctx, name)
}

func (l *questionLog) Subnets(ctx context.Context, t facts.SelectorTerm) ([]facts.Subnet, error) {
	l.note("Subnets " + t.String())
	return l.Provider.Subnets(ctx, t)
}

func (l *questionLog) SecurityGroups(ctx context.Context, t facts.SelectorTerm) ([]facts.SecurityGroup, error) {
	l.note("SecurityGroups " + t.String())
	return l.Provider.SecurityGroups(ctx, t)
}

func (l *questionLog) EBSDefaults(ctx context.Context) (*facts.EBSEncryption, error) {
	l.note("EBSDefaults")
	return l.Provider.EBSDefaults(ctx)
}

func (l *questionLog) PodIdentityAssociations(ctx context.Context) (int, error) {
	l.note("PodIdentityAssociations")
	return l.Provider.PodIdentityAssociations(ctx)
}

func (l *questionLog) KarpenterController(ctx context.Context) (*facts.ControllerRole, error) {
	l.note("KarpenterController")
	return l.Provider.KarpenterController(ctx)
}

func (l *questionLog) VPCCNI(ctx context.Context) (*facts.CNI, error) {
	l.note("VPCCNI")
	return l.Provider.VPCCNI(ctx)
}

// Simulate notes each question of the row (a row's questions are what the snapshot and the live
// provider answer).
func (l *questionLog) Simulate(ctx context.Context, row facts.SimulationRow) ([]facts.Simulation, error) {
	for _, q := range row.Questions() {
		l.note(fmt.Sprintf("Simulate %s %s %s %v", q.Principal, q.Action, q.Resource, q.Context))
	}
	return l.Provider.Simulate(ctx, row)
}

// TestAskAheadMirrorsTheRules: the questions asked ahead are exactly those the rules then ask, for
// the example clusters and for worlds where answers change which questions follow (a role that does
// not exist, a cluster that cannot be described, a mode without access entries, spot, an aws-auth
// edit). A question asked ahead that no rule asks would be an AWS call for nothing; one the rules ask
// that was not foreseen costs a round trip of its own.
func TestAskAheadMirrorsTheRules(t *testing.T) {
	type world struct {
		name      string
		objs      []*objects.Object
		cf        *facts.ClusterFacts
		scope     validators.Scope
		operation string
		old       *objects.Object
	}
	var worlds []world
	for _, dir := range []string{"clusters/api-mode", "clusters/config-map-mode", "clusters/network-and-ami", "production"} {
		path := filepath.Join("..", "..", "examples", dir)
		set := (&manifest.Reader{MaxFileSize: manifest.DefaultMaxFileSize}).Read(context.Background(), []string{path})
		if len(set.Errors) > 0 {
			t.Fatalf("%s: %v", dir, set.Errors)
		}
		worlds = append(worlds, world{name: dir, objs: set.Objects, cf: decodeFacts(t, readFile(t, filepath.Join(path, "cluster-facts.yaml"))), scope: validators.ScopeCLI})
	}
	production := decodeFacts(t, readFile(t, "../../examples/production/cluster-facts.yaml"))
	noCluster := *production
	noCluster.Cluster = nil
	configMapMode := *production
	cl := *production.Cluster
	cl.AuthenticationMode = facts.ModeConfigMap
	configMapMode.Cluster = &cl
	classes := readObjects(t, `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: by-profile}
spec:
  instanceProfile: arn:aws:iam::111122223333:instance-profile/KarpenterNodeInstanceProfile-prod-eks
  amiSelectorTerms: [{alias: al2023@latest}, {name: "amazon-eks-node-al2023-*", owner: amazon}, {ssmParameter: /platform/ami/golden}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod-eks}}, {id: subnet-0123}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: prod-eks}}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: missing-role}
spec:
  role: NoSuchRole
  amiSelectorTerms: [{alias: bottlerocket@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod-eks}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: prod-eks}}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: missing-profile}
spec:
  instanceProfile: NoSuchProfile
  amiSelectorTerms: [{id: ami-0123}]
  blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 100Gi}}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: spot}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: by-profile}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
`)
	worlds = append(worlds,
		world{name: "classes", objs: classes, cf: production, scope: validators.ScopeCLI},
		world{name: "classes without a cluster", objs: classes, cf: &noCluster, scope: validators.ScopeCLI},
		world{name: "classes in mode CONFIG_MAP", objs: classes, cf: &configMapMode, scope: validators.ScopeCLI},
	)
	// The node-identity rules' questions follow the VPC CNI (which rows apply) and the Pod Identity
	// associations; the simulations section is known and empty, so every row is asked.
	// The classes name the node role directly, through an instance profile, and with nodes named after
	// their instance ID (no ec2:DescribeInstances row).
	identity := func(cni facts.CNI, associations *int) *facts.ClusterFacts {
		cf := *production
		cl := *production.Cluster
		cl.PodIdentityAssociations = associations
		profiles := []facts.InstanceProfile{{Name: "KarpenterNodeInstanceProfile-prod-eks", Roles: []string{"KarpenterNodeRole-prod-eks"}}}
		cf.Cluster, cf.VPCCNI, cf.Simulations, cf.InstanceProfiles = &cl, &cni, &[]facts.Simulation{}, &profiles
		return &cf
	}
	identityClasses := append(slices.Clone(worlds[3].objs), append(classes, readObjects(t, `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: instance-id}
spec:
  role: KarpenterNodeRole-prod-eks
  amiSelectorTerms: [{alias: al2023@latest}]
  userData: |
    apiVersion: node.eks.aws/v1alpha1
    kind: NodeConfig
    spec:
      featureGates:
        InstanceIdNodeName: true
`)...)...)
	yes, no, two := true, false, 2
	worlds = append(worlds,
		world{name: "identity, aws-node on the node role", objs: identityClasses, cf: identity(facts.CNI{Present: &yes, Credentials: facts.CredentialsNodeRole}, &two), scope: validators.ScopeCLI},
		world{name: "identity, aws-node on Pod Identity", objs: identityClasses, cf: identity(facts.CNI{Present: &yes, Credentials: facts.CredentialsPodIdentity}, &two), scope: validators.ScopeCLI},
		world{name: "identity, another CNI, associations unknown", objs: identityClasses, cf: identity(facts.CNI{Present: &no}, nil), scope: validators.ScopeCLI},
	)
	awsAuth := readObjects(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aws-auth, namespace: kube-system}\ndata:\n  mapRoles: |\n    - rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks\n      username: system:node:{{EC2PrivateDNSName}}\n      groups: [system:bootstrappers, system:nodes]\n")
	worlds = append(worlds, world{name: "aws-auth update", objs: awsAuth, cf: production, scope: validators.ScopeAdmission, operation: validators.OperationUpdate, old: awsAuth[0]})

	cat := Default()
	for _, w := range worlds {
		t.Run(w.name, func(t *testing.T) {
			input := w.objs
			if w.scope == validators.ScopeAdmission {
				input = classes
			}
			ctx := func(p facts.Provider) *validators.Context {
				return &validators.Context{Context: context.Background(), Config: config.Default(), Facts: facts.WithClusterNodeClasses(p, func(context.Context) error { return nil }),
					Input: input, Scope: w.scope, Operation: w.operation, Old: w.old}
			}
			rules := newQuestionLog(facts.NewSnapshot(w.cf), false)
			cat.Evaluate(ctx(rules), w.objs)

			ahead := newQuestionLog(facts.NewSnapshot(w.cf), true)
			c := ctx(ahead)
			if !facts.AsksAhead(c.Facts) {
				t.Fatal("the wrapped provider does not ask ahead")
			}
			askAhead(cat, c, w.objs)

			r, a := rules.questions(), ahead.questions()
			for _, q := range a {
				if !slices.Contains(r, q) {
					t.Errorf("asked ahead, never by a rule: %s", q)
				}
			}
			for _, q := range r {
				if !slices.Contains(a, q) {
					t.Errorf("asked by a rule, not foreseen: %s", q)
				}
			}
			if len(r) == 0 {
				t.Errorf("no question asked at all")
			}
		})
	}
}

// TestNoAskingAheadFromMemory: providers that answer from memory are not asked ahead (it would only
// cost time), whatever wraps them.
func TestNoAskingAheadFromMemory(t *testing.T) {
	snap := facts.NewSnapshot(&facts.ClusterFacts{})
	for _, p := range []facts.Provider{facts.None{}, snap, facts.NewRecorder(snap), facts.WithInputAWSAuth(snap, nil, false),
		facts.WithClusterNodeClasses(snap, func(context.Context) error { return nil })} {
		if facts.AsksAhead(p) {
			t.Errorf("%T asks ahead", p)
		}
	}
	if !facts.AsksAhead(facts.NewRecorder(newQuestionLog(snap, true))) {
		t.Errorf("a recorder hides that the provider it records asks ahead")
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func decodeFacts(t *testing.T, data []byte) *facts.ClusterFacts {
	t.Helper()
	cf, err := facts.DecodeSnapshotFile(data)
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

func readObjects(t *testing.T, doc string) []*objects.Object {
	t.Helper()
	set := &manifest.Set{}
	set.Add(manifest.Source{Path: "in.yaml", Data: []byte(doc)})
	if len(set.Errors) > 0 {
		t.Fatalf("%v", set.Errors)
	}
	return set.Objects
}

// cachedOnly is a provider that asks ahead and keeps a cache: in an AtHandOnly context it answers only
// questions it was asked before, outside one. It counts the questions asked outside, and notes every
// answer given at hand, as a provider serving a stale answer would.
type cachedOnly struct {
	*questionLog
	mu     sync.Mutex
	cached map[string]bool
	asked  int
	// wait, when set, is how long a question asked outside what is at hand takes; inFlight and
	// maxInFlight count those being answered at once.
	wait                  time.Duration
	inFlight, maxInFlight int
}

func (p *cachedOnly) AskAhead() bool { return true }

// at answers whether question q may be answered: always outside an AtHandOnly context (counting it),
// inside only when it was asked before.
func (p *cachedOnly) at(ctx context.Context, q string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !facts.OnlyAtHand(ctx) {
		p.asked++
		p.cached[q] = true
		if p.wait > 0 {
			p.inFlight++
			p.maxInFlight = max(p.maxInFlight, p.inFlight)
			p.mu.Unlock()
			time.Sleep(p.wait)
			p.mu.Lock()
			p.inFlight--
		}
		return true
	}
	if p.cached[q] {
		facts.Note(ctx, "answered from the cache")
	}
	return p.cached[q]
}

func (p *cachedOnly) Known(ctx context.Context, f facts.Fact) error {
	if !p.at(ctx, "Known "+string(f)) {
		return facts.NotAtHand(ctx, f)
	}
	return p.questionLog.Known(ctx, f)
}

func (p *cachedOnly) Cluster(ctx context.Context) (*facts.Cluster, error) {
	if !p.at(ctx, "Cluster") {
		return nil, facts.NotAtHand(ctx, "cluster")
	}
	return p.questionLog.Cluster(ctx)
}

func (p *cachedOnly) Role(ctx context.Context, name string) (*facts.Role, error) {
	if !p.at(ctx, "Role "+strings.ToLower(name)) {
		return nil, facts.NotAtHand(ctx, facts.Roles)
	}
	return p.questionLog.Role(ctx, name)
}

func (p *cachedOnly) SSMParameter(ctx context.Context, name string) (string, bool, error) {
	if !p.at(ctx, "SSMParameter "+name) {
		return "", false, facts.NotAtHand(ctx, facts.SSMParameters)
	}
	return p.questionLog.SSMParameter(ctx, name)
}

func (p *cachedOnly) Images(ctx context.Context, t facts.ImageTerm) ([]facts.Image, error) {
	if !p.at(ctx, "Images "+t.String()) {
		return nil, facts.NotAtHand(ctx, facts.Images)
	}
	return p.questionLog.Images(ctx, t)
}

// TestEvaluateAtHandFirst: with a provider that asks ahead, a cold evaluation gives up its run on what
// is at hand at the first miss, asks ahead and runs again, with the verdicts of a provider that asks
// nothing ahead; a warm one runs once on what is at hand, asks nothing, and keeps its notes.
func TestEvaluateAtHandFirst(t *testing.T) {
	cf := decodeFacts(t, readFile(t, "../../examples/production/cluster-facts.yaml"))
	path := filepath.Join("..", "..", "examples", "production")
	set := (&manifest.Reader{MaxFileSize: manifest.DefaultMaxFileSize}).Read(context.Background(), []string{path})
	cat := Default()
	evaluate := func(p facts.Provider) validators.Result {
		return cat.Evaluate(&validators.Context{Context: context.Background(), Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
	}
	outcome := func(r validators.Result) string {
		var b strings.Builder
		for _, f := range r.Findings {
			b.WriteString(f.Rule + " " + f.Object.Name + ": " + f.Message + "\n")
		}
		for _, n := range r.NotEvaluated {
			b.WriteString("not evaluated " + n.Rule + " " + n.Object.Name + ": " + n.Reason + "\n")
		}
		return b.String()
	}
	want := outcome(evaluate(facts.NewSnapshot(cf)))

	p := &cachedOnly{questionLog: newQuestionLog(facts.NewSnapshot(cf), true), cached: map[string]bool{}}
	cold := evaluate(p)
	if got := outcome(cold); got != want {
		t.Errorf("cold verdicts:\n%s\nwant those of the snapshot:\n%s", got, want)
	}
	if p.asked == 0 {
		t.Fatalf("the cold evaluation asked nothing outside what was at hand")
	}
	asked := p.asked
	warm := evaluate(p)
	if got := outcome(warm); got != want {
		t.Errorf("warm verdicts:\n%s\nwant those of the snapshot:\n%s", got, want)
	}
	if p.asked != asked {
		t.Errorf("the warm evaluation asked %d questions beyond what was at hand; want none", p.asked-asked)
	}
	if !slices.Contains(warm.Notes, "answered from the cache") {
		t.Errorf("the warm evaluation lost the notes of its answers: %q", warm.Notes)
	}
}

// TestDefaultAsksAhead: the catalog of this build asks a provider that wants it the rules' questions
// ahead, several at once, where the rules alone would ask one at a time.
func TestDefaultAsksAhead(t *testing.T) {
	cf := decodeFacts(t, readFile(t, "../../examples/production/cluster-facts.yaml"))
	set := (&manifest.Reader{MaxFileSize: manifest.DefaultMaxFileSize}).Read(context.Background(), []string{filepath.Join("..", "..", "examples", "production")})
	p := &cachedOnly{questionLog: newQuestionLog(facts.NewSnapshot(cf), true), cached: map[string]bool{}, wait: 20 * time.Millisecond}
	Default().Evaluate(&validators.Context{Context: context.Background(), Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
	if p.maxInFlight < 2 {
		t.Errorf("at most %d question answered at once: the catalog did not ask ahead", p.maxInFlight)
	}
}

func (l *questionLog) VPC(ctx context.Context) (*facts.VPCAttributes, error) {
	l.note("VPC")
	return l.Provider.VPC(ctx)
}

func (l *questionLog) NATGateways(ctx context.Context) ([]facts.NATGateway, error) {
	l.note("NATGateways")
	return l.Provider.NATGateways(ctx)
}

func (l *questionLog) VPCEndpoints(ctx context.Context) ([]facts.VPCEndpoint, error) {
	l.note("VPCEndpoints")
	return l.Provider.VPCEndpoints(ctx)
}

func (l *questionLog) KMSKey(ctx context.Context, ref string) (*facts.KMSKey, error) {
	l.note("KMSKey " + ref)
	return l.Provider.KMSKey(ctx, ref)
}

func (l *questionLog) ServiceQuota(ctx context.Context, code string) (int, error) {
	l.note("ServiceQuota " + code)
	return l.Provider.ServiceQuota(ctx, code)
}

func (l *questionLog) CapacityReservations(ctx context.Context) ([]facts.CapacityReservation, error) {
	l.note("CapacityReservations")
	return l.Provider.CapacityReservations(ctx)
}

func (l *questionLog) InstanceTypes(ctx context.Context) ([]facts.InstanceType, error) {
	l.note("InstanceTypes")
	return l.Provider.InstanceTypes(ctx)
}
