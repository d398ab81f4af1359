package live_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/instancetype"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

const capacityHeader = `apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster: {name: prod-eks, region: eu-west-1, partition: aws, accountID: "111122223333", version: "1.33", authenticationMode: API}
`

// capacityWorld holds every capacity fact: keys of every kind of answer, quotas, reservations the
// state filter keeps, and instance types with every field the NodePool rules read.
const capacityWorld = capacityHeader + `kmsKeys:
  - {ref: alias/karpenter-ebs, found: true, arn: "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
     keyState: Enabled, keySpec: SYMMETRIC_DEFAULT, keyUsage: ENCRYPT_DECRYPT}
  - {ref: "arn:aws:kms:eu-west-1:111122223333:key/0f0f0f0f-12ab-34cd-56ef-1234567890ab", found: true,
     arn: "arn:aws:kms:eu-west-1:111122223333:key/0f0f0f0f-12ab-34cd-56ef-1234567890ab", keyState: PendingDeletion, keySpec: SYMMETRIC_DEFAULT, keyUsage: ENCRYPT_DECRYPT}
  - {ref: "arn:aws:kms:eu-west-1:111122223333:alias/other-region", found: true, arn: "arn:aws:kms:us-east-1:111122223333:key/5678abcd-12ab-34cd-56ef-1234567890ab",
     keyState: Enabled, keySpec: SYMMETRIC_DEFAULT, keyUsage: ENCRYPT_DECRYPT}
  - {ref: alias/gone, found: false}
  - {ref: alias/other-account-key, error: AccessDenied}
serviceQuotas:
  vpc/L-2AFB9258: 8
capacityReservations:
  - {id: cr-0b, instanceType: p5.48xlarge, availabilityZone: eu-west-1a, ownerID: "111122223333", instanceMatchCriteria: targeted,
     reservationType: default, state: active, tags: {team: ml, karpenter.sh/discovery: prod-eks}}
  - {id: cr-0a, instanceType: m7g.large, availabilityZone: eu-west-1b, ownerID: "444455556666", instanceMatchCriteria: open,
     reservationType: capacity-block, state: active}
  - {id: cr-0c, instanceType: c7i.large, availabilityZone: eu-west-1c}
instanceTypes:
  - {instanceType: m7g.large, supportedArchitectures: [arm64], supportedUsageClasses: [on-demand, spot], hypervisor: nitro, defaultVCpus: 2,
     memorySizeInMiB: 8192, processorManufacturer: AWS, sustainedClockSpeedInMhz: 2600, encryptionInTransitSupported: true,
     ebsMaximumBandwidthInMbps: 10000, zones: [eu-west-1c, eu-west-1a, eu-west-1b]}
  - {instanceType: g5.xlarge, supportedArchitectures: [x86_64], supportedUsageClasses: [on-demand, spot], hypervisor: nitro, defaultVCpus: 4,
     memorySizeInMiB: 16384, processorManufacturer: AMD, sustainedClockSpeedInMhz: 3300, encryptionInTransitSupported: false,
     nvmeTotalSizeInGB: 250, ebsMaximumBandwidthInMbps: 3500, gpus: [{name: A10G, manufacturer: NVIDIA, count: 1, memorySizeInMiB: 24576}],
     zones: [eu-west-1a, eu-west-1b]}
  - {instanceType: inf2.xlarge, supportedArchitectures: [x86_64], supportedUsageClasses: [on-demand], defaultVCpus: 4, memorySizeInMiB: 16384,
     processorManufacturer: AMD, sustainedClockSpeedInMhz: 3600, neuronDevices: [{name: Inferentia2, count: 1}], zones: [eu-west-1a]}
  - {instanceType: inf1.xlarge, supportedArchitectures: [x86_64], supportedUsageClasses: [on-demand], inferenceAccelerators: [{name: Inferentia, manufacturer: AWS, count: 1}]}
  - {instanceType: a1.medium, supportedArchitectures: [arm64], supportedUsageClasses: [on-demand, spot], hypervisor: nitro, zones: [eu-west-1b]}
  - {instanceType: c5.metal, supportedArchitectures: [x86_64], supportedUsageClasses: [on-demand, spot], zones: [eu-west-1c]}
`

