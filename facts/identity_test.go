package facts

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"testing"
)

const (
	controllerARN = "arn:aws:iam::111122223333:role/KarpenterController"
	nodeRoleARN   = "arn:aws:iam::111122223333:role/KarpenterNodeRole"
)

// TestSimulationKey: questions that IAM would treat alike have one key (context keys and values in any
// order, action case), and questions that differ in anything IAM reads do not.
func TestSimulationKey(t *testing.T) {
	base := SimulationQuestion{Principal: controllerARN, Action: "ec2:CreateFleet", Resource: "*",
		Context: map[string][]string{"aws:RequestTag/a": {"1"}, ContextTagKeys: {"a", "b"}}}
	same := []SimulationQuestion{
		{Principal: controllerARN, Action: "EC2:CreateFleet", Resource: "*",
			Context: map[string][]string{ContextTagKeys: {"b", "a"}, "aws:RequestTag/a": {"1"}}},
		{Principal: controllerARN, Action: "ec2:CreateFleet", Resource: "*",
			Context: map[string][]string{"AWS:RequestTag/a": {"1"}, ContextTagKeys: {"a", "b", "a"}}},
	}
	for i, q := range same {
		if q.Key() != base.Key() {
			t.Errorf("same[%d] has another key than base", i)
		}
	}
	differ := []SimulationQuestion{
		{Principal: nodeRoleARN, Action: base.Action, Resource: base.Resource, Context: base.Context},
		{Principal: base.Principal, Action: "ec2:RunInstances", Resource: base.Resource, Context: base.Context},
		{Principal: base.Principal, Action: base.Action, Resource: "arn:aws:ec2:us-east-1:111122223333:fleet/*", Context: base.Context},
		{Principal: base.Principal, Action: base.Action, Resource: base.Resource, Context: map[string][]string{"aws:RequestTag/a": {"2"}, ContextTagKeys: {"a", "b"}}},
		{Principal: base.Principal, Action: base.Action, Resource: base.Resource, Context: map[string][]string{"aws:RequestTag/a": {"1"}}},
		{Principal: base.Principal, Action: base.Action, Resource: base.Resource},
	}
	for i, q := range differ {
		if q.Key() == base.Key() {
			t.Errorf("differ[%d] has the key of base", i)
		}
	}
}

// TestSnapshotSimulate: a row is answered question by question from the lookup section; a question
// without an entry is unknown (an empty decision), and a snapshot without the section cannot simulate.
func TestSnapshotSimulate(t *testing.T) {
	ctx := context.Background()
	pass := map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}
	cf := &ClusterFacts{Simulations: &[]Simulation{
		{Principal: controllerARN, Action: "iam:PassRole", Resource: nodeRoleARN, Context: pass, Decision: DecisionImplicitDeny},
		{Principal: controllerARN, Action: "iam:GetInstanceProfile", Resource: "*", Decision: DecisionAllowed},
		{Principal: controllerARN, Action: "iam:CreateInstanceProfile", Resource: "*", Decision: DecisionImplicitDeny, MissingContextValues: []string{"aws:RequestTag/kubernetes.io/cluster/prod"}},
	}}
	s := NewSnapshot(cf)
	row := SimulationRow{Principal: controllerARN, Actions: []string{"iam:GetInstanceProfile", "iam:CreateInstanceProfile", "iam:TagInstanceProfile"}, Resources: []string{"*"}}
	got, err := s.Simulate(ctx, row)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{DecisionAllowed, DecisionImplicitDeny, ""}
	for i, sim := range got {
		if sim.Decision != want[i] || sim.Action != row.Actions[i] {
			t.Errorf("answer %d: %s %q, want %s %q", i, sim.Action, sim.Decision, row.Actions[i], want[i])
		}
	}
	if !reflect.DeepEqual(got[1].MissingContextValues, []string{"aws:RequestTag/kubernetes.io/cluster/prod"}) {
		t.Errorf("missing context values not kept: %v", got[1].MissingContextValues)
	}
	got, err = s.Simulate(ctx, SimulationRow{Principal: controllerARN, Actions: []string{"iam:PassRole"}, Resources: []string{nodeRoleARN}, Context: pass})
	if err != nil || len(got) != 1 || !got[0].Denied() {
		t.Errorf("PassRole: %+v, %v; want a denial", got, err)
	}
	// The same question without its context is another question.
	got, _ = s.Simulate(ctx, SimulationRow{Principal: controllerARN, Actions: []string{"iam:PassRole"}, Resources: []string{nodeRoleARN}})
	if got[0].Decision != "" {
		t.Errorf("PassRole without context answered %q from an entry with context", got[0].Decision)
	}
	if _, err := NewSnapshot(&ClusterFacts{}).Simulate(ctx, row); !IsUnknown(err) || Reason(err) != notInSnapshot {
		t.Errorf("no simulations section: %v, want unknown %q", err, notInSnapshot)
	}
}

