//go:build e2e

// Package e2e proves karpenter-guard where it is used: a real etcd and kube-apiserver (built from their Go
// modules by `make e2e-deps`), Karpenter's real CRDs, real kubectl, the AWS fake on the wire, and
// `karpenter-guard serve` as a process built from this tree, registered through webhook configurations
// rendered from manifests/. Run it with `make e2e` (part of `make test`).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/certs"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

// env is the running cluster every test shares.
var env *cluster

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	for _, v := range []string{"KUBE_APISERVER", "KUBECTL", "ETCD", "KARPENTER_CRDS"} {
		if os.Getenv(v) == "" {
			return 1, fmt.Errorf("%s is not set: run the suite with `make e2e`, which builds the binaries and sets it", v)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "karpenter-guard-e2e-")
	if err != nil {
		return 1, err
	}
	c := &cluster{dir: dir}
	env = c
	start := time.Now()
	err = c.start(ctx)
	if err == nil {
		fmt.Fprintf(os.Stderr, "e2e: cluster up in %v (run dir %s)\n", time.Since(start).Round(time.Millisecond), dir)
		finished := make(chan struct{})
		go func() {
			<-ctx.Done()
			select {
			case <-finished: // the deferred stop of the signal context
				return
			default:
			}
			// Interrupted (Ctrl-C, a CI cancel) while tests run: stop the processes rather than leave
			// etcd and kube-apiserver running, and say where their logs are.
			fmt.Fprintln(os.Stderr, "e2e: interrupted: stopping the cluster")
			c.stop()
			c.printLogs()
			fmt.Fprintf(os.Stderr, "e2e: logs kept in %s\n", dir)
			os.Exit(130)
		}()
		code := m.Run()
		close(finished)
		c.stop()
		if code != 0 {
			c.printLogs()
			fmt.Fprintf(os.Stderr, "e2e: logs kept in %s\n", dir)
			return code, nil
		}
		os.RemoveAll(dir)
		return 0, nil
	}
	c.stop()
	c.printLogs()
	return 1, fmt.Errorf("%w (logs kept in %s)", err, dir)
}

// cluster is etcd, kube-apiserver, the AWS fake and karpenter-guard, on loopback.
type cluster struct {
	dir        string
	apiURL     string
	adminToken string
	kubeconfig string // admin
	guardKube  string // the webhook's service account, bound to manifests/base/rbac.yaml only
	guardBin   string

	mu    sync.Mutex
	procs []*process

	fake     *fakeaws.Server
	fakeURL  string
	fakeStop func()

	guard *process
	// guardPort and guardCerts are the webhook's port and certificate directory.
	guardPort    int
	guardProbe   int // the running webhook's /healthz and /readyz port
	guardMetrics int // and its /metrics port
	guardCerts   string
}

// process is a child process with its output in a log file.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func (c *cluster) spawn(name string, env []string, bin string, args ...string) (*process, error) {
	logPath := filepath.Join(c.dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p, nil
}

// kill stops a process (and its group) and waits for it.
func (p *process) kill(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (c *cluster) stop() {
	c.mu.Lock()
	procs := append([]*process(nil), c.procs...)
	c.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].kill(syscall.SIGTERM)
	}
	if c.fakeStop != nil {
		c.fakeStop()
	}
}

// printLogs prints the end of every process's log, for a failed run.
func (c *cluster) printLogs() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		data, _ := os.ReadFile(p.log)
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		fmt.Fprintf(os.Stderr, "----- %s (%s), last %d lines -----\n%s\n", p.name, p.log, len(lines), strings.Join(lines, "\n"))
	}
}

// freePort returns a loopback port nothing listens on, for a process the suite starts. It is taken
// below the kernel's ephemeral range: a port from that range (what listening on port 0 gives) can be
// taken meanwhile as the source port of any outgoing connection, and the webhook's port, reused by every
// restart, stays free for seconds between a stop and a start while the API server makes connections.
// Each port is handed out once per run.
func freePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	low := ephemeralLow()
	const first = 10000
	for range 200 {
		port := first + mathrand.IntN(low-first)
		if portsGiven[port] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // in use
		}
		l.Close()
		portsGiven[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("no free loopback port between %d and %d after 200 tries", first, low)
}

