package facts

import (
	"context"
	"sort"
	"strings"
	"sync"
)

// Recorder is a provider that passes every question to another and writes down the answers as a
// ClusterFacts snapshot: `facts export` runs the rules over a cluster's objects through a Recorder on
// the live provider, so the snapshot holds exactly what those rules need (the images and subnets the
// cluster's EC2NodeClasses select, not the whole account), and evaluating the same objects with it
// gives the same findings.
//
// A section is written when the provider knew it (Known, or an answer); it then holds what was asked
// and found: the roles asked about that exist, the images the terms selected. Evaluating other
// objects with it is not the same as asking the account.
type Recorder struct {
	p Provider

	mu       sync.Mutex
	cluster  *Cluster
	known    map[Fact]bool
	entries  map[string]AccessEntry
	awsAuth  map[string]string
	roles    map[string]Role
	profiles map[string]InstanceProfile
	images   map[string]Image
	ssm      map[string]string
	subnets  map[string]Subnet
	groups   map[string]SecurityGroup
}

var _ Provider = (*Recorder)(nil)

// NewRecorder records what p answers.
func NewRecorder(p Provider) *Recorder {
	return &Recorder{p: p, known: map[Fact]bool{}, entries: map[string]AccessEntry{}, roles: map[string]Role{},
		profiles: map[string]InstanceProfile{}, images: map[string]Image{}, ssm: map[string]string{},
		subnets: map[string]Subnet{}, groups: map[string]SecurityGroup{}}
}

// record runs add under the lock and marks f known.
func (r *Recorder) record(f Fact, add func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.known[f] = true
	if add != nil {
		add()
	}
}

// Known implements Provider.
func (r *Recorder) Known(ctx context.Context, f Fact) error {
	err := r.p.Known(ctx, f)
	if err == nil {
		switch f {
		case ClusterAuthenticationMode, ClusterVersion, ClusterVPCID:
			_, _ = r.Cluster(ctx)
		case AWSAuth:
			_, _ = r.AWSAuth(ctx)
		default:
			r.record(f, nil)
		}
	}
	return err
}

// Cluster implements Provider.
func (r *Recorder) Cluster(ctx context.Context) (*Cluster, error) {
	c, err := r.p.Cluster(ctx)
	if err == nil && c != nil {
		r.record("cluster", func() { cp := *c; r.cluster = &cp })
	}
	return c, err
}

// AccessEntry implements Provider.
func (r *Recorder) AccessEntry(ctx context.Context, role *Role) (*AccessEntry, error) {
	e, err := r.p.AccessEntry(ctx, role)
	if err == nil {
		r.record(AccessEntries, func() {
			if e != nil {
				r.entries[strings.ToLower(e.PrincipalARN)] = *e
			}
		})
	}
	return e, err
}

// AWSAuth implements Provider.
func (r *Recorder) AWSAuth(ctx context.Context) (*AWSAuthData, error) {
	a, err := r.p.AWSAuth(ctx)
	if err == nil {
		r.record(AWSAuth, func() {
			r.awsAuth = map[string]string{}
			if a != nil {
				for k, v := range a.Data {
					r.awsAuth[k] = v
				}
			}
		})
	}
	return a, err
}

// Role implements Provider.
func (r *Recorder) Role(ctx context.Context, name string) (*Role, error) {
	role, err := r.p.Role(ctx, name)
	if err == nil {
		r.record(Roles, func() {
			if role != nil {
				r.roles[strings.ToLower(role.Name)] = *role
			}
		})
	}
	return role, err
}

// InstanceProfile implements Provider.
func (r *Recorder) InstanceProfile(ctx context.Context, name string) (*InstanceProfile, error) {
	p, err := r.p.InstanceProfile(ctx, name)
	if err == nil {
		r.record(InstanceProfiles, func() {
			if p != nil {
				r.profiles[strings.ToLower(p.Name)] = *p
			}
		})
	}
	return p, err
}

// Images implements Provider.
func (r *Recorder) Images(ctx context.Context, t ImageTerm) ([]Image, error) {
	imgs, err := r.p.Images(ctx, t)
	if err == nil {
		r.record(Images, func() {
			for _, img := range imgs {
				r.images[img.ID] = img
			}
		})
	}
	return imgs, err
}

// SSMParameter implements Provider.
func (r *Recorder) SSMParameter(ctx context.Context, name string) (string, bool, error) {
	v, ok, err := r.p.SSMParameter(ctx, name)
	if err == nil {
		r.record(SSMParameters, func() {
			if ok {
				r.ssm[name] = v
			}
		})
	}
	return v, ok, err
}

// Subnets implements Provider.
func (r *Recorder) Subnets(ctx context.Context, t SelectorTerm) ([]Subnet, error) {
	sns, err := r.p.Subnets(ctx, t)
	if err == nil {
		r.record(Subnets, func() {
			for _, s := range sns {
				r.subnets[s.ID] = s
			}
		})
	}
	return sns, err
}

// SecurityGroups implements Provider.
func (r *Recorder) SecurityGroups(ctx context.Context, t SelectorTerm) ([]SecurityGroup, error) {
	gs, err := r.p.SecurityGroups(ctx, t)
	if err == nil {
		r.record(SecurityGroups, func() {
			for _, g := range gs {
				r.groups[g.ID] = g
			}
		})
	}
	return gs, err
}

// Snapshot returns what was recorded, in a stable order (by id or name).
func (r *Recorder) Snapshot() *ClusterFacts {
	r.mu.Lock()
	defer r.mu.Unlock()
	cf := &ClusterFacts{APIVersion: SnapshotAPIVersion, Kind: SnapshotKind, Cluster: r.cluster}
	if r.known[AccessEntries] && (r.cluster == nil || r.cluster.AuthenticationMode != ModeConfigMap || len(r.entries) > 0) {
		cf.AccessEntries = sortedValues(r.entries)
	}
	if r.known[AWSAuth] {
		a := r.awsAuth
		cf.AWSAuth = &a
	}
	if r.known[Roles] {
		cf.Roles = sortedValues(r.roles)
	}
	if r.known[InstanceProfiles] {
		cf.InstanceProfiles = sortedValues(r.profiles)
	}
	if r.known[Images] {
		cf.Images = sortedValues(r.images)
	}
	if r.known[SSMParameters] {
		m := map[string]string{}
		for k, v := range r.ssm {
			m[k] = v
		}
		cf.SSMParameters = &m
	}
	if r.known[Subnets] {
		cf.Subnets = sortedValues(r.subnets)
	}
	if r.known[SecurityGroups] {
		cf.SecurityGroups = sortedValues(r.groups)
	}
	return cf
}

// sortedValues returns a pointer to m's values ordered by key: an authoritative section, even empty.
func sortedValues[T any](m map[string]T) *[]T {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]T, 0, len(m))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return &out
}