// TestSnapshotSimulateKeyedRow: a keyed row carries the digest of the row it was made from, and the
// snapshot answers it as it answers the row, from memory when asked again; a keyed row of the same
// digest spelled otherwise gets answers spelled its own way, and rows past the memory's bound are
// still answered.
func TestSnapshotSimulateKeyedRow(t *testing.T) {
	ctx := context.Background()
	tags := map[string][]string{"aws:RequestTag/team": {"a"}, ContextTagKeys: {"team"}}
	cf := &ClusterFacts{Simulations: &[]Simulation{
		{Principal: controllerARN, Action: "ec2:CreateFleet", Resource: "arn:aws:ec2:us-east-1:111122223333:fleet/*", Context: tags, Decision: DecisionAllowed},
		{Principal: controllerARN, Action: "ec2:RunInstances", Resource: "arn:aws:ec2:us-east-1:111122223333:fleet/*", Context: tags, Decision: DecisionImplicitDeny, MissingContextValues: []string{"aws:SourceVpce"}},
	}}
	row := SimulationRow{Principal: controllerARN, Actions: []string{"ec2:CreateFleet", "ec2:RunInstances"},
		Resources: []string{"arn:aws:ec2:us-east-1:111122223333:fleet/*", "arn:aws:ec2:us-east-1:111122223333:instance/*"}, Context: tags}
	keyed := row.Keyed()
	if keyed.Digest() != row.Digest() || keyed.Key() != row.Key() {
		t.Fatalf("the keyed row has another digest or key than its row")
	}
	s := NewSnapshot(cf)
	want, err := s.Simulate(ctx, row)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 4 || want[0].Decision != DecisionAllowed || want[2].Decision != DecisionImplicitDeny || want[1].Decision != "" {
		t.Fatalf("the row's answers: %+v", want)
	}
	for i := range 2 {
		got, err := s.Simulate(ctx, keyed)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("keyed row, asked %d times: %+v, %v\nwant %+v", i+1, got, err, want)
		}
	}
	// The same questions in IAM's eyes, spelled otherwise: one digest, its own spelling in the answers.
	respelled := SimulationRow{Principal: row.Principal, Actions: []string{"EC2:CreateFleet", "EC2:RunInstances"}, Resources: row.Resources,
		Context: map[string][]string{"AWS:RequestTag/team": {"a"}, ContextTagKeys: {"team"}}}.Keyed()
	if respelled.Digest() != keyed.Digest() {
		t.Fatalf("respelled row: another digest")
	}
	got, err := s.Simulate(ctx, respelled)
	if err != nil || len(got) != len(want) {
		t.Fatalf("respelled row: %+v, %v", got, err)
	}
	for i := range got {
		if got[i].Action != respelled.Actions[i/2] || got[i].Decision != want[i].Decision {
			t.Errorf("respelled answer %d: %s %q, want %s %q", i, got[i].Action, got[i].Decision, respelled.Actions[i/2], want[i].Decision)
		}
	}
	// Past the bound, keyed rows are answered without being remembered.
	for i := range maxMemoRows + 10 {
		r := SimulationRow{Principal: controllerARN, Actions: []string{"ec2:CreateFleet"}, Resources: []string{fmt.Sprintf("arn:aws:ec2:us-east-1:111122223333:fleet/%d", i)}, Context: tags}.Keyed()
		if got, err := s.Simulate(ctx, r); err != nil || len(got) != 1 || got[0].Decision != "" || got[0].Resource != r.Resources[0] {
			t.Fatalf("row %d: %+v, %v", i, got, err)
		}
	}
	if n := s.rowAnswers.size.Load(); n != maxMemoRows {
		t.Errorf("the snapshot remembers %d rows, want its bound %d", n, maxMemoRows)
	}
	if got, _ := s.Simulate(ctx, keyed); !reflect.DeepEqual(got, want) {
		t.Errorf("a remembered row past the bound: %+v", got)
	}
}

