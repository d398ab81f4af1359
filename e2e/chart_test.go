//go:build e2e

package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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
	image             string
	pullSecrets       []string
	serviceAccount    string // the pods' ServiceAccount, the subject of every binding
	ownAccount        bool   // the user's ServiceAccount (serviceAccount.create false): the chart renders none
	logLevel          string
	commonLabels      map[string]string // on every object the chart renders, and on the pods
	podLabels         map[string]string // on the pods, beside the selector's and commonLabels
	podAnnotations    map[string]string
	env               []string // the release's own variables, after the chart's
	webhookFrom       []string // the CIDRs the webhook port admits
	metricsNamespace  string   // the namespace whose Prometheus pods may scrape the metrics port
	monitoring        bool     // the ServiceMonitor and the PrometheusRule
}

// privateRanges are the default peers of the webhook port.
var privateRanges = []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"}

const defaultImage = "ghcr.io/karpenter-guard/karpenter-guard:v0.1.0"

var ciValues = []chartValues{
	{file: "default-values.yaml", mode: "dry-run", mutation: true, crds: true, port: 9443, networkPolicy: true, pdb: true,
		exempt: []string{"kube-system:karpenter", "karpenter:karpenter"}, goMemLimit: "256MiB", priorityClassName: "system-cluster-critical",
		image: defaultImage, serviceAccount: "karpenter-guard", logLevel: "info", webhookFrom: privateRanges, metricsNamespace: "monitoring"},
	{file: "enforce-cert-manager-values.yaml", mode: "enforce", certManager: true, port: 9443, networkPolicy: true, pdb: true,
		exempt: []string{"kube-system:karpenter", "karpenter:karpenter"}, goMemLimit: "256MiB", priorityClassName: "system-cluster-critical",
		image: defaultImage, serviceAccount: "karpenter-guard", logLevel: "info", webhookFrom: privateRanges, metricsNamespace: "monitoring"},
	{file: "warn-host-network-values.yaml", mode: "warn", certManager: true, mutation: true, crds: true, hostNetwork: true, port: 10443,
		namespace: true, pdb: true, exempt: []string{"kube-system:karpenter", "karpenter:karpenter"}, goMemLimit: "256MiB",
		priorityClassName: "system-cluster-critical", image: defaultImage, serviceAccount: "karpenter-guard", logLevel: "info"},
	{file: "enforce-irsa-values.yaml", mode: "enforce", mutation: true, crds: true, port: 9443, networkPolicy: true,
		exempt: []string{"platform:karpenter-controller"}, goMemLimit: "682MiB", region: "eu-west-1",
		roleARN: "arn:aws:iam::111122223333:role/karpenter-guard", image: defaultImage, serviceAccount: "karpenter-guard", logLevel: "info",
		webhookFrom: privateRanges, metricsNamespace: "monitoring"},
	{file: "platform-values.yaml", mode: "enforce", mutation: true, crds: true, port: 9443, networkPolicy: true,
		exempt: []string{"kube-system:karpenter", "karpenter:karpenter"}, goMemLimit: "256MiB", priorityClassName: "system-cluster-critical",
		image:          "registry.internal.example.com/mirror/karpenter-guard@sha256:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
		pullSecrets:    []string{"mirror-credentials"},
		serviceAccount: "platform-karpenter-guard", ownAccount: true, logLevel: "debug",
		commonLabels:   map[string]string{"team": "platform", "cost-center": "1234"},
		podLabels:      map[string]string{"sidecar.istio.io/inject": "false"},
		podAnnotations: map[string]string{"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"},
		env: []string{"HTTPS_PROXY=http://proxy.internal.example.com:3128",
			"NO_PROXY=172.20.0.0/16,.svc,.cluster.local,169.254.169.254,169.254.170.23"},
		webhookFrom: []string{"10.0.0.0/24", "10.0.1.0/24", "2600:1f18:aaaa:bb00::/56"}, metricsNamespace: "observability", monitoring: true},
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
			objs := objectsByKey(t, out)
			checkRendering(t, v, objs)
			// The Prometheus Operator's objects are checked against its API types (checkMonitoring):
			// the test's API server has no monitoring.coreos.com CRDs.
			var served []string
			for _, o := range objs {
				if !strings.HasPrefix(fmt.Sprint(o["apiVersion"]), "monitoring.coreos.com/") {
					b, err := json.Marshal(o)
					if err != nil {
						t.Fatal(err)
					}
					served = append(served, string(b))
				}
			}
			if r := env.kubectl(t, strings.Join(served, "\n---\n"), "apply", "--dry-run=server", "-f", "-"); r.code != 0 {
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
		{"own account unnamed", []string{"--set", "clusterName=c", "--set", "serviceAccount.create=false"},
			"serviceAccount.create is false: set serviceAccount.name to your ServiceAccount"},
		{"annotations on no account", []string{"--set", "clusterName=c", "--set", "serviceAccount.create=false", "--set", "serviceAccount.name=mine",
			"--set", "serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::111122223333:role/kg"},
			"serviceAccount.annotations are set but serviceAccount.create is false"},
		{"mode in env", []string{"--set", "clusterName=c", "--set", "env[0].name=KARPENTER_GUARD_MODE", "--set", "env[0].value=enforce"},
			"env: KARPENTER_GUARD_MODE is set by the chart and cannot be set in env: set the value mode"},
		{"no webhook peers", []string{"--set", "clusterName=c", "--set-json", "networkPolicy.webhookFrom=[]"},
			"networkPolicy.webhookFrom is empty: the NetworkPolicy would keep the API server from the webhook port"},
		{"a peer that is not one", []string{"--set", "clusterName=c", "--set", "networkPolicy.webhookFrom[0]=10.0.0.0"},
			"at '/networkPolicy/webhookFrom/0': '10.0.0.0' does not match pattern"},
		{"a tag for a digest", []string{"--set", "clusterName=c", "--set", "image.digest=v0.1.0"}, "at '/image/digest'"},
		{"unknown log level", []string{"--set", "clusterName=c", "--set", "logLevel=verbose"}, "at '/logLevel': value must be one of"},
		{"ServiceMonitor on the node's network", []string{"--set", "clusterName=c", "--set", "hostNetwork=true", "--set", "metrics.serviceMonitor.enabled=true"},
			"metrics.serviceMonitor.enabled with hostNetwork: on the node's network the metrics listen on 127.0.0.1 only"},
		{"alerts without the ServiceMonitor they select", []string{"--set", "clusterName=c", "--set", "metrics.prometheusRule.enabled=true"},
			"metrics.prometheusRule.enabled without metrics.serviceMonitor.enabled: the alerts select the job the chart's ServiceMonitor scrapes"},
		{"alerts on the node's network", []string{"--set", "clusterName=c", "--set", "hostNetwork=true", "--set", "metrics.prometheusRule.enabled=true"},
			"metrics.prometheusRule.enabled without metrics.serviceMonitor.enabled"},
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
		t.Errorf("GOMEMLIMIT %q, want %q (2/3 of limits.memory %v)", got, v.goMemLimit, c.Resources.Limits.Memory())
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

	// The image, pinned by digest or tagged, and its pull secrets.
	if c.Image != v.image {
		t.Errorf("image %q, want %q", c.Image, v.image)
	}
	var pullSecrets []string
	for _, s := range spec.ImagePullSecrets {
		pullSecrets = append(pullSecrets, s.Name)
	}
	if !slices.Equal(pullSecrets, v.pullSecrets) {
		t.Errorf("imagePullSecrets %v, want %v", pullSecrets, v.pullSecrets)
	}
	if !slices.Contains(c.Args, "--zap-log-level="+v.logLevel) {
		t.Errorf("log level %s: args %v", v.logLevel, c.Args)
	}

	// The ServiceAccount: the chart's, or the user's (none rendered); every binding names it.
	if spec.ServiceAccountName != v.serviceAccount {
		t.Errorf("the pods run as %q, want %q", spec.ServiceAccountName, v.serviceAccount)
	}
	accounts := 0
	for k, o := range objs {
		switch o["kind"] {
		case "ServiceAccount":
			accounts++
			if v.ownAccount || k != "ServiceAccount/karpenter-guard/"+v.serviceAccount {
				t.Errorf("%s rendered, want only the pods' own account (ownAccount %v)", k, v.ownAccount)
			}
		case "RoleBinding", "ClusterRoleBinding":
			var b rbacv1.RoleBinding
			decodeInto(t, o, &b)
			if len(b.Subjects) != 1 || b.Subjects[0].Kind != "ServiceAccount" || b.Subjects[0].Name != v.serviceAccount ||
				b.Subjects[0].Namespace != "karpenter-guard" {
				t.Errorf("%s binds %+v, want the ServiceAccount karpenter-guard/%s", k, b.Subjects, v.serviceAccount)
			}
		}
	}
	if accounts != map[bool]int{true: 0, false: 1}[v.ownAccount] {
		t.Errorf("%d ServiceAccounts rendered (ownAccount %v)", accounts, v.ownAccount)
	}

	// Labels: commonLabels on every object the chart renders (the CRDs are Kyverno's, unchanged), the
	// selector's on the pods with podLabels; every selector selects the release's pods and no other
	// release's (app.kubernetes.io/instance).
	selector := map[string]string{"app.kubernetes.io/name": "karpenter-guard", "app.kubernetes.io/instance": "karpenter-guard"}
	for k, o := range objs {
		if o["kind"] == "CustomResourceDefinition" {
			continue
		}
		var m struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		decodeInto(t, o, &m)
		for l, want := range v.commonLabels {
			if got := m.Metadata.Labels[l]; got != want {
				t.Errorf("%s: label %s=%q, want %q (commonLabels)", k, l, got, want)
			}
		}
		if got := m.Metadata.Labels["app.kubernetes.io/name"]; got != "karpenter-guard" {
			t.Errorf("%s: app.kubernetes.io/name=%q: commonLabels must not replace the chart's labels", k, got)
		}
	}
	podLabels := dep.Spec.Template.Labels
	for l, want := range mergeLabels(selector, v.podLabels, v.commonLabels) {
		if podLabels[l] != want {
			t.Errorf("pod label %s=%q, want %q (pod labels %v)", l, podLabels[l], want, podLabels)
		}
	}
	for a, want := range v.podAnnotations {
		if got := dep.Spec.Template.Annotations[a]; got != want {
			t.Errorf("pod annotation %s=%q, want %q", a, got, want)
		}
	}
	selectors := map[string]map[string]string{"the Deployment": dep.Spec.Selector.MatchLabels}
	var svc corev1.Service
	decodeInto(t, objs["Service/karpenter-guard/karpenter-guard"], &svc)
	selectors["the Service"] = svc.Spec.Selector
	for i, tsc := range spec.TopologySpreadConstraints {
		if tsc.LabelSelector == nil {
			t.Errorf("topology spread constraint %d selects nothing", i)
			continue
		}
		selectors[fmt.Sprintf("topology spread constraint %d", i)] = tsc.LabelSelector.MatchLabels
	}
	if v.pdb {
		var pdb policyv1.PodDisruptionBudget
		decodeInto(t, objs["PodDisruptionBudget/karpenter-guard/karpenter-guard"], &pdb)
		selectors["the PodDisruptionBudget"] = pdb.Spec.Selector.MatchLabels
	}
	var np networkingv1.NetworkPolicy
	if v.networkPolicy {
		decodeInto(t, objs["NetworkPolicy/karpenter-guard/karpenter-guard"], &np)
		selectors["the NetworkPolicy"] = np.Spec.PodSelector.MatchLabels
	}
	for what, sel := range selectors {
		if !maps.Equal(sel, selector) {
			t.Errorf("%s selects %v, want %v", what, sel, selector)
		}
	}

	// The release's environment, after the chart's (which it cannot replace).
	var extraEnv []string
	for _, e := range c.Env[len(c.Env)-len(v.env):] {
		extraEnv = append(extraEnv, e.Name+"="+e.Value)
	}
	if !slices.Equal(extraEnv, v.env) {
		t.Errorf("the container's last variables %v, want %v", extraEnv, v.env)
	}

	// The NetworkPolicy: the webhook port from the API server's addresses; the metrics port from the
	// Prometheus pods of one namespace only, never from any namespace.
	if v.networkPolicy {
		if len(np.Spec.Ingress) != 2 {
			t.Fatalf("NetworkPolicy ingress %+v, want the webhook rule and the metrics rule", np.Spec.Ingress)
		}
		var cidrs []string
		for _, p := range np.Spec.Ingress[0].From {
			if p.IPBlock == nil || p.NamespaceSelector != nil || p.PodSelector != nil {
				t.Errorf("the webhook port admits %+v, want addresses", p)
				continue
			}
			cidrs = append(cidrs, p.IPBlock.CIDR)
		}
		if !slices.Equal(cidrs, v.webhookFrom) || np.Spec.Ingress[0].Ports[0].Port.String() != "webhook" {
			t.Errorf("the webhook rule admits %v to %v, want %v to the webhook port", cidrs, np.Spec.Ingress[0].Ports, v.webhookFrom)
		}
		metrics := np.Spec.Ingress[1]
		if len(metrics.From) != 1 || metrics.Ports[0].Port.String() != "metrics" {
			t.Fatalf("the metrics rule %+v: want one peer, to the metrics port", metrics)
		}
		p := metrics.From[0]
		if p.NamespaceSelector == nil || !maps.Equal(p.NamespaceSelector.MatchLabels, map[string]string{"kubernetes.io/metadata.name": v.metricsNamespace}) ||
			p.PodSelector == nil || !maps.Equal(p.PodSelector.MatchLabels, map[string]string{"app.kubernetes.io/name": "prometheus"}) {
			t.Errorf("the metrics port admits %+v, want the Prometheus pods of the namespace %s", p, v.metricsNamespace)
		}
	}

	for _, k := range []string{"ServiceMonitor/karpenter-guard/karpenter-guard", "PrometheusRule/karpenter-guard/karpenter-guard"} {
		if has(k) != v.monitoring {
			t.Errorf("%s rendered: %v, want %v", k, has(k), v.monitoring)
		}
	}
	if v.monitoring {
		checkMonitoring(t, objs, svc, v)
	}
}

// mergeLabels merges label maps, the first holding a label winning.
func mergeLabels(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for i := len(ms) - 1; i >= 0; i-- {
		maps.Copy(out, ms[i])
	}
	return out
}

// checkMonitoring decodes the ServiceMonitor and the PrometheusRule strictly into the Prometheus
// Operator's API types (an unknown or misspelt field fails), and checks that the ServiceMonitor
// scrapes the metrics port of the release's Service and that every alert selects its job.
func checkMonitoring(t *testing.T, objs map[string]object, svc corev1.Service, v chartValues) {
	t.Helper()
	strict := func(o object, into any) {
		t.Helper()
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := sigsyaml.UnmarshalStrict(b, into); err != nil {
			t.Fatalf("%s/%v: not a valid %s: %v", o["kind"], o["metadata"], o["kind"], err)
		}
	}
	var sm monitoringv1.ServiceMonitor
	strict(objs["ServiceMonitor/karpenter-guard/karpenter-guard"], &sm)
	if len(sm.Spec.Selector.MatchLabels) == 0 || !labelsSelect(sm.Spec.Selector.MatchLabels, svc.Labels) {
		t.Errorf("the ServiceMonitor selects %v, the Service is labelled %v", sm.Spec.Selector.MatchLabels, svc.Labels)
	}
	if !slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{"karpenter-guard"}) || len(sm.Spec.Endpoints) != 1 ||
		sm.Spec.Endpoints[0].Port != "metrics" || !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "metrics" }) {
		t.Errorf("the ServiceMonitor scrapes %+v in %v: want the Service's metrics port", sm.Spec.Endpoints, sm.Spec.NamespaceSelector)
	}
	if sm.Labels["release"] != "kube-prometheus-stack" {
		t.Errorf("the ServiceMonitor is labelled %v: want the labels Prometheus selects it by", sm.Labels)
	}
	var rule monitoringv1.PrometheusRule
	strict(objs["PrometheusRule/karpenter-guard/karpenter-guard"], &rule)
	var alerts []string
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			if !strings.Contains(r.Expr.String(), `job="karpenter-guard", namespace="karpenter-guard"`) {
				t.Errorf("alert %s does not select the ServiceMonitor's job: %s", r.Alert, r.Expr.String())
			}
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %s has no severity, summary or description: %v %v", r.Alert, r.Labels, r.Annotations)
			}
		}
	}
	want := []string{"KarpenterGuardDown", "KarpenterGuardReviewErrors", "KarpenterGuardSlowReviews", "KarpenterGuardAWSAccessDenied",
		"KarpenterGuardAWSUnreachable", "KarpenterGuardAuditFailing", "KarpenterGuardStoredObjectDenied"}
	if !slices.Equal(alerts, want) {
		t.Errorf("alerts %v, want %v", alerts, want)
	}
	if down := rule.Spec.Groups[0].Rules[0]; v.mode == "enforce" && down.Labels["severity"] != "critical" {
		t.Errorf("mode enforce refuses writes while the webhook is down: KarpenterGuardDown is %q, want critical", down.Labels["severity"])
	}
}

