//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/audit"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
	"github.com/karpenter-guard/karpenter-guard/internal/livetest"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
)

// BenchmarkAudit10k stores 5,000 EC2NodeClasses and 5,000 NodePools in the API server and audits them:
// list, evaluate with the live provider against the AWS fake (a new provider, so every answer is
// fetched), and replace the reports. The figures are the wall time of each step and the AWS calls,
// which grow with the distinct roles and selectors (13 roles, 2 AMI selectors, 1 subnet and 1 group
// selector in the corpus), not with the objects.
//
//	make bench-e2e
func BenchmarkAudit10k(b *testing.B) {
	ctx := context.Background()
	c := adminClient(b)
	reset(b)
	env.removeWebhooks(b)
	// The network of a healthy cluster and every instance type us-east-1 offers (1,345): serve holds
	// the whole table, as in a real region.
	region := decodeFacts(b, "../validators/scheduling/testdata/instance-types-region.yaml")
	cf := corpus.WithNetwork(corpus.WithIdentities(corpus.Facts(200, 50, 100)), *region.InstanceTypes)
	env.fake.Clear("")
	if err := env.fake.SetWorld(cf, corpus.Policies(cf)); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	createCorpus(b, c, 10000)
	b.Logf("stored 10,000 objects in %v", time.Since(start).Round(time.Millisecond))
	cat := rules.Default()
	for b.Loop() {
		env.fake.ResetCalls()
		p := livetest.NewProvider(b, env.fakeURL, cf, livetest.Options{Budget: 2 * time.Second, Attempts: 3})
		t0 := time.Now()
		objs, err := audit.List(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		o := audit.Run(ctx, cat, config.Default(), p, objs)
		t2 := time.Now()
		if err := audit.WriteReports(ctx, c, audit.Reports(o, config.ModeEnforce, time.Now())); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		var calls []string
		for _, op := range fakeaws.Operations {
			if n := env.fake.Calls(op); n > 0 {
				calls = append(calls, fmt.Sprintf("%s %d", op, n))
			}
		}
		sort.Strings(calls)
		b.Logf("objects %d, findings %d, not evaluated %d; list %v, evaluate %v, reports %v, total %v; AWS calls %d: %s",
			o.Objects, len(o.Findings), len(o.NotEvaluated), t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond),
			t3.Sub(t2).Round(time.Millisecond), t3.Sub(t0).Round(time.Millisecond), env.fake.Calls("*"), strings.Join(calls, ", "))
		b.ReportMetric(float64(env.fake.Calls("*")), "aws-calls")
		p.Close()
	}
	b.StopTimer()

	// The webhook process with the 10,000 objects watched and audited once: its peak memory is what
	// the Deployment's memory limit must hold (GOMEMLIMIT and GOGC as the Deployment sets them).
	// gctrace prints each collection's heap sizes to the log: the live heap after the audit is the
	// memory the watched objects and the audit's results hold, which the peak RSS (governed by GOGC and
	// GOMEMLIMIT as much as by what is live) does not show alone.
	var extra []string
	profile := os.Getenv("E2E_SERVE_HEAP") // where to save serve's heap profile after its audit, for diagnosis
	pprofAddr := ""
	if profile != "" {
		port, err := freePort()
		if err != nil {
			b.Fatal(err)
		}
		pprofAddr = fmt.Sprintf("127.0.0.1:%d", port)
		extra = append(extra, "--pprof-bind-address="+pprofAddr)
	}
	// serve runs in a kernel memory cgroup with the Deployment's memory limit (or E2E_SERVE_MEMORY_LIMIT's),
	// where this process may make one: passing the limit is then an OOM kill, as in the cluster.
	limit, goMemLimit := serveMemory(b)
	memory, err := newMemoryCgroup(b, limit)
	if err != nil {
		b.Logf("serve runs without a memory limit (no memory cgroup: %v)", err)
	}
	env.startGuard(b, guardOptions{clusterName: cf.Cluster.Name, region: cf.Cluster.Region, extraArgs: extra, memory: memory,
		env: []string{"GOMEMLIMIT=" + goMemLimit, "GOGC=" + deploymentEnv(b, "GOGC"), "GODEBUG=gctrace=1"}})
	// The kernel keeps the peak of the whole resident set (VmHWM), not of its anonymous part: sample it.
	// Program text and other file-backed pages count in the container's memory but are dropped under
	// pressure and read again; anonymous memory (Go's heap, stacks) is what an OOM kill answers.
	var peakAnon, fileThen int
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(readFile(b, env.guard.log), `"objects":10000`) {
		if time.Now().After(deadline) {
			b.Fatalf("the webhook's audit of 10,000 objects never finished:\n%s", tail(env.guard.log, 20))
		}
		select {
		case <-env.guard.done:
			b.Fatalf("serve ended during its audit (%v; killed for memory when the cgroup's limit of %d MiB was passed?):\n%s", env.guard.err, limit>>20, tail(env.guard.log, 20))
		default:
		}
		if anon, file := residentKB(b, env.guard.cmd.Process.Pid); anon > peakAnon {
			peakAnon, fileThen = anon, file
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := "?"
	for _, line := range strings.Split(readFile(b, env.guard.log), "\n") {
		if _, rest, ok := strings.Cut(line, `"objects":10000`); ok {
			if _, t, ok := strings.Cut(rest, `"took":`); ok {
				took = strings.TrimSuffix(t, "}") + " s"
			}
		}
	}
	b.Logf("serve with 10,000 objects watched, after its audit (which took %s): %s, %s; anonymous RSS at most %d MB (file-backed %d MB then)",
		took, memoryOf(b, env.guard.cmd.Process.Pid), liveHeap(b, env.guard.log), peakAnon/1000, fileThen/1000)
	if memory != nil {
		peak, met := memory.peak(b)
		b.Logf("serve in a memory cgroup limited to %d MiB, GOMEMLIMIT=%s: the cgroup held at most %d MiB (%s)", limit>>20, goMemLimit, peak>>20, met)
	}
	if profile != "" {
		saveURL(b, "http://"+pprofAddr+"/debug/pprof/heap?gc=1", profile)
	}
	env.stopGuard()
	env.kubectlT(b, "delete", "ec2nodeclasses,nodepools", "--all", "--wait=false")
}

// deploymentContainer returns manifests/base's container: the benchmarks run serve with its memory
// limit and environment.
func deploymentContainer(tb testing.TB) corev1.Container {
	tb.Helper()
	var d appsv1.Deployment
	if err := sigsyaml.Unmarshal([]byte(readFile(tb, "../manifests/base/deployment.yaml")), &d); err != nil {
		tb.Fatal(err)
	}
	return d.Spec.Template.Spec.Containers[0]
}

// deploymentMemoryLimit returns the memory limit of manifests/base's container.
func deploymentMemoryLimit(tb testing.TB) resource.Quantity {
	tb.Helper()
	q, ok := deploymentContainer(tb).Resources.Limits["memory"]
	if !ok {
		tb.Fatal("manifests/base/deployment.yaml sets no memory limit")
	}
	return q
}

// deploymentEnv returns the value of an environment variable of manifests/base's container.
func deploymentEnv(tb testing.TB, name string) string {
	tb.Helper()
	for _, e := range deploymentContainer(tb).Env {
		if e.Name == name {
			return e.Value
		}
	}
	tb.Fatalf("manifests/base/deployment.yaml sets no %s", name)
	return ""
}

// memoryOf returns a process's peak and current resident memory, from /proc.
// liveHeap returns the live heap after the last and the largest collection that a GODEBUG=gctrace=1
// process logged ("gc 7 @1.2s 3%: … 210->230->120 MB, …": 120 MB were live after it).
func liveHeap(tb testing.TB, log string) string {
	tb.Helper()
	last, most := -1, -1
	for _, m := range gcTrace.FindAllStringSubmatch(readFile(tb, log), -1) {
		live, err := strconv.Atoi(m[1])
		if err != nil {
			tb.Fatalf("gctrace: %q: %v", m[0], err)
		}
		last, most = live, max(most, live)
	}
	if last < 0 {
		tb.Fatalf("no gctrace line in %s", log)
	}
	return fmt.Sprintf("live heap %d MB after the last collection, %d MB at most", last, most)
}

// gcTrace matches the heap sizes of a gctrace line; the third is the live heap.
var gcTrace = regexp.MustCompile(`\d+->\d+->(\d+) MB`)

// procStatus returns the fields of a process's /proc status file, by name ("VmHWM": "372384 kB").
func procStatus(tb testing.TB, pid int) map[string]string {
	tb.Helper()
	fields := map[string]string{}
	for _, line := range strings.Split(readFile(tb, fmt.Sprintf("/proc/%d/status", pid)), "\n") {
		if name, v, ok := strings.Cut(line, ":"); ok {
			fields[name] = strings.TrimSpace(v)
		}
	}
	return fields
}

// residentKB returns a process's anonymous and file-backed resident memory now, in kB.
func residentKB(tb testing.TB, pid int) (anon, file int) {
	tb.Helper()
	st := procStatus(tb, pid)
	anon, _ = strconv.Atoi(strings.TrimSuffix(st["RssAnon"], " kB"))
	file, _ = strconv.Atoi(strings.TrimSuffix(st["RssFile"], " kB"))
	return anon, file
}

// saveURL writes what a GET of url answers to path.
func saveURL(tb testing.TB, url, path string) {
	tb.Helper()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("serve's heap profile saved to %s", path)
}

func memoryOf(tb testing.TB, pid int) string {
	tb.Helper()
	st := procStatus(tb, pid)
	return "peak RSS " + st["VmHWM"] + ", RSS " + st["VmRSS"]
}

func adminClient(tb testing.TB) client.Client {
	tb.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", env.kubeconfig)
	if err != nil {
		tb.Fatal(err)
	}
	rc.QPS, rc.Burst = 500, 1000
	c, err := client.New(rc, client.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// createCorpus stores n corpus objects (half EC2NodeClasses, half NodePools) with 16 writers.
func createCorpus(tb testing.TB, c client.Client, n int) {
	tb.Helper()
	work := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for doc := range work {
				u := &unstructured.Unstructured{}
				if err := sigsyaml.Unmarshal([]byte(doc), &u.Object); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					continue
				}
				if err := c.Create(context.Background(), u); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n/2; i++ {
		work <- corpus.NodeClass(i)
		work <- corpus.NodePool(i)
	}
	close(work)
	wg.Wait()
	if failed != nil {
		tb.Fatal(failed)
	}
}
