package rules

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// richInputs are inputs that make every row of the controller table: two NodePools (one spot), spec.tags,
// spec.role, an alias and an ssmParameter term, and the interruption queue.
func richInputs() *controllerInputs {
	return &controllerInputs{
		principal: "arn:aws:iam::111122223333:role/KarpenterController",
		policy:    controllerPolicy{partition: "aws", region: "us-east-1", account: "111122223333", cluster: "prod-eks", role: "KarpenterController"},
		k8s:       "1.33",
		class:     "default",
		specRole:  "KarpenterNodeRole-prod-eks",
		al2023:    true,
		tags:      map[string]string{"team": "platform", "cost-center": "42"},
		pools:     []servingPool{{name: "default"}, {name: "spot", spot: true}},
		nodeRole:  "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks", nodeRoleField: "spec.role",
		subnets:  []facts.Subnet{{ID: "subnet-1"}, {ID: "subnet-2"}},
		groups:   []facts.SecurityGroup{{ID: "sg-1"}},
		amiTerms: []amiTermRef{{alias: "al2023@latest"}, {ssmParameter: "/platform/ami/golden"}},
		images:   [][]facts.Image{{{ID: "ami-1"}, {ID: "ami-2"}}, {{ID: "ami-3"}}},
		queue:    "prod-eks",
	}
}

// inputChanges returns changes of one input each, by field name ("policy.region" for a field of the
// policy).
func inputChanges() map[string]func(in *controllerInputs) {
	return map[string]func(in *controllerInputs){
		"principal":        func(in *controllerInputs) { in.principal += "-2" },
		"policy.partition": func(in *controllerInputs) { in.policy.partition = "aws-cn" },
		"policy.region":    func(in *controllerInputs) { in.policy.region = "eu-west-1" },
		"policy.account":   func(in *controllerInputs) { in.policy.account = "444455556666" },
		"policy.cluster":   func(in *controllerInputs) { in.policy.cluster = "staging-eks" },
		"policy.role":      func(in *controllerInputs) { in.policy.role += "-2" },
		"k8s":              func(in *controllerInputs) { in.k8s = "" },
		"class":            func(in *controllerInputs) { in.class = "other" },
		"specRole":         func(in *controllerInputs) { in.specRole = "" },
		"al2023":           func(in *controllerInputs) { in.al2023 = false },
		"amiFamily":        func(in *controllerInputs) { in.amiFamily = true },
		"tags":             func(in *controllerInputs) { in.tags = map[string]string{"team": "platform", "cost-center": "43"} },
		"pools":            func(in *controllerInputs) { in.pools = []servingPool{{name: "default"}, {name: "spot"}} },
		"nodeRole":         func(in *controllerInputs) { in.nodeRole = "arn:aws:iam::111122223333:role/Other" },
		"nodeRoleField":    func(in *controllerInputs) { in.nodeRoleField = "spec.instanceProfile" },
		"nodeRoleErr":      func(in *controllerInputs) { in.nodeRole, in.nodeRoleErr = "", "not in the facts snapshot: roles" },
		"subnets":          func(in *controllerInputs) { in.subnets = in.subnets[:1] },
		"groups":           func(in *controllerInputs) { in.groups = []facts.SecurityGroup{{ID: "sg-2"}} },
		"subnetsErr":       func(in *controllerInputs) { in.subnets, in.subnetsErr = nil, "not in the facts snapshot: subnets" },
		"groupsErr":        func(in *controllerInputs) { in.groups, in.groupsErr = nil, "not in the facts snapshot: securityGroups" },
		"amiTerms":         func(in *controllerInputs) { in.amiTerms = in.amiTerms[:1] },
		"images":           func(in *controllerInputs) { in.images = [][]facts.Image{{{ID: "ami-1"}}, {{ID: "ami-4"}}} },
		"imagesErr":        func(in *controllerInputs) { in.images, in.imagesErr = in.images[:1], "images unknown" },
		"queue":            func(in *controllerInputs) { in.queue = "" },
	}
}

// TestControllerInputsKey: inputs build equal rows exactly when their keys are equal. Every input (the
// list of changes must name each field, so that a new one cannot be left out of the key) changes both
// the key and the rows; inputs written twice, or changed back, have the key and the rows of the first.
func TestControllerInputsKey(t *testing.T) {
	var fields []string
	for _, typ := range []reflect.Type{reflect.TypeFor[controllerInputs](), reflect.TypeFor[controllerPolicy]()} {
		prefix := ""
		if typ == reflect.TypeFor[controllerPolicy]() {
			prefix = "policy."
		}
		for i := range typ.NumField() {
			if name := typ.Field(i).Name; name != "policy" {
				fields = append(fields, prefix+name)
			}
		}
	}
	changes := inputChanges()
	for _, f := range fields {
		if changes[f] == nil {
			t.Errorf("no change of input %s: the test cannot tell whether the key holds it", f)
		}
	}
	if len(changes) != len(fields) {
		t.Errorf("%d changes for %d inputs", len(changes), len(fields))
	}

	base := richInputs()
	baseRows := base.rows()
	if len(baseRows.rows) < 25 || len(baseRows.unasked) > 0 {
		t.Fatalf("the rich inputs make %d rows (%v unasked)", len(baseRows.rows), baseRows.unasked)
	}
	byKey := map[string]controllerRowSet{base.key(): baseRows}
	for name, change := range changes {
		in := richInputs()
		change(in)
		key, rows := in.key(), in.rows()
		if key == base.key() {
			t.Errorf("%s: the key does not change", name)
		}
		if reflect.DeepEqual(rows, baseRows) {
			t.Errorf("%s: the rows do not change, so this change tests nothing", name)
		}
		if prev, ok := byKey[key]; ok && !reflect.DeepEqual(prev, rows) {
			t.Errorf("%s: two inputs of one key build different rows", name)
		}
		byKey[key] = rows
	}
	if again := richInputs(); again.key() != base.key() || !reflect.DeepEqual(again.rows(), baseRows) {
		t.Errorf("the same inputs, read again: another key or other rows")
	}
	// Equal tags written in another order, and the same lists in new slices, are the same inputs.
	same := richInputs()
	same.tags = map[string]string{"cost-center": "42", "team": "platform"}
	same.subnets = slices.Clone(same.subnets)
	if same.key() != base.key() {
		t.Errorf("the same inputs in new maps and slices: another key")
	}
}

