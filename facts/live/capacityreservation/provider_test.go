package capacityreservation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/facts/live/capacityreservation"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const header = `apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster: {name: prod-eks, region: eu-west-1, partition: aws, accountID: "111122223333"}
`

// start serves doc from the AWS fake and returns a capacity-reservation provider talking to it
// through the real SDK client.
func start(t *testing.T, doc string, opts cache.Options) (*fakeaws.Server, *capacityreservation.Provider) {
	t.Helper()
	srv, clients := livetest.Serve(t, doc)
	p := capacityreservation.NewProvider(clients.EC2, "eu-west-1", awscall.Caller{Budget: 2 * time.Second}, opts)
	t.Cleanup(p.Close)
	return srv, p
}

// TestActive: every field of an active reservation, the account's own or shared with it; a
// reservation that is not active is filtered out by EC2 (the state filter went over the wire), one
// without a state counts as active, as the section means it.
func TestActive(t *testing.T) {
	srv, p := start(t, header+`capacityReservations:
  - {id: cr-0123, instanceType: p5.48xlarge, availabilityZone: eu-west-1a, ownerID: "111122223333",
     instanceMatchCriteria: targeted, reservationType: default, state: active, tags: {team: ml, karpenter.sh/discovery: prod-eks}}
  - {id: cr-0shared, instanceType: m7g.large, availabilityZone: eu-west-1b, ownerID: "444455556666", instanceMatchCriteria: open, reservationType: capacity-block, state: active}
  - {id: cr-0expired, instanceType: m7g.large, availabilityZone: eu-west-1b, ownerID: "111122223333", state: expired}
  - {id: cr-0nostate, instanceType: c7i.large}
`, cache.Options{})
	got, err := p.Active(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []facts.CapacityReservation{
		{ID: "cr-0123", InstanceType: "p5.48xlarge", AvailabilityZone: "eu-west-1a", OwnerID: "111122223333", InstanceMatchCriteria: "targeted",
			ReservationType: "default", State: "active", Tags: map[string]string{"team": "ml", "karpenter.sh/discovery": "prod-eks"}},
		{ID: "cr-0shared", InstanceType: "m7g.large", AvailabilityZone: "eu-west-1b", OwnerID: "444455556666", InstanceMatchCriteria: "open",
			ReservationType: "capacity-block", State: "active"},
		{ID: "cr-0nostate", InstanceType: "c7i.large"},
	}
	if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
		t.Errorf("Active:\ngot  %s\nwant %s", g, w)
	}
	if n := srv.Calls("ec2:DescribeCapacityReservations"); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if err := p.Known(context.Background(), facts.CapacityReservations); err != nil {
		t.Errorf("Known = %v", err)
	}
	if n := srv.Calls("ec2:DescribeCapacityReservations"); n != 1 {
		t.Errorf("%d requests after Known, want 1: Known asks the cached question", n)
	}
}

// TestPages: every page is read (EC2 returns at most 1000 reservations per page); an empty section is
// a known empty list; a page that fails leaves the fact unknown rather than partly listed.
func TestPages(t *testing.T) {
	var b strings.Builder
	b.WriteString(header + "capacityReservations:\n")
	for i := range 2345 {
		fmt.Fprintf(&b, "  - {id: cr-%05d, instanceType: m7g.large, availabilityZone: eu-west-1a, state: active}\n", i)
	}
	srv, p := start(t, b.String(), cache.Options{})
	got, err := p.Active(context.Background())
	if err != nil || len(got) != 2345 || got[2344].ID != "cr-02344" {
		t.Fatalf("Active = %d reservations, %v; want 2345", len(got), err)
	}
	if n := srv.Calls("ec2:DescribeCapacityReservations"); n != 3 {
		t.Errorf("%d requests, want 3 pages", n)
	}

	srv, p = start(t, b.String(), cache.Options{})
	srv.Inject("ec2:DescribeCapacityReservations", fakeaws.Fault{Throttle: true, After: 1})
	if got, err := p.Active(context.Background()); facts.Reason(err) != "AWS throttled ec2:DescribeCapacityReservations" || got != nil {
		t.Errorf("second page throttled: %d reservations, %v", len(got), err)
	}

	_, p = start(t, header+"capacityReservations: []\n", cache.Options{})
	if got, err := p.Active(context.Background()); err != nil || got == nil || len(got) != 0 {
		t.Errorf("empty section: %#v, %v; want a known empty list", got, err)
	}
}

// TestUnknown: without the section the fake denies the call, and the fact is unknown with the action
// to grant.
func TestUnknown(t *testing.T) {
	_, p := start(t, header, cache.Options{})
	err := p.Known(context.Background(), facts.CapacityReservations)
	if want := "AWS denied ec2:DescribeCapacityReservations (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"; facts.Reason(err) != want {
		t.Errorf("Known = %v; want unknown because %q", err, want)
	}
	if err := p.Known(context.Background(), facts.InstanceTypes); err != nil {
		t.Errorf("Known(instanceTypes) = %v; not this provider's to say", err)
	}
}
