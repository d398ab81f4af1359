package objects

import (
	"errors"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// parse returns the document node of a YAML text.
func parse(t *testing.T, in string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(in), &n); err != nil {
		t.Fatalf("%q: %v", in, err)
	}
	return &n
}

func decodeError(t *testing.T, err error) *DecodeError {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a *DecodeError", err, err)
	}
	return de
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		offset int
		line   int
		msg    []string
	}{
		{"sequence", "- a\n- b\n", 0, 1, []string{"not a Kubernetes object: expected a mapping with apiVersion and kind"}},
		{"scalar with offset", "\n\nhello\n", 10, 13, []string{"not a Kubernetes object"}},
		{"no apiVersion", "kind: Pod\n", 4, 5, []string{"apiVersion is missing or not a string"}},
		{"apiVersion a mapping", "apiVersion: {a: b}\nkind: Pod\n", 0, 1, []string{"apiVersion is missing or not a string"}},
		{"apiVersion null", "apiVersion:\nkind: Pod\n", 0, 1, []string{"apiVersion is missing"}},
		{"no kind", "apiVersion: v1\n", 0, 1, []string{"kind is missing or not a string"}},
		{"kind a list", "apiVersion: v1\nkind: [Pod]\n", 0, 1, []string{"kind is missing or not a string"}},
		{"Provisioner at the kind line", "apiVersion: karpenter.sh/v1beta1\n\n\nkind: Provisioner\n", 20, 24,
			[]string{"karpenter.sh Provisioner was removed in Karpenter v0.32: rewrite it as a karpenter.sh/v1 NodePool"}},
		{"AWSNodeTemplate", "kind: AWSNodeTemplate\napiVersion: karpenter.k8s.aws/v1alpha1\n", 0, 1,
			[]string{"AWSNodeTemplate was removed in Karpenter v0.32: rewrite it as a karpenter.k8s.aws/v1 EC2NodeClass"}},
		{"Provisioner of v1", "apiVersion: karpenter.sh/v1\nkind: Provisioner\n", 0, 2, []string{"Provisioner was removed"}},
		{"unknown kind", "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClas\n", 0, 2,
			[]string{"unknown Karpenter kind karpenter.k8s.aws/v1 EC2NodeClas: expected karpenter.sh/v1 NodePool or NodeClaim, karpenter.k8s.aws/v1 EC2NodeClass"}},
		{"unknown version", "apiVersion: karpenter.sh/v2\nkind: NodeClaim\n", 0, 2, []string{"unknown Karpenter kind karpenter.sh/v2 NodeClaim"}},
		{"group without version", "apiVersion: karpenter.k8s.aws\nkind: EC2NodeClass\nmetadata: {name: a}\n", 0, 2, []string{"unknown Karpenter kind karpenter.k8s.aws EC2NodeClass"}},
		{"no name", "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  namespace: x\n", 7, 8, []string{"NodePool has no metadata.name"}},
		{"metadata a list", "apiVersion: v1\nkind: Pod\nmetadata:\n- name: a\n", 3, 7, []string{"line 7: expected a mapping, found a list"}},
		{"name a mapping", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {a: b}\n", 0, 4, []string{"line 4: expected a string, found a mapping"}},
		{"duplicate key", "apiVersion: v1\nkind: Pod\nkind: Service\n", 100, 103, []string{`line 103: mapping key "kind" already defined at line 102`}},
		{"amiSelectorTerms a string", "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: nc}\nspec:\n  amiSelectorTerms: al2023@latest\n", 10, 15,
			[]string{`EC2NodeClass "nc": line 15: expected a list, found the string ` + "`al2023@...`"}},
		{"selector tags a list", "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: nc}\nspec:\n  subnetSelectorTerms:\n  - tags: [a]\n", 0, 6,
			[]string{"line 6: expected a mapping, found a list"}},
		{"userData a mapping", "apiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata: {name: nc}\nspec:\n  userData: {a: b}\n", 0, 5,
			[]string{"line 5: expected a string, found a mapping"}},
		{"associatePublicIPAddress not a boolean", "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: nc}\nspec:\n  associatePublicIPAddress: maybe\n", 0, 5,
			[]string{"line 5: expected true or false, found the string `maybe`"}},
		{"hop limit not a number", "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: nc}\nspec:\n  metadataOptions:\n    httpPutResponseHopLimit: two\n", 0, 6,
			[]string{"line 6: expected a number, found the string `two`"}},
		{"requirement values a string", "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec:\n  template:\n    spec:\n      requirements:\n      - key: k\n        values: spot\n", 0, 9,
			[]string{`NodePool "np": line 9: expected a list, found the string ` + "`spot`"}},
		{"disruption a list", "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: np}\nspec:\n  disruption: []\n", 2, 7,
			[]string{"line 7: expected a mapping, found a list"}},
		{"aws-auth data a list", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aws-auth}\ndata:\n- a\n", 0, 5,
			[]string{`ConfigMap "aws-auth": line 5: expected a mapping, found a list`}},
		{"several wrong fields", "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: nc}\nspec:\n  role: [r]\n  amiFamily: {a: b}\n", 1, 6,
			[]string{"line 6: expected a string, found a list; line 7: expected a string, found a mapping"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decode(parse(t, tc.in), "f.yaml", tc.offset)
			if err == nil {
				t.Fatalf("no error; decoded %+v", d)
			}
			de := decodeError(t, err)
			if de.Line != tc.line {
				t.Errorf("line %d, want %d (%s)", de.Line, tc.line, de.Message)
			}
			for _, m := range tc.msg {
				if !strings.Contains(de.Message, m) {
					t.Errorf("message %q lacks %q", de.Message, m)
				}
			}
			if strings.Contains(de.Message, "objects.") || strings.Contains(de.Message, "!!") {
				t.Errorf("message %q names Go or YAML types", de.Message)
			}
			if d.Object != nil || d.Ignored != "" {
				t.Errorf("decoded %+v alongside an error", d)
			}
		})
	}
}

