package instancetype_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/facts/live/instancetype"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	header = `apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster: {name: prod-eks, region: eu-west-1, partition: aws, accountID: "111122223333"}
`
	types = `  - instanceType: m7g.large
    supportedArchitectures: [arm64]
    supportedUsageClasses: [on-demand, spot]
    hypervisor: nitro
    defaultVCpus: 2
    memorySizeInMiB: 8192
    processorManufacturer: AWS
    sustainedClockSpeedInMhz: 2600
    encryptionInTransitSupported: true
    ebsMaximumBandwidthInMbps: 10000
    zones: [eu-west-1a, eu-west-1b, eu-west-1c]
  - instanceType: g5.xlarge
    supportedArchitectures: [x86_64]
    supportedUsageClasses: [on-demand, spot]
    hypervisor: nitro
    defaultVCpus: 4
    memorySizeInMiB: 16384
    processorManufacturer: AMD
    sustainedClockSpeedInMhz: 3300
    encryptionInTransitSupported: false
    nvmeTotalSizeInGB: 250
    ebsMaximumBandwidthInMbps: 3500
    gpus: [{name: A10G, manufacturer: NVIDIA, count: 1, memorySizeInMiB: 24576}]
    zones: [eu-west-1b, eu-west-1a]
  - instanceType: inf1.xlarge
    supportedArchitectures: [x86_64]
    supportedUsageClasses: [on-demand]
    defaultVCpus: 4
    memorySizeInMiB: 8192
    inferenceAccelerators: [{name: Inferentia, manufacturer: AWS, count: 1, memorySizeInMiB: 8192}]
    zones: [eu-west-1a]
  - instanceType: trn1.2xlarge
    supportedArchitectures: [x86_64]
    neuronDevices: [{name: Trainium, count: 1}]
  - instanceType: c5.metal
    supportedArchitectures: [x86_64]
    zones: [eu-west-1c]
`
	world = header + "instanceTypes:\n" + types
)

// start serves doc from the AWS fake and returns an instance-type provider talking to it through the
// real SDK client.
func start(t *testing.T, doc string, opts instancetype.Options) (*fakeaws.Server, *instancetype.Provider) {
	t.Helper()
	srv, clients := livetest.Serve(t, doc)
	p := instancetype.NewProvider(clients.EC2, "eu-west-1", awscall.Caller{Budget: 2 * time.Second}, opts)
	t.Cleanup(p.Close)
	return srv, p
}

// TestInstanceTypes: every field the NodePool rules read comes back as the snapshot holds it, zones
// from the offerings, in EC2's order; a type neither filter admits (i386, paravirtual-only) is not
// asked for.
func TestInstanceTypes(t *testing.T) {
	_, p := start(t, world+`  - instanceType: t1.micro
    supportedArchitectures: [i386]
    zones: [eu-west-1a]