// TestRememberedControllerRows: the rows the rules read from a catalog's memory are the rows built
// afresh from the same inputs; a change of any of them builds new rows; the memory is bounded.
func TestRememberedControllerRows(t *testing.T) {
	cache := controllerRowCache.New()
	remember := func(in *controllerInputs) controllerRowSet {
		key := in.key()
		if set, ok := cache.Get(key); ok {
			return set
		}
		set := in.rows()
		cache.Add(key, set)
		return set
	}
	changes := inputChanges()
	for range 2 {
		for name, change := range changes {
			in := richInputs()
			change(in)
			if got, want := remember(in), in.rows(); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the remembered rows are not the rows of the inputs", name)
			}
		}
	}
	if cache.Len() != len(changes) {
		t.Errorf("the cache holds %d row sets for %d distinct inputs", cache.Len(), len(changes))
	}
	for i := range maxRememberedRowSets + 10 {
		in := richInputs()
		in.class = fmt.Sprintf("class-%d", i)
		remember(in)
	}
	if cache.Len() != maxRememberedRowSets {
		t.Errorf("the cache holds %d row sets, want its bound %d", cache.Len(), maxRememberedRowSets)
	}
}

// TestRememberedNodeRoleRows: node-role rows read from a catalog's memory are those built afresh, for
// every kind of subject, all remembered in one cache: no two subjects that build different rows share
// a key.
func TestRememberedNodeRoleRows(t *testing.T) {
	yes, no, zero, three := true, false, 0, 3
	clusters := []*facts.Cluster{
		{Name: "prod-eks", Region: "us-east-1", Partition: "aws", AccountID: "111122223333"},
		{Name: "prod-eks", Region: "ap-east-1", Partition: "aws", AccountID: "111122223333"},
		{Name: "cn-eks", Region: "cn-north-1", Partition: "aws-cn", AccountID: "210987654321"},
		{Name: "other-eks", Region: "us-east-1", Partition: "", AccountID: "444455556666"},
	}
	roles := []*facts.Role{
		{Name: "nodes", ARN: "arn:aws:iam::111122223333:role/nodes"},
		{Name: "nodes", ARN: "arn:aws:iam::111122223333:role/teams/nodes"},
		{Name: "other", ARN: "arn:aws:iam::111122223333:role/other"},
	}
	cnis := []*facts.CNI{
		{}, {Present: &no}, {Present: &yes, Credentials: facts.CredentialsNodeRole},
		{Present: &yes, Credentials: facts.CredentialsPodIdentity}, {Present: &yes, Credentials: facts.CredentialsIRSA},
		{Present: &yes, Credentials: "unheard-of"},
	}
	// Larger than the catalog's, so that every subject stays remembered: a key shared by two subjects
	// shows as the second getting the first's rows.
	cache, err := lru.New[string, nodeRoleRows](1 << 12)
	if err != nil {
		t.Fatal(err)
	}
	subjects := 0
	for range 2 {
		for _, cl := range clusters {
			for _, r := range roles {
				for _, cni := range cnis {
					for _, pi := range []*int{nil, &zero, &three} {
						for _, describes := range []bool{false, true} {
							fresh := nodeRoleSubject{cluster: cl, role: r, cni: cni, podIdentity: pi, describesInstances: describes}
							remembered := fresh
							remembered.remembered = cache
							for _, table := range []struct {
								name string
								rows func(nodeRoleSubject) nodeRoleRows
							}{{"join", joinRows}, {"runtime", runtimeRows}} {
								if got, want := table.rows(remembered), table.rows(fresh); !reflect.DeepEqual(got, want) {
									t.Errorf("%s rows of %s, %s, %+v, %v, %v: the remembered rows are not those built afresh", table.name, cl.Region, r.ARN, cni, pi, describes)
								}
							}
							subjects++
						}
					}
				}
			}
		}
	}
	if cache.Len() == 0 || cache.Len() > subjects {
		t.Errorf("the cache holds %d row tables for %d subjects", cache.Len(), subjects/2)
	}
	bounded := nodeRoleRowCache.New()
	for i := range maxRememberedNodeRoleRows + 10 {
		cl := *clusters[0]
		cl.Name = fmt.Sprintf("eks-%d", i)
		joinRows(nodeRoleSubject{cluster: &cl, role: roles[0], cni: cnis[2], remembered: bounded})
	}
	if bounded.Len() != maxRememberedNodeRoleRows {
		t.Errorf("the catalog's cache holds %d row tables, want its bound %d", bounded.Len(), maxRememberedNodeRoleRows)
	}
}