func TestDecodeErrorString(t *testing.T) {
	if got := (&DecodeError{Line: 7, Message: "bad"}).Error(); got != "line 7: bad" {
		t.Errorf("got %q", got)
	}
}

func TestDecodeNil(t *testing.T) {
	_, err := Decode(nil, "f.yaml", 5)
	if de := decodeError(t, err); de.Line != 6 || !strings.Contains(de.Message, "not a Kubernetes object") {
		t.Errorf("got %+v", de)
	}
}

func TestDecodeIgnored(t *testing.T) {
	for in, want := range map[string]string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n":                      "apps/v1 Deployment",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aws-auth, namespace: default}\n": "v1 ConfigMap",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n":                        "v1 ConfigMap",
		"apiVersion: karpenter.sh/v1\nkind: NodeClaim\n":                                    "karpenter.sh/v1 NodeClaim",
		"apiVersion: karpenter.sh/v1beta1\nkind: NodeClaim\n":                               "karpenter.sh/v1beta1 NodeClaim",
		"apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\n":                            "karpenter.sh/v1alpha1 NodeOverlay",
		"apiVersion: v1\nkind: Namespace\n":                                                 "v1 Namespace",
		// Fields the views would refuse are not read in kinds that are not checked.
		"apiVersion: example.com/v1\nkind: EC2NodeClass\nmetadata: {name: x}\nspec: {amiSelectorTerms: s}\n": "example.com/v1 EC2NodeClass",
	} {
		d, err := Decode(parse(t, in), "f.yaml", 0)
		if err != nil || d.Object != nil || d.Ignored != want {
			t.Errorf("%q: decoded %+v, %v; want ignored %q", in, d, err, want)
		}
	}
}

