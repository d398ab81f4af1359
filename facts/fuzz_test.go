package facts

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// FuzzDecodeSnapshot: DecodeSnapshotFile never panics; a refusal is a *SnapshotError on a line of the
// file; an accepted snapshot, re-encoded with yaml.v3, decodes again to an equal document.
// Seeds: testdata/fuzz/FuzzDecodeSnapshot, the docs/facts.md example and snapshots over the YAML budget.
func FuzzDecodeSnapshot(f *testing.F) {
	example, err := os.ReadFile("testdata/cluster-facts.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte(lines(hdrAPI, hdrKind, "roles: []", "awsAuth: {}")))
	every, err := os.ReadFile("testdata/every-section.yaml") // the network and capacity sections too
	if err != nil {
		f.Fatal(err)
	}
	f.Add(every)
	for _, s := range budgetSnapshots {
		f.Add([]byte(s.doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cf, err := DecodeSnapshotFile(data)
		if err != nil {
			var se *SnapshotError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v, want a *SnapshotError", err, err)
			}
			text, _ := utf8Text(data) // lines are counted in the text of a UTF-16 file
			if n := bytes.Count(text, []byte("\n")) + 1; se.Line < 1 || se.Line > n {
				t.Fatalf("error line %d outside the file's lines 1..%d: %v", se.Line, n, se)
			}
			if se.Message == "" {
				t.Fatalf("error without a message at line %d", se.Line)
			}
			// yaml.v3's own decoding errors mean the schema check let a problem through, to be
			// reported at a guessed line.
			for _, raw := range []string{"cannot unmarshal", "already defined", "map merge requires", "cannot decode"} {
				if strings.Contains(se.Message, raw) && !strings.Contains(se.Message, " tagged ") {
					t.Fatalf("yaml.v3 decoding error not caught by the schema check: %v\n--- input\n%q", se, data)
				}
			}
			return
		}
		if cf == nil {
			t.Fatal("nil facts without an error")
		}
		out, err := yaml.Marshal(cf)
		if err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		cf2, err := DecodeSnapshotFile(out)
		if err != nil {
			t.Fatalf("re-encoded snapshot refused: %v\n--- input\n%q\n--- re-encoded\n%s", err, data, out)
		}
		if a, b := normalized(cf), normalized(cf2); !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip changed the facts\n--- input\n%q\n--- first\n%#v\n--- second\n%#v", data, a, b)
		}
		if out2, err := yaml.Marshal(cf2); err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("re-encoding is not stable (%v)\n--- first\n%s\n--- second\n%s", err, out, out2)
		}
	})
}

