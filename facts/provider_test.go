package facts

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// mustDecode decodes a snapshot the test knows to be valid.
func mustDecode(t *testing.T, in string) *Snapshot {
	t.Helper()
	cf, err := DecodeSnapshotFile([]byte(in))
	if err != nil {
		t.Fatalf("snapshot refused: %v\n%s", err, in)
	}
	return NewSnapshot(cf)
}

var allFacts = []Fact{ClusterAuthenticationMode, ClusterVersion, ClusterVPCID, AccessEntries, AWSAuth, Roles,
	InstanceProfiles, Images, SSMParameters, Subnets, SecurityGroups, EBSDefaults, ClusterNodeClasses}

// networkFacts are the network and capacity facts (network_test.go tests them present).
var networkFacts = []Fact{ClusterNodePools, ClusterEndpointAccess, ClusterControlPlaneNetwork, ClusterIPFamily, VPC, NATGateways, VPCEndpoints, KMSKeys, ServiceQuotas,
	CapacityReservations, InstanceTypes}

// wantUnknown fails unless err is an *UnknownError for f with reason.
func wantUnknown(t *testing.T, what string, err error, f Fact, reason string) {
	t.Helper()
	var u *UnknownError
	if !errors.As(err, &u) || !IsUnknown(err) {
		t.Errorf("%s: error %v, want an *UnknownError", what, err)
		return
	}
	if u.Fact != f || u.Reason != reason {
		t.Errorf("%s: unknown %q because %q, want %q because %q", what, u.Fact, u.Reason, f, reason)
	}
}

// TestSnapshotKnownAbsent: a snapshot with no section knows nothing, and every method says why.
func TestSnapshotKnownAbsent(t *testing.T) {
	ctx := context.Background()
	s := mustDecode(t, lines(hdrAPI, hdrKind))
	for _, f := range append(allFacts, networkFacts...) {
		t.Run(string(f), func(t *testing.T) {
			wantUnknown(t, "Known", s.Known(ctx, f), f, "not in the facts snapshot")
		})
	}
	calls := []struct {
		name string
		f    Fact
		call func() error
	}{
		{"Cluster", "cluster", func() error { c, err := s.Cluster(ctx); return nilOr(c == nil, err) }},
		{"AccessEntry", AccessEntries, func() error {
			e, err := s.AccessEntry(ctx, &Role{Name: "r", ARN: "arn:aws:iam::111122223333:role/r"})
			return nilOr(e == nil, err)
		}},
		{"AWSAuth", AWSAuth, func() error { m, err := s.AWSAuth(ctx); return nilOr(m == nil, err) }},
		{"Role", Roles, func() error { r, err := s.Role(ctx, "r"); return nilOr(r == nil, err) }},
		{"InstanceProfile", InstanceProfiles, func() error { p, err := s.InstanceProfile(ctx, "p"); return nilOr(p == nil, err) }},
		{"Images", Images, func() error { i, err := s.Images(ctx, ImageTerm{Name: "*"}); return nilOr(i == nil, err) }},
		{"SSMParameter", SSMParameters, func() error { v, ok, err := s.SSMParameter(ctx, "/p"); return nilOr(v == "" && !ok, err) }},
		{"Subnets", Subnets, func() error { n, err := s.Subnets(ctx, SelectorTerm{ID: "s"}); return nilOr(n == nil, err) }},
		{"SecurityGroups", SecurityGroups, func() error { g, err := s.SecurityGroups(ctx, SelectorTerm{ID: "g"}); return nilOr(g == nil, err) }},
		{"EBSDefaults", EBSDefaults, func() error { d, err := s.EBSDefaults(ctx); return nilOr(d == nil, err) }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			wantUnknown(t, c.name, c.call(), c.f, "not in the facts snapshot")
		})
	}
}

// nilOr returns err, or a complaint when a method returned a value along with it.
func nilOr(zero bool, err error) error {
	if !zero {
		return errors.New("a value returned along with the error")
	}
	return err
}