// answers asks p every capacity question and returns the answers, an unknown answer as "unknown"
// (its reason is the provider's: the snapshot's section, or AWS's call), any other error as itself.
func capacityAnswers(ctx context.Context, t *testing.T, p facts.Provider) map[string]string {
	t.Helper()
	out := map[string]string{}
	put := func(name string, v any, err error) {
		switch {
		case facts.IsUnknown(err):
			out[name] = "unknown"
		case err != nil:
			out[name] = "error: " + err.Error()
		default:
			out[name] = fmtAny(v)
		}
	}
	for _, f := range []facts.Fact{facts.KMSKeys, facts.ServiceQuotas, facts.CapacityReservations, facts.InstanceTypes} {
		put("known "+string(f), "known", p.Known(ctx, f))
	}
	for _, ref := range []string{"alias/karpenter-ebs", "arn:aws:kms:eu-west-1:111122223333:key/0f0f0f0f-12ab-34cd-56ef-1234567890ab",
		"arn:aws:kms:eu-west-1:111122223333:alias/other-region", "alias/gone", "alias/other-account-key", "alias/no-entry"} {
		k, err := p.KMSKey(ctx, ref)
		put("kms key "+ref, k, err)
	}
	for _, code := range []string{facts.QuotaSecurityGroupsPerENI, "ec2/L-1216C47A"} {
		v, err := p.ServiceQuota(ctx, code)
		put("quota "+code, v, err)
	}
	rs, err := p.CapacityReservations(ctx)
	put("capacity reservations", rs, err)
	its, err := p.InstanceTypes(ctx)
	put("instance types", its, err)
	return out
}

// TestCapacityMatchesSnapshot asks the live provider (real SDK clients, the AWS fake on the wire) and
// the snapshot provider every capacity question, over a world that holds every section, one whose
// sections are empty and one without them, and demands the same answers and the same known and
// unknown facts. For the lookups a question without an entry is unknown on both paths.
func TestCapacityMatchesSnapshot(t *testing.T) {
	ctx := context.Background()
	for name, doc := range map[string]string{
		"every section": capacityWorld,
		"empty sections": capacityHeader + `kmsKeys: []
serviceQuotas: {}
capacityReservations: []
instanceTypes: []
`,
		"no section": capacityHeader,
	} {
		t.Run(name, func(t *testing.T) {
			cf := decode(t, doc)
			want := capacityAnswers(ctx, t, facts.NewSnapshot(cf))
			got := capacityAnswers(ctx, t, start(t, cf, livetest.Options{}).Provider)
			for q, w := range want {
				if got[q] != w {
					t.Errorf("%s:\nsnapshot %s\nlive     %s", q, w, got[q])
				}
			}
		})
	}
}

// TestCapacityFaults: how each capacity call fails, through the whole live provider. A key policy
// that refuses DescribeKey is an answer; a policy that does not grant it, throttling, a hang or a page
// that fails leave the fact unknown, with the reason every AWS call gives.
func TestCapacityFaults(t *testing.T) {
	const budget = 300 * time.Millisecond
	askKey := func(ctx context.Context, p facts.Provider) error {
		k, err := p.KMSKey(ctx, "alias/karpenter-ebs")
		if err == nil && k.Error != "" {
			t.Errorf("KMSKey = %+v; a granted DescribeKey of a readable key", k)
		}
		return err
	}
	askQuota := func(ctx context.Context, p facts.Provider) error {
		_, err := p.ServiceQuota(ctx, facts.QuotaSecurityGroupsPerENI)
		return err
	}
	askReservations := func(ctx context.Context, p facts.Provider) error {
		_, err := p.CapacityReservations(ctx)
		return err
	}
	askTypes := func(ctx context.Context, p facts.Provider) error {
		_, err := p.InstanceTypes(ctx)
		return err
	}
	known := func(f facts.Fact) func(context.Context, facts.Provider) error {
		return func(ctx context.Context, p facts.Provider) error { return p.Known(ctx, f) }
	}
	for _, tc := range []struct {
		name   string
		op     string
		fault  fakeaws.Fault
		ask    func(context.Context, facts.Provider) error
		reason string
	}{
		{"key throttled", "kms:DescribeKey", fakeaws.Fault{Throttle: true}, askKey, "AWS throttled kms:DescribeKey"},
		{"key hangs", "kms:DescribeKey", fakeaws.Fault{Hang: true}, askKey, "no answer from AWS within the 300ms budget (kms:DescribeKey)"},
		{"DescribeKey not granted", "kms:DescribeKey", fakeaws.Fault{AccessDenied: true}, known(facts.KMSKeys),
			"AWS denied kms:DescribeKey (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"},
		{"quota throttled", "servicequotas:GetServiceQuota", fakeaws.Fault{Throttle: true}, askQuota, "AWS throttled servicequotas:GetServiceQuota"},
		{"GetServiceQuota not granted", "servicequotas:GetServiceQuota", fakeaws.Fault{AccessDenied: true}, known(facts.ServiceQuotas),
			"AWS denied servicequotas:GetServiceQuota (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"},
		{"quotas not available", "servicequotas:GetServiceQuota", fakeaws.Fault{Unavailable: true}, askQuota,
			"SERVICEQUOTAS GetServiceQuota is not available at this endpoint (HTTP 404 from 127.0.0.1:"},
		{"reservations denied", "ec2:DescribeCapacityReservations", fakeaws.Fault{AccessDenied: true}, known(facts.CapacityReservations),
			"AWS denied ec2:DescribeCapacityReservations (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"},
		{"reservations' second page throttled", "ec2:DescribeCapacityReservations", fakeaws.Fault{Throttle: true, After: 1}, askReservations,
			"AWS throttled ec2:DescribeCapacityReservations"},
		{"types denied", "ec2:DescribeInstanceTypes", fakeaws.Fault{AccessDenied: true}, known(facts.InstanceTypes),
			"AWS denied ec2:DescribeInstanceTypes (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"},
		{"offerings throttled", "ec2:DescribeInstanceTypeOfferings", fakeaws.Fault{Throttle: true}, askTypes, "AWS throttled ec2:DescribeInstanceTypeOfferings"},
		{"types hang", "ec2:DescribeInstanceTypes", fakeaws.Fault{Hang: true}, askTypes, "no answer from AWS within the 300ms budget (ec2:DescribeInstanceTypes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := start(t, decode(t, pagedWorld()), livetest.Options{Budget: budget})
			env.Fake.Inject(tc.op, tc.fault)
			ctx, cancel := context.WithTimeout(context.Background(), budget)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- tc.ask(ctx, env.Provider) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * budget):
				t.Fatalf("no answer 20 budgets after the call")
			}
			if !facts.IsUnknown(err) || !strings.Contains(facts.Reason(err), tc.reason) {
				t.Fatalf("error = %v; want an unknown fact because %q", err, tc.reason)
			}
		})
	}

	// A key policy that refuses DescribeKey: an answer, not an unknown fact.
	env := start(t, decode(t, capacityWorld), livetest.Options{})
	k, err := env.Provider.KMSKey(context.Background(), "alias/other-account-key")
	if err != nil || k.Error != facts.KMSAccessDenied || k.Found != nil {
		t.Errorf("refused key: %+v, %v; want Error %s", k, err, facts.KMSAccessDenied)
	}
}

