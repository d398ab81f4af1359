package kms_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/facts/live/kms"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	header = `apiVersion: karpenter-guard.io/v1alpha1
kind: ClusterFacts
cluster: {name: prod-eks, region: eu-west-1, partition: aws, accountID: "111122223333"}
`
	world = header + `kmsKeys:
  - {ref: alias/karpenter-ebs, found: true, arn: "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
     keyState: Enabled, keySpec: SYMMETRIC_DEFAULT, keyUsage: ENCRYPT_DECRYPT}
  - {ref: "arn:aws:kms:eu-west-1:111122223333:alias/retired", found: true, arn: "arn:aws:kms:eu-west-1:111122223333:key/0f0f0f0f-12ab-34cd-56ef-1234567890ab",
     keyState: PendingDeletion, keySpec: SYMMETRIC_DEFAULT, keyUsage: ENCRYPT_DECRYPT}
  - {ref: 5678abcd-12ab-34cd-56ef-1234567890ab, found: true, arn: "arn:aws:kms:us-west-2:111122223333:key/5678abcd-12ab-34cd-56ef-1234567890ab",
     keyState: Enabled, keySpec: RSA_2048, keyUsage: SIGN_VERIFY}
  - {ref: alias/gone, found: false}
  - {ref: "arn:aws:kms:eu-west-1:444455556666:key/9999abcd-12ab-34cd-56ef-1234567890ab", error: AccessDenied}