// labelsSelect reports whether a selector's labels are all among labels.
func labelsSelect(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestChartNeverBlocksADrain: the chart's PodDisruptionBudget always leaves a replica evictable, so that
// draining karpenter-guard's node (Karpenter's consolidation and drift included) never waits forever:
// with one replica there is no budget, the default two replicas keep one, and a minAvailable that
// would keep every replica fails the rendering with what to set.
func TestChartNeverBlocksADrain(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // the budget's minAvailable, "" for none
		fail string
	}{
		{"default", nil, "1", ""},
		{"one replica", []string{"--set", "replicas=1"}, "", ""},
		{"one replica, budget asked for", []string{"--set", "replicas=1", "--set", "podDisruptionBudget.enabled=true", "--set", "podDisruptionBudget.minAvailable=1"}, "", ""},
		{"no replica", []string{"--set", "replicas=0"}, "", ""},
		{"three replicas keep two", []string{"--set", "replicas=3", "--set", "podDisruptionBudget.minAvailable=2"}, "2", ""},
		{"half of two", []string{"--set", "podDisruptionBudget.minAvailable=50%"}, "50%", ""},
		{"budget off", []string{"--set", "podDisruptionBudget.enabled=false"}, "", ""},
		{"two of two", []string{"--set", "podDisruptionBudget.minAvailable=2"}, "",
			"podDisruptionBudget.minAvailable 2 keeps all 2 replicas: no pod of karpenter-guard could ever be evicted"},
		{"60% of two rounds up to two", []string{"--set", "podDisruptionBudget.minAvailable=60%"}, "",
			"podDisruptionBudget.minAvailable 60% keeps all 2 replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := helm(t, append([]string{"template", "karpenter-guard", chartDir, "-n", "karpenter-guard", "--set", "clusterName=c"}, tc.args...)...)
			if tc.fail != "" {
				if r.code == 0 || !strings.Contains(r.stderr, tc.fail) {
					t.Fatalf("exit %d, want a failure saying %q\n%s", r.code, tc.fail, r.stderr)
				}
				return
			}
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			objs := objectsByKey(t, r.stdout)
			o, ok := objs["PodDisruptionBudget/karpenter-guard/karpenter-guard"]
			if !ok {
				if tc.want != "" {
					t.Fatalf("no PodDisruptionBudget, want minAvailable %s", tc.want)
				}
				return
			}
			var pdb policyv1.PodDisruptionBudget
			decodeInto(t, o, &pdb)
			var dep appsv1.Deployment
			decodeInto(t, objs["Deployment/karpenter-guard/karpenter-guard"], &dep)
			replicas := int(*dep.Spec.Replicas)
			if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.String() != tc.want {
				t.Fatalf("minAvailable %v, want %q", pdb.Spec.MinAvailable, tc.want)
			}
			// What the disruption controller computes: the pods it keeps, rounding a percentage up.
			kept, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, replicas, true)
			if err != nil {
				t.Fatal(err)
			}
			if kept >= replicas {
				t.Errorf("the budget keeps %d of %d replicas: no eviction is ever allowed", kept, replicas)
			}
			// Replicas that are not ready must not hold a drain up: with IfHealthyBudget (the default),
			// two crash-looping replicas would make the node undrainable.
			if p := pdb.Spec.UnhealthyPodEvictionPolicy; p == nil || *p != policyv1.AlwaysAllow {
				t.Errorf("unhealthyPodEvictionPolicy %v, want AlwaysAllow", p)
			}
			if !labelsSelect(pdb.Spec.Selector.MatchLabels, dep.Spec.Template.Labels) {
				t.Errorf("the budget selects %v, the pods are labelled %v", pdb.Spec.Selector.MatchLabels, dep.Spec.Template.Labels)
			}
		})
	}
}

