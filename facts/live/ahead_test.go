package live_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// everyFactClass is an EC2NodeClass of the test world whose review needs every fact the live provider
// answers: the cluster, its access entries and aws-auth, the node role, an alias (SSM parameters, then
// the images they name) and a name term, subnets (and their route tables), security groups.
const everyFactClass = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole
  amiSelectorTerms:
    - alias: al2023@latest
    - name: amazon-eks-node-al2023-x86_64-standard-1.33-*
      owner: amazon
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: prod-eks
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: prod-eks
`

// sequential hides that the provider it wraps asks ahead: the rules then ask one question at a time,
// as before asking ahead existed.
type sequential struct{ facts.Provider }

// inFlight is an http.Handler that counts the requests being served at once.
type inFlight struct {
	h         http.Handler
	mu        sync.Mutex
	now, peak int
	// together, when set, holds each request until a second one is in flight (or a few seconds have
	// passed), so that requests sent together are seen together however the machine schedules them.
	together chan struct{}
	once     sync.Once
}

func (f *inFlight) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.now++
	f.peak = max(f.peak, f.now)
	if f.together != nil && f.now >= 2 {
		f.once.Do(func() { close(f.together) })
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.now--
		f.mu.Unlock()
	}()
	if f.together != nil {
		select {
		case <-f.together:
		case <-time.After(5 * time.Second): // one at a time: the peak stays 1, and the test says so
		}
	}
	f.h.ServeHTTP(w, r)
}

func readClass(t testing.TB, doc string) []*objects.Object {
	t.Helper()
	set := &manifest.Set{}
	set.Add(manifest.Source{Path: "class.yaml", Data: []byte(doc)})
	if len(set.Errors) > 0 || len(set.Objects) != 1 {
		t.Fatalf("class: %v", set.Errors)
	}
	return set.Objects
}

// review evaluates objs once, as the webhook reviews one object (the whole catalog, aws.timeout 2s).
func review(p facts.Provider, objs []*objects.Object) validators.Result {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return rules.Default().Evaluate(&validators.Context{Context: ctx, Facts: p, Input: objs, Scope: validators.ScopeAll}, objs)
}

// TestAskAheadConcurrentAndBounded: a cold review through the live provider asks its questions several
// at a time, never more than facts.AskLimit at once but for the reading of a role's policies (three
// requests together, one by one too), makes exactly the AWS calls the rules asking one
// at a time make, and reaches the same verdicts.
func TestAskAheadConcurrentAndBounded(t *testing.T) {
	cf := decode(t, world)
	objs := readClass(t, everyFactClass)
	type run struct {
		res   validators.Result
		calls map[string]int
		peak  int
	}
	cold := func(t *testing.T, ahead bool) run {
		srv := fakeaws.New(cf)
		srv.Inject("*", fakeaws.Fault{Latency: 50 * time.Millisecond}) // every question overlaps its peers
		counted := &inFlight{h: srv}
		if ahead {
			counted.together = make(chan struct{})
		}
		ts := httptest.NewServer(counted)
		t.Cleanup(ts.Close)
		var p facts.Provider = newProvider(t, ts.URL, cf, livetest.Options{})
		if !ahead {
			p = sequential{p}
		}
		res := review(p, objs)
		calls := map[string]int{}
		for _, op := range fakeaws.Operations {
			if n := srv.Calls(op); n > 0 {
				calls[op] = n
			}
		}
		counted.mu.Lock()
		defer counted.mu.Unlock()
		return run{res: res, calls: calls, peak: counted.peak}
	}
	ahead, oneByOne := cold(t, true), cold(t, false)
	if len(ahead.res.NotEvaluated) > 0 {
		t.Fatalf("not evaluated: %+v", ahead.res.NotEvaluated)
	}
	// AskLimit questions at once, two of which may be the reading of a role's policies (the
	// controller's and the node role's), each three requests at once in its question's place.
	if ahead.peak < 2 || ahead.peak > facts.AskLimit+2*2 {
		t.Errorf("at most %d requests at once asking ahead; want between 2 and facts.AskLimit (%d) and the two readings of policies", ahead.peak, facts.AskLimit)
	}
	// One by one, a question is one request at a time, but for the reading of a role's policies,
	// which asks the role and its two lists of policies together.
	if oneByOne.peak > 3 {
		t.Errorf("at most %d requests at once one by one; want at most 3", oneByOne.peak)
	}
	if !reflect.DeepEqual(ahead.calls, oneByOne.calls) {
		t.Errorf("calls asking ahead %v; one by one %v", ahead.calls, oneByOne.calls)
	}
	if got, want := verdicts(ahead.res), verdicts(oneByOne.res); got != want {
		t.Errorf("verdicts asking ahead:\n%s\none by one:\n%s", got, want)
	}
	t.Logf("one cold review: %d requests, at most %d at once (calls: %v)", total(ahead.calls), ahead.peak, ahead.calls)
}

// TestAskAheadStopsAtTheCluster: when the cluster cannot be described, nothing that depends on it is
// asked (its access entries, the parameters of the alias for its version) and the rules that need it
// are not evaluated, with the cluster's reason; what does not depend on it is still asked and checked.
func TestAskAheadStopsAtTheCluster(t *testing.T) {
	env := start(t, decode(t, world), livetest.Options{})
	env.Fake.Inject("eks:DescribeCluster", fakeaws.Fault{Unavailable: true})
	res := review(env.Provider, readClass(t, everyFactClass))
	for _, op := range []string{"eks:ListAccessEntries", "eks:DescribeAccessEntry", "ssm:GetParameter"} {
		if n := env.Fake.Calls(op); n != 0 {
			t.Errorf("%s asked %d times although the cluster could not be described", op, n)
		}
	}
	if n := env.Fake.Calls("eks:DescribeCluster"); n != 1 {
		t.Errorf("eks:DescribeCluster asked %d times, want 1", n)
	}
	const reason = "EKS DescribeCluster is not available at this endpoint (HTTP 404 from 127.0.0.1:"
	cluster := map[string]bool{}
	for _, n := range res.NotEvaluated {
		if !strings.Contains(n.Reason, reason) {
			t.Errorf("%s not evaluated because %q; want the cluster's reason", n.Rule, n.Reason)
		}
		cluster[n.Rule] = true
	}
	for _, rule := range []string{"node-role-not-authorized", "node-role-access-entry-type", "selector-vpc-mismatch", "ami-selector-no-match"} {
		if !cluster[rule] {
			t.Errorf("%s was evaluated without the cluster", rule)
		}
	}
	if cluster["node-role-not-found"] || cluster["subnet-public"] {
		t.Errorf("rules that do not need the cluster were not evaluated: %v", cluster)
	}
	if env.Fake.Calls("iam:GetRole") == 0 || env.Fake.Calls("ec2:DescribeSubnets") == 0 {
		t.Errorf("the questions that do not depend on the cluster were not asked")
	}
}

func verdicts(res validators.Result) string {
	var b strings.Builder
	for _, f := range res.Findings {
		b.WriteString(f.Rule + ": " + f.Message + "\n")
	}
	for _, n := range res.NotEvaluated {
		b.WriteString("not evaluated " + n.Rule + ": " + n.Reason + "\n")
	}
	return b.String()
}

func total(calls map[string]int) int {
	n := 0
	for _, c := range calls {
		n += c
	}
	return n
}
