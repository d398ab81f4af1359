//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/certs"
	"github.com/karpenter-guard/karpenter-guard/facts"
)

// BenchmarkDryRunOverhead measures what the webhook adds to a user's `kubectl apply --dry-run=server`
// of an EC2NodeClass: server-side dry-run creates through the real API server, at concurrency 1 and 8,
// in alternating rounds of three setups: no webhook; an allow-all HTTPS pair registered exactly as
// karpenter-guard's validating and mutating webhooks are (the transport floor: two calls that decide
// nothing); karpenter-guard itself (mode enforce, the production example's world served by the AWS
// fake, every answer cached after the first request, the example's EC2NodeClass passing every rule);
// and karpenter-guard's validating webhook alone (components/no-mutation). It logs p50, p95 and p99 of
// each, over rounds × perRound requests.
//
//	make bench-overhead
func BenchmarkDryRunOverhead(b *testing.B) {
	const rounds, perRound = 20, 50
	// The production example's world, in which its EC2NodeClass passes every rule: what a review
	// costs in the common case, where karpenter-guard finds nothing to say.
	cf, err := facts.DecodeSnapshotFile([]byte(readFile(b, "../examples/production/cluster-facts.yaml")))
	if err != nil {
		b.Fatal(err)
	}
	reset(b)
	env.fake.Clear("")
	env.fake.SetFacts(cf)
	env.kubectlT(b, "apply", "-f", "../examples/production/aws-auth.yaml")
	env.startGuard(b, guardOptions{config: "mode: enforce\n", clusterName: cf.Cluster.Name, region: cf.Cluster.Region,
		// As deployed: the Deployment's GOGC and GOMEMLIMIT, and info logs, not the suite's debug logs.
		env:       []string{"GOMEMLIMIT=" + deploymentEnv(b, "GOMEMLIMIT"), "GOGC=" + deploymentEnv(b, "GOGC")},
		extraArgs: []string{"--zap-log-level=info"}})
	floor := allowAllWebhook(b)
	c := adminClient(b)
	var class unstructured.Unstructured
	if err := sigsyaml.Unmarshal([]byte(readFile(b, "../examples/production/ec2nodeclass.yaml")), &class.Object); err != nil {
		b.Fatal(err)
	}
	create := func() error {
		return c.Create(context.Background(), class.DeepCopy(), client.DryRunAll)
	}
	// The class passes: karpenter-guard allows it, and warns about nothing.
	env.registerWebhooks(b, "enforce")
	if r := env.kubectl(b, "", "create", "--dry-run=server", "-f", "../examples/production/ec2nodeclass.yaml"); r.code != 0 || strings.Contains(r.stderr, "Warning") {
		b.Fatalf("the production EC2NodeClass is not admitted without warnings: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	setups := []struct {
		name     string
		register func()
	}{
		{"no webhook", func() { env.removeWebhooks(b); waitNoWebhook(b, floor, create) }},
		{"allow-all pair", func() { floor.register(b, create) }},
		{"karpenter-guard", func() { env.registerWebhooks(b, "enforce") }},
		{"karpenter-guard, no mutation", func() { registerValidatingOnly(b) }},
	}
	for b.Loop() {
		took := map[string][]time.Duration{}
		for round := range rounds {
			for i := range setups {
				s := setups[(i+round)%len(setups)] // each round starts with another setup
				s.register()
				for _, conc := range []int{1, 8} {
					key := fmt.Sprintf("%s, concurrency %d", s.name, conc)
					took[key] = append(took[key], timeCreates(b, create, perRound, conc)...)
				}
			}
		}
		var lines []string
		for _, conc := range []int{1, 8} {
			floorKey := fmt.Sprintf("%s, concurrency %d", setups[1].name, conc)
			for _, s := range setups {
				key := fmt.Sprintf("%s, concurrency %d", s.name, conc)
				d := slices.Clone(took[key])
				slices.Sort(d)
				lines = append(lines, fmt.Sprintf("| %d | %s | %d | %s | %s | %s | %s |", conc, s.name, len(d),
					ms(percentile(d, 50)), ms(percentile(d, 95)), ms(percentile(d, 99)),
					ms(pairedP50(took[key], took[floorKey], perRound))))
			}
		}
		// One line a call: the testing package cuts a benchmark's long log messages.
		b.Logf("server-side dry-run creates of an EC2NodeClass, %d rounds of %d per setup and concurrency:", rounds, perRound)
		b.Logf("| concurrency | webhooks | requests | p50 | p95 | p99 | p50 above the allow-all pair, median of rounds |")
		for _, l := range lines {
			b.Logf("%s", l)
		}
	}
	env.removeWebhooks(b)
}

// registerValidatingOnly registers karpenter-guard as components/no-mutation deploys it: the
// validating webhook alone.
func registerValidatingOnly(b *testing.B) {
	b.Helper()
	env.removeWebhooks(b)
	docs := deployment(b, "enforce", "no-mutation")
	env.kubectlT(b, "apply", "-f", writeTemp(b, renderWebhooks(docs["ValidatingWebhookConfiguration/karpenter-guard"],
		fmt.Sprintf("https://127.0.0.1:%d", env.guardPort), []byte(readFile(b, filepath.Join(env.guardCerts, certs.CAFile))))))
	waitWebhooksServe(b, env)
}

// pairedP50 compares two setups round by round: the median, over rounds, of the difference of their
// p50s in that round. Rounds alternate the setups minutes apart at most, so a drift of the shared
// machine, which moves a whole run's p50 by half a millisecond, falls on both sides of a round.
// Latencies are in the order timeCreates returned them, perRound to a round.
func pairedP50(setup, floor []time.Duration, perRound int) time.Duration {
	var diffs []time.Duration
	for i := 0; i+perRound <= min(len(setup), len(floor)); i += perRound {
		a, b := slices.Clone(setup[i:i+perRound]), slices.Clone(floor[i:i+perRound])
		slices.Sort(a)
		slices.Sort(b)
		diffs = append(diffs, percentile(a, 50)-percentile(b, 50))
	}
	slices.Sort(diffs)
	return percentile(diffs, 50)
}

// timeCreates makes n creates with conc workers and returns each one's latency.
func timeCreates(b *testing.B, create func() error, n, conc int) []time.Duration {
	var mu sync.Mutex
	var out []time.Duration
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				start := time.Now()
				err := create()
				d := time.Since(start)
				if err != nil {
					b.Errorf("dry-run create: %v", err)
					return
				}
				mu.Lock()
				out = append(out, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// allowAll is the transport floor: e2e/allowall, a webhook that allows everything, served by
// controller-runtime's webhook server in a process of its own, as karpenter-guard's is. (Served from the
// benchmark's own process, it answered 0.2–0.3 ms sooner per request than the same code in a process
// of its own, which is not what a webhook in a pod costs.)
type allowAll struct {
	url    string
	ca     []byte
	client *http.Client
}

func allowAllWebhook(b *testing.B) *allowAll {
	b.Helper()
	dir := b.TempDir()
	if err := certs.Generate(dir, certs.Hosts("", ""), 24*time.Hour); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "allowall")
	build := exec.Command("go", "build", "-o", bin, "./e2e/allowall")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build e2e/allowall: %v: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		b.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := env.spawn("allowall", nil, bin, "-port", strconv.Itoa(port), "-cert-dir", dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.kill(syscall.SIGTERM) })
	a := &allowAll{url: "https://" + addr, ca: []byte(readFile(b, filepath.Join(dir, certs.CAFile))),
		client: &http.Client{Transport: &http.Transport{TLSClientConfig: insecureTLS()}, Timeout: 5 * time.Second}}
	for i := 0; ; i++ {
		if _, err := a.calls(); err == nil {
			return a
		}
		if i == 100 {
			b.Fatalf("e2e/allowall does not answer on %s (log: %s)", addr, p.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// calls returns how many reviews the allow-all server has answered.
func (a *allowAll) calls() (int64, error) {
	resp, err := a.client.Get(a.url + "/calls")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
}

func (a *allowAll) callsT(b *testing.B) int64 {
	b.Helper()
	n, err := a.calls()
	if err != nil {
		b.Fatalf("e2e/allowall: %v", err)
	}
	return n
}

// register applies karpenter-guard's webhook configurations pointed at the allow-all server, and
// waits until the API server calls it.
func (a *allowAll) register(b *testing.B, create func() error) {
	b.Helper()
	env.kubectlT(b, "apply", "-f", writeTemp(b, renderWebhooks(webhookManifests(b, "enforce"), a.url, a.ca)))
	for i := 0; ; i++ {
		before := a.callsT(b)
		if err := create(); err != nil {
			b.Fatal(err)
		}
		if a.callsT(b) > before {
			return
		}
		if i == 150 {
			b.Fatal("the API server never called the allow-all webhooks")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitNoWebhook waits until the removal of the configurations has reached the API server: two creates
// in a row reach neither the allow-all server nor karpenter-guard.
func waitNoWebhook(b *testing.B, a *allowAll, create func() error) {
	b.Helper()
	quiet := 0
	for i := 0; quiet < 2; i++ {
		before, guard := a.callsT(b), reviews(b)
		if err := create(); err != nil {
			b.Fatal(err)
		}
		if a.callsT(b) == before && reviews(b) == guard {
			quiet++
		} else {
			quiet = 0
		}
		if i == 150 {
			b.Fatal("the API server still calls a webhook after its configurations were deleted")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
