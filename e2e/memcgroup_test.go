//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/api/resource"
)

// memoryCgroup is a kernel memory cgroup with a limit, made beside the test process's own, in which
// serve runs as in a container with that memory limit: when what the process holds (its heap, stacks
// and the page cache of its program file) passes the limit, the kernel first drops what it can read
// again and then kills the process, as the kubelet's OOM kill would.
type memoryCgroup struct {
	dir string
	v2  bool
}

// newMemoryCgroup makes a memory cgroup with that limit in bytes. It fails where the test may not
// make cgroups (no root, no writable cgroup file system); callers then measure without a limit.
func newMemoryCgroup(tb testing.TB, limit int64) (*memoryCgroup, error) {
	tb.Helper()
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("karpenter-guard-e2e-%d", os.Getpid())
	for _, line := range strings.Split(strings.TrimSpace(string(self)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var cg *memoryCgroup
		switch {
		case parts[1] == "memory": // cgroup v1's memory hierarchy
			cg = &memoryCgroup{dir: filepath.Join("/sys/fs/cgroup/memory", parts[2], name)}
		case parts[0] == "0" && parts[1] == "" && fileExists("/sys/fs/cgroup/cgroup.controllers"): // the unified v2 hierarchy
			cg = &memoryCgroup{dir: filepath.Join("/sys/fs/cgroup", parts[2], name), v2: true}
		default:
			continue
		}
		if err := os.Mkdir(cg.dir, 0o755); err != nil {
			return nil, err
		}
		tb.Cleanup(func() { _ = os.Remove(cg.dir) })
		file := "memory.limit_in_bytes"
		if cg.v2 {
			file = "memory.max"
		}
		if err := os.WriteFile(filepath.Join(cg.dir, file), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
			return nil, fmt.Errorf("set %s: %w", file, err)
		}
		if cg.v2 { // no swap, as on a node the kubelet runs
			_ = os.WriteFile(filepath.Join(cg.dir, "memory.swap.max"), []byte("0"), 0o644)
		}
		return cg, nil
	}
	return nil, errors.New("no memory cgroup controller in /proc/self/cgroup")
}

// wrap returns the command line that starts bin with args inside the cgroup. It first drops bin's
// pages from the page cache, so that the program text serve touches is read again and charged to the
// cgroup, as in a container started on a node that has not run it yet (the kernel charges a cached page
// to whichever cgroup read it first).
func (cg *memoryCgroup) wrap(tb testing.TB, bin string, args []string) (string, []string) {
	tb.Helper()
	f, err := os.Open(bin)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		tb.Logf("%s stays in the page cache (%v): the memory cgroup is charged less than a fresh container", bin, err)
	}
	return "/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg.dir, bin}, args...)
}

// peak returns the most memory the cgroup has held, in bytes (the page cache of what serve read
// included, which the kernel drops at the limit rather than kill), and how the limit was met: how
// often the kernel reclaimed at it and how many processes it OOM-killed.
func (cg *memoryCgroup) peak(tb testing.TB) (bytes int64, met string) {
	tb.Helper()
	peakFile, events, kills := "memory.max_usage_in_bytes", "memory.oom_control", "oom_kill "
	if cg.v2 {
		peakFile, events = "memory.peak", "memory.events"
	}
	bytes, _ = strconv.ParseInt(strings.TrimSpace(readFile(tb, filepath.Join(cg.dir, peakFile))), 10, 64)
	oom := "?"
	for _, line := range strings.Split(readFile(tb, filepath.Join(cg.dir, events)), "\n") {
		if v, ok := strings.CutPrefix(line, kills); ok {
			oom = v
		}
	}
	if cg.v2 {
		return bytes, oom + " OOM kills"
	}
	return bytes, fmt.Sprintf("reclaimed at the limit %s times, %s OOM kills", strings.TrimSpace(readFile(tb, filepath.Join(cg.dir, "memory.failcnt"))), oom)
}

// serveMemory returns the memory limit serve runs under in the benchmark and the GOMEMLIMIT that goes
// with it: the Deployment's, or E2E_SERVE_MEMORY_LIMIT (a Kubernetes quantity) with GOMEMLIMIT at two
// thirds of it, as the chart sets it.
func serveMemory(tb testing.TB) (limit int64, goMemLimit string) {
	tb.Helper()
	if s := os.Getenv("E2E_SERVE_MEMORY_LIMIT"); s != "" {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			tb.Fatalf("E2E_SERVE_MEMORY_LIMIT: %v", err)
		}
		return q.Value(), fmt.Sprintf("%dMiB", q.Value()*2/3>>20)
	}
	q := deploymentMemoryLimit(tb)
	return q.Value(), deploymentEnv(tb, "GOMEMLIMIT")
}