// TestSnapshotKnownEmpty: a present section is authoritative even when empty: known, and "none".
func TestSnapshotKnownEmpty(t *testing.T) {
	ctx := context.Background()
	s := mustDecode(t, lines(hdrAPI, hdrKind,
		"cluster:",
		"  name: prod",
		"  accountID: \"111122223333\"",
		"  version: \"1.33\"",
		"  authenticationMode: API",
		"  vpcID: vpc-1",
		"accessEntries: []",
		"awsAuth: {}",
		"roles: []",
		"instanceProfiles: []",
		"images: []",
		"ssmParameters: {}",
		"subnets: []",
		"securityGroups: []",
		"ebsDefaults: {encryptionByDefault: true}"))
	for _, f := range allFacts {
		if f == ClusterNodeClasses {
			continue
		}
		t.Run("Known "+string(f), func(t *testing.T) {
			if err := s.Known(ctx, f); err != nil {
				t.Errorf("present section unknown: %v", err)
			}
		})
	}
	t.Run("answers", func(t *testing.T) {
		if r, err := s.Role(ctx, "KarpenterNodeRole"); r != nil || err != nil {
			t.Errorf("Role with roles: [] = %v, %v; want nil, nil (does not exist)", r, err)
		}
		if p, err := s.InstanceProfile(ctx, "p"); p != nil || err != nil {
			t.Errorf("InstanceProfile = %v, %v; want nil, nil", p, err)
		}
		if m, err := s.AWSAuth(ctx); m != nil || err != nil {
			t.Errorf("AWSAuth with awsAuth: {} = %v, %v; want nil, nil (no ConfigMap)", m, err)
		}
		if e, err := s.AccessEntry(ctx, &Role{Name: "r", ARN: "arn:aws:iam::111122223333:role/r"}); e != nil || err != nil {
			t.Errorf("AccessEntry = %v, %v; want none", e, err)
		}
		if i, err := s.Images(ctx, ImageTerm{Name: "*"}); len(i) != 0 || err != nil {
			t.Errorf("Images = %v, %v; want none", i, err)
		}
		if v, ok, err := s.SSMParameter(ctx, "/aws/service/x"); v != "" || ok || err != nil {
			t.Errorf("SSMParameter = %q, %v, %v; want not found", v, ok, err)
		}
		if n, err := s.Subnets(ctx, SelectorTerm{Tags: map[string]string{"a": "*"}}); len(n) != 0 || err != nil {
			t.Errorf("Subnets = %v, %v; want none", n, err)
		}
		if g, err := s.SecurityGroups(ctx, SelectorTerm{Name: "*"}); len(g) != 0 || err != nil {
			t.Errorf("SecurityGroups = %v, %v; want none", g, err)
		}
		if d, err := s.EBSDefaults(ctx); err != nil || d == nil || !d.EncryptionByDefault || d.KMSKeyID != "" {
			t.Errorf("EBSDefaults = %+v, %v; want encryption by default, key not said", d, err)
		}
		if c, err := s.Cluster(ctx); err != nil || c.Name != "prod" || !c.HonoursAccessEntries() || c.HonoursAWSAuth() || c.Minor() != 33 {
			t.Errorf("Cluster = %+v, %v", c, err)
		}
	})
}

