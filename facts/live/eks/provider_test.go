package eks_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/facts/live/eks"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const world = `apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster:
  name: prod-eks
  region: eu-west-1
  partition: aws
  accountID: "111122223333"
  version: "1.33"
  authenticationMode: API_AND_CONFIG_MAP
  vpcID: vpc-0a1b2c3d
accessEntries:
  - principalArn: arn:aws:iam::111122223333:role/teams/KarpenterNodeRole
    type: EC2_LINUX
    username: system:node:{{EC2PrivateDNSName}}
    createdAt: "2025-06-01T10:00:00Z"
  - principalArn: arn:aws:iam::111122223333:role/Admin
    type: STANDARD
`

var nodeRole = &facts.Role{Name: "KarpenterNodeRole", Path: "/teams/", ARN: "arn:aws:iam::111122223333:role/teams/KarpenterNodeRole"}

func decode(t *testing.T, doc string) *facts.ClusterFacts {
	t.Helper()
	cf, err := facts.DecodeSnapshotFile([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

// start serves doc from the AWS fake and returns an EKS provider for the cluster name talking to it
// through the real SDK client, its caches tuned by opts.
func start(t *testing.T, doc, name string, opts cache.Options) (*fakeaws.Server, *eks.Provider) {
	t.Helper()
	srv, clients := livetest.Serve(t, doc)
	p := eks.NewProvider(clients.EKS, name, "eu-west-1", awscall.Caller{Budget: 2 * time.Second}, opts)
	t.Cleanup(p.Close)
	return srv, p
}

// TestCachesAreItsOwn: the cluster, the list of access entries and the entries are kept in caches of
// their own, so that one kind of answer never evicts another, even when each cache holds a single
// answer.
func TestCachesAreItsOwn(t *testing.T) {
	srv, p := start(t, world, "prod-eks", cache.Options{MaxEntries: 1})
	ctx := context.Background()
	for round := range 3 {
		c, err := p.Cluster(ctx)
		if err != nil || c.Version != "1.33" || c.AccountID != "111122223333" || c.Region != "eu-west-1" {
			t.Fatalf("round %d: Cluster = %+v, %v", round, c, err)
		}
		if e, err := p.AccessEntry(ctx, nodeRole); err != nil || e == nil || e.Type != "EC2_LINUX" {
			t.Fatalf("round %d: AccessEntry = %+v, %v", round, e, err)
		}
		for _, f := range []facts.Fact{facts.ClusterVersion, facts.ClusterVPCID, facts.AccessEntries} {
			if err := p.Known(ctx, f); err != nil {
				t.Fatalf("round %d: Known(%s) = %v", round, f, err)
			}
		}
	}
	for _, op := range []string{"eks:DescribeCluster", "eks:ListAccessEntries", "eks:DescribeAccessEntry"} {
		if n := srv.Calls(op); n != 1 {
			t.Errorf("%d %s requests in 3 rounds, want 1", n, op)
		}
	}
	if err := p.Known(ctx, facts.Roles); err != nil {
		t.Errorf("Known(roles) = %v; not EKS's to say", err)
	}
}

// TestClusterTTL: the cluster's description is kept for the TTL.
func TestClusterTTL(t *testing.T) {
	c := livetest.NewClock()
	srv, p := start(t, world, "prod-eks", cache.Options{TTL: 5 * time.Minute, NegativeTTL: 30 * time.Second, Now: c.Now})
	ctx := context.Background()
	for _, step := range []struct {
		wait  time.Duration
		calls int
	}{{0, 1}, {time.Minute, 1}, {5 * time.Minute, 2}} {
		c.Add(step.wait)
		if _, err := p.Cluster(ctx); err != nil {
			t.Fatal(err)
		}
		if n := srv.Calls("eks:DescribeCluster"); n != step.calls {
			t.Errorf("after %v more: %d DescribeCluster requests, want %d", step.wait, n, step.calls)
		}
	}
}

// TestUnknownCluster: a cluster name EKS does not know is said plainly, as a ClusterNotFoundError.
func TestUnknownCluster(t *testing.T) {
	_, p := start(t, world, "prod-ekss", cache.Options{})
	_, err := p.Cluster(context.Background())
	var nf *eks.ClusterNotFoundError
	if !errors.As(err, &nf) || err.Error() != `EKS cluster "prod-ekss" not found in eu-west-1 (check --cluster-name and --region): cluster` {
		t.Errorf("Cluster = %v; want cluster not found", err)
	}
	if err := p.Known(context.Background(), facts.ClusterVersion); facts.Reason(err) != nf.Error() {
		t.Errorf("Known(cluster.version) = %v; want the cluster's reason", err)
	}
}

// TestConfigMapModeHasNoEntries: in mode CONFIG_MAP EKS has no access entries (its API answers 400),
// so none is asked for.
func TestConfigMapModeHasNoEntries(t *testing.T) {
	ctx := context.Background()
	srv, p := start(t, strings.Replace(world, "API_AND_CONFIG_MAP", "CONFIG_MAP", 1), "prod-eks", cache.Options{})
	if err := p.Known(ctx, facts.AccessEntries); err != nil {
		t.Fatalf("Known(accessEntries) = %v", err)
	}
	e, err := p.AccessEntry(ctx, &facts.Role{Name: "KarpenterNodeRole", ARN: "arn:aws:iam::111122223333:role/teams/KarpenterNodeRole"})
	if e != nil || err != nil {
		t.Errorf("AccessEntry = %v, %v; want none", e, err)
	}
	if n := srv.Calls("eks:ListAccessEntries"); n != 0 {
		t.Errorf("ListAccessEntries called %d times in mode CONFIG_MAP", n)
	}
}

// TestNewAccessEntrySeenWithinNegativeTTL: an access entry created after the list was cached is seen
// once the list is older than the negative TTL (30 s), not the positive one (5 min): "create the
// entry, then apply the EC2NodeClass" must not be refused for minutes. A role with an entry does not
// make the list be asked again.
func TestNewAccessEntrySeenWithinNegativeTTL(t *testing.T) {
	c := livetest.NewClock()
	without := strings.Replace(world, "  - principalArn: arn:aws:iam::111122223333:role/teams/KarpenterNodeRole\n", "  - principalArn: arn:aws:iam::111122223333:role/Other\n", 1)
	srv, p := start(t, without, "prod-eks", cache.Options{TTL: 5 * time.Minute, NegativeTTL: 30 * time.Second, Now: c.Now})
	ctx := context.Background()
	entry := func() *facts.AccessEntry {
		t.Helper()
		e, err := p.AccessEntry(ctx, nodeRole)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if e := entry(); e != nil {
		t.Fatalf("AccessEntry = %+v before the entry exists", e)
	}
	srv.SetFacts(decode(t, world)) // the entry created
	c.Add(20 * time.Second)
	if e := entry(); e != nil {
		t.Fatalf("AccessEntry = %+v from a list 20s old; the list should still be cached", e)
	}
	if n := srv.Calls("eks:ListAccessEntries"); n != 1 {
		t.Errorf("eks:ListAccessEntries called %d times within the negative TTL; want 1", n)
	}
	c.Add(15 * time.Second)
	if e := entry(); e == nil || e.Type != "EC2_LINUX" {
		t.Fatalf("AccessEntry = %+v 35s after the list; want the new entry", e)
	}
	c.Add(time.Minute)
	entry()
	if n := srv.Calls("eks:ListAccessEntries"); n != 2 {
		t.Errorf("eks:ListAccessEntries called %d times; want 2 (a role with an entry uses the list for its TTL)", n)
	}
}
