package main

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// iamPolicy is an IAM policy document: a trust policy or a permissions policy.
type iamPolicy struct {
	Version   string
	Statement []struct {
		Effect    string
		Principal map[string]string
		Action    stringOrList
		Condition map[string]map[string]string
	}
}

// stringOrList is an IAM element written as a string or a list of strings.
type stringOrList []string

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

var (
	exportRE      = regexp.MustCompile(`(?m)^export ((?:[A-Z_]+=\S+ ?)+)$`)
	heredocRE     = regexp.MustCompile(`(?ms)^cat > (\S+) <<EOF\n(.*?)\nEOF$`)
	helmInstallRE = regexp.MustCompile(`helm upgrade --install (\S+) charts/karpenter-guard -n (\S+)`)
	createRoleRE  = regexp.MustCompile(`aws iam create-role --role-name \S+ --assume-role-policy-document file://(\S+)`)
	envsubstRE    = regexp.MustCompile(`envsubst < (\S+) > (\S+)`)
)

// sampleOIDCProvider stands for what `aws eks describe-cluster` prints for the cluster's issuer.
const sampleOIDCProvider = "oidc.eks.us-east-1.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"

// TestInstallDocIAMRole reads the IAM role section of docs/install.md and checks what can be checked
// offline: the policy file it names exists and parses once filled in; each trust policy it writes
// parses and trusts the right principal with the right actions and conditions, for the namespace and
// ServiceAccount the chart and manifests/ install by default; each role it creates uses a trust policy
// it wrote; and the association commands name that ServiceAccount.
func TestInstallDocIAMRole(t *testing.T) {
	inRepoRoot(t)
	data, err := os.ReadFile("docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "## Before you install: the IAM role")
	end := strings.Index(doc, "## With Helm")
	if start < 0 || end < start {
		t.Fatal(`docs/install.md has no "## Before you install: the IAM role" section before "## With Helm"`)
	}
	section := doc[start:end]

	vars := map[string]string{"OIDC_PROVIDER": sampleOIDCProvider}
	for _, m := range exportRE.FindAllStringSubmatch(section, -1) {
		for _, kv := range strings.Fields(m[1]) {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
	}
	expand := func(what, s string) string {
		return os.Expand(s, func(k string) string {
			v, ok := vars[k]
			if !ok {
				t.Errorf("%s: $%s is set nowhere in the section", what, k)
			}
			return os.Expand(v, func(k string) string { return vars[k] })
		})
	}

	// The names the section uses are those the chart and manifests/ install by default.
	namespace, serviceAccount := vars["NAMESPACE"], vars["SERVICE_ACCOUNT"]
	if namespace == "" || serviceAccount == "" {
		t.Fatalf("the section exports no NAMESPACE and SERVICE_ACCOUNT: %v", vars)
	}
	helm := helmInstallRE.FindStringSubmatch(doc)
	if helm == nil {
		t.Fatal("docs/install.md has no `helm upgrade --install RELEASE charts/karpenter-guard -n NAMESPACE`")
	}
	chartSA := helm[1] // the chart's full name: the release's name when it holds the chart's
	if !strings.Contains(helm[1], "karpenter-guard") {
		chartSA = helm[1] + "-karpenter-guard"
	}
	if helm[2] != namespace || chartSA != serviceAccount {
		t.Errorf("the chart installs the ServiceAccount %s/%s, the IAM role section trusts %s/%s", helm[2], chartSA, namespace, serviceAccount)
	}
	if ns, name := kustomizeServiceAccount(t, "manifests/base"); ns != namespace || name != serviceAccount {
		t.Errorf("manifests/base installs the ServiceAccount %s/%s, the IAM role section trusts %s/%s", ns, name, namespace, serviceAccount)
	}

	// The permissions policy.
	m := envsubstRE.FindStringSubmatch(section)
	if m == nil || m[1] != "manifests/iam-policy.json" {
		t.Fatalf("the section does not fill in manifests/iam-policy.json with envsubst: %q", m)
	}
	policy, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatalf("the policy file the section names: %v", err)
	}
	var perms iamPolicy
	filled := expand(m[1], string(policy))
	if err := json.Unmarshal([]byte(filled), &perms); err != nil || len(perms.Statement) == 0 || strings.Contains(filled, "${") {
		t.Errorf("%s, filled in with the section's values, is not a policy: %v\n%s", m[1], err, filled)
	}
	if !strings.Contains(section, "--policy-document file://"+m[2]) {
		t.Errorf("no aws iam create-policy reads the filled-in %s", m[2])
	}

	// The trust policies.
	trusts := map[string]iamPolicy{}
	for _, h := range heredocRE.FindAllStringSubmatch(section, -1) {
		var p iamPolicy
		body := expand(h[1], h[2])
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Errorf("%s is not JSON once the shell expands it: %v\n%s", h[1], err, body)
			continue
		}
		trusts[h[1]] = p
	}
	creates := createRoleRE.FindAllStringSubmatch(section, -1)
	if len(creates) != 2 {
		t.Fatalf("want two `aws iam create-role` (EKS Pod Identity and IRSA), found %d", len(creates))
	}
	sawPodIdentity, sawIRSA := false, false
	for _, c := range creates {
		p, ok := trusts[c[1]]
		if !ok {
			t.Errorf("aws iam create-role reads %s, which the section does not write", c[1])
			continue
		}
		if p.Version != "2012-10-17" || len(p.Statement) != 1 || p.Statement[0].Effect != "Allow" {
			t.Errorf("%s: want one Allow statement of policy version 2012-10-17: %+v", c[1], p)
			continue
		}
		st := p.Statement[0]
		switch {
		case st.Principal["Service"] != "":
			sawPodIdentity = true
			slices.Sort(st.Action)
			if st.Principal["Service"] != "pods.eks.amazonaws.com" || !slices.Equal(st.Action, []string{"sts:AssumeRole", "sts:TagSession"}) || st.Condition != nil {
				t.Errorf("%s: EKS Pod Identity needs pods.eks.amazonaws.com allowed sts:AssumeRole and sts:TagSession: %+v", c[1], st)
			}
		case st.Principal["Federated"] != "":
			sawIRSA = true
			provider := "arn:" + vars["AWS_PARTITION"] + ":iam::" + vars["AWS_ACCOUNT_ID"] + ":oidc-provider/" + sampleOIDCProvider
			want := map[string]map[string]string{"StringEquals": {
				sampleOIDCProvider + ":sub": "system:serviceaccount:" + namespace + ":" + serviceAccount,
				sampleOIDCProvider + ":aud": "sts.amazonaws.com",
			}}
			if st.Principal["Federated"] != provider || !slices.Equal(st.Action, []string{"sts:AssumeRoleWithWebIdentity"}) || !equalConditions(st.Condition, want) {
				t.Errorf("%s: IRSA needs the cluster's OIDC provider %s allowed sts:AssumeRoleWithWebIdentity for exactly %v:\n%+v", c[1], provider, want, st)
			}
		default:
			t.Errorf("%s trusts neither a service nor an OIDC provider: %+v", c[1], st)
		}
	}
	if !sawPodIdentity || !sawIRSA {
		t.Errorf("want a trust policy for EKS Pod Identity and one for IRSA (pod identity %v, IRSA %v)", sawPodIdentity, sawIRSA)
	}

	// The commands that give the role to the ServiceAccount name it, as their flags spell it.
	commands := strings.ReplaceAll(section, "\\\n", "")
	for _, want := range []string{
		"eksctl create podidentityassociation --cluster $CLUSTER_NAME",
		"--namespace $NAMESPACE --service-account-name $SERVICE_ACCOUNT",
		"--role-name $ROLE_NAME --permission-policy-arns $POLICY_ARN",
		"aws eks create-pod-identity-association --cluster-name $CLUSTER_NAME --namespace $NAMESPACE",
		"--service-account $SERVICE_ACCOUNT --role-arn arn:$AWS_PARTITION:iam::$AWS_ACCOUNT_ID:role/$ROLE_NAME",
		"eksctl create iamserviceaccount --cluster $CLUSTER_NAME",
		"--namespace $NAMESPACE --name $SERVICE_ACCOUNT",
		"--role-name $ROLE_NAME --attach-policy-arn $POLICY_ARN --role-only --approve",
		"aws iam attach-role-policy --role-name $ROLE_NAME --policy-arn $POLICY_ARN",
		"export POLICY_ARN=arn:$AWS_PARTITION:iam::$AWS_ACCOUNT_ID:policy/karpenter-guard",
		"aws iam create-policy --policy-name karpenter-guard ",
	} {
		if !strings.Contains(commands, want) {
			t.Errorf("the IAM role section has no %q", want)
		}
	}
}

// equalConditions compares two IAM Condition blocks.
func equalConditions(a, b map[string]map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for op, kv := range b {
		if len(a[op]) != len(kv) {
			return false
		}
		for k, v := range kv {
			if a[op][k] != v {
				return false
			}
		}
	}
	return true
}

// kustomizeServiceAccount renders a kustomization and returns the namespace and name of its one
// ServiceAccount.
func kustomizeServiceAccount(t *testing.T, dir string) (string, string) {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var found [][2]string
	for _, r := range m.Resources() {
		if r.GetKind() == "ServiceAccount" {
			found = append(found, [2]string{r.GetNamespace(), r.GetName()})
		}
	}
	if len(found) != 1 {
		t.Fatalf("kustomize build %s: want one ServiceAccount, got %v", dir, found)
	}
	return found[0][0], found[0][1]
}