// TestSnapshotKnownCluster: the cluster facts are known one by one; access entries need no section
// in mode CONFIG_MAP, where EKS does not read them.
func TestSnapshotKnownCluster(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		cluster []string
		known   map[Fact]bool
	}{
		{"no authenticationMode", []string{"cluster:", "  name: prod", "  version: \"1.33\""},
			map[Fact]bool{ClusterAuthenticationMode: false, ClusterVersion: true, ClusterVPCID: false, AccessEntries: false}},
		{"mode CONFIG_MAP without accessEntries", []string{"cluster:", "  authenticationMode: CONFIG_MAP", "  vpcID: vpc-1"},
			map[Fact]bool{ClusterAuthenticationMode: true, ClusterVersion: false, ClusterVPCID: true, AccessEntries: true}},
		{"mode API without accessEntries", []string{"cluster:", "  authenticationMode: API"},
			map[Fact]bool{ClusterAuthenticationMode: true, AccessEntries: false}},
		{"mode API_AND_CONFIG_MAP without accessEntries", []string{"cluster:", "  authenticationMode: API_AND_CONFIG_MAP"},
			map[Fact]bool{AccessEntries: false}},
		{"empty cluster", []string{"cluster: {}"},
			map[Fact]bool{ClusterAuthenticationMode: false, ClusterVersion: false, ClusterVPCID: false, AccessEntries: false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustDecode(t, lines(append([]string{hdrAPI, hdrKind}, tc.cluster...)...))
			for f, known := range tc.known {
				err := s.Known(ctx, f)
				switch {
				case known && err != nil:
					t.Errorf("%s unknown: %v", f, err)
				case !known:
					wantUnknown(t, string(f), err, f, "not in the facts snapshot")
				}
			}
			if tc.known[AccessEntries] {
				if e, err := s.AccessEntry(ctx, &Role{Name: "r", ARN: "arn:aws:iam::111122223333:role/r"}); e != nil || err != nil {
					t.Errorf("AccessEntry = %v, %v; want none, known", e, err)
				}
			}
			if c, err := s.Cluster(ctx); c == nil || err != nil {
				t.Errorf("Cluster = %v, %v; want the cluster", c, err)
			}
		})
	}
}

// TestSnapshotRoleAndProfile: IAM names are found case-insensitively, as IAM compares them.
func TestSnapshotRoleAndProfile(t *testing.T) {
	ctx := context.Background()
	s := mustDecode(t, lines(hdrAPI, hdrKind,
		"roles:",
		"  - name: KarpenterNodeRole-prod",
		"    arn: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod",
		"  - name: Other",
		"    arn: arn:aws:iam::111122223333:role/x/Other",
		"instanceProfiles:",
		"  - name: NodeProfile",
		"    roles: [KarpenterNodeRole-prod]"))
	cases := []struct {
		name, lookup, want string
	}{
		{"exact", "KarpenterNodeRole-prod", "KarpenterNodeRole-prod"},
		{"other case", "karpenternoderole-PROD", "KarpenterNodeRole-prod"},
		{"second", "Other", "Other"},
		{"missing", "Missing", ""},
		{"prefix is not a match", "KarpenterNodeRole", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s.Role(ctx, tc.lookup)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && r != nil:
				t.Errorf("Role(%q) = %+v, want none", tc.lookup, r)
			case tc.want != "" && (r == nil || r.Name != tc.want):
				t.Errorf("Role(%q) = %+v, want %s", tc.lookup, r, tc.want)
			}
		})
	}
	if r, _ := s.Role(ctx, "Other"); r == nil || r.PathlessARN() != "arn:aws:iam::111122223333:role/Other" {
		t.Errorf("PathlessARN of a role with a path: %+v", r)
	}
	if p, err := s.InstanceProfile(ctx, "nodeprofile"); err != nil || p == nil || p.Name != "NodeProfile" || len(p.Roles) != 1 {
		t.Errorf("InstanceProfile(nodeprofile) = %+v, %v", p, err)
	}
	if p, err := s.InstanceProfile(ctx, "nope"); err != nil || p != nil {
		t.Errorf("InstanceProfile(nope) = %+v, %v; want nil, nil", p, err)
	}
}