// The ports freePort handed out in this run.
var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// ephemeralLow is the first port of the kernel's ephemeral range, or 32768 (Linux's default) when it
// cannot be read or leaves too few ports below it to choose from.
func ephemeralLow() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	var lo, hi int
	if _, err := fmt.Sscan(string(data), &lo, &hi); err != nil || lo <= 11000 {
		return 32768
	}
	return lo
}

func (c *cluster) start(ctx context.Context) error {
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"build karpenter-guard", c.build},
		{"etcd and kube-apiserver", c.startControlPlane},
		{"Karpenter and cert-manager CRDs", c.installCRDs},
		{"the webhook's service account", c.serviceAccount},
		{"the AWS fake", c.startFake},
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := time.Now()
		if err := s.fn(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Fprintf(os.Stderr, "e2e: %s: %v\n", s.name, time.Since(t).Round(time.Millisecond))
	}
	return nil
}

// build builds the karpenter-guard binary under test; E2E_GUARD_BIN names a prebuilt one instead, for
// the benchmarks' before/after runs of another revision.
func (c *cluster) build(ctx context.Context) error {
	if bin := os.Getenv("E2E_GUARD_BIN"); bin != "" {
		c.guardBin = bin
		return nil
	}
	c.guardBin = filepath.Join(c.dir, "karpenter-guard")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", c.guardBin, "./cmd/karpenter-guard")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// auditPolicy records every request's metadata, with the admission webhooks' audit annotations.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    resources:
      - group: karpenter.k8s.aws
      - group: karpenter.sh
      - group: ""
        resources: [configmaps]
  - level: None
`

func (c *cluster) startControlPlane(ctx context.Context) error {
	ports := map[string]int{}
	for _, p := range []string{"etcd-client", "etcd-peer", "etcd-metrics", "apiserver"} {
		n, err := freePort()
		if err != nil {
			return err
		}
		ports[p] = n
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports["etcd-client"])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports["etcd-peer"])
	if _, err := c.spawn("etcd", nil, os.Getenv("ETCD"), "--name", "e2e", "--data-dir", filepath.Join(c.dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL, "--initial-cluster", "e2e="+peerURL,
		"--listen-metrics-urls", fmt.Sprintf("http://127.0.0.1:%d", ports["etcd-metrics"]),
		"--unsafe-no-fsync", "--log-level", "warn"); err != nil {
		return err
	}
	if err := waitHTTP(ctx, http.DefaultClient, etcdURL+"/health", 60*time.Second); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	saKey := filepath.Join(c.dir, "sa.key")
	if err := os.WriteFile(saKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	c.adminToken = randomToken()
	tokens := filepath.Join(c.dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(c.adminToken+",e2e-admin,e2e-admin,system:masters\n"), 0o600); err != nil {
		return err
	}
	policy := filepath.Join(c.dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return err
	}
	c.apiURL = fmt.Sprintf("https://127.0.0.1:%d", ports["apiserver"])
	if _, err := c.spawn("kube-apiserver", nil, os.Getenv("KUBE_APISERVER"),
		"--etcd-servers="+etcdURL, "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports["apiserver"]), "--cert-dir="+filepath.Join(c.dir, "apiserver-certs"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local", "--service-account-key-file="+saKey,
		"--service-account-signing-key-file="+saKey, "--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=RBAC", "--endpoint-reconciler-type=none", "--token-auth-file="+tokens,
		"--audit-policy-file="+policy, "--audit-log-path="+c.auditLog(), "--audit-log-format=json",
		"--audit-log-mode=blocking",
		// Webhooks reached through a Service are called at its endpoints, as on EKS: a Service without
		// endpoints fails the call with "no endpoints available for service".
		"--enable-aggregator-routing=true"); err != nil {
		return err
	}
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: insecureTLS()}}
	if err := waitHTTP(ctx, insecure, c.apiURL+"/readyz", 120*time.Second); err != nil {
		return fmt.Errorf("kube-apiserver: %w", err)
	}
	c.kubeconfig = filepath.Join(c.dir, "admin.kubeconfig")
	return writeKubeconfig(c.kubeconfig, c.apiURL, c.adminToken)
}

func (c *cluster) auditLog() string { return filepath.Join(c.dir, "audit.log") }

func (c *cluster) installCRDs(ctx context.Context) error {
	if _, err := c.kubectlOK(ctx, "apply", "-f", os.Getenv("KARPENTER_CRDS")); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/cert-manager/cert-manager").Output()
	if err != nil {
		return fmt.Errorf("find cert-manager's module: %w", err)
	}
	cm := filepath.Join(strings.TrimSpace(string(out)), "deploy", "crds")
	if _, err := c.kubectlOK(ctx, "apply", "-k", "../manifests/crds"); err != nil {
		return err
	}
	for _, f := range []string{"cert-manager.io_certificates.yaml", "cert-manager.io_issuers.yaml"} {
		if _, err := c.kubectlOK(ctx, "apply", "--server-side", "-f", filepath.Join(cm, f)); err != nil {
			return err
		}
	}
	_, err = c.kubectlOK(ctx, "wait", "--for", "condition=established", "--timeout=60s", "crd", "--all")
	return err
}

// serviceAccount creates karpenter-guard's namespace and service account with the RBAC of
// manifests/base (and nothing more), and a kubeconfig with a token of it for the webhook.
func (c *cluster) serviceAccount(ctx context.Context) error {
	steps := [][]string{
		{"create", "namespace", "karpenter-guard"},
		{"create", "serviceaccount", "karpenter-guard", "-n", "karpenter-guard"},
		{"apply", "-f", "../manifests/base/rbac.yaml"},
	}
	for _, s := range steps {
		if _, err := c.kubectlOK(ctx, s...); err != nil {
			return err
		}
	}
	token, err := c.kubectlOK(ctx, "create", "token", "karpenter-guard", "-n", "karpenter-guard", "--duration=6h")
	if err != nil {
		return err
	}
	c.guardKube = filepath.Join(c.dir, "karpenter-guard.kubeconfig")
	return writeKubeconfig(c.guardKube, c.apiURL, strings.TrimSpace(token))
}

func (c *cluster) startFake(ctx context.Context) error {
	c.fake = fakeaws.New(&facts.ClusterFacts{}, fakeaws.WithLog(mustLog(filepath.Join(c.dir, "fakeaws.log"))))
	running, err := c.fake.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	c.fakeURL = running.URL
	c.fakeStop = func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = running.Shutdown(sctx)
	}
	return nil
}

func mustLog(path string) io.Writer {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return io.Discard
	}
	return f
}

// guardOptions start a webhook process.
type guardOptions struct {
	config      string // GuardConfig body (after apiVersion and kind)
	clusterName string
	region      string
	extraArgs   []string
	// noSelfSigned leaves certificates to the extra arguments (--cert-rotation).
	noSelfSigned bool
	// auditInterval is --audit-interval (default 1h: the audit then runs on changes only).
	auditInterval string
	// env is added to the process's environment (GOMEMLIMIT, as the Deployment sets it).
	env []string
	// memory, when set, is the memory cgroup serve runs in (as a container under a memory limit).
	memory *memoryCgroup
}

// startGuard (re)starts `karpenter-guard serve` against the AWS fake and waits until it is ready.
func (c *cluster) startGuard(t testing.TB, o guardOptions) {
	t.Helper()
	c.stopGuard()
	c.reserveGuard(t)
	cfg := filepath.Join(c.dir, "guard-config.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\n"+o.config), 0o644); err != nil {
		t.Fatal(err)
	}
	probe, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--config", cfg, "--kubeconfig", c.guardKube, "--cert-dir", c.guardCerts,
		fmt.Sprintf("--port=%d", c.guardPort), fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probe),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metrics), "--cluster-name", o.clusterName, "--region", o.region,
		"--aws-endpoint-url", c.fakeURL, "--zap-log-level=debug", "--namespace", "karpenter-guard",
		"--shutdown-delay=0"} // restarts are many; TestGracefulShutdown sets it
	if o.auditInterval == "" {
		o.auditInterval = "1h"
	}
	args = append(args, "--audit-interval", o.auditInterval)
	if !o.noSelfSigned {
		args = append(args, "--self-signed")
	}
	args = append(args, o.extraArgs...)
	// E2E_GUARD_ARGS adds serve flags to every start, for diagnosis (--pprof-bind-address=127.0.0.1:6060).
	args = append(args, strings.Fields(os.Getenv("E2E_GUARD_ARGS"))...)
	bin := c.guardBin
	if o.memory != nil {
		bin, args = o.memory.wrap(t, bin, args)
	}
	p, err := c.spawn("karpenter-guard", append([]string{"AWS_ACCESS_KEY_ID=AKIAFAKEAWS000000000", "AWS_SECRET_ACCESS_KEY=fake",
		"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"}, o.env...), bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	c.guard, c.guardProbe, c.guardMetrics = p, probe, metrics
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := waitHTTP(ctx, http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/readyz", probe), 60*time.Second); err != nil {
		t.Fatalf("karpenter-guard not ready: %v\n%s", err, tail(p.log, 30))
	}
}

// reserveGuard picks, once, the webhook's port and certificate directory, which every start reuses:
// webhook configurations rendered before a start point at them.
func (c *cluster) reserveGuard(t testing.TB) {
	t.Helper()
	if c.guardCerts == "" {
		c.guardCerts = filepath.Join(c.dir, "guard-certs")
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		c.guardPort = port
	}
}

func (c *cluster) stopGuard() {
	if c.guard != nil {
		c.guard.kill(syscall.SIGTERM)
		c.guard = nil
	}
}

// registerWebhooks applies the webhook configurations a deployment in mode has (webhookManifests),
// with a URL client config pointing at the webhook process and its CA.
func (c *cluster) registerWebhooks(t testing.TB, mode string) {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(c.guardCerts, certs.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	rendered := renderWebhooks(webhookManifests(t, mode), fmt.Sprintf("https://127.0.0.1:%d", c.guardPort), ca)
	path := filepath.Join(c.dir, "webhooks.yaml")
	if err := os.WriteFile(path, []byte(rendered), 0o644); err != nil {
		t.Fatal(err)
	}
	c.kubectlT(t, "apply", "-f", path)
	waitWebhooksServe(t, c)
}

// modeOf is the mode a GuardConfig body sets (enforce, the default, when it sets none).
func modeOf(config string) string {
	if m := regexp.MustCompile(`(?m)^mode: *(\S+)`).FindStringSubmatch(config); m != nil {
		return m[1]
	}
	return "enforce"
}

// deployment renders manifests/ as an operator deploys them in mode: kubectl kustomize of the base
// with components/mode-<mode> (none for dry-run, the base's mode) and the extra components named. It
// returns the documents by "Kind/name".
func deployment(t testing.TB, mode string, extra ...string) map[string]string {
	t.Helper()
	var components []string
	if mode != "dry-run" {
		components = append(components, filepath.Join("components", "mode-"+mode))
	}
	for _, c := range extra {
		components = append(components, filepath.Join("components", c))
	}
	return kustomize(t, "base", components...)
}

// kustomize renders a kustomization of resource (a directory of manifests/: base, overlays/self-managed)
// with the components named (directories of manifests/, applied in order), and returns the documents
// by "Kind/name".
func kustomize(t testing.TB, resource string, components ...string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	manifests, err := filepath.Abs("../manifests")
	if err != nil {
		t.Fatal(err)
	}
	// kustomize takes only relative paths to other kustomizations.
	rel, err := filepath.Rel(dir, manifests)
	if err != nil {
		t.Fatal(err)
	}
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [" + filepath.Join(rel, resource) + "]\n"
	if len(components) > 0 {
		paths := make([]string, len(components))
		for i, c := range components {
			paths[i] = filepath.Join(rel, c)
		}
		k += "components: [" + strings.Join(paths, ", ") + "]\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	out := env.kubectlT(t, "kustomize", dir)
	docs := map[string]string{}
	for _, d := range strings.Split(out, "\n---\n") {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := sigsyaml.Unmarshal([]byte(d), &head); err != nil {
			t.Fatalf("kubectl kustomize: %v\n%s", err, d)
		}
		docs[head.Kind+"/"+head.Metadata.Name] = d
	}
	return docs
}

// webhookManifests returns the two webhook configurations of a deployment in mode.
func webhookManifests(t testing.TB, mode string) string {
	t.Helper()
	docs := deployment(t, mode)
	v, m := docs["ValidatingWebhookConfiguration/karpenter-guard"], docs["MutatingWebhookConfiguration/karpenter-guard"]
	if v == "" || m == "" {
		t.Fatalf("the %s deployment has no webhook configurations", mode)
	}
	return v + "\n---\n" + m
}

// renderWebhooks replaces each clientConfig's service by url (base URL plus the service's path) and
// sets the CA bundle: what a deployment's Service and cert-manager do in a cluster. With base "" the
// service stays and only the CA bundle is set.
func renderWebhooks(manifest, base string, ca []byte) string {
	var out []string
	lines := strings.Split(manifest, "\n")
	bundle := base64.StdEncoding.EncodeToString(ca)
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) != "clientConfig:" {
			out = append(out, l)
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
		path := ""
		j := i + 1
		for ; j < len(lines) && strings.HasPrefix(lines[j], indent+"  "); j++ {
			if p, ok := strings.CutPrefix(strings.TrimSpace(lines[j]), "path: "); ok {
				path = p
			}
		}
		if base == "" {
			out = append(out, lines[i:j]...)
			out = append(out, indent+"  caBundle: "+bundle)
		} else {
			out = append(out, l, indent+"  url: "+base+path, indent+"  caBundle: "+bundle)
		}
		i = j - 1
	}
	return strings.Join(out, "\n")
}

func (c *cluster) removeWebhooks(t testing.TB) {
	t.Helper()
	c.kubectlT(t, "delete", "validatingwebhookconfiguration,mutatingwebhookconfiguration", "karpenter-guard", "--ignore-not-found")
}

// waitWebhooksServe waits until the API server calls the webhook (its configuration takes effect
// asynchronously): a server-side dry-run of a probe object is recorded in the audit log with the
// webhook's annotations, whatever the mode.
func waitWebhooksServe(t testing.TB, c *cluster) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		name := fmt.Sprintf("webhook-probe-%d-%d", time.Now().UnixNano(), i)
		probe := `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: ` + name + `}
