package live_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live"
	"github.com/karpenter-guard/karpenter-guard/facts/live/serviceaccount"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

const (
	controllerRole = "arn:aws:iam::111122223333:role/KarpenterController-prod-eks"
	nodeRoleARN    = "arn:aws:iam::111122223333:role/teams/KarpenterNodeRole"
)

// launchContext is the request context of the world's launch simulations.
var launchContext = map[string][]string{
	"aws:RequestedRegion":                 {"eu-west-1"},
	"aws:RequestTag/eks:eks-cluster-name": {"prod-eks"},
	"aws:TagKeys":                         {"eks:eks-cluster-name", "karpenter.sh/nodepool"},
}

// worldRows are simulation rows whose every question the world's simulations section answers, one of
// them spelled otherwise (actions' case, the order of actions and of a context key's values) than the
// section.
var worldRows = []facts.SimulationRow{
	{Principal: controllerRole, Actions: []string{"iam:PassRole"}, Resources: []string{nodeRoleARN},
		Context: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}},
	{Principal: controllerRole, Actions: []string{"ec2:CreateFleet", "ec2:RunInstances"},
		Resources: []string{"arn:aws:ec2:eu-west-1:111122223333:launch-template/*", "arn:aws:ec2:eu-west-1:111122223333:fleet/*"}, Context: launchContext},
	{Principal: controllerRole, Actions: []string{"EC2:RunInstances", "ec2:createfleet"},
		Resources: []string{"arn:aws:ec2:eu-west-1:111122223333:fleet/*"}, Context: map[string][]string{
			"aws:RequestedRegion": {"eu-west-1"}, "aws:RequestTag/eks:eks-cluster-name": {"prod-eks"},
			"aws:TagKeys": {"karpenter.sh/nodepool", "eks:eks-cluster-name"},
		}},
	{Principal: nodeRoleARN, Actions: []string{"ec2:DescribeInstances"}, Resources: []string{"*"}},
}

// identityHead is a world's cluster, without its identity facts.
const identityHead = `apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster: {name: prod-eks, region: eu-west-1, partition: aws, accountID: "111122223333", version: "1.33", authenticationMode: API, vpcID: vpc-0a1b2c3d%s}
`

// TestIdentityMatchesSnapshot: for every way the controller and aws-node get their credentials, and
// for a snapshot that does not know them, the live provider (the fake serving the associations the
// snapshot implies, a Kubernetes reader holding the ServiceAccounts) answers as the snapshot does,
// unknown where it is unknown.
func TestIdentityMatchesSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name, count, identity string
	}{
		{"IRSA", "", `
karpenterController: {serviceAccount: kube-system/karpenter, roleArn: "arn:aws:iam::111122223333:role/KarpenterController", source: irsa}
vpcCNI: {present: true, credentials: irsa, roleArn: "arn:aws:iam::111122223333:role/AmazonEKSVPCCNIRole"}
`},
		{"Pod Identity, a session policy and a target role", ", podIdentityAssociations: 4", `
karpenterController: {serviceAccount: kube-system/karpenter, roleArn: "arn:aws:iam::111122223333:role/KarpenterController", source: podIdentity,
  sessionPolicy: true, targetRoleArn: "arn:aws:iam::444455556666:role/KarpenterTarget"}
vpcCNI: {present: true, credentials: podIdentity, roleArn: "arn:aws:iam::111122223333:role/AmazonEKSVPCCNIRole"}
`},
		{"Pod Identity elsewhere, node role", ", podIdentityAssociations: 1", `
karpenterController: {serviceAccount: karpenter/karpenter, roleArn: "arn:aws:iam::111122223333:role/KarpenterController", source: podIdentity, sessionPolicy: false}
vpcCNI: {present: true, credentials: nodeRole}
`},
		{"config, another CNI", ", podIdentityAssociations: 0", `
karpenterController: {serviceAccount: kube-system/karpenter, roleArn: "arn:aws:iam::111122223333:role/KarpenterController", source: config}
vpcCNI: {present: false}
`},
		{"unknown", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			doc := fmt.Sprintf(identityHead, tc.count) + tc.identity
			cf := decode(t, doc)
			snap, lp := facts.NewSnapshot(cf), start(t, cf, livetest.Options{}).Provider
			same := func(what string, get func(p facts.Provider) (any, error)) {
				t.Helper()
				want, werr := get(snap)
				got, gerr := get(lp)
				switch {
				case (werr == nil) != (gerr == nil):
					t.Errorf("%s: snapshot %s, %v; live %s, %v", what, fmtAny(want), werr, fmtAny(got), gerr)
				case werr == nil && fmtAny(want) != fmtAny(got):
					t.Errorf("%s:\nsnapshot %s\nlive     %s", what, fmtAny(want), fmtAny(got))
				case werr != nil && (!facts.IsUnknown(werr) || !facts.IsUnknown(gerr)):
					t.Errorf("%s: snapshot %v, live %v; want unknown facts", what, werr, gerr)
				}
			}
			same("pod identity associations", func(p facts.Provider) (any, error) { return p.PodIdentityAssociations(ctx) })
			same("karpenter controller", func(p facts.Provider) (any, error) { return p.KarpenterController(ctx) })
			same("vpc cni", func(p facts.Provider) (any, error) { return p.VPCCNI(ctx) })
			for _, f := range []facts.Fact{facts.ClusterPodIdentityAssociations, facts.KarpenterController, facts.VPCCNI} {
				same("known "+string(f), func(p facts.Provider) (any, error) { return nil, p.Known(ctx, f) })
			}
		})
	}
}