// TestWithInputAWSAuth: an aws-auth ConfigMap of the input fills awsAuth only when the provider does
// not know it; one with entries EKS drops is known all the same (EKS keeps the rest), and only an
// unreadable one (a data value that is not a string) makes awsAuth unknown; the original provider is
// never changed.
func TestWithInputAWSAuth(t *testing.T) {
	ctx := context.Background()
	input := map[string]string{"mapRoles": "- rolearn: arn:aws:iam::111122223333:role/input\n  username: system:node:{{EC2PrivateDNSName}}\n"}
	dropped := map[string]string{"mapRoles": "- username: admin\n" + input["mapRoles"]}
	cases := []struct {
		name       string
		snapshot   string
		data       map[string]string
		unreadable bool
		want       map[string]string // when known
		unknown    string            // reason, when unknown
	}{
		{"fills an absent awsAuth", "", input, false, input, ""},
		{"an empty ConfigMap is a known empty aws-auth", "", map[string]string{}, false, nil, ""},
		{"nil data is a known empty aws-auth", "", nil, false, nil, ""},
		{"an unreadable input makes it unknown", "", input, true, nil, "not a string"},
		{"an input with entries EKS drops is known", "", dropped, false, dropped, ""},
		{"the snapshot's awsAuth wins", "awsAuth:\n  mapUsers: \"[]\"\n", input, false, map[string]string{"mapUsers": "[]"}, ""},
		{"the snapshot's empty awsAuth wins", "awsAuth: {}\n", input, false, nil, ""},
		{"the snapshot's awsAuth wins over an unreadable input", "awsAuth:\n  mapUsers: \"[]\"\n", input, true, map[string]string{"mapUsers": "[]"}, ""},
		{"the snapshot's awsAuth wins even with entries EKS drops", "awsAuth:\n  mapRoles: \"- rolearn: arn:aws:iam::111122223333:role/x\"\n", input, false,
			map[string]string{"mapRoles": "- rolearn: arn:aws:iam::111122223333:role/x"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := mustDecode(t, lines(hdrAPI, hdrKind)+tc.snapshot)
			before := base.Known(ctx, AWSAuth)
			s := WithInputAWSAuth(base, tc.data, tc.unreadable)
			got, err := s.AWSAuth(ctx)
			if tc.unknown != "" {
				var u *UnknownError
				if !errors.As(err, &u) || u.Fact != AWSAuth || !strings.Contains(u.Reason, tc.unknown) {
					t.Errorf("AWSAuth = %v, %v; want unknown because %s", got, err, tc.unknown)
				}
				if kerr := s.Known(ctx, AWSAuth); !IsUnknown(kerr) || !strings.Contains(kerr.Error(), tc.unknown) {
					t.Errorf("Known(awsAuth) = %v; want unknown because %s", kerr, tc.unknown)
				}
			} else {
				var data map[string]string
				if got != nil {
					data = got.Data
				}
				if err != nil || len(data) != len(tc.want) {
					t.Fatalf("AWSAuth = %v, %v; want %v", got, err, tc.want)
				}
				for k, v := range tc.want {
					if data[k] != v {
						t.Errorf("AWSAuth[%s] = %q, want %q", k, data[k], v)
					}
				}
				if err := s.Known(ctx, AWSAuth); err != nil {
					t.Errorf("Known(awsAuth) = %v", err)
				}
			}
			if after := base.Known(ctx, AWSAuth); (before == nil) != (after == nil) {
				t.Errorf("WithInputAWSAuth changed the original snapshot: known %v before, %v after", before, after)
			}
		})
	}
}