// normalized returns a deep copy of cf where what YAML cannot tell apart is made equal: empty and nil
// lists and maps inside items (the sections themselves keep nil = absent, empty = none), and times in
// UTC (a fixed zone decodes to a fresh *time.Location each time).
func normalized(cf *ClusterFacts) ClusterFacts {
	c := *cf
	tm := func(t time.Time) time.Time { return t.UTC() }
	strs := func(s []string) []string {
		if len(s) == 0 {
			return nil
		}
		return append([]string(nil), s...)
	}
	tags := func(m map[string]string) map[string]string {
		if len(m) == 0 {
			return nil
		}
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	if cf.Cluster != nil {
		cl := *cf.Cluster
		c.Cluster = &cl
	}
	if cf.AccessEntries != nil {
		es := []AccessEntry{}
		for _, e := range *cf.AccessEntries {
			e.KubernetesGroups, e.CreatedAt = strs(e.KubernetesGroups), tm(e.CreatedAt)
			es = append(es, e)
		}
		c.AccessEntries = &es
	}
	if cf.AWSAuth != nil {
		m := tags(*cf.AWSAuth)
		if m == nil {
			m = map[string]string{}
		}
		c.AWSAuth = &m
	}
	if cf.Roles != nil {
		rs := []Role{}
		for _, r := range *cf.Roles {
			r.CreateDate = tm(r.CreateDate)
			rs = append(rs, r)
		}
		c.Roles = &rs
	}
	if cf.InstanceProfiles != nil {
		ps := []InstanceProfile{}
		for _, p := range *cf.InstanceProfiles {
			p.Roles = strs(p.Roles)
			ps = append(ps, p)
		}
		c.InstanceProfiles = &ps
	}
	if cf.Images != nil {
		is := []Image{}
		for _, i := range *cf.Images {
			i.Tags = tags(i.Tags)
			is = append(is, i)
		}
		c.Images = &is
	}
	if cf.SSMParameters != nil {
		m := tags(*cf.SSMParameters)
		if m == nil {
			m = map[string]string{}
		}
		c.SSMParameters = &m
	}
	if cf.Subnets != nil {
		ss := []Subnet{}
		for _, s := range *cf.Subnets {
			s.Tags = tags(s.Tags)
			ss = append(ss, s)
		}
		c.Subnets = &ss
	}
	if cf.SecurityGroups != nil {
		gs := []SecurityGroup{}
		for _, g := range *cf.SecurityGroups {
			g.Tags = tags(g.Tags)
			gs = append(gs, g)
		}
		c.SecurityGroups = &gs
	}
	if cf.Simulations != nil {
		var sims []Simulation
		for _, sim := range *cf.Simulations {
			if len(sim.MissingContextValues) == 0 {
				sim.MissingContextValues = nil
			}
			if len(sim.Context) == 0 {
				sim.Context = nil
			} else {
				ctx := map[string][]string{}
				for k, v := range sim.Context {
					if len(v) == 0 {
						v = nil
					}
					ctx[k] = v
				}
				sim.Context = ctx
			}
			sims = append(sims, sim)
		}
		if sims == nil {
			sims = []Simulation{}
		}
		c.Simulations = &sims
	}
	// The network and capacity fields: an empty list or map is written as nothing and read back as
	// nil, which means the same (a group whose rules are both empty reads back as unknown, which makes
	// its answers "maybe", never a denial). The section pointers themselves stay as they are.
	v := reflect.ValueOf(&c).Elem()
	for _, name := range []string{"Cluster", "Subnets", "SecurityGroups", "VPC", "NATGateways", "VPCEndpoints", "KMSKeys", "ServiceQuotas", "CapacityReservations", "InstanceTypes"} {
		if f := v.FieldByName(name); !f.IsNil() {
			cp := reflect.New(f.Elem().Type())
			cp.Elem().Set(deepCopy(f.Elem()))
			emptyToNil(cp.Elem(), true)
			f.Set(cp)
		}
	}
	return c
}

// deepCopy copies slices, maps and pointers below v, so that emptyToNil changes the copy only.
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Elem().Type())
		p.Elem().Set(deepCopy(v.Elem()))
		return p
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			s.Index(i).Set(deepCopy(v.Index(i)))
		}
		return s
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			m.SetMapIndex(it.Key(), deepCopy(it.Value()))
		}
		return m
	case reflect.Struct:
		s := reflect.New(v.Type()).Elem()
		s.Set(v)
		for i := 0; i < v.NumField(); i++ {
			if s.Field(i).CanSet() {
				s.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
		return s
	}
	return v
}

// emptyToNil sets the empty lists and maps below v to nil; top keeps v itself (a section) as it is.
func emptyToNil(v reflect.Value, top bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			emptyToNil(v.Elem(), false)
		}
	case reflect.Slice:
		if v.Len() == 0 && !top {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		for i := 0; i < v.Len(); i++ {
			emptyToNil(v.Index(i), false)
		}
	case reflect.Map:
		if v.Len() == 0 && !top {
			v.Set(reflect.Zero(v.Type()))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).CanSet() {
				emptyToNil(v.Field(i), false)
			}
		}
	}
}

// TestNormalizedRoundTrip: the fuzz target's equality is not vacuous: it tells different facts apart,
// keeps absent and empty sections apart, and the example survives the round trip.
func TestNormalizedRoundTrip(t *testing.T) {
	example, err := os.ReadFile("testdata/cluster-facts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cf, err := DecodeSnapshotFile(example)
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(cf)
	if err != nil {
		t.Fatal(err)
	}
	cf2, err := DecodeSnapshotFile(out)
	if err != nil {
		t.Fatalf("re-encoded example refused: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(normalized(cf), normalized(cf2)) {
		t.Errorf("example changed in the round trip:\n%s", out)
	}
	changed := normalized(cf2)
	(*changed.Subnets)[0].Public = true
	if reflect.DeepEqual(normalized(cf), changed) {
		t.Error("normalized hides a changed field")
	}
	absent := *cf
	absent.Roles = nil
	if reflect.DeepEqual(normalized(cf), normalized(&absent)) {
		t.Error("normalized hides an absent section")
	}
	empty := *cf
	empty.Roles = &[]Role{}
	if reflect.DeepEqual(normalized(&absent), normalized(&empty)) {
		t.Error("normalized confuses an absent and an empty section")
	}
}