// TestSimulateOncePerRow: a row is one SimulatePrincipalPolicy call however often, and however many
// callers at once, ask it, and whichever way it spells its actions and context; the answers follow the
// row's questions, spelled as the caller spelled them.
func TestSimulateOncePerRow(t *testing.T) {
	env := start(t, decode(t, world), livetest.Options{})
	ctx := context.Background()
	row := worldRows[1]
	respelled := facts.SimulationRow{Principal: row.Principal, Actions: []string{"EC2:CreateFleet", "ec2:runinstances"}, Resources: row.Resources,
		Context: map[string][]string{"aws:TagKeys": {"karpenter.sh/nodepool", "eks:eks-cluster-name", "karpenter.sh/nodepool"}, "aws:RequestedRegion": {"eu-west-1"}, "aws:RequestTag/eks:eks-cluster-name": {"prod-eks"}}}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			r := row
			if i%2 == 1 {
				r = respelled
			}
			sims, err := env.Provider.Simulate(ctx, r)
			if err != nil {
				t.Errorf("Simulate: %v", err)
				return
			}
			qs := r.Questions()
			want := []string{facts.DecisionImplicitDeny, facts.DecisionAllowed, facts.DecisionExplicitDeny, facts.DecisionImplicitDeny}
			for j, s := range sims {
				if s.Question().Key() != qs[j].Key() || s.Action != qs[j].Action || s.Decision != want[j] {
					t.Errorf("answer %d = %+v; want %s for %+v", j, s, want[j], qs[j])
				}
			}
			if got := sims[0].MissingContextValues; len(got) != 1 || got[0] != "ec2:CreateAction" {
				t.Errorf("missing context values %q; want [ec2:CreateAction]", got)
			}
		})
	}
	wg.Wait()
	if n := env.Fake.Calls("iam:SimulatePrincipalPolicy"); n != 1 {
		t.Errorf("%d SimulatePrincipalPolicy calls for one row asked 20 times; want 1", n)
	}
	if _, err := env.Provider.Simulate(ctx, worldRows[0]); err != nil {
		t.Fatal(err)
	}
	if n := env.Fake.Calls("iam:SimulatePrincipalPolicy"); n != 2 {
		t.Errorf("%d SimulatePrincipalPolicy calls after another row; want 2", n)
	}
	if sims, err := env.Provider.Simulate(ctx, facts.SimulationRow{Principal: controllerRole}); err != nil || len(sims) != 0 || env.Fake.Calls("iam:SimulatePrincipalPolicy") != 2 {
		t.Errorf("a row without questions: %v, %v; want no answers and no call", sims, err)
	}
}