// TestNone: the provider without facts knows nothing and says so.
func TestNone(t *testing.T) {
	ctx := context.Background()
	var p Provider = None{}
	for _, f := range allFacts {
		wantUnknown(t, "Known "+string(f), p.Known(ctx, f), f, "no facts")
	}
	_, err := p.Cluster(ctx)
	wantUnknown(t, "Cluster", err, "cluster", "no facts")
	_, err = p.AccessEntry(ctx, &Role{Name: "r"})
	wantUnknown(t, "AccessEntry", err, AccessEntries, "no facts")
	_, err = p.AWSAuth(ctx)
	wantUnknown(t, "AWSAuth", err, AWSAuth, "no facts")
	_, err = p.Role(ctx, "r")
	wantUnknown(t, "Role", err, Roles, "no facts")
	_, err = p.InstanceProfile(ctx, "p")
	wantUnknown(t, "InstanceProfile", err, InstanceProfiles, "no facts")
	_, err = p.Images(ctx, ImageTerm{})
	wantUnknown(t, "Images", err, Images, "no facts")
	_, _, err = p.SSMParameter(ctx, "/p")
	wantUnknown(t, "SSMParameter", err, SSMParameters, "no facts")
	_, err = p.Subnets(ctx, SelectorTerm{})
	wantUnknown(t, "Subnets", err, Subnets, "no facts")
	_, err = p.SecurityGroups(ctx, SelectorTerm{})
	wantUnknown(t, "SecurityGroups", err, SecurityGroups, "no facts")
	_, err = p.EBSDefaults(ctx)
	wantUnknown(t, "EBSDefaults", err, EBSDefaults, "no facts")
	if IsUnknown(errors.New("timeout")) || IsUnknown(nil) {
		t.Error("IsUnknown is true for an error that is not an UnknownError")
	}
	if e := Unknown(Roles, "AWS timeout").Error(); e != "AWS timeout: roles" {
		t.Errorf("UnknownError text %q", e)
	}
}

var _ Provider = (*Snapshot)(nil)

// TestAccessEntryOfRole: an entry belongs to a role when its principal is the role's ARN with or
// without the IAM path, in any case; other entries are not the role's.
func TestAccessEntryOfRole(t *testing.T) {
	ctx := context.Background()
	s := mustDecode(t, lines(hdrAPI, hdrKind,
		"accessEntries:",
		"  - principalArn: arn:aws:iam::111122223333:role/team/Pathed",
		"    type: EC2_LINUX",
		"  - principalArn: arn:aws:iam::111122223333:role/pathless",
		"    type: STANDARD",
		"  - principalArn: arn:aws:iam::111122223333:role/Other",
		"    type: EC2_LINUX",
	))
	cases := []struct {
		role Role
		want string // the entry's type, "" for none
	}{
		{Role{Name: "Pathed", Path: "/team/", ARN: "arn:aws:iam::111122223333:role/team/Pathed"}, "EC2_LINUX"},
		{Role{Name: "Pathless", Path: "/x/", ARN: "arn:aws:iam::111122223333:role/x/Pathless"}, "STANDARD"},
		{Role{Name: "Missing", Path: "/", ARN: "arn:aws:iam::111122223333:role/Missing"}, ""},
		{Role{Name: "Pathed", Path: "/", ARN: "arn:aws:iam::444455556666:role/Pathed"}, ""}, // another account
	}
	for _, tc := range cases {
		e, err := s.AccessEntry(ctx, &tc.role)
		got := ""
		if e != nil {
			got = e.Type
		}
		if err != nil || got != tc.want {
			t.Errorf("AccessEntry(%s) = %q, %v; want %q", tc.role.ARN, got, err, tc.want)
		}
	}
}