`, instancetype.Options{})
	got, err := p.InstanceTypes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, err := facts.NewSnapshot(decode(t, world)).InstanceTypes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g, w := js(t, got), js(t, want); g != w {
		t.Errorf("InstanceTypes:\nlive     %s\nsnapshot %s", g, w)
	}
}

// TestPages: both calls are read to their last page (100 types, 1000 offerings per page), and the
// zones of a type are its offerings'.
func TestPages(t *testing.T) {
	srv, p := start(t, generated(250, 6), instancetype.Options{})
	got, err := p.InstanceTypes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 250 || got[249].InstanceType != "m9.x249large" || strings.Join(got[249].Zones, ",") != "eu-west-1a,eu-west-1b,eu-west-1c,eu-west-1d,eu-west-1e,eu-west-1f" {
		t.Errorf("%d types, last %+v", len(got), got[len(got)-1])
	}
	for op, want := range map[string]int{"ec2:DescribeInstanceTypes": 3, "ec2:DescribeInstanceTypeOfferings": 2} {
		if n := srv.Calls(op); n != want {
			t.Errorf("%d %s requests, want %d pages", n, op, want)
		}
	}
}

// TestFirstQuestionFails: the first question of a region waits for the list; when a call fails, the
// fact is unknown with that call's reason, never a partial list.
func TestFirstQuestionFails(t *testing.T) {
	for _, tc := range []struct {
		op, reason string
		fault      fakeaws.Fault
	}{
		{"ec2:DescribeInstanceTypes", "AWS throttled ec2:DescribeInstanceTypes", fakeaws.Fault{Throttle: true}},
		{"ec2:DescribeInstanceTypes", "AWS throttled ec2:DescribeInstanceTypes", fakeaws.Fault{Throttle: true, After: 1}},
		{"ec2:DescribeInstanceTypeOfferings", "AWS denied ec2:DescribeInstanceTypeOfferings (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)", fakeaws.Fault{AccessDenied: true}},
		{"ec2:DescribeInstanceTypes", "EC2 DescribeInstanceTypes is not available at this endpoint (HTTP 404 from 127.0.0.1:", fakeaws.Fault{Unavailable: true}},
	} {
		srv, p := start(t, generated(150, 2), instancetype.Options{})
		srv.Inject(tc.op, tc.fault)
		if got, err := p.InstanceTypes(context.Background()); got != nil || !strings.HasPrefix(facts.Reason(err), tc.reason) {
			t.Errorf("%s %+v: %d types, %v; want unknown because %q", tc.op, tc.fault, len(got), err, tc.reason)
		}
	}
	_, p := start(t, header, instancetype.Options{})
	err := p.Known(context.Background(), facts.InstanceTypes)
	if want := "AWS denied ec2:DescribeInstanceTypes (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"; facts.Reason(err) != want {
		t.Errorf("Known without the section = %v; want unknown because %q", err, want)
	}
}

// TestServedWhileRefreshing: once had, the list is answered at once however old: past the refresh
// interval a refresh starts in the background (a slow EC2 does not slow the question), and its
// answer serves the questions after it; past the TTL, an answer whose refresh failed is noted with
// the reason.
func TestServedWhileRefreshing(t *testing.T) {
	ctx := context.Background()
	clock := livetest.NewClock()
	srv, p := start(t, world, instancetype.Options{Cache: cache.Options{Now: clock.Now}})
	first, err := p.InstanceTypes(ctx)
	if err != nil || len(first) != 5 {
		t.Fatalf("first question: %d types, %v", len(first), err)
	}

	clock.Add(instancetype.RefreshInterval - time.Second)
	if got, _ := p.InstanceTypes(ctx); len(got) != 5 || srv.Calls("ec2:DescribeInstanceTypes") != 1 {
		t.Fatalf("within the refresh interval: %d types, %d calls; want the cached list", len(got), srv.Calls("ec2:DescribeInstanceTypes"))
	}

	// Past the interval: EC2 answers slowly, with one more type.
	clock.Add(2 * time.Second)
	srv.SetFacts(decode(t, world+"  - {instanceType: m8g.large, supportedArchitectures: [arm64], zones: [eu-west-1a]}\n"))
	srv.Inject("ec2:DescribeInstanceTypes", fakeaws.Fault{Latency: 500 * time.Millisecond, Count: 1})
	begin := time.Now()
	for range 3 {
		got, err := p.InstanceTypes(ctx)
		if err != nil || len(got) != 5 {
			t.Fatalf("during the refresh: %d types, %v; want the cached list", len(got), err)
		}
	}
	if d := time.Since(begin); d > 250*time.Millisecond {
		t.Errorf("questions during a slow refresh took %v; want them answered from the cache at once", d)
	}
	waitFor(t, "the refreshed list", func() bool {
		got, _ := p.InstanceTypes(ctx)
		return len(got) == 6
	})
	if n := srv.Calls("ec2:DescribeInstanceTypes"); n != 2 {
		t.Errorf("%d DescribeInstanceTypes requests, want 2: one refresh for every question", n)
	}

	// Past the TTL, refreshes fail: the list is still served, and the notes say why it is old.
	srv.Inject("ec2:DescribeInstanceTypes", fakeaws.Fault{Throttle: true})
	clock.Add(instancetype.TTL + time.Hour)
	notes := &facts.Notes{}
	nctx := facts.WithNotes(ctx, notes)
	if got, err := p.InstanceTypes(nctx); err != nil || len(got) != 6 {
		t.Fatalf("past the TTL: %d types, %v; want the cached list", len(got), err)
	}
	waitFor(t, "the refresh to fail", func() bool {
		notes = &facts.Notes{}
		got, err := p.InstanceTypes(facts.WithNotes(ctx, notes))
		return err == nil && len(got) == 6 && len(notes.List()) == 1 && strings.Contains(notes.List()[0], "AWS throttled")
	})
	if want := "used a cached answer 25h0m0s old for ec2:DescribeInstanceTypes eu-west-1: AWS throttled ec2:DescribeInstanceTypes"; notes.List()[0] != want {
		t.Errorf("note %q, want %q", notes.List()[0], want)
	}
}

// TestRefreshLoop: once the list has been had, it is refreshed every interval without a question, so
// that an idle webhook's next question meets a fresh list; Close stops the loop.
func TestRefreshLoop(t *testing.T) {
	srv, p := start(t, world, instancetype.Options{RefreshInterval: 20 * time.Millisecond})
	if _, err := p.InstanceTypes(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two refreshes", func() bool { return srv.Calls("ec2:DescribeInstanceTypes") >= 3 })
	p.Close()
	n := srv.Calls("ec2:DescribeInstanceTypes")
	time.Sleep(100 * time.Millisecond)
	if m := srv.Calls("ec2:DescribeInstanceTypes"); m != n {
		t.Errorf("%d refreshes after Close", m-n)
	}
}

// TestMemory loads a region the size of a large real one (800 types offered in 6 zones) through the
// fake and reports the bytes the provider retains once the list is cached (MemStats after GC). The
// bound catches a regression that keeps the SDK's answers or a copy of each zone list.
func TestMemory(t *testing.T) {
	const types, zones = 800, 6
	srv, clients := livetest.Serve(t, generated(types, zones))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := instancetype.NewProvider(clients.EC2, "eu-west-1", awscall.Caller{Budget: 10 * time.Second}, instancetype.Options{})
	got, err := p.InstanceTypes(context.Background())
	if err != nil || len(got) != types {
		t.Fatalf("%d types, %v", len(got), err)
	}
	got = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d instance types × %d zones: %d bytes retained (%d per type), %d requests", types, zones, retained, retained/types, srv.Calls("ec2:*"))
	if retained > 2<<20 {
		t.Errorf("%d bytes retained for %d types; want under 2 MiB", retained, types)
	}
	runtime.KeepAlive(p)
	p.Close()
}

// generated is a snapshot of n instance types, each offered in the region's first zones zones.
func generated(n, zones int) string {
	var b strings.Builder
	b.WriteString(header + "instanceTypes:\n")
	zs := make([]string, zones)
	for i := range zones {
		zs[i] = fmt.Sprintf("eu-west-1%c", 'a'+i)
	}
	for i := range n {
		fmt.Fprintf(&b, "  - {instanceType: m9.x%dlarge, supportedArchitectures: [%s], supportedUsageClasses: [on-demand, spot], hypervisor: nitro, "+
			"defaultVCpus: %d, memorySizeInMiB: %d, processorManufacturer: Intel, sustainedClockSpeedInMhz: 3500, encryptionInTransitSupported: true, "+
			"ebsMaximumBandwidthInMbps: 10000, zones: [%s]}\n", i, []string{"x86_64", "arm64"}[i%2], 2+i%64, 4096*(1+i%32), strings.Join(zs, ", "))
	}
	return b.String()
}

// waitFor polls cond until it holds, for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func decode(t *testing.T, doc string) *facts.ClusterFacts {
	t.Helper()
	cf, err := facts.DecodeSnapshotFile([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