// TestChartAsSubchart: an umbrella chart that depends on karpenter-guard through a file:// dependency,
// with global values (which Helm passes to every subchart) and one replica, builds, renders and
// installs as a platform team would do it; the pod of that one replica can be evicted (no budget
// forbids it), and `helm uninstall` removes the release.
func TestChartAsSubchart(t *testing.T) {
	const release, ns = "platform", "karpenter-guard"
	reset(t)
	chart, err := filepath.Abs(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Version string `json:"version"`
	}
	if err := sigsyaml.Unmarshal([]byte(readFile(t, filepath.Join(chartDir, "Chart.yaml"))), &meta); err != nil {
		t.Fatal(err)
	}
	umbrella := filepath.Join(t.TempDir(), "platform")
	if err := os.MkdirAll(umbrella, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"Chart.yaml": `apiVersion: v2
name: platform
version: 1.0.0
dependencies:
  - name: karpenter-guard
    version: ` + meta.Version + `
    repository: file://` + chart + "\n",
		"values.yaml": `global:
  imageRegistry: registry.internal.example.com
  clusterName: prod-eks
karpenter-guard:
  clusterName: e2e
  replicas: 1
  reports:
    installCRDs: false
  mutation:
    enabled: false
`,
	} {
		if err := os.WriteFile(filepath.Join(umbrella, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	helmT(t, "dependency", "build", umbrella)
	objs := objectsByKey(t, helmT(t, "template", release, umbrella, "-n", ns))
	const fullname = "platform-karpenter-guard"
	var dep appsv1.Deployment
	decodeInto(t, objs["Deployment/"+ns+"/"+fullname], &dep)
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 || dep.Spec.Template.Labels["app.kubernetes.io/instance"] != release {
		t.Fatalf("the subchart's Deployment: replicas %v, pod labels %v", dep.Spec.Replicas, dep.Spec.Template.Labels)
	}
	if _, ok := objs["PodDisruptionBudget/"+ns+"/"+fullname]; ok {
		t.Errorf("one replica, and a PodDisruptionBudget: draining its node would wait forever")
	}

	t.Cleanup(func() {
		helm(t, "uninstall", release, "-n", ns, "--ignore-not-found")
		env.kubectl(t, "", "delete", "pod", "platform-evictable", "-n", ns, "--ignore-not-found", "--wait=false")
		reset(t)
	})
	out := helmT(t, "install", release, umbrella, "-n", ns)
	if !strings.Contains(out, "STATUS: deployed") {
		t.Errorf("helm install of the umbrella chart:\n%s", out)
	}

	// The Deployment's pod, as its ReplicaSet would create it (the test's API server runs no
	// controllers): nothing forbids its eviction.
	pod := corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "platform-evictable", Namespace: ns, Labels: dep.Spec.Template.Labels},
		Spec:       dep.Spec.Template.Spec}
	b, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	if r := env.kubectl(t, string(b), "apply", "-f", "-"); r.code != 0 {
		t.Fatalf("create the Deployment's pod: exit %d\n%s", r.code, r.stderr)
	}
	eviction := `{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "platform-evictable", "namespace": "` + ns + `"}}`
	if r := env.kubectl(t, "", "create", "--raw", "/api/v1/namespaces/"+ns+"/pods/platform-evictable/eviction", "-f", writeTemp(t, eviction)); r.code != 0 {
		t.Errorf("the one replica's pod cannot be evicted: exit %d\n%s", r.code, r.stderr)
	}
	helmT(t, "uninstall", release, "-n", ns, "--wait")
}

// helmLabels are the labels the chart adds to every object's metadata and manifests/ does not: Helm's
// own bookkeeping (the chart's version, the release, the app's version, the manager), which kustomize
// has no equivalent of. The drift test ignores these in metadata.labels and nothing else: the release
// label is also in every selector and on the pods, where manifests/ carries it too (release
// karpenter-guard) and the test compares it.
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
