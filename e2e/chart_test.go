//go:build e2e

package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/certs"
	"github.com/karpenter-guard/karpenter-guard/facts"
)

// chartDir is the Helm chart under test.
const chartDir = "../charts/karpenter-guard"

// helm runs the helm binary `make e2e-deps` builds from helm.sh/helm/v3 (HELM) against the test
// cluster, with its cache, configuration and data in the run directory rather than the user's home.
func helm(t testing.TB, args ...string) result {
	t.Helper()
	bin := os.Getenv("HELM")
	if bin == "" {
		t.Fatal("HELM is not set: run the suite with `make e2e`, which builds helm and sets it")
	}
	home := filepath.Join(env.dir, "helm")
	cmd := exec.Command(bin, append([]string{"--kubeconfig", env.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	return runTool(t, cmd, "helm", args)
}

// helmT runs helm and fails the test on a non-zero exit.
func helmT(t testing.TB, args ...string) string {
	t.Helper()
	r := helm(t, args...)
	if r.code != 0 {
		t.Fatalf("helm %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// object is one rendered Kubernetes object, decoded.
type object = map[string]any

// objectsByKey splits a multi-document YAML stream into objects by "Kind/namespace/name", skipping
// documents that hold only comments.
func objectsByKey(t testing.TB, stream string) map[string]object {
	t.Helper()
	out := map[string]object{}
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(stream, -1) {
		var o object
		if err := sigsyaml.Unmarshal([]byte(d), &o); err != nil {
			t.Fatalf("decode %v\n%s", err, d)
		}
		if o == nil {
			continue
		}
		meta, _ := o["metadata"].(map[string]any)
		key := fmt.Sprintf("%s/%v/%v", o["kind"], meta["namespace"], meta["name"])
		if meta["namespace"] == nil {
			key = fmt.Sprintf("%s//%v", o["kind"], meta["name"])
		}
		if _, dup := out[key]; dup {
			t.Fatalf("%s rendered twice", key)
		}
		out[key] = o
	}
	return out
}

// decodeInto converts a decoded object into a typed one.
func decodeInto(t testing.TB, o object, into any) {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}

// chartValues is one values file of charts/karpenter-guard/ci and what a user checks its rendering for.
type chartValues struct {
	file              string
	mode              string
	certManager       bool
	mutation          bool
	crds              bool
	hostNetwork       bool
	port              int
	networkPolicy     bool
	namespace         bool
	exempt            []string // the service accounts the matchCondition not-karpenter-controller exempts
	goMemLimit        string
	region            string
	roleARN           string
	pdb               bool
	priorityClassName string
}

var ciValues = []chartValues{
	{file: "default-values.yaml", mode: "dry-run", mutation: true, crds: true, port: 9443, networkPolicy: true, pdb: true,
		exempt: []string{"kube-system:karpenter", "karpenter:karpenter"}, goMemLimit: "256MiB", priorityClassName: "system-cluster-critical"},
	{file: "enforce-cert-manager-values.yaml", mode: "enforce", certManager: true, port: 9443, networkPolicy: true, pdb: true,
		exempt: []string{"kube-system:karpenter", "karpenter:karpenter"}, goMemLimit: "256MiB", priorityClassName: "system-cluster-critical"},
	{file: "warn-host-network-values.yaml", mode: "warn", certManager: true, mutation: true, crds: true, hostNetwork: true, port: 10443,
		namespace: true, pdb: true, exempt: []string{"kube-system:karpenter", "karpenter:karpenter"}, goMemLimit: "256MiB",
		priorityClassName: "system-cluster-critical"},
	{file: "enforce-irsa-values.yaml", mode: "enforce", mutation: true, crds: true, port: 9443, networkPolicy: true,
		exempt: []string{"platform:karpenter-controller"}, goMemLimit: "819MiB", region: "eu-west-1",
		roleARN: "arn:aws:iam::111122223333:role/karpenter-guard"},
}

// TestChartLintAndTemplate: `helm lint --strict` passes with every values file of the chart's ci/, and
// `helm template` of each renders what its values ask for and what the API server takes (a server-side
// dry-run); values that cannot work fail the rendering with a message that says what to set.
func TestChartLintAndTemplate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(ciValues) {
		t.Fatalf("ci/ holds %d values files, the test checks %d: give each one its expectations", len(files), len(ciValues))
	}
	for _, v := range ciValues {
		t.Run(strings.TrimSuffix(v.file, "-values.yaml"), func(t *testing.T) {
			file := filepath.Join(chartDir, "ci", v.file)
			if r := helm(t, "lint", "--strict", chartDir, "-f", file); r.code != 0 {
				t.Fatalf("helm lint --strict -f %s: exit %d\n%s%s", v.file, r.code, r.stdout, r.stderr)
			}
			out := helmT(t, "template", "karpenter-guard", chartDir, "-n", "karpenter-guard", "-f", file)
			checkRendering(t, v, objectsByKey(t, out))
			if r := env.kubectl(t, out, "apply", "--dry-run=server", "-f", "-"); r.code != 0 {
				t.Errorf("the API server refuses the rendering: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no clusterName", nil, "clusterName is required: the EKS cluster's name"},
		{"mode in config", []string{"--set", "clusterName=c", "--set", "config.mode=enforce"}, "config.mode is not allowed: set the value `mode`"},
		{"unknown mode", []string{"--set", "clusterName=c", "--set", "mode=audit"}, "at '/mode': value must be one of"},
		{"unknown certificates", []string{"--set", "clusterName=c", "--set", "certificates.mode=acm"}, "at '/certificates/mode': value must be one of"},
		{"memory in M", []string{"--set", "clusterName=c", "--set", "resources.limits.memory=300M"}, `goMemLimit is empty and resources.limits.memory ("300M") is not a whole number of Mi or Gi`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := helm(t, append([]string{"template", "karpenter-guard", chartDir, "-n", "karpenter-guard"}, tc.args...)...)
			if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("helm template %v: exit %d, want a failure saying %q\n%s", tc.args, r.code, tc.want, r.stderr)
			}
		})
	}
}

// checkRendering checks a rendering of the chart against what its values ask for.
func checkRendering(t *testing.T, v chartValues, objs map[string]object) {
	t.Helper()
	has := func(key string) bool { _, ok := objs[key]; return ok }
	var dep appsv1.Deployment
	decodeInto(t, objs["Deployment/karpenter-guard/karpenter-guard"], &dep)
	if len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("the Deployment has %d containers", len(dep.Spec.Template.Spec.Containers))
	}
	c := dep.Spec.Template.Spec.Containers[0]
	envOf := func(name string) string {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
		return ""
	}
	if !slices.Contains(c.Args, "--mode=$(KARPENTER_GUARD_MODE)") || envOf("KARPENTER_GUARD_MODE") != v.mode {
		t.Errorf("the Deployment does not run in mode %s: args %v, KARPENTER_GUARD_MODE %q", v.mode, c.Args, envOf("KARPENTER_GUARD_MODE"))
	}
	if got := envOf("GOMEMLIMIT"); got != v.goMemLimit {
		t.Errorf("GOMEMLIMIT %q, want %q (4/5 of limits.memory %v)", got, v.goMemLimit, c.Resources.Limits.Memory())
	}

	// Failure policies: only the validating webhook of Karpenter's kinds fails closed, and only in
	// enforce; the two Karpenter webhooks exempt exactly the service accounts asked for.
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	decodeInto(t, objs["ValidatingWebhookConfiguration//karpenter-guard"], &vwc)
	policies := map[string]string{}
	conditions := map[string][]admissionregistrationv1.MatchCondition{}
	for _, w := range vwc.Webhooks {
		policies[w.Name] = string(*w.FailurePolicy)
		conditions[w.Name] = w.MatchConditions
	}
	wantPolicy := map[string]string{"karpenter.validate.karpenter-guard.io": "Ignore", "aws-auth.validate.karpenter-guard.io": "Ignore"}
	if v.mode == "enforce" {
		wantPolicy["karpenter.validate.karpenter-guard.io"] = "Fail"
	}
	if has("MutatingWebhookConfiguration//karpenter-guard") != v.mutation {
		t.Errorf("MutatingWebhookConfiguration rendered: %v, want %v", !v.mutation, v.mutation)
	}
	if v.mutation {
		var mwc admissionregistrationv1.MutatingWebhookConfiguration
		decodeInto(t, objs["MutatingWebhookConfiguration//karpenter-guard"], &mwc)
		for _, w := range mwc.Webhooks {
			policies[w.Name] = string(*w.FailurePolicy)
			conditions[w.Name] = w.MatchConditions
		}
		wantPolicy["karpenter.mutate.karpenter-guard.io"] = "Ignore"
		if !slices.EqualFunc(conditions["karpenter.validate.karpenter-guard.io"], conditions["karpenter.mutate.karpenter-guard.io"],
			func(a, b admissionregistrationv1.MatchCondition) bool { return a == b }) {
			t.Errorf("the Karpenter webhooks' matchConditions differ")
		}
	} else if !slices.Contains(c.Args, "--mutating-webhook-configuration=") {
		t.Errorf("without mutation the rotator is still told of a mutating configuration: %v", c.Args)
	}
	if fmt.Sprint(policies) != fmt.Sprint(wantPolicy) {
		t.Errorf("failure policies %v, want %v", policies, wantPolicy)
	}
	var exempt []string
	for _, m := range conditions["karpenter.validate.karpenter-guard.io"] {
		if m.Name == "not-karpenter-controller" {
			for _, sa := range regexp.MustCompile(`'system:serviceaccount:([^']+)'`).FindAllStringSubmatch(m.Expression, -1) {
				exempt = append(exempt, sa[1])
			}
		}
	}
	if !slices.Equal(exempt, v.exempt) {
		t.Errorf("not-karpenter-controller exempts %v, want %v", exempt, v.exempt)
	}

	// Certificates: cert-manager's objects and CA injection, or karpenter-guard's rotation.
	certManager := []string{"Issuer/karpenter-guard/karpenter-guard-selfsigned", "Certificate/karpenter-guard/karpenter-guard-ca",
		"Issuer/karpenter-guard/karpenter-guard-ca", "Certificate/karpenter-guard/karpenter-guard-serving"}
	selfManaged := []string{"Secret/karpenter-guard/karpenter-guard-cert", "Role/karpenter-guard/karpenter-guard-cert-rotation",
		"RoleBinding/karpenter-guard/karpenter-guard-cert-rotation", "ClusterRole//karpenter-guard-cert-rotation",
		"ClusterRoleBinding//karpenter-guard-cert-rotation"}
	for _, k := range certManager {
		if has(k) != v.certManager {
			t.Errorf("%s rendered: %v, want %v", k, has(k), v.certManager)
		}
	}
	for _, k := range selfManaged {
		if has(k) == v.certManager {
			t.Errorf("%s rendered: %v, want %v", k, has(k), !v.certManager)
		}
	}
	secret := dep.Spec.Template.Spec.Volumes[1].Secret
	if v.certManager {
		if secret == nil || secret.SecretName != "karpenter-guard-serving" || slices.Contains(c.Args, "--cert-rotation") {
			t.Errorf("cert-manager: certs volume %+v, args %v", dep.Spec.Template.Spec.Volumes[1], c.Args)
		}
		if got := vwc.Annotations["cert-manager.io/inject-ca-from"]; got != "karpenter-guard/karpenter-guard-serving" {
			t.Errorf("cert-manager does not inject the CA: annotation %q", got)
		}
	} else if secret == nil || secret.SecretName != "karpenter-guard-cert" || !slices.Contains(c.Args, "--cert-rotation") ||
		!slices.Contains(c.Args, "--cert-secret-name=karpenter-guard-cert") || len(vwc.Annotations) != 0 {
		t.Errorf("self-managed: certs volume %+v, args %v, annotations %v", dep.Spec.Template.Spec.Volumes[1], c.Args, vwc.Annotations)
	}

	for _, k := range []string{"CustomResourceDefinition//policyreports.wgpolicyk8s.io", "CustomResourceDefinition//clusterpolicyreports.wgpolicyk8s.io"} {
		if has(k) != v.crds {
			t.Errorf("%s rendered: %v, want %v", k, has(k), v.crds)
		}
	}
	if has("NetworkPolicy/karpenter-guard/karpenter-guard") != v.networkPolicy {
		t.Errorf("NetworkPolicy rendered: %v, want %v", !v.networkPolicy, v.networkPolicy)
	}
	if has("PodDisruptionBudget/karpenter-guard/karpenter-guard") != v.pdb {
		t.Errorf("PodDisruptionBudget rendered: %v, want %v", !v.pdb, v.pdb)
	}
	if has("Namespace//karpenter-guard") != v.namespace {
		t.Errorf("Namespace rendered: %v, want %v", !v.namespace, v.namespace)
	}

	// The node's network: the bind address, the port, localhost probes, and a privileged namespace.
	spec := dep.Spec.Template.Spec
	if spec.HostNetwork != v.hostNetwork || slices.Contains(c.Args, "--bind-address=$(POD_IP)") != v.hostNetwork {
		t.Errorf("hostNetwork %v, args %v: want hostNetwork %v", spec.HostNetwork, c.Args, v.hostNetwork)
	}
	if v.hostNetwork && (c.ReadinessProbe.HTTPGet.Host != "127.0.0.1" || !slices.Contains(c.Args, "--metrics-bind-address=127.0.0.1:8080")) {
		t.Errorf("on the node's network the probes and metrics are not on localhost: %+v %v", c.ReadinessProbe.HTTPGet, c.Args)
	}
	if c.Ports[0].ContainerPort != int32(v.port) || !slices.Contains(c.Args, fmt.Sprintf("--port=%d", v.port)) {
		t.Errorf("webhook port %d, args %v: want %d", c.Ports[0].ContainerPort, c.Args, v.port)
	}
	if v.namespace {
		var ns corev1.Namespace
		decodeInto(t, objs["Namespace//karpenter-guard"], &ns)
		want := map[bool]string{true: "privileged", false: "restricted"}[v.hostNetwork]
		if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != want {
			t.Errorf("the namespace enforces %q, want %q", got, want)
		}
	}

	if slices.Contains(c.Args, "--region="+v.region) != (v.region != "") {
		t.Errorf("region %q: args %v", v.region, c.Args)
	}
	var sa corev1.ServiceAccount
	decodeInto(t, objs["ServiceAccount/karpenter-guard/karpenter-guard"], &sa)
	if got := sa.Annotations["eks.amazonaws.com/role-arn"]; got != v.roleARN {
		t.Errorf("IRSA role %q, want %q", got, v.roleARN)
	}
	if spec.PriorityClassName != v.priorityClassName {
		t.Errorf("priorityClassName %q, want %q", spec.PriorityClassName, v.priorityClassName)
	}
	// The aws-auth reader must be in kube-system, where aws-auth is.
	if !has("Role/kube-system/karpenter-guard-aws-auth") || !has("RoleBinding/kube-system/karpenter-guard-aws-auth") {
		t.Errorf("no aws-auth Role and RoleBinding in kube-system")
	}
}

// helmLabels are the labels the chart adds to every object and manifests/ does not: Helm's own
// bookkeeping (the chart's version, the release, the app's version, the manager), which kustomize has no
// equivalent of. The drift test ignores these and nothing else.
var helmLabels = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version"}

// TestChartMatchesKustomize: for each deployment manifests/ offers (an overlay, a mode component, and
// the host-network and no-mutation components), the chart with the matching values renders the same
// objects, but for Helm's own labels (helmLabels), so that the two cannot drift. The GuardConfig in the
// ConfigMap is compared as YAML data: Helm writes it with sorted keys.
func TestChartMatchesKustomize(t *testing.T) {
	type combo struct {
		overlay, mode string
		hostNetwork   bool // components/host-network, on top of an overlay without it
		noMutation    bool
	}
	var combos []combo
	for _, o := range []string{"self-managed", "cert-manager", "cert-manager-host-network"} {
		for _, m := range []string{"dry-run", "warn", "enforce"} {
			combos = append(combos, combo{overlay: o, mode: m})
		}
		combos = append(combos, combo{overlay: o, mode: "enforce", noMutation: true})
	}
	combos = append(combos, combo{overlay: "self-managed", mode: "warn", hostNetwork: true, noMutation: true})
	for _, cb := range combos {
		name := cb.overlay + "/" + cb.mode
		if cb.hostNetwork {
			name += "+host-network"
		}
		if cb.noMutation {
			name += "+no-mutation"
		}
		t.Run(name, func(t *testing.T) {
			var components []string
			if cb.mode != "dry-run" {
				components = append(components, "components/mode-"+cb.mode)
			}
			if cb.hostNetwork {
				components = append(components, "components/host-network")
			}
			if cb.noMutation {
				components = append(components, "components/no-mutation")
			}
			docs := kustomize(t, filepath.Join("overlays", cb.overlay), components...)
			var all []string
			for _, d := range docs {
				all = append(all, d)
			}
			want := objectsByKey(t, strings.Join(all, "\n---\n"))

			certMode := "self-managed"
			if strings.HasPrefix(cb.overlay, "cert-manager") {
				certMode = "cert-manager"
			}
			got := objectsByKey(t, helmT(t, "template", "karpenter-guard", chartDir, "-n", "karpenter-guard",
				"--set", "clusterName=my-eks-cluster", // the placeholder of manifests/base/config.yaml
				"--set", "mode="+cb.mode, "--set", "certificates.mode="+certMode,
				"--set", fmt.Sprintf("hostNetwork=%v", cb.hostNetwork || strings.HasSuffix(cb.overlay, "host-network")),
				"--set", fmt.Sprintf("mutation.enabled=%v", !cb.noMutation),
				"--set", "namespace.create=true")) // manifests/base has the Namespace
			for _, objs := range []map[string]object{want, got} {
				for _, o := range objs {
					normalize(t, o)
				}
			}
			keys := map[string]bool{}
			for k := range want {
				keys[k] = true
			}
			for k := range got {
				keys[k] = true
			}
			sorted := make([]string, 0, len(keys))
			for k := range keys {
				sorted = append(sorted, k)
			}
			sort.Strings(sorted)
			for _, k := range sorted {
				w, inK := want[k]
				g, inH := got[k]
				switch {
				case !inH:
					t.Errorf("%s: in manifests/ (kustomize), not in the chart", k)
				case !inK:
					t.Errorf("%s: in the chart, not in manifests/ (kustomize)", k)
				default:
					if d := yamlDiff(t, w, g); d != "" {
						t.Errorf("%s differs (- kustomize, + helm):\n%s", k, d)
					}
				}
			}
		})
	}
}

// normalize drops Helm's labels (helmLabels) from an object's metadata, and decodes the GuardConfig
// of a ConfigMap so that it compares as data rather than text.
func normalize(t testing.TB, o object) {
	t.Helper()
	meta, _ := o["metadata"].(map[string]any)
	if labels, ok := meta["labels"].(map[string]any); ok {
		for _, l := range helmLabels {
			delete(labels, l)
		}
	}
	if o["kind"] == "ConfigMap" {
		data, _ := o["data"].(map[string]any)
		if s, ok := data["config.yaml"].(string); ok {
			var cfg any
			if err := sigsyaml.Unmarshal([]byte(s), &cfg); err != nil {
				t.Fatalf("the ConfigMap's config.yaml: %v", err)
			}
			data["config.yaml"] = cfg
		}
	}
}

// yamlDiff returns a unified diff of two objects written as YAML with sorted keys, or "" when they
// are equal.
func yamlDiff(t testing.TB, a, b object) string {
	t.Helper()
	ya, err := sigsyaml.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	yb, err := sigsyaml.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(ya, yb) {
		return ""
	}
	dir := t.TempDir()
	pa, pb := filepath.Join(dir, "kustomize.yaml"), filepath.Join(dir, "helm.yaml")
	if err := os.WriteFile(pa, ya, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pb, yb, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("diff", "-u", pa, pb).CombinedOutput() // exit 1: they differ
	return string(out)
}

// TestChartInstall: `helm install` puts the chart into the API server (mode enforce, self-managed
// certificates) and every object of the release is there. Then, with the webhook configurations the
// chart installed (only their clientConfig pointed at a local `karpenter-guard serve`, as the
// Service and the rotator's CA do in a cluster) and serve run with the chart's GuardConfig and mode:
// a broken EC2NodeClass is refused, the rule on the first line; with serve gone, Karpenter's kinds are
// refused (Fail) and aws-auth edits pass (Ignore); `helm upgrade --set mode=dry-run` admits the same
// class with the would-deny in the audit log. `helm uninstall` leaves nothing behind.
//
// The release is named karpenter-guard-chart, in the suite's namespace karpenter-guard: its objects
// are named after it and do not touch those of manifests/ the other tests use.
func TestChartInstall(t *testing.T) {
	const release, ns = "karpenter-guard-chart", "karpenter-guard"
	reset(t)
	env.stopGuard()
	env.fake.Clear("")
	env.fake.SetFacts(&facts.ClusterFacts{})
	t.Cleanup(func() {
		env.stopGuard()
		helm(t, "uninstall", release, "-n", ns, "--ignore-not-found")
		// Whatever a failure left: the other tests register webhook configurations of their own.
		env.kubectl(t, "", "delete", "validatingwebhookconfiguration,mutatingwebhookconfiguration", release, "--ignore-not-found")
		reset(t)
	})
	// The suite installed the report CRDs from manifests/crds: here they belong to someone else, as
	// with Kyverno.
	helmT(t, "install", release, chartDir, "-n", ns, "--set", "clusterName=e2e", "--set", "mode=enforce",
		"--set", "certificates.mode=self-managed", "--set", "reports.installCRDs=false")

	var status struct {
		Info struct {
			Status string `json:"status"`
		} `json:"info"`
	}
	if err := json.Unmarshal([]byte(helmT(t, "status", release, "-n", ns, "-o", "json")), &status); err != nil {
		t.Fatal(err)
	}
	if status.Info.Status != "deployed" {
		t.Fatalf("release status %q, want deployed", status.Info.Status)
	}
	manifest := helmT(t, "get", "manifest", release, "-n", ns)
	objs := objectsByKey(t, manifest)
	if len(objs) < 15 {
		t.Fatalf("the release holds %d objects:\n%s", len(objs), manifest)
	}
	manifestFile := writeTemp(t, manifest)
	if got := strings.Fields(env.kubectlT(t, "get", "-f", manifestFile, "-o", "name")); len(got) != len(objs) {
		t.Fatalf("%d of the release's %d objects are in the API server: %v", len(got), len(objs), got)
	}

	pointAtServe := chartServe(t, release, ns)
	pointAtServe()

	broken := filepath.Join("..", "examples", "field-reports", "03-al2023-bootstrap-userdata.yaml")
	r := apply(t, broken)
	// The error's first line, after kubectl's warnings (the AWS fake denies every call: onError warn).
	first := ""
	for _, l := range strings.Split(r.stderr, "\n") {
		if !strings.HasPrefix(l, "Warning: ") {
			first = l
			break
		}
	}
	if r.code == 0 || !slices.Contains(denials(t, r), "EC2NodeClass/al2023-legacy-userdata: userdata-bootstrap-on-al2023") ||
		!deniedRE.MatchString(first) {
		t.Fatalf("mode enforce: the broken class is not refused with the rule on the first line: exit %d\n%s", r.code, r.stderr)
	}

	// serve gone: the chart's failure policies of mode enforce.
	env.stopGuard()
	if r := apply(t, broken); r.code == 0 || !strings.Contains(r.stderr, `failed calling webhook "karpenter.validate.karpenter-guard.io"`) {
		t.Errorf("mode enforce, serve down: an EC2NodeClass was not refused by the failing webhook: exit %d\n%s", r.code, r.stderr)
	}
	if r := env.kubectl(t, awsAuthConfigMap, "apply", "-f", "-"); r.code != 0 {
		t.Errorf("mode enforce, serve down: an aws-auth edit was refused: %+v", r)
	}

	// Back to dry-run: Helm's three-way merge would add the chart's service beside the test's url
	// (a client config takes one), so the chart's client config goes back first; the CA bundle, which
	// the chart does not set, stays, as the rotator's does across upgrades in a cluster.
	restoreClientConfig(t, release, objs)
	helmT(t, "upgrade", release, chartDir, "-n", ns, "--reuse-values", "--set", "mode=dry-run")
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := json.Unmarshal([]byte(env.kubectlT(t, "get", "validatingwebhookconfiguration", release, "-o", "json")), &vwc); err != nil {
		t.Fatal(err)
	}
	for _, w := range vwc.Webhooks {
		if *w.FailurePolicy != admissionregistrationv1.Ignore || w.ClientConfig.Service == nil || len(w.ClientConfig.CABundle) == 0 {
			t.Errorf("after the upgrade to dry-run, %s: failurePolicy %s, client config %+v", w.Name, *w.FailurePolicy, w.ClientConfig)
		}
	}
	pointAtServe()
	if r := apply(t, broken); r.code != 0 || strings.Contains(r.stderr, "denied") {
		t.Fatalf("mode dry-run: the broken class is not admitted: exit %d\n%s", r.code, r.stderr)
	}
	a := auditAnnotations(t, "ec2nodeclasses", "al2023-legacy-userdata", "create")
	if v := a["karpenter.validate.karpenter-guard.io/userdata-bootstrap-on-al2023"]; !strings.HasPrefix(v, "would deny: ") {
		t.Errorf("mode dry-run: audit annotations %v: want a would-deny of userdata-bootstrap-on-al2023", a)
	}

	env.stopGuard()
	helmT(t, "uninstall", release, "-n", ns, "--wait")
	if r := env.kubectl(t, "", "get", "-f", manifestFile, "-o", "name", "--ignore-not-found"); r.code != 0 || strings.TrimSpace(r.stdout) != "" {
		t.Errorf("helm uninstall left objects behind: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if left := env.kubectlT(t, "get", "secrets", "-n", ns, "-l", "owner=helm,name="+release, "-o", "name"); strings.TrimSpace(left) != "" {
		t.Errorf("helm uninstall left its release records: %s", left)
	}
}

// chartServe returns a function that starts `karpenter-guard serve` as the chart's Deployment would
// run it (the GuardConfig and cluster name of the release's ConfigMap, the mode and GOMEMLIMIT of its
// Deployment) and points the release's webhook configurations at it: their clientConfig only, to the
// local URL and CA, as registerWebhooks does for manifests/.
func chartServe(t *testing.T, release, ns string) func() {
	return func() {
		t.Helper()
		var cm corev1.ConfigMap
		if err := json.Unmarshal([]byte(env.kubectlT(t, "get", "configmap", release, "-n", ns, "-o", "json")), &cm); err != nil {
			t.Fatal(err)
		}
		header := "apiVersion: karpenter-guard.io/v1alpha1\nkind: GuardConfig\n"
		config, ok := strings.CutPrefix(cm.Data["config.yaml"], header)
		if !ok {
			t.Fatalf("the chart's GuardConfig does not start with its apiVersion and kind:\n%s", cm.Data["config.yaml"])
		}
		var dep appsv1.Deployment
		if err := json.Unmarshal([]byte(env.kubectlT(t, "get", "deployment", release, "-n", ns, "-o", "json")), &dep); err != nil {
			t.Fatal(err)
		}
		var mode, memLimit string
		for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
			switch e.Name {
			case "KARPENTER_GUARD_MODE":
				mode = e.Value
			case "GOMEMLIMIT":
				memLimit = e.Value
			}
		}
		env.startGuard(t, guardOptions{config: config, clusterName: cm.Data["clusterName"], region: "us-east-1",
			extraArgs: []string{"--mode=" + mode}, env: []string{"GOMEMLIMIT=" + memLimit}})
		ca, err := os.ReadFile(filepath.Join(env.guardCerts, certs.CAFile))
		if err != nil {
			t.Fatal(err)
		}
		base := fmt.Sprintf("https://127.0.0.1:%d", env.guardPort)
		for _, kind := range []string{"validatingwebhookconfiguration", "mutatingwebhookconfiguration"} {
			var cfg struct {
				Webhooks []admissionregistrationv1.ValidatingWebhook `json:"webhooks"`
			}
			if err := json.Unmarshal([]byte(env.kubectlT(t, "get", kind, release, "-o", "json")), &cfg); err != nil {
				t.Fatal(err)
			}
			var ops []map[string]any
			for i, w := range cfg.Webhooks {
				path := ""
				if s := w.ClientConfig.Service; s != nil && s.Path != nil {
					path = *s.Path
				} else if w.ClientConfig.URL != nil {
					path = (*w.ClientConfig.URL)[strings.LastIndex(*w.ClientConfig.URL, "/"):]
				}
				ops = append(ops, map[string]any{"op": "replace", "path": fmt.Sprintf("/webhooks/%d/clientConfig", i),
					"value": map[string]any{"url": base + path, "caBundle": base64.StdEncoding.EncodeToString(ca)}})
			}
			patch, err := json.Marshal(ops)
			if err != nil {
				t.Fatal(err)
			}
			env.kubectlT(t, "patch", kind, release, "--type=json", "-p", string(patch))
		}
		waitWebhooksServe(t, env)
	}
}

// restoreClientConfig puts the release's client configs (its Service) back in place of the test's
// URLs, keeping the CA bundle.
func restoreClientConfig(t *testing.T, release string, objs map[string]object) {
	t.Helper()
	for _, kind := range []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
		var cfg struct {
			Webhooks []admissionregistrationv1.ValidatingWebhook `json:"webhooks"`
		}
		decodeInto(t, objs[kind+"//"+release], &cfg)
		var live struct {
			Webhooks []admissionregistrationv1.ValidatingWebhook `json:"webhooks"`
		}
		if err := json.Unmarshal([]byte(env.kubectlT(t, "get", strings.ToLower(kind), release, "-o", "json")), &live); err != nil {
			t.Fatal(err)
		}
		var ops []map[string]any
		for i, w := range cfg.Webhooks {
			cc := w.ClientConfig
			cc.CABundle = live.Webhooks[i].ClientConfig.CABundle
			ops = append(ops, map[string]any{"op": "replace", "path": fmt.Sprintf("/webhooks/%d/clientConfig", i), "value": cc})
		}
		patch, err := json.Marshal(ops)
		if err != nil {
			t.Fatal(err)
		}
		env.kubectlT(t, "patch", strings.ToLower(kind), release, "--type=json", "-p", string(patch))
	}
}
