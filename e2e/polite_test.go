//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

// TestThrottledIAMIsNotHammered: with the AWS fake throttling every IAM call for the whole test, in
// mode enforce, kubectl apply of an EC2NodeClass and its NodePool, then of twenty more classes, is
// admitted (the webhook answered within its deadline: in enforce a webhook that does not answer
// refuses the change), each with a warning that the identity checks were not verified because AWS
// throttled IAM and karpenter-guard backs off; nothing is denied for want of an answer; and the IAM
// requests the fake received stay bounded, where every review would otherwise ask IAM again.
func TestThrottledIAMIsNotHammered(t *testing.T) {
	dir := filepath.Join("..", "examples", "production")
	config := "mode: enforce\n"
	world(t, filepath.Join(dir, "cluster-facts.yaml"), config, filepath.Join(dir, "aws-auth.yaml"))
	// A webhook that never had an IAM answer to fall back on, throttled from its first call.
	env.fake.Inject("iam:*", fakeaws.Fault{Throttle: true})
	defer env.fake.Clear("")
	env.startGuard(t, guardOptions{config: config, clusterName: "prod-eks", region: "us-east-1"})
	env.fake.ResetCalls()

	const throttled = "AWS throttled iam:"
	const backsOff = "karpenter-guard backs off every IAM call until AWS answers again, so "
	r := env.kubectl(t, "", "apply", "-f", filepath.Join(dir, "ec2nodeclass.yaml"), "-f", filepath.Join(dir, "nodepool.yaml"))
	if r.code != 0 || len(denials(t, r)) > 0 {
		t.Fatalf("apply while IAM throttles: exit %d, want both admitted\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "Warning: [karpenter-guard] "+throttled) || !strings.Contains(r.stderr, backsOff) ||
		!strings.Contains(r.stderr, "node-role-join-permissions") {
		t.Errorf("apply while IAM throttles: want a warning that the identity checks were not verified, naming the throttling and the backoff\n%s", r.stderr)
	}
	t.Logf("kubectl apply while IAM throttles:\n%s", r.stderr)
	data, err := os.ReadFile(filepath.Join(dir, "ec2nodeclass.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	class := string(data)
	for i := 0; i < 20; i++ {
		doc := strings.Replace(class, "name: production", fmt.Sprintf("name: production-%d", i), 1)
		r := env.kubectl(t, doc, "apply", "-f", "-")
		if r.code != 0 || len(denials(t, r)) > 0 || !strings.Contains(r.stderr, backsOff) {
			t.Fatalf("class %d while IAM throttles: exit %d, want it admitted with the warning\n%s", i, r.code, r.stderr)
		}
	}
	// Twenty-two reviews with a few dozen distinct IAM questions each: unpaced, every one of them
	// would reach IAM. Paced, the first burst and one probe per backoff do.
	if n := env.fake.Calls("iam:*"); n > 60 {
		t.Errorf("IAM received %d requests while it throttled; want at most 60 (the backoff keeps the rest home)", n)
	} else {
		t.Logf("IAM received %d requests for 22 reviews while it throttled", n)
	}
}