// TestSnapshotIdentityFacts: each identity fact is known exactly when its section (or field) is there.
func TestSnapshotIdentityFacts(t *testing.T) {
	ctx := context.Background()
	n := 0
	full := NewSnapshot(&ClusterFacts{
		Cluster:             &Cluster{Name: "prod", PodIdentityAssociations: &n},
		KarpenterController: &ControllerRole{RoleARN: controllerARN, Source: CredentialsIRSA},
		VPCCNI:              &CNI{Credentials: CredentialsNodeRole},
		Simulations:         &[]Simulation{},
	})
	empty := NewSnapshot(&ClusterFacts{Cluster: &Cluster{Name: "prod"}})
	for _, f := range []Fact{ClusterPodIdentityAssociations, KarpenterController, VPCCNI, Simulations} {
		if err := full.Known(ctx, f); err != nil {
			t.Errorf("%s: %v, want known", f, err)
		}
		if err := empty.Known(ctx, f); !IsUnknown(err) {
			t.Errorf("%s without its section: %v, want unknown", f, err)
		}
	}
	if got, err := full.PodIdentityAssociations(ctx); got != 0 || err != nil {
		t.Errorf("PodIdentityAssociations = %d, %v", got, err)
	}
	if kc, err := full.KarpenterController(ctx); err != nil || kc.RoleARN != controllerARN {
		t.Errorf("KarpenterController = %+v, %v", kc, err)
	}
	if _, err := empty.VPCCNI(ctx); !IsUnknown(err) {
		t.Errorf("VPCCNI without the section: %v", err)
	}
}

// TestRecorderIdentityFacts: what the rules ask of the identity facts is written to the snapshot, and
// the snapshot then answers the same; a simulation the provider could not answer stays out (unknown).
func TestRecorderIdentityFacts(t *testing.T) {
	ctx := context.Background()
	three := 3
	src := NewSnapshot(&ClusterFacts{
		Cluster:             &Cluster{Name: "prod", Region: "us-east-1", PodIdentityAssociations: &three},
		KarpenterController: &ControllerRole{ServiceAccount: "kube-system/karpenter", RoleARN: controllerARN, Source: CredentialsPodIdentity},
		VPCCNI:              &CNI{Credentials: CredentialsIRSA, RoleARN: nodeRoleARN},
		Simulations: &[]Simulation{
			{Principal: controllerARN, Action: "iam:GetInstanceProfile", Resource: "*", Decision: DecisionAllowed},
			{Principal: controllerARN, Action: "iam:ListInstanceProfiles", Resource: "*", Decision: DecisionExplicitDeny},
		},
	})
	r := NewRecorder(src)
	_, _ = r.Cluster(ctx)
	_, _ = r.PodIdentityAssociations(ctx)
	_, _ = r.KarpenterController(ctx)
	_, _ = r.VPCCNI(ctx)
	row := SimulationRow{Principal: controllerARN, Actions: []string{"iam:GetInstanceProfile", "iam:ListInstanceProfiles", "iam:DeleteInstanceProfile"}, Resources: []string{"*"}}
	before, _ := r.Simulate(ctx, row)
	cf := r.Snapshot()
	if cf.Cluster == nil || cf.Cluster.PodIdentityAssociations == nil || *cf.Cluster.PodIdentityAssociations != 3 {
		t.Errorf("cluster.podIdentityAssociations not recorded: %+v", cf.Cluster)
	}
	if cf.KarpenterController == nil || cf.VPCCNI == nil {
		t.Fatalf("identities not recorded: %+v %+v", cf.KarpenterController, cf.VPCCNI)
	}
	if cf.Simulations == nil || len(*cf.Simulations) != 2 {
		t.Fatalf("simulations recorded: %+v, want the 2 answered", cf.Simulations)
	}
	after, err := NewSnapshot(cf).Simulate(ctx, row)
	if err != nil || !reflect.DeepEqual(before, after) {
		t.Errorf("the recorded snapshot answers\n%+v\nwant\n%+v (%v)", after, before, err)
	}
}