// TestSimulateUnknownPrincipal: a principal IAM does not know is an unknown fact that says so, kept for
// the negative TTL like any "does not exist".
func TestSimulateUnknownPrincipal(t *testing.T) {
	clock := livetest.NewClock()
	env := start(t, decode(t, world), livetest.Options{Cache: cache.Options{NegativeTTL: 30 * time.Second, Now: clock.Now}})
	row := facts.SimulationRow{Principal: "arn:aws:iam::111122223333:role/Deleted", Actions: []string{"ec2:DescribeInstances"}, Resources: []string{"*"}}
	for i, wait := range []time.Duration{0, 10 * time.Second, 30 * time.Second} {
		clock.Add(wait)
		sims, err := env.Provider.Simulate(context.Background(), row)
		var u *facts.UnknownError
		if sims != nil || !errors.As(err, &u) || u.Fact != facts.Simulations || u.Reason != "IAM has no role arn:aws:iam::111122223333:role/Deleted to simulate" {
			t.Fatalf("question %d: Simulate = %v, %v; want unknown: IAM has no such role", i, sims, err)
		}
		if n, want := env.Fake.Calls("iam:SimulatePrincipalPolicy"), []int{1, 1, 2}[i]; n != want {
			t.Errorf("after question %d: %d calls, want %d", i, n, want)
		}
	}
}

// TestSimulateDenied: without iam:SimulatePrincipalPolicy every row is unknown, naming the action to
// grant, and so is the fact: the permission probe is refused as well.
func TestSimulateDenied(t *testing.T) {
	env := start(t, decode(t, world), livetest.Options{})
	env.Fake.Inject("iam:SimulatePrincipalPolicy", fakeaws.Fault{AccessDenied: true})
	ctx := context.Background()
	const reason = "AWS denied iam:SimulatePrincipalPolicy (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"
	for _, err := range []error{askSimulate(ctx, env.Provider), env.Provider.Known(ctx, facts.Simulations)} {
		var u *facts.UnknownError
		if !errors.As(err, &u) || u.Fact != facts.Simulations || u.Reason != reason {
			t.Errorf("%v; want the unknown fact simulations because %q", err, reason)
		}
	}
	env.Fake.Clear("")
	if err := env.Provider.Known(ctx, facts.Simulations); err == nil {
		t.Errorf("Known(simulations) passed within the TTL of its refusal; want the cached refusal")
	}
	env = start(t, decode(t, world), livetest.Options{})
	if err := env.Provider.Known(ctx, facts.Simulations); err != nil {
		t.Errorf("Known(simulations) with the permission: %v", err)
	}
	if n := env.Fake.Calls("iam:SimulatePrincipalPolicy"); n != 1 {
		t.Errorf("%d calls for the permission probe; want 1", n)
	}
}