// TestSnapshotAWSAuthAsEKSKeepsIt: a snapshot's awsAuth is what EKS keeps of it: an entry EKS drops
// (no rolearn) is not in the mappings, one it keeps without username is, and neither makes aws-auth
// unknown, since EKS never ignores the ConfigMap as a whole.
func TestSnapshotAWSAuthAsEKSKeepsIt(t *testing.T) {
	ctx := context.Background()
	s := mustDecode(t, lines(hdrAPI, hdrKind, "awsAuth:", "  mapRoles: |",
		"    - username: admin",
		"    - rolearn: arn:aws:iam::111122223333:role/nameless",
		"    - rolearn: arn:aws:iam::111122223333:role/node",
		"      username: system:node:{{EC2PrivateDNSName}}",
		"      groups: [system:bootstrappers, system:nodes]",
		`  mapUsers: "- userarn: ["`))
	if err := s.Known(ctx, AWSAuth); err != nil {
		t.Fatalf("Known(awsAuth) = %v; want known", err)
	}
	a, err := s.AWSAuth(ctx)
	if err != nil || a == nil {
		t.Fatalf("AWSAuth = %v, %v; want what EKS keeps", a, err)
	}
	if n := len(a.Config.MapRoles); n != 2 || len(a.Config.MapUsers) != 0 {
		t.Errorf("mappings %+v, users %+v; want the two entries with a rolearn and no user", a.Config.MapRoles, a.Config.MapUsers)
	}
	if m := a.RoleMapping("arn:aws:iam::111122223333:role/node"); m == nil || m.Username != "system:node:{{EC2PrivateDNSName}}" || len(m.Groups) != 2 {
		t.Errorf("RoleMapping(node) = %+v; want the node entry", m)
	}
	if m := a.RoleMapping("arn:aws:iam::111122223333:role/nameless"); m == nil || m.Username != "" {
		t.Errorf("RoleMapping(nameless) = %+v; want the entry EKS keeps with the empty username", m)
	}
}

// TestClusterMinor: the minor version is read from "1.N" (what EKS reports); anything else is -1.
func TestClusterMinor(t *testing.T) {
	for v, want := range map[string]int{"1.33": 33, "1.9": 9, "1.34.2": 34, "2.0": -1, "1": -1, "": -1, "1.x": -1, "v1.33": -1} {
		if got := (&Cluster{Version: v}).Minor(); got != want {
			t.Errorf("Minor(%q) = %d, want %d", v, got, want)
		}
	}
}

// TestRecorderEBSDefaults: the recorder writes the EBS defaults once asked, by Known (as `facts
// export` asks every section) or by a rule, and leaves them out, as a gap, when they are unknown.
func TestRecorderEBSDefaults(t *testing.T) {
	ctx := context.Background()
	known := mustDecode(t, lines(hdrAPI, hdrKind, "ebsDefaults:", "  encryptionByDefault: true",
		"  kmsKeyID: arn:aws:kms:us-east-1:111122223333:alias/aws/ebs"))
	for name, ask := range map[string]func(*Recorder) error{
		"Known":       func(r *Recorder) error { return r.Known(ctx, EBSDefaults) },
		"EBSDefaults": func(r *Recorder) error { _, err := r.EBSDefaults(ctx); return err },
	} {
		t.Run(name, func(t *testing.T) {
			rec := NewRecorder(known)
			if err := ask(rec); err != nil {
				t.Fatal(err)
			}
			got := rec.Snapshot().EBSDefaults
			if got == nil || *got != (EBSEncryption{EncryptionByDefault: true, KMSKeyID: "arn:aws:kms:us-east-1:111122223333:alias/aws/ebs"}) {
				t.Errorf("recorded ebsDefaults %+v", got)
			}
			if gaps := rec.Gaps(); len(gaps) != 0 {
				t.Errorf("gaps %+v", gaps)
			}
		})
	}
	rec := NewRecorder(mustDecode(t, lines(hdrAPI, hdrKind)))
	wantUnknown(t, "Known", rec.Known(ctx, EBSDefaults), EBSDefaults, "not in the facts snapshot")
	if d := rec.Snapshot().EBSDefaults; d != nil {
		t.Errorf("unknown ebsDefaults recorded as %+v", d)
	}
	if gaps := rec.Gaps(); len(gaps) != 1 || gaps[0].Section != EBSDefaults || gaps[0].Partial || strings.Join(gaps[0].Reasons, "; ") != "not in the facts snapshot" {
		t.Errorf("gaps %+v, want ebsDefaults unknown", gaps)
	}
}