func TestDecodeObjects(t *testing.T) {
	nc := `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: nc
  annotations: {a: "1", b: two}
spec:
  amiFamily: AL2023
  amiSelectorTerms:
  - alias: al2023@v20251112
  - {id: ami-1, name: n, owner: "123", ssmParameter: p, tags: {k: v}}
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c}}, {id: subnet-1}]
  securityGroupSelectorTerms: [{name: sg}]
  role: r
  instanceProfile: ip
  userData: |
    echo hi
  metadataOptions: {httpEndpoint: enabled, httpTokens: required, httpPutResponseHopLimit: 1}
  blockDeviceMappings:
  - deviceName: /dev/xvda
    rootVolume: true
    ebs: {encrypted: true, volumeSize: 100Gi, volumeType: gp3}
  associatePublicIPAddress: false
  kubelet: {maxPods: 110}
  unknownField: [kept, in, Root]
`
	d, err := Decode(parse(t, nc), "nc.yaml", 3)
	if err != nil {
		t.Fatal(err)
	}
	o := d.Object
	if o == nil || d.Ignored != "" {
		t.Fatalf("decoded %+v", d)
	}
	if o.APIVersion != "karpenter.k8s.aws/v1" || o.Kind != "EC2NodeClass" || o.Name != "nc" || o.Namespace != "" ||
		o.Annotations["a"] != "1" || o.Annotations["b"] != "two" || o.File != "nc.yaml" || o.LineOffset != 3 || o.JSON {
		t.Errorf("object %+v", o)
	}
	if o.NodePool != nil || o.AWSAuth != nil || o.NodeClass == nil {
		t.Fatalf("views %v %v %v", o.NodeClass, o.NodePool, o.AWSAuth)
	}
	s := o.NodeClass.Spec
	if s.AMIFamily != "AL2023" || len(s.AMISelectorTerms) != 2 || s.AMISelectorTerms[0].Alias != "al2023@v20251112" ||
		s.AMISelectorTerms[1].ID != "ami-1" || s.AMISelectorTerms[1].Name != "n" || s.AMISelectorTerms[1].Owner != "123" || s.AMISelectorTerms[1].SSMParameter != "p" ||
		s.AMISelectorTerms[1].Tags["k"] != "v" {
		t.Errorf("AMI terms %+v", s.AMISelectorTerms)
	}
	if len(s.SubnetSelectorTerms) != 2 || s.SubnetSelectorTerms[0].Tags["karpenter.sh/discovery"] != "c" || s.SubnetSelectorTerms[1].ID != "subnet-1" ||
		len(s.SecurityGroupSelectorTerms) != 1 || s.SecurityGroupSelectorTerms[0].Name != "sg" {
		t.Errorf("selector terms %+v %+v", s.SubnetSelectorTerms, s.SecurityGroupSelectorTerms)
	}
	if s.Role != "r" || s.InstanceProfile != "ip" || s.UserData == nil || *s.UserData != "echo hi\n" {
		t.Errorf("role %q, profile %q, userData %v", s.Role, s.InstanceProfile, s.UserData)
	}
	if m := s.MetadataOptions; m == nil || m.HTTPEndpoint != "enabled" || m.HTTPTokens != "required" || m.HTTPPutResponseHopLimit == nil || *m.HTTPPutResponseHopLimit != 1 {
		t.Errorf("metadataOptions %+v", m)
	}
	if b := s.BlockDeviceMappings; len(b) != 1 || b[0].DeviceName != "/dev/xvda" || !b[0].RootVolume || b[0].EBS == nil ||
		b[0].EBS.Encrypted == nil || !*b[0].EBS.Encrypted || b[0].EBS.VolumeSize != "100Gi" || b[0].EBS.VolumeType != "gp3" {
		t.Errorf("blockDeviceMappings %+v", b)
	}
	if s.AssociatePublicIPAddress == nil || *s.AssociatePublicIPAddress || s.Kubelet["maxPods"] != 110 {
		t.Errorf("associatePublicIPAddress %v, kubelet %v", s.AssociatePublicIPAddress, s.Kubelet)
	}
	if n := Lookup(o.Root, "spec", "unknownField", 2); n == nil || n.Value != "Root" || o.LineOf(n) != 27 {
		t.Errorf("unknown field not kept in Root with its line: %+v", n)
	}
	if r := o.Ref(); r != (Ref{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: "nc", File: "nc.yaml", Line: 4}) {
		t.Errorf("ref %+v", r)
	}

	np := `{"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool", "metadata": {"name": "np"},
 "spec": {"template": {"metadata": {"labels": {"team": "a"}}, "spec": {
   "nodeClassRef": {"apiVersion": "karpenter.k8s.aws/v1beta1", "kind": "EC2NodeClass", "name": "nc"},
   "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"], "minValues": 2}],
   "kubelet": {"maxPods": 20}}},
  "disruption": {"consolidationPolicy": "WhenUnderutilized", "expireAfter": "720h"},
  "limits": {"cpu": 100}, "weight": 10}}`
	d, err = Decode(parse(t, np), "np.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	o = d.Object
	if o == nil || o.NodePool == nil || o.NodeClass != nil || !o.JSON {
		t.Fatalf("decoded %+v", d)
	}
	p := o.NodePool.Spec
	if p.Template.Metadata.Labels["team"] != "a" || p.Template.Spec.NodeClassRef == nil || p.Template.Spec.NodeClassRef.APIVersion != "karpenter.k8s.aws/v1beta1" ||
		p.Template.Spec.NodeClassRef.Name != "nc" || len(p.Template.Spec.Requirements) != 1 || *p.Template.Spec.Requirements[0].MinValues != 2 ||
		p.Template.Spec.Requirements[0].Values[0] != "spot" || p.Template.Spec.Kubelet["maxPods"] != 20 {
		t.Errorf("template %+v", p.Template)
	}
	if p.Disruption == nil || p.Disruption.ConsolidationPolicy != "WhenUnderutilized" || p.Disruption.ExpireAfter != "720h" ||
		p.Limits["cpu"] != 100 || p.Weight == nil || *p.Weight != 10 {
		t.Errorf("spec %+v", p)
	}
	if o.Ref().Line != 1 || o.LineOf(Lookup(o.Root, "spec", "weight")) != 7 {
		t.Errorf("lines: ref %d, weight %d", o.Ref().Line, o.LineOf(Lookup(o.Root, "spec", "weight")))
	}

	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aws-auth, namespace: kube-system}\ndata:\n  mapRoles: |\n    - rolearn: x\n  mapUsers: [not, a, string]\n"
	d, err = Decode(parse(t, cm), "cm.yaml", 0)
	if err != nil {
		t.Fatal(err)
	}
	if o := d.Object; o == nil || o.AWSAuth == nil || o.Namespace != "kube-system" || o.AWSAuth.Data["mapRoles"] != "- rolearn: x\n" ||
		len(o.AWSAuth.Data["mapUsers"].([]any)) != 3 || o.Ref().String() != `ConfigMap "kube-system/aws-auth"` {
		t.Errorf("decoded %+v", d.Object)
	}
}