spec:
  amiSelectorTerms: [{alias: al2023@not-a-version}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
`
		c.kubectl(t, probe, "apply", "--dry-run=server", "-f", "-")
		if annotated(c, name) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server does not call the webhook (no audit annotation for %s)", name)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// annotated reports whether the audit log records karpenter-guard's annotations on a request for the
// named object.
func annotated(c *cluster, name string) bool {
	return auditLogHas(c, name, `"karpenter.validate.karpenter-guard.io/`)
}

// auditLogHas reports whether a line of the audit log about the named object holds every one of want.
func auditLogHas(c *cluster, name string, want ...string) bool {
	data, err := os.ReadFile(c.auditLog())
	if err != nil {
		return false
	}
lines:
	for _, l := range bytes.Split(data, []byte("\n")) {
		if !bytes.Contains(l, []byte(`"name":"`+name+`"`)) {
			continue
		}
		for _, w := range want {
			if !bytes.Contains(l, []byte(w)) {
				continue lines
			}
		}
		return true
	}
	return false
}

// result is a kubectl run.
type result struct {
	code           int
	stdout, stderr string
}

// kubectl runs kubectl as the admin with stdin.
func (c *cluster) kubectl(t testing.TB, stdin string, args ...string) result {
	t.Helper()
	return c.kubectlAs(t, c.kubeconfig, stdin, args...)
}

