// Command loadgen measures the admission webhook under load: it serves karpenter-guard's /validate
// (the Reviewer serve builds, with warm snapshot facts) and a bare allow-all handler on the same
// controller-runtime TLS server, posts real AdmissionReviews of corpus EC2NodeClasses and NodePools
// at several concurrencies, and prints p50, p99 and throughput of both, with the ratio:
//
//	go run ./hack/loadgen -duration 10s -rounds 5 -concurrency 1,16,64
//
// Each path is loaded in rounds that alternate with the other path's (validate first in one round,
// allow first in the next), and a path's figures pool its rounds: a drift of the shared machine
// during the run then weighs on both paths alike instead of on whichever ran during it.
//
// With -url it loads a running `karpenter-guard serve` instead (its /validate only; -ca names its CA).
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpenter-guard/karpenter-guard/certs"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
	"github.com/karpenter-guard/karpenter-guard/webhook"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	duration := fs.Duration("duration", 10*time.Second, "how long each path is loaded at each concurrency, over all rounds")
	rounds := fs.Int("rounds", 5, "rounds per concurrency; the paths alternate, round by round")
	warmup := fs.Duration("warmup", 2*time.Second, "load before measuring, at each concurrency")
	levels := fs.String("concurrency", "1,16,64", "comma-separated numbers of concurrent clients")
	url := fs.String("url", "", "load a running webhook at this base URL instead of an in-process one")
	caFile := fs.String("ca", "", "CA certificate of -url")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (server and clients) to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctrllog.SetLogger(logr.Discard()) // controller-runtime's server logs nothing worth measuring
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *rounds < 1 {
		return fmt.Errorf("-rounds %d: expected at least 1", *rounds)
	}
	var concurrency []int
	for _, s := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-concurrency %q: expected positive numbers", *levels)
		}
		concurrency = append(concurrency, n)
	}
	bodies, err := reviews(200)
	if err != nil {
		return err
	}
	base, ca := *url, *caFile
	paths := []string{webhook.ValidatePath}
	if base == "" {
		dir, err := os.MkdirTemp("", "loadgen-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		stop, addr, err := serve(ctx, dir)
		if err != nil {
			return err
		}
		defer stop()
		base, ca = "https://"+addr, filepath.Join(dir, certs.CAFile)
		paths = append(paths, "/allow")
	}
	client, err := httpClient(ca, slices.Max(concurrency))
	if err != nil {
		return err
	}
	if err := check(client, base+webhook.ValidatePath, bodies); err != nil {
		return err
	}
	fmt.Fprintf(out, "| concurrency | path | reviews/s | p50 | p99 | errors |\n|---|---|---|---|---|---|\n")
	for _, c := range concurrency {
		for _, p := range paths {
			load(client, base+p, bodies, c, *warmup) // warm connections, caches and the scheduler
		}
		res := make([]result, len(paths))
		var roundRatios []float64 // p99 ratio of each round
		for round := range *rounds {
			var p99 [2]time.Duration
			for k := range paths {
				i := k
				if round%2 == 1 { // alternate which path goes first
					i = len(paths) - 1 - k
				}
				r := load(client, base+paths[i], bodies, c, *duration/time.Duration(*rounds))
				res[i].add(r)
				p99[i] = r.percentile(99)
			}
			if len(paths) == 2 && p99[1] > 0 {
				roundRatios = append(roundRatios, float64(p99[0])/float64(p99[1]))
			}
		}
		for i, p := range paths {
			r := &res[i]
			fmt.Fprintf(out, "| %d | %s | %.0f | %v | %v | %d |\n", c, p, r.rate(), r.percentile(50).Round(time.Microsecond), r.percentile(99).Round(time.Microsecond), r.errors)
		}
		if len(res) == 2 && res[1].percentile(99) > 0 {
			v, a := &res[0], &res[1]
			fmt.Fprintf(out, "| %d | ratio validate/allow | %.2f | %.2f | %.2f (rounds %.2f–%.2f) | |\n", c, v.rate()/a.rate(),
				float64(v.percentile(50))/float64(a.percentile(50)), float64(v.percentile(99))/float64(a.percentile(99)),
				slices.Min(roundRatios), slices.Max(roundRatios))
		}
	}
	return nil
}

// serve starts the webhook as serve does, with warm snapshot facts of the corpus cluster, plus the bare
// allow-all handler at /allow, on the same TLS server.
func serve(ctx context.Context, dir string) (func(), string, error) {
	if _, err := certs.EnsureSelfSigned(dir, certs.Hosts("", ""), 24*time.Hour); err != nil {
		return nil, "", err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := ctrlwebhook.NewServer(ctrlwebhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.MinVersion = tls.VersionTLS12 }}})
	cluster, err := corpus.NewCluster(200) // serve's watch cache, synced
	if err != nil {
		return nil, "", err
	}
	r := webhook.NewReviewer(rules.Default(), config.Default(), facts.NewSnapshot(corpus.Facts(200, 50, 100)), cluster, nil, logr.Discard())
	webhook.Register(srv, r, webhook.DefaultLimits())
	srv.Register("/allow", webhook.Guard(&ctrlwebhook.Admission{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		return admission.Allowed("")
	})}, webhook.DefaultLimits()))
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, "/", nil)
		if srv.StartedChecker()(req) == nil {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			return nil, "", errors.New("the webhook server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return func() { cancel(); <-done }, fmt.Sprintf("127.0.0.1:%d", port), nil
}

// reviews returns n AdmissionReview bodies: CREATEs of corpus EC2NodeClasses and NodePools.
func reviews(n int) ([][]byte, error) {
	reqs, err := corpus.AdmissionRequests(n)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for i := range reqs {
		b, err := json.Marshal(admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request:  &reqs[i],
		})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func httpClient(caFile string, conns int) (*http.Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("CA: no certificate")
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}, MaxIdleConns: conns, MaxIdleConnsPerHost: conns,
	}}, nil
}

// check posts one review and makes sure the answer is an AdmissionReview (not an error page).
func check(c *http.Client, url string, bodies [][]byte) error {
	code, body, err := post(c, url, bodies[0])
	if err != nil || code != http.StatusOK || !bytes.Contains(body, []byte(`"response"`)) {
		return fmt.Errorf("POST %s: %d %v %s", url, code, err, body)
	}
	return nil
}

func post(c *http.Client, url string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res.StatusCode, out, err
}

// result is the latencies of the requests that succeeded, over the time they were sent in.
type result struct {
	lat     []time.Duration
	elapsed time.Duration
	errors  int64
}

// add pools another round's result into r.
func (r *result) add(o result) {
	r.lat = append(r.lat, o.lat...)
	r.elapsed += o.elapsed
	r.errors += o.errors
}

func (r *result) rate() float64 { return float64(len(r.lat)) / r.elapsed.Seconds() }

// percentile returns the p-th percentile latency (0 without requests).
func (r *result) percentile(p int) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	if !slices.IsSorted(r.lat) {
		slices.Sort(r.lat)
	}
	return r.lat[len(r.lat)*p/100]
}

// load posts reviews from c clients for d and measures each request.
func load(client *http.Client, url string, bodies [][]byte, c int, d time.Duration) result {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		lat     []time.Duration
		errs    atomic.Int64
		next    atomic.Int64
		stop    = time.Now().Add(d)
		started = time.Now()
	)
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(stop) {
				body := bodies[int(next.Add(1))%len(bodies)]
				t := time.Now()
				code, _, err := post(client, url, body)
				if err != nil || code != http.StatusOK {
					errs.Add(1)
					continue
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return result{lat: lat, elapsed: time.Since(started), errors: errs.Load()}
}
