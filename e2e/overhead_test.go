//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/certs"
	"github.com/karpenter-guard/karpenter-guard/facts"
)

// BenchmarkDryRunOverhead measures what the webhook adds to a user's `kubectl apply --dry-run=server`
// of an EC2NodeClass: server-side dry-run creates through the real API server, at concurrency 1 and 8,
// in alternating rounds of three setups: no webhook; an allow-all HTTPS pair registered exactly as
// karpenter-guard's validating and mutating webhooks are (the transport floor: two calls that decide
// nothing); karpenter-guard itself (mode enforce, facts from the AWS fake, every answer cached after
// the first round); and karpenter-guard's validating webhook alone (components/no-mutation). It logs p50, p95 and p99 of each, over rounds × perRound requests.
//
//	make bench-overhead
func BenchmarkDryRunOverhead(b *testing.B) {
	const rounds, perRound = 5, 200
	reset(b)
	env.fake.Clear("")
	env.fake.SetFacts(&facts.ClusterFacts{})
	env.startGuard(b, guardOptions{config: "mode: enforce\naws:\n  onError: allow\n", clusterName: "e2e", region: "us-east-1"})
	floor := allowAllWebhook(b)
	c := adminClient(b)
	var class unstructured.Unstructured
	if err := sigsyaml.Unmarshal([]byte(strings.Replace(storedClass("overhead"), "  finalizers: [karpenter.k8s.aws/termination]\n", "", 1)), &class.Object); err != nil {
		b.Fatal(err)
	}
	create := func() error {
		return c.Create(context.Background(), class.DeepCopy(), client.DryRunAll)
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
			for _, s := range setups {
				d := took[fmt.Sprintf("%s, concurrency %d", s.name, conc)]
				slices.Sort(d)
				lines = append(lines, fmt.Sprintf("| %d | %s | %d | %s | %s | %s |", conc, s.name, len(d),
					ms(percentile(d, 50)), ms(percentile(d, 95)), ms(percentile(d, 99))))
			}
		}
		// One line a call: the testing package cuts a benchmark's long log messages.
		b.Logf("server-side dry-run creates of an EC2NodeClass, %d rounds of %d per setup and concurrency:", rounds, perRound)
		b.Logf("| concurrency | webhooks | requests | p50 | p95 | p99 |")
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

// allowAll is an HTTPS webhook on controller-runtime's admission handler that allows everything.
type allowAll struct {
	url   string
	ca    []byte
	calls atomic.Int64
}

func allowAllWebhook(b *testing.B) *allowAll {
	b.Helper()
	dir := b.TempDir()
	if err := certs.Generate(dir, certs.Hosts("", ""), 24*time.Hour); err != nil {
		b.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		b.Fatal(err)
	}
	a := &allowAll{ca: []byte(readFile(b, filepath.Join(dir, certs.CAFile)))}
	handler := &ctrlwebhook.Admission{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		a.calls.Add(1)
		return admission.Allowed("")
	})}
	mux := http.NewServeMux()
	mux.Handle("/validate", handler)
	mux.Handle("/mutate", handler)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	b.Cleanup(func() { _ = srv.Close() })
	a.url = "https://" + l.Addr().String()
	return a
}

// register applies karpenter-guard's webhook configurations pointed at the allow-all server, and
// waits until the API server calls it.
func (a *allowAll) register(b *testing.B, create func() error) {
	b.Helper()
	env.kubectlT(b, "apply", "-f", writeTemp(b, renderWebhooks(webhookManifests(b, "enforce"), a.url, a.ca)))
	for i := 0; ; i++ {
		before := a.calls.Load()
		if err := create(); err != nil {
			b.Fatal(err)
		}
		if a.calls.Load() > before {
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
		before, guard := a.calls.Load(), reviews(b)
		if err := create(); err != nil {
			b.Fatal(err)
		}
		if a.calls.Load() == before && reviews(b) == guard {
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