// TestDecodeAliases: the root may be an alias or a document node; aliases inside are followed, and a
// document that contains itself is an error, not a hang.
func TestDecodeAliases(t *testing.T) {
	doc := parse(t, "a: &np {apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: x}, spec: {weight: &w 5}}\nb: *np\n")
	alias := Lookup(doc, "b")
	if alias == nil {
		t.Fatal("no b")
	}
	_, raw := doc.Content[0].Content[2], doc.Content[0].Content[3]
	if raw.Kind != yaml.AliasNode {
		t.Fatalf("b is %v, not an alias", raw.Kind)
	}
	d, err := Decode(raw, "f.yaml", 0)
	if err != nil || d.Object == nil || d.Object.Name != "x" || *d.Object.NodePool.Spec.Weight != 5 || d.Object.Ref().Line != 1 {
		t.Errorf("decoded %+v, %v", d.Object, err)
	}
	d, err = Decode(parse(t, "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: y}\n"), "f.yaml", 0)
	if err != nil || d.Object == nil || d.Object.Root.Kind != yaml.MappingNode {
		t.Errorf("document node: %+v, %v", d.Object, err)
	}
	self := parse(t, "&a {apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: z},\n  spec: {kubelet: *a}}\n")
	_, err = Decode(self, "f.yaml", 0)
	if de := decodeError(t, err); de.Line != 1 || !strings.Contains(de.Message, "contains itself") {
		t.Errorf("an EC2NodeClass containing itself: %+v", de)
	}
}