func (c *cluster) kubectlAs(t testing.TB, kubeconfig, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Getenv("KUBECTL"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	return runTool(t, cmd, "kubectl", args)
}

// runTool runs a command line tool (kubectl, helm) and returns its exit code and output; a tool that
// cannot be started at all fails the test.
func runTool(t testing.TB, cmd *exec.Cmd, name string, args []string) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// kubectlT runs kubectl and fails the test on a non-zero exit.
func (c *cluster) kubectlT(t testing.TB, args ...string) string {
	t.Helper()
	r := c.kubectl(t, "", args...)
	if r.code != 0 {
		t.Fatalf("kubectl %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// kubectlOK is kubectl for set-up, before any test runs.
func (c *cluster) kubectlOK(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, os.Getenv("KUBECTL"), append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("kubectl %v: %w: %s", args, err, out)
	}
	return string(out), nil
}

func writeKubeconfig(path, server, token string) error {
	return os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
  - name: e2e
    cluster:
      server: %s
      insecure-skip-tls-verify: true
users:
  - name: user
    user:
      token: %s
contexts:
  - name: e2e
    context: {cluster: e2e, user: user}
current-context: e2e
`, server, token)), 0o600)
}

func waitHTTP(ctx context.Context, client *http.Client, url string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		res, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("%s: %d %s", url, res.StatusCode, body)
		} else {
			last = err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %v: %v", limit, last)
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		lines = append(lines, s.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
