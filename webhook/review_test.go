package webhook_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/rules"
	"github.com/karpenter-guard/karpenter-guard/webhook"
)

// exampleWorld returns the facts a directory of examples describes (its ClusterFacts, with its aws-auth
// standing in for a snapshot without one, as in `check`), and its v1 EC2NodeClasses as the cluster's.
func exampleWorld(t testing.TB, set *manifest.Set) (facts.Provider, webhook.Cluster) {
	t.Helper()
	var p facts.Provider = facts.None{}
	var classes, pools []*objects.Object
	for _, o := range set.Objects {
		if o.NodePool != nil && o.Version() == "v1" {
			pools = append(pools, o)
		}
		if o.Kind == objects.KindClusterFacts {
			cf, err := facts.DecodeSnapshot(o.Root, o.LineOffset)
			if err != nil {
				t.Fatal(err)
			}
			p = facts.NewSnapshot(cf)
		}
		if o.NodeClass != nil && o.Version() == "v1" {
			classes = append(classes, o)
		}
	}
	if data, malformed, ok := validators.InputAWSAuth(set.Objects); ok {
		p = facts.WithInputAWSAuth(p, data, malformed)
	}
	return p, fixedCluster{classes, pools}
}

// source returns an object's manifest.
func source(t testing.TB, o *objects.Object) string {
	t.Helper()
	out, err := yaml.Marshal(o.Root)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// outcome is what happened to each rule on one object: "deny", "warn" or "not evaluated".
func checkOutcome(res validators.Result, o *objects.Object, cat *validators.Catalog) map[string]string {
	out := map[string]string{}
	for _, f := range res.Findings {
		if f.Source == o && runsInAdmission(cat.Rule(f.Rule)) {
			out[f.Rule] = string(f.Action)
		}
	}
	for _, n := range res.NotEvaluated {
		if n.Object == o.Ref() && runsInAdmission(cat.Rule(n.Rule)) {
			out[n.Rule] = "not evaluated"
		}
	}
	return out
}

// runsInAdmission reports whether the webhook runs r: not the rules about what the API server never
// sends a webhook (v1beta1 fields) or has already refused (the CRD's schema).
func runsInAdmission(r *validators.Rule) bool {
	return r.Scope != validators.ScopeCLI && r.Scope != validators.ScopeCLIAndAudit
}

func webhookOutcome(resp *admissionv1.AdmissionResponse) map[string]string {
	out := map[string]string{}
	if !resp.Allowed {
		for _, r := range rulesOf(strings.Split(resp.Result.Message, "\n")) {
			out[r] = "deny"
		}
	}
	for _, r := range rulesOf(resp.Warnings) {
		out[r] = "warn"
	}
	for _, u := range strings.Split(resp.AuditAnnotations["unverified"], "; ") {
		if rules, _, ok := strings.Cut(u, ": "); ok {
			for _, r := range strings.Split(rules, ",") {
				out[r] = "not evaluated"
			}
		}
	}
	return out
}

func describe(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+": "+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// TestExamplesGiveTheVerdictsOfCheck posts every v1 object of the examples as an AdmissionReview to
// the webhook over TLS and demands the verdicts `check` gives: the same rules deny, warn and are not
// evaluated (rules only the CLI and the audit run aside: the API server never shows a webhook v1beta1
// fields, and has refused what the CRD's schema refuses before it calls the webhook).
func TestExamplesGiveTheVerdictsOfCheck(t *testing.T) {
	dirs, _ := filepath.Glob("../examples/clusters/*")
	dirs = append(dirs, "../examples/production", "../examples/field-reports")
	cat := rules.Default()
	reviewed := 0
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			set := readDir(t, dir)
			p, cluster := exampleWorld(t, set)
			res := cat.Evaluate(&validators.Context{Context: context.Background(), Config: config.Default(), Facts: p, Input: set.Objects, Scope: validators.ScopeCLI}, set.Objects)
			srv := startServer(t, reviewer(t, p, nil, cluster), webhook.DefaultLimits())
			for _, o := range set.Objects {
				if (o.NodeClass == nil && o.NodePool == nil && o.AWSAuth == nil) || (o.AWSAuth == nil && o.Version() != "v1") {
					continue
				}
				resp := srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Create, source(t, o), "", false))
				want, got := checkOutcome(res, o, cat), webhookOutcome(resp)
				if describe(want) != describe(got) {
					t.Errorf("%s: check says %s\nthe webhook says %s\n(message %q, warnings %q)", o.Ref(), describe(want), describe(got), resp.Result.Message, resp.Warnings)
				}
				if denies := slices.Contains(mapValues(want), "deny"); denies == resp.Allowed {
					t.Errorf("%s: allowed=%v, but check denies=%v", o.Ref(), resp.Allowed, denies)
				}
				reviewed++
			}
		})
	}
	if reviewed < 15 {
		t.Errorf("only %d example objects reviewed", reviewed)
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// classWithProblems denies (instance-profile-arn, ami-selector-missing-owner twice) and warns
// (imds-v1-enabled, ebs-unencrypted).
const classWithProblems = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiSelectorTerms:
    - name: amazon-eks-node-al2023-x86_64-standard-1.33-*
    - name: platform-team-base-*
  instanceProfile: arn:aws:iam::111122223333:instance-profile/KarpenterNodeInstanceProfile
  subnetSelectorTerms:
    - tags: {karpenter.sh/discovery: prod-eks}
  securityGroupSelectorTerms:
    - tags: {karpenter.sh/discovery: prod-eks}
  metadataOptions:
    httpTokens: optional
  blockDeviceMappings:
    - deviceName: /dev/xvda
      ebs: {volumeSize: 100Gi, encrypted: false}
`

// TestModes: enforce denies and warns; warn only warns; dry-run neither, and records everything it
// would have done in audit annotations.
func TestModes(t *testing.T) {
	ar := func() *admissionv1.AdmissionReview {
		return reviewOf(t, admissionv1.Create, classWithProblems, "", false)
	}
	t.Run("enforce", func(t *testing.T) {
		srv := startServer(t, reviewer(t, nil, nil, nil), webhook.DefaultLimits())
		resp := srv.post(t, webhook.ValidatePath, ar())
		if resp.Allowed || resp.Result.Code != 403 {
			t.Fatalf("allowed=%v code=%d; want a 403 denial", resp.Allowed, resp.Result.Code)
		}
		first, _, _ := strings.Cut(resp.Result.Message, "\n")
		if !strings.HasPrefix(first, `karpenter-guard: EC2NodeClass "default" denied: [instance-profile-arn] instanceProfile is the ARN`) {
			t.Errorf("first line %q does not stand alone", first)
		}
		if !strings.Contains(resp.Result.Message, "[instance-profile-arn]") {
			t.Errorf("denial lacks instance-profile-arn:\n%s", resp.Result.Message)
		}
		// Without image facts a name term without an owner may work: a warning, not a denial.
		if strings.Contains(resp.Result.Message, "[ami-selector-missing-owner]") || !slices.Contains(rulesOf(resp.Warnings), "ami-selector-missing-owner") {
			t.Errorf("ami-selector-missing-owner should warn, not deny, without image facts:\n%s\n%q", resp.Result.Message, resp.Warnings)
		}
		if !strings.Contains(resp.Result.Message, "\n  fix: instanceProfile: KarpenterNodeInstanceProfile") {
			t.Errorf("denial lacks the fix of instance-profile-arn:\n%s", resp.Result.Message)
		}
		if got := rulesOf(resp.Warnings); !slices.Contains(got, "imds-v1-enabled") || !slices.Contains(got, "ebs-unencrypted") {
			t.Errorf("warnings %q lack the warn rules", resp.Warnings)
		}
		if !strings.HasPrefix(resp.AuditAnnotations["instance-profile-arn"], "deny: ") {
			t.Errorf("audit annotations %v", resp.AuditAnnotations)
		}
	})
	t.Run("warn", func(t *testing.T) {
		srv := startServer(t, reviewer(t, nil, parseConfig(t, "mode: warn\n"), nil), webhook.DefaultLimits())
		resp := srv.post(t, webhook.ValidatePath, ar())
		if !resp.Allowed {
			t.Fatalf("mode warn denied: %s", resp.Result.Message)
		}
		if got := rulesOf(resp.Warnings); !slices.Contains(got, "instance-profile-arn") || !slices.Contains(got, "imds-v1-enabled") {
			t.Errorf("warnings %q lack the deny and warn rules", resp.Warnings)
		}
	})
	t.Run("dry-run", func(t *testing.T) {
		srv := startServer(t, reviewer(t, nil, parseConfig(t, "mode: dry-run\n"), nil), webhook.DefaultLimits())
		resp := srv.post(t, webhook.ValidatePath, ar())
		if !resp.Allowed || len(resp.Warnings) > 0 {
			t.Fatalf("mode dry-run: allowed=%v warnings=%q; want allowed and silent", resp.Allowed, resp.Warnings)
		}
		for rule, want := range map[string]string{"instance-profile-arn": "would deny: ", "imds-v1-enabled": "would warn: ", "unverified": "node-role-not-authorized"} {
			if !strings.Contains(resp.AuditAnnotations[rule], want) {
				t.Errorf("annotation %s = %q, want it to contain %q", rule, resp.AuditAnnotations[rule], want)
			}
		}
	})
	t.Run("per-rule actions", func(t *testing.T) {
		cfg := parseConfig(t, "rules:\n  ami-selector-missing-owner: warn\n  instance-profile-arn: audit\n  imds-v1-enabled: off\n")
		srv := startServer(t, reviewer(t, nil, cfg, nil), webhook.DefaultLimits())
		resp := srv.post(t, webhook.ValidatePath, ar())
		if !resp.Allowed {
			t.Fatalf("denied although no rule denies: %s", resp.Result.Message)
		}
		got := rulesOf(resp.Warnings)
		if !slices.Contains(got, "ami-selector-missing-owner") || slices.Contains(got, "instance-profile-arn") || slices.Contains(got, "imds-v1-enabled") {
			t.Errorf("warnings %q: want ami-selector-missing-owner, not the audit or off rules", resp.Warnings)
		}
		if !strings.HasPrefix(resp.AuditAnnotations["instance-profile-arn"], "audit: ") {
			t.Errorf("audit rule not recorded: %v", resp.AuditAnnotations)
		}
	})
}

// TestDryRunRequestsAreAnsweredAlike: kubectl apply --dry-run=server gets the real verdict.
func TestDryRunRequestsAreAnsweredAlike(t *testing.T) {
	srv := startServer(t, reviewer(t, nil, nil, nil), webhook.DefaultLimits())
	real := srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Create, classWithProblems, "", false))
	dry := srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Create, classWithProblems, "", true))
	real.UID, dry.UID = "", ""
	if real.Allowed != dry.Allowed || real.Result.Message != dry.Result.Message || !slices.Equal(real.Warnings, dry.Warnings) {
		t.Errorf("dry-run answered differently:\n%+v\n%+v", real, dry)
	}
}

// TestMessagesStayWithinLimits: a class with dozens of findings still gets a denial under 4 KiB whose
// first line stands alone, and warnings under 256 characters.
func TestMessagesStayWithinLimits(t *testing.T) {
	var terms strings.Builder
	for i := 0; i < 60; i++ {
		terms.WriteString("    - alias: al2023@v2025" + strings.Repeat("x", i%7+1) + "\n")
	}
	doc := strings.Replace(classWithProblems, "    - name: amazon-eks-node-al2023-x86_64-standard-1.33-*\n", terms.String(), 1)
	doc = strings.Replace(doc, "metadata:\n  name: default\n", "metadata:\n  name: default\n  annotations:\n    note: "+strings.Repeat("long ", 100)+"\n", 1)
	srv := startServer(t, reviewer(t, nil, nil, nil), webhook.DefaultLimits())
	resp := srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Create, doc, "", false))
	if resp.Allowed {
		t.Fatal("allowed")
	}
	if n := len(resp.Result.Message); n > 4096 {
		t.Errorf("denial is %d bytes, over 4 KiB", n)
	}
	if !strings.Contains(resp.Result.Message, "more lines: run karpenter-guard check on the manifest for all findings") {
		t.Errorf("the cut is not said:\n%s", resp.Result.Message)
	}
	first, _, _ := strings.Cut(resp.Result.Message, "\n")
	if !strings.HasPrefix(first, `karpenter-guard: EC2NodeClass "default" denied: [`) {
		t.Errorf("first line %q", first)
	}
	for _, w := range resp.Warnings {
		if len(w) >= 256 || strings.ContainsAny(w, "\n\r") {
			t.Errorf("warning of %d bytes or with a line break: %q", len(w), w)
		}
	}
	for k, v := range resp.AuditAnnotations {
		if len(v) > 1024 {
			t.Errorf("audit annotation %s is %d bytes, over 1 KiB", k, len(v))
		}
	}
	if v := resp.AuditAnnotations["ami-alias-version-format"]; !strings.HasSuffix(v, "… (clipped: karpenter-guard check prints it whole)") {
		t.Errorf("the 60 findings' annotation is not clipped, or does not say so: %q", v)
	}
}

// TestUpdateDoesNotBlockOnUnchangedFields: an UPDATE that leaves a denied field as stored is warned,
// not refused (the problem is not the edit's); one that changes it is refused.
func TestUpdateDoesNotBlockOnUnchangedFields(t *testing.T) {
	srv := startServer(t, reviewer(t, nil, nil, nil), webhook.DefaultLimits())
	edited := strings.Replace(classWithProblems, "metadata:\n  name: default\n", "metadata:\n  name: default\n  labels: {team: a}\n", 1)
	resp := srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Update, edited, classWithProblems, false))
	if !resp.Allowed {
		t.Fatalf("an edit of a label was refused for old problems: %s", resp.Result.Message)
	}
	if !slices.ContainsFunc(resp.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "[instance-profile-arn] (not changed by this request) instanceProfile is the ARN")
	}) {
		t.Errorf("the old problem is not warned: %q", resp.Warnings)
	}
	if a := resp.AuditAnnotations["instance-profile-arn"]; !strings.HasPrefix(a, "warn (unchanged by this request): instanceProfile is the ARN") {
		t.Errorf("the old problem is not recorded as warned: %q", a)
	}
	changed := strings.Replace(classWithProblems, "instance-profile/KarpenterNodeInstanceProfile", "instance-profile/OtherProfile", 1)
	resp = srv.post(t, webhook.ValidatePath, reviewOf(t, admissionv1.Update, changed, classWithProblems, false))
	if resp.Allowed || !strings.Contains(resp.Result.Message, "[instance-profile-arn]") {
		t.Errorf("an edit that writes an ARN was not refused: %+v", resp.Result)
	}
}

// TestConcurrentReviewsKeepTheirObjects: reviews of the examples run at once, in different orders,
// answer exactly as they do one at a time: reviews share the reviewer, its caches and the cluster's
// objects, and no review reads another's object.
func TestConcurrentReviewsKeepTheirObjects(t *testing.T) {
	dirs, _ := filepath.Glob("../examples/clusters/*")
	dirs = append(dirs, "../examples/production", "../examples/field-reports")
	type call struct {
		r    *webhook.Reviewer
		req  admission.Request
		want string
	}
	answer := func(c call, mutate bool) string {
		resp := c.r.Validate(context.Background(), c.req)
		if mutate {
			resp = c.r.Mutate(context.Background(), c.req)
		}
		out, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	var calls []call
	for _, dir := range dirs {
		set := readDir(t, dir)
		p, cluster := exampleWorld(t, set)
		r := reviewer(t, p, nil, cluster)
		for _, o := range set.Objects {
			if (o.NodeClass == nil && o.NodePool == nil) || o.Version() != "v1" {
				continue
			}
			doc := source(t, o)
			var m map[string]any
			if err := sigsyaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatal(err)
			}
			m["metadata"].(map[string]any)["labels"] = map[string]any{"reviewed": "yes"}
			out, err := sigsyaml.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			relabelled := string(out)
			for _, ar := range []*admissionv1.AdmissionReview{reviewOf(t, admissionv1.Create, doc, "", false), reviewOf(t, admissionv1.Update, relabelled, doc, false)} {
				calls = append(calls, call{r: r, req: admission.Request{AdmissionRequest: *ar.Request}})
			}
		}
	}
	if len(calls) < 20 {
		t.Fatalf("only %d reviews", len(calls))
	}
	for i := range calls {
		calls[i].want = answer(calls[i], i%2 == 1)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 5 {
				for k := range calls {
					i := (k*(g+1) + round) % len(calls)
					if got := answer(calls[i], i%2 == 1); got != calls[i].want {
						t.Errorf("review %d (%s), answered alongside others:\n%s\nalone:\n%s", i, calls[i].req.Name, got, calls[i].want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