// pagedWorld is capacityWorld with 1,200 more reservations: EC2 returns at most 1,000 a page.
func pagedWorld() string {
	var b strings.Builder
	b.WriteString("capacityReservations:\n")
	for i := range 1200 {
		fmt.Fprintf(&b, "  - {id: cr-1%04d, instanceType: m7g.large, availabilityZone: eu-west-1a, state: active}\n", i)
	}
	return strings.Replace(capacityWorld, "capacityReservations:\n", b.String(), 1)
}

// TestInstanceTypesNeverBlockOnceHad: through the whole live provider, with the cache's clock moved
// past the refresh interval, questions are answered from the cached list at once while EC2 answers
// the refresh slowly; the refreshed list serves the questions after it.
func TestInstanceTypesNeverBlockOnceHad(t *testing.T) {
	ctx := context.Background()
	clock := livetest.NewClock()
	cf := decode(t, capacityWorld)
	env := start(t, cf, livetest.Options{Cache: cache.Options{Now: clock.Now}})
	if got, err := env.Provider.InstanceTypes(ctx); err != nil || len(got) != 6 {
		t.Fatalf("first question: %d types, %v", len(got), err)
	}
	clock.Add(instancetype.RefreshInterval + time.Minute)
	env.Fake.SetFacts(decode(t, capacityWorld+"  - {instanceType: m8g.large, supportedArchitectures: [arm64], zones: [eu-west-1a]}\n"))
	env.Fake.Inject("ec2:DescribeInstanceTypeOfferings", fakeaws.Fault{Latency: time.Second, Count: 1})
	begin := time.Now()
	for range 5 {
		if err := env.Provider.Known(ctx, facts.InstanceTypes); err != nil {
			t.Fatal(err)
		}
		if got, err := env.Provider.InstanceTypes(ctx); err != nil || len(got) != 6 {
			t.Fatalf("during the refresh: %d types, %v; want the cached list", len(got), err)
		}
	}
	if d := time.Since(begin); d > 500*time.Millisecond {
		t.Errorf("questions during a slow refresh took %v; want them answered from the cache at once", d)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got, _ := env.Provider.InstanceTypes(ctx); len(got) == 7 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the refreshed list never served a question")
		}
	}
	if n := env.Fake.Calls("ec2:DescribeInstanceTypes"); n != 2 {
		t.Errorf("%d DescribeInstanceTypes requests, want 2: one refresh for every question", n)
	}
}