// TestSimulationKeyOrdersKeysIgnoringCase: keys that differ only in case sort as IAM reads them, so the
// order of the context never changes the key.
func TestSimulationKeyOrdersKeysIgnoringCase(t *testing.T) {
	a := SimulationQuestion{Principal: controllerARN, Action: "ec2:CreateTags", Resource: "*",
		Context: map[string][]string{"aws:RequestTag/Name": {"x"}, "aws:requestTag/karpenter.sh/nodepool": {"p"}}}
	b := SimulationQuestion{Principal: controllerARN, Action: "ec2:CreateTags", Resource: "*",
		Context: map[string][]string{"AWS:REQUESTTAG/NAME": {"x"}, "aws:RequestTag/karpenter.sh/nodepool": {"p"}}}
	if a.Key() != b.Key() {
		t.Errorf("keys differ:\n%q\n%q", a.Key(), b.Key())
	}
}

// TestDecodeEverySection: a snapshot holding every section of the format, the network and capacity
// ones included, decodes strictly, with the values as written.
func TestDecodeEverySection(t *testing.T) {
	data, err := os.ReadFile("testdata/every-section.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cf, err := DecodeSnapshotFile(data)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case cf.Cluster == nil || cf.Cluster.ClusterSecurityGroupID != "sg-0cluster" || *cf.Cluster.PodIdentityAssociations != 3:
		t.Errorf("cluster: %+v", cf.Cluster)
	case cf.Subnets == nil || len((*cf.Subnets)[0].Routes) != 2 || *(*cf.Subnets)[0].AvailableIPAddressCount != 4011:
		t.Errorf("subnets: %+v", cf.Subnets)
	case cf.SecurityGroups == nil || len((*cf.SecurityGroups)[0].Ingress) != 1:
		t.Errorf("security groups: %+v", cf.SecurityGroups)
	case cf.KarpenterController == nil || cf.VPCCNI == nil || cf.Simulations == nil || len(*cf.Simulations) != 1:
		t.Errorf("identities: %+v %+v %+v", cf.KarpenterController, cf.VPCCNI, cf.Simulations)
	case cf.KMSKeys == nil || len(*cf.KMSKeys) != 2 || cf.ServiceQuotas == nil || (*cf.ServiceQuotas)["vpc/L-2AFB9258"] != 5:
		t.Errorf("kms keys, quotas: %+v %+v", cf.KMSKeys, cf.ServiceQuotas)
	case cf.InstanceTypes == nil || (*cf.InstanceTypes)[0].MemorySizeInMiB != 8192 || len((*cf.InstanceTypes)[0].Zones) != 3:
		t.Errorf("instance types: %+v", cf.InstanceTypes)
	}
	got, err := NewSnapshot(cf).Simulate(context.Background(), SimulationRow{Principal: "arn:aws:iam::111122223333:role/KarpenterController-prod-eks",
		Actions: []string{"iam:PassRole"}, Resources: []string{"arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks"},
		Context: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}})
	if err != nil || got[0].Decision != DecisionAllowed {
		t.Errorf("the PassRole question: %+v, %v", got, err)
	}
}