`
)

// start serves doc from the AWS fake and returns a KMS provider talking to it through the real SDK
// client, its caches tuned by opts.
func start(t *testing.T, doc string, budget time.Duration, opts cache.Options) (*fakeaws.Server, *kms.Provider) {
	t.Helper()
	srv, clients := livetest.Serve(t, doc)
	p := kms.NewProvider(clients.KMS, awscall.Caller{Budget: budget}, opts)
	t.Cleanup(p.Close)
	return srv, p
}

// TestKey: every form of reference a class writes is answered as the snapshot's entry for it: the
// key's metadata, "not found", or "DescribeKey refused" (an answer, not an unknown); a reference the
// snapshot has no entry for is unknown, with the fake's reason.
func TestKey(t *testing.T) {
	_, p := start(t, world, 2*time.Second, cache.Options{})
	snap := facts.NewSnapshot(decode(t, world))
	ctx := context.Background()
	for _, ref := range []string{
		"alias/karpenter-ebs", "arn:aws:kms:eu-west-1:111122223333:alias/retired", "5678abcd-12ab-34cd-56ef-1234567890ab",
		"alias/gone", "arn:aws:kms:eu-west-1:444455556666:key/9999abcd-12ab-34cd-56ef-1234567890ab",
	} {
		want, err := snap.KMSKey(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Key(ctx, ref)
		if err != nil {
			t.Errorf("Key(%s) = %v", ref, err)
			continue
		}
		if g, w := js(t, got), js(t, want); g != w {
			t.Errorf("Key(%s):\nlive     %s\nsnapshot %s", ref, g, w)
		}
	}
	_, err := p.Key(ctx, "alias/nobody")
	if !facts.IsUnknown(err) || !strings.Contains(facts.Reason(err), "kms:DescribeKey failed (KMSInternalException: fakeaws: the facts snapshot has no kmsKeys entry for alias/nobody") {
		t.Errorf("Key(alias/nobody) = %v; want unknown: the snapshot has no entry", err)
	}
}

// TestKnown: the permission probe describes a key that cannot exist; KMS's "not found" says the call
// is granted. Without the section the fake denies it, and keys are unknown with the action to grant.
func TestKnown(t *testing.T) {
	ctx := context.Background()
	srv, p := start(t, world, 2*time.Second, cache.Options{})
	for range 2 {
		if err := p.Known(ctx, facts.KMSKeys); err != nil {
			t.Fatalf("Known(kmsKeys) = %v", err)
		}
	}
	if n := srv.Calls("kms:DescribeKey"); n != 1 {
		t.Errorf("%d DescribeKey requests for two Known, want 1 (the probe, cached)", n)
	}
	if err := p.Known(ctx, facts.Roles); err != nil {
		t.Errorf("Known(roles) = %v; not KMS's to say", err)
	}

	// Without the section the guard's own policy refuses DescribeKey: the probe and every key are
	// unknown, never a key policy's refusal.
	_, p = start(t, header, 2*time.Second, cache.Options{})
	const want = "AWS denied kms:DescribeKey (grant it to karpenter-guard's IAM role: manifests/iam-policy.json)"
	if err := p.Known(ctx, facts.KMSKeys); facts.Reason(err) != want {
		t.Errorf("Known(kmsKeys) without the section = %v; want unknown because %q", err, want)
	}
	if k, err := p.Key(ctx, "alias/karpenter-ebs"); k != nil || facts.Reason(err) != want {
		t.Errorf("Key without the section = %+v, %v; want unknown because %q", k, err, want)
	}
}

// TestFaults: throttling and a hang leave the key unknown, worded as every AWS call is; neither is
// taken for a refused DescribeKey.
func TestFaults(t *testing.T) {
	const budget = 200 * time.Millisecond
	for _, tc := range []struct {
		name   string
		fault  fakeaws.Fault
		reason string
	}{
		{"throttled", fakeaws.Fault{Throttle: true}, "AWS throttled kms:DescribeKey"},
		{"hang", fakeaws.Fault{Hang: true}, "no answer from AWS within the 200ms budget (kms:DescribeKey)"},
		{"server error", fakeaws.Fault{Status: 500}, "kms:DescribeKey failed (KMSInternalException: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, p := start(t, world, budget, cache.Options{MaxWait: budget, FetchTimeout: 2 * budget})
			srv.Inject("kms:DescribeKey", tc.fault)
			k, err := p.Key(context.Background(), "alias/karpenter-ebs")
			if k != nil || !facts.IsUnknown(err) || !strings.Contains(facts.Reason(err), tc.reason) {
				t.Errorf("Key = %+v, %v; want unknown because %q", k, err, tc.reason)
			}
		})
	}
}

// TestTTLs: a key is kept for the TTL; "not found" and "refused" for the negative TTL, so that a key
// being created or a key policy being fixed is seen soon.
func TestTTLs(t *testing.T) {
	c := livetest.NewClock()
	srv, p := start(t, world, 2*time.Second, cache.Options{TTL: 5 * time.Minute, NegativeTTL: 30 * time.Second, Now: c.Now})
	ctx := context.Background()
	refs := []string{"alias/karpenter-ebs", "alias/gone", "arn:aws:kms:eu-west-1:444455556666:key/9999abcd-12ab-34cd-56ef-1234567890ab"}
	ask := func(wantCalls int) {
		t.Helper()
		for _, ref := range refs {
			if _, err := p.Key(ctx, ref); err != nil {
				t.Fatalf("Key(%s) = %v", ref, err)
			}
		}
		if n := srv.Calls("kms:DescribeKey"); n != wantCalls {
			t.Errorf("at %s: %d DescribeKey requests, want %d", c.Now().Format(time.TimeOnly), n, wantCalls)
		}
	}
	ask(4) // the three keys, and the probe that tells a key policy's refusal from the guard's IAM policy's
	c.Add(20 * time.Second)
	ask(4)
	c.Add(20 * time.Second)
	ask(6) // "not found" and "refused" expired, the key and the probe not
	c.Add(5 * time.Minute)
	ask(10)
}

// TestProbeKeyID: the probe's key is the nil UUID the fake answers "not found" whatever the snapshot
// holds, in the forms KMS accepts.
func TestProbeKeyID(t *testing.T) {
	if kms.ProbeKeyID != "00000000-0000-0000-0000-000000000000" {
		t.Errorf("ProbeKeyID = %s; the AWS fake answers NotFoundException for the nil UUID only", kms.ProbeKeyID)
	}
	_, p := start(t, world, 2*time.Second, cache.Options{})
	for _, ref := range []string{kms.ProbeKeyID, "arn:aws:kms:eu-west-1:111122223333:key/" + kms.ProbeKeyID} {
		k, err := p.Key(context.Background(), ref)
		if err != nil || k.Found == nil || *k.Found {
			t.Errorf("Key(%s) = %+v, %v; want not found", ref, k, err)
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