// TestControllerAndCNI: where the controller's and aws-node's roles come from, read from their
// ServiceAccounts (a fake Kubernetes client) and the cluster's Pod Identity associations (the AWS
// fake), in the order the SDK resolves credentials: the GuardConfig's role first, then IRSA, then Pod
// Identity.
func TestControllerAndCNI(t *testing.T) {
	// The fake serves associations for kube-system/karpenter (with a session policy and a target
	// role) and for kube-system/aws-node, and another one.
	const doc = identityHead + `karpenterController: {serviceAccount: kube-system/karpenter, roleArn: "arn:aws:iam::111122223333:role/FromPodIdentity", source: podIdentity,
  sessionPolicy: true, targetRoleArn: "arn:aws:iam::444455556666:role/Target"}
vpcCNI: {present: true, credentials: podIdentity, roleArn: "arn:aws:iam::111122223333:role/CNIFromPodIdentity"}
`
	cf := decode(t, fmt.Sprintf(doc, ", podIdentityAssociations: 2"))
	srv := fakeaws.New(cf)
	url := srv.Start(t)
	sa := func(namespace, name, role string) client.Object {
		o := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		if role != "" {
			o.Annotations = map[string]string{serviceaccount.RoleARNAnnotation: role}
		}
		return o
	}
	yes, no := true, false
	for _, tc := range []struct {
		name      string
		karpenter config.Karpenter
		kube      []client.Object // nil: no Kubernetes client
		ctrl      *facts.ControllerRole
		ctrlWhy   string
		cni       *facts.CNI
		cniWhy    string
	}{
		{name: "no Kubernetes client", karpenter: config.Karpenter{ServiceAccount: "kube-system/karpenter"},
			ctrlWhy: "no access to the cluster's Kubernetes API (give a kubeconfig)", cniWhy: "no access to the cluster's Kubernetes API (give a kubeconfig)"},
		{name: "the GuardConfig names the role", karpenter: config.Karpenter{ServiceAccount: "kube-system/karpenter", ControllerRoleARN: "arn:aws:iam::111122223333:role/Configured"},
			ctrl:   &facts.ControllerRole{ServiceAccount: "kube-system/karpenter", RoleARN: "arn:aws:iam::111122223333:role/Configured", Source: facts.CredentialsConfig},
			cniWhy: "no access to the cluster's Kubernetes API (give a kubeconfig)"},
		{name: "IRSA wins over Pod Identity", karpenter: config.Karpenter{},
			kube: []client.Object{sa("kube-system", "karpenter", "arn:aws:iam::111122223333:role/FromIRSA"), sa("kube-system", "aws-node", "arn:aws:iam::111122223333:role/CNIFromIRSA")},
			ctrl: &facts.ControllerRole{ServiceAccount: "kube-system/karpenter", RoleARN: "arn:aws:iam::111122223333:role/FromIRSA", Source: facts.CredentialsIRSA},
			cni:  &facts.CNI{Present: &yes, Credentials: facts.CredentialsIRSA, RoleARN: "arn:aws:iam::111122223333:role/CNIFromIRSA"}},
		{name: "Pod Identity", karpenter: config.Karpenter{ServiceAccount: "kube-system/karpenter"},
			kube: []client.Object{sa("kube-system", "karpenter", ""), sa("kube-system", "aws-node", "")},
			ctrl: &facts.ControllerRole{ServiceAccount: "kube-system/karpenter", RoleARN: "arn:aws:iam::111122223333:role/FromPodIdentity", Source: facts.CredentialsPodIdentity,
				SessionPolicy: &yes, TargetRoleARN: "arn:aws:iam::444455556666:role/Target"},
			cni: &facts.CNI{Present: &yes, Credentials: facts.CredentialsPodIdentity, RoleARN: "arn:aws:iam::111122223333:role/CNIFromPodIdentity"}},
		{name: "neither", karpenter: config.Karpenter{ServiceAccount: "karpenter/karpenter"},
			kube:    []client.Object{sa("karpenter", "karpenter", ""), sa("kube-system", "karpenter", "arn:aws:iam::111122223333:role/FromIRSA")},
			ctrlWhy: "the controller runs with neither IRSA nor Pod Identity; node-role credentials are not modelled",
			cni:     &facts.CNI{Present: &no}},
		{name: "no such ServiceAccount", karpenter: config.Karpenter{ServiceAccount: "kube-system/karpenter"},
			kube:    []client.Object{sa("karpenter", "karpenter", "arn:aws:iam::111122223333:role/FromIRSA")},
			ctrlWhy: "no ServiceAccount kube-system/karpenter: set karpenter.serviceAccount",
			cni:     &facts.CNI{Present: &no}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var kube client.Reader
			if tc.kube != nil {
				kube = fake.NewClientBuilder().WithObjects(tc.kube...).Build()
			}
			p, err := live.New(live.Options{ClusterName: "prod-eks", Region: "eu-west-1", Clients: livetest.NewClients(url, "eu-west-1", livetest.Options{}),
				Kube: kube, Karpenter: tc.karpenter, Budget: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			ctx := context.Background()
			ctrl, err := p.KarpenterController(ctx)
			check(t, "KarpenterController", facts.KarpenterController, ctrl, err, tc.ctrl, tc.ctrlWhy)
			if kerr := p.Known(ctx, facts.KarpenterController); (kerr == nil) != (tc.ctrlWhy == "") {
				t.Errorf("Known(karpenterController) = %v; want it known: %v", kerr, tc.ctrlWhy == "")
			}
			cni, err := p.VPCCNI(ctx)
			check(t, "VPCCNI", facts.VPCCNI, cni, err, tc.cni, tc.cniWhy)
			if kerr := p.Known(ctx, facts.VPCCNI); (kerr == nil) != (tc.cniWhy == "") {
				t.Errorf("Known(vpcCNI) = %v; want it known: %v", kerr, tc.cniWhy == "")
			}
		})
	}
}

// check compares an identity answer with the one wanted, or its unknown fact f with the reason.
func check(t *testing.T, what string, f facts.Fact, got any, err error, want any, reason string) {
	t.Helper()
	if reason != "" {
		var u *facts.UnknownError
		if !errors.As(err, &u) || u.Fact != f || u.Reason != reason {
			t.Errorf("%s = %s, %v; want the unknown fact %s because %q", what, fmtAny(got), err, f, reason)
		}
		return
	}
	if err != nil || fmtAny(got) != fmtAny(want) {
		t.Errorf("%s = %s, %v; want %s", what, fmtAny(got), err, fmtAny(want))
	}
}

// TestIdentityAtHandOnly: in a facts.AtHandOnly context the identity questions wait for nothing: not
// cached, they say they are not at hand and start their fetches, a level of dependent questions per
// round; once a round misses nothing, they are answered from the caches, and asking them outside
// such a context makes no call.
func TestIdentityAtHandOnly(t *testing.T) {
	env := start(t, decode(t, world), livetest.Options{})
	questions := map[string]func(context.Context, facts.Provider) error{
		"simulation":                askSimulate,
		"pod identity associations": askPodIdentityAssociations,
		"karpenter controller":      askController,
		"vpc cni":                   askCNI,
		"simulations probe":         func(ctx context.Context, p facts.Provider) error { return p.Known(ctx, facts.Simulations) },
	}
	for name, ask := range questions {
		for n := 1; ; n++ {
			hctx, round := facts.AtHandOnly(context.Background())
			err := ask(hctx, env.Provider)
			if !round.Missed() {
				if n == 1 || err != nil {
					t.Errorf("%s at hand only, round %d: %v; want not at hand first, then the answer", name, n, err)
				}
				break
			}
			if !errors.Is(err, facts.ErrNotAtHand) {
				t.Errorf("%s at hand only, round %d: %v; want not at hand", name, n, err)
			}
			if round.Wait(); n > 8 {
				t.Fatalf("%s: still not at hand after %d rounds", name, n)
			}
		}
	}
	env.Fake.ResetCalls()
	for name, ask := range questions {
		if err := ask(context.Background(), env.Provider); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		hctx, round := facts.AtHandOnly(context.Background())
		if err := ask(hctx, env.Provider); err != nil || round.Missed() {
			t.Errorf("%s at hand only, cached: %v (missed %v); want the cached answer", name, err, round.Missed())
		}
	}
	if n := env.Fake.Calls("*"); n != 0 {
		t.Errorf("%d requests answering from the caches; want none", n)
	}
}

// TestTrustPolicyDecoded: GetRole's trust policy arrives URL-encoded and is answered decoded, "+" and
// "%" of the document included.
func TestTrustPolicyDecoded(t *testing.T) {
	env := start(t, decode(t, world), livetest.Options{})
	r, err := env.Provider.Role(context.Background(), "KarpenterNodeRole")
	if err != nil || r == nil {
		t.Fatalf("Role = %v, %v", r, err)
	}
	if !strings.Contains(r.AssumeRolePolicyDocument, `"sts:ExternalId":"a+b c/%41"`) || !strings.HasPrefix(r.AssumeRolePolicyDocument, `{"Version":"2012-10-17"`) {
		t.Errorf("trust policy %q; want the document as the snapshot holds it", r.AssumeRolePolicyDocument)
	}
}

func askSimulate(ctx context.Context, p facts.Provider) error {
	_, err := p.Simulate(ctx, worldRows[1])
	return err
}

func askPodIdentityAssociations(ctx context.Context, p facts.Provider) error {
	_, err := p.PodIdentityAssociations(ctx)
	return err
}

func askController(ctx context.Context, p facts.Provider) error {
	_, err := p.KarpenterController(ctx)
	return err
}

func askCNI(ctx context.Context, p facts.Provider) error {
	_, err := p.VPCCNI(ctx)
	return err
}
