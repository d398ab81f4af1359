package facts

import (
	"context"
	"errors"
	"maps"
	"slices"
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
// A section is written when the provider knew it (Known, or an answer) and no lookup in it failed; it
// then holds what was asked and found: the roles asked about that exist, the images the terms
// selected. A section with a failed lookup is left out (unknown) rather than written without the
// answer it could not get, which a rule would read as "does not exist"; Gaps says which and why.
// Evaluating other objects with the snapshot is not the same as asking the account.
type Recorder struct {
	p Provider

	mu        sync.Mutex
	cluster   *Cluster
	known     map[Fact]bool
	failed    map[Fact][]string
	transient map[Fact]bool
	entries   map[string]AccessEntry
	awsAuth   map[string]string
	roles     map[string]Role
	profiles  map[string]InstanceProfile
	images    map[string]Image
	ssm       map[string]string
	subnets   map[string]Subnet
	groups    map[string]SecurityGroup
	ebs       *EBSEncryption
	pia       *int
	ctrl      *ControllerRole
	cni       *CNI
	sims      map[string]Simulation
	vpc       *VPCAttributes
	nats      []NATGateway
	endpoints []VPCEndpoint
	kmsKeys   map[string]KMSKey
	quotas    map[string]int
	reserved  []CapacityReservation
	types     []InstanceType
}

var _ Provider = (*Recorder)(nil)

// NewRecorder records what p answers.
func NewRecorder(p Provider) *Recorder {
	return &Recorder{p: p, known: map[Fact]bool{}, failed: map[Fact][]string{}, transient: map[Fact]bool{}, entries: map[string]AccessEntry{}, roles: map[string]Role{},
		profiles: map[string]InstanceProfile{}, images: map[string]Image{}, ssm: map[string]string{},
		subnets: map[string]Subnet{}, groups: map[string]SecurityGroup{}, sims: map[string]Simulation{},
		kmsKeys: map[string]KMSKey{}, quotas: map[string]int{}}
}

// AskAhead implements AheadAsker for the provider it records: the answers of a run on what is at hand
// are recorded like any other (the recorder is safe for concurrent use).
func (r *Recorder) AskAhead() bool { return AsksAhead(r.p) }

// keep writes down an answer about section f: on success it marks f known and runs add under the
// lock; on failure it records why (see fail).
func (r *Recorder) keep(f Fact, err error, add func()) {
	if err != nil {
		r.fail(f, err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.known[f] = true
	if add != nil {
		add()
	}
}

// fail writes down that a question about section f had no answer, and why. An answer not at hand
// (AtHandOnly) is no failure: the question is asked again.
func (r *Recorder) fail(f Fact, err error) {
	if errors.Is(err, ErrNotAtHand) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var t interface{ Transient() bool }
	if errors.As(err, &t) && t.Transient() {
		r.transient[f] = true
	}
	reason := Reason(err)
	if !slices.Contains(r.failed[f], reason) {
		r.failed[f] = append(r.failed[f], reason)
	}
}

// Known implements Provider.
func (r *Recorder) Known(ctx context.Context, f Fact) error {
	err := r.p.Known(ctx, f)
	switch f {
	case ClusterAuthenticationMode, ClusterVersion, ClusterVPCID:
		if err != nil {
			r.fail(SectionCluster, err)
		} else {
			_, _ = r.Cluster(ctx)
		}
	case AWSAuth:
		if err != nil {
			r.fail(f, err)
		} else {
			_, _ = r.AWSAuth(ctx)
		}
	case ClusterEndpointAccess, ClusterControlPlaneNetwork, ClusterIPFamily:
		if err != nil {
			r.fail(SectionCluster, err)
		} else {
			_, _ = r.Cluster(ctx)
		}
	case EBSDefaults, ClusterPodIdentityAssociations, KarpenterController, VPCCNI, VPC, NATGateways, VPCEndpoints, CapacityReservations, InstanceTypes:
		// Knowing them is having them: one answer is the whole section.
		if err != nil {
			r.fail(f, err)
			break
		}
		switch f {
		case EBSDefaults:
			_, _ = r.EBSDefaults(ctx)
		case ClusterPodIdentityAssociations:
			_, _ = r.PodIdentityAssociations(ctx)
		case KarpenterController:
			_, _ = r.KarpenterController(ctx)
		case VPCCNI:
			_, _ = r.VPCCNI(ctx)
		case VPC:
			_, _ = r.VPC(ctx)
		case NATGateways:
			_, _ = r.NATGateways(ctx)
		case VPCEndpoints:
			_, _ = r.VPCEndpoints(ctx)
		case CapacityReservations:
			_, _ = r.CapacityReservations(ctx)
		case InstanceTypes:
			_, _ = r.InstanceTypes(ctx)
		}
	default:
		r.keep(f, err, nil)
	}
	return err
}

// Cluster implements Provider.
func (r *Recorder) Cluster(ctx context.Context) (*Cluster, error) {
	c, err := r.p.Cluster(ctx)
	r.keep(SectionCluster, err, func() {
		if c != nil {
			cp := *c
			r.cluster = &cp
		}
	})
	return c, err
}

// AccessEntry implements Provider.
func (r *Recorder) AccessEntry(ctx context.Context, role *Role) (*AccessEntry, error) {
	e, err := r.p.AccessEntry(ctx, role)
	r.keep(AccessEntries, err, func() {
		if e != nil {
			r.entries[strings.ToLower(e.PrincipalARN)] = *e
		}
	})
	return e, err
}

// AWSAuth implements Provider.
func (r *Recorder) AWSAuth(ctx context.Context) (*AWSAuthData, error) {
	a, err := r.p.AWSAuth(ctx)
	r.keep(AWSAuth, err, func() {
		r.awsAuth = map[string]string{}
		if a != nil {
			maps.Copy(r.awsAuth, a.Data)
		}
	})
	return a, err
}

// Role implements Provider.
func (r *Recorder) Role(ctx context.Context, name string) (*Role, error) {
	role, err := r.p.Role(ctx, name)
	r.keep(Roles, err, func() {
		if role != nil {
			r.roles[strings.ToLower(role.Name)] = *role
		}
	})
	return role, err
}

// InstanceProfile implements Provider.
func (r *Recorder) InstanceProfile(ctx context.Context, name string) (*InstanceProfile, error) {
	p, err := r.p.InstanceProfile(ctx, name)
	r.keep(InstanceProfiles, err, func() {
		if p != nil {
			r.profiles[strings.ToLower(p.Name)] = *p
		}
	})
	return p, err
}

// Images implements Provider. An ssmParameter term is resolved through the recorder, so that the
// snapshot holds the parameter the snapshot provider will resolve it with.
func (r *Recorder) Images(ctx context.Context, t ImageTerm) ([]Image, error) {
	t, ok, err := ResolveImageTerm(ctx, r, t)
	if err != nil || !ok {
		return nil, err
	}
	imgs, err := r.p.Images(ctx, t)
	r.keep(Images, err, func() {
		for _, img := range imgs {
			r.images[img.ID] = img
		}
	})
	return imgs, err
}

// SSMParameter implements Provider.
func (r *Recorder) SSMParameter(ctx context.Context, name string) (string, bool, error) {
	v, ok, err := r.p.SSMParameter(ctx, name)
	r.keep(SSMParameters, err, func() {
		if ok {
			r.ssm[name] = v
		}
	})
	return v, ok, err
}

// Subnets implements Provider.
func (r *Recorder) Subnets(ctx context.Context, t SelectorTerm) ([]Subnet, error) {
	sns, err := r.p.Subnets(ctx, t)
	r.keep(Subnets, err, func() {
		for _, s := range sns {
			r.subnets[s.ID] = s
		}
	})
	return sns, err
}

// SecurityGroups implements Provider.
func (r *Recorder) SecurityGroups(ctx context.Context, t SelectorTerm) ([]SecurityGroup, error) {
	gs, err := r.p.SecurityGroups(ctx, t)
	r.keep(SecurityGroups, err, func() {
		for _, g := range gs {
			r.groups[g.ID] = g
		}
	})
	return gs, err
}

// EBSDefaults implements Provider.
func (r *Recorder) EBSDefaults(ctx context.Context) (*EBSEncryption, error) {
	d, err := r.p.EBSDefaults(ctx)
	r.keep(EBSDefaults, err, func() {
		if d != nil {
			cp := *d
			r.ebs = &cp
		}
	})
	return d, err
}

// PodIdentityAssociations implements Provider; the count is written into the cluster section.
func (r *Recorder) PodIdentityAssociations(ctx context.Context) (int, error) {
	n, err := r.p.PodIdentityAssociations(ctx)
	r.keep(ClusterPodIdentityAssociations, err, func() { r.pia = &n })
	return n, err
}

// KarpenterController implements Provider.
func (r *Recorder) KarpenterController(ctx context.Context) (*ControllerRole, error) {
	kc, err := r.p.KarpenterController(ctx)
	r.keep(KarpenterController, err, func() {
		if kc != nil {
			cp := *kc
			r.ctrl = &cp
		}
	})
	return kc, err
}

// VPCCNI implements Provider.
func (r *Recorder) VPCCNI(ctx context.Context) (*CNI, error) {
	cni, err := r.p.VPCCNI(ctx)
	r.keep(VPCCNI, err, func() {
		if cni != nil {
			cp := *cni
			r.cni = &cp
		}
	})
	return cni, err
}

// Simulate implements Provider. Simulations are a lookup section: the answers are written down and a
// failed row only leaves its questions out (they stay unknown), so the section is kept.
func (r *Recorder) Simulate(ctx context.Context, row SimulationRow) ([]Simulation, error) {
	sims, err := r.p.Simulate(ctx, row)
	r.keep(Simulations, err, func() {
		for _, s := range sims {
			if s.Decision != "" {
				r.sims[s.Question().Key()] = s
			}
		}
	})
	return sims, err
}

// VPC implements Provider.
func (r *Recorder) VPC(ctx context.Context) (*VPCAttributes, error) {
	v, err := r.p.VPC(ctx)
	r.keep(VPC, err, func() {
		if v != nil {
			cp := *v
			r.vpc = &cp
		}
	})
	return v, err
}

// NATGateways implements Provider.
func (r *Recorder) NATGateways(ctx context.Context) ([]NATGateway, error) {
	ns, err := r.p.NATGateways(ctx)
	r.keep(NATGateways, err, func() { r.nats = slices.Clone(ns) })
	return ns, err
}

// VPCEndpoints implements Provider.
func (r *Recorder) VPCEndpoints(ctx context.Context) ([]VPCEndpoint, error) {
	es, err := r.p.VPCEndpoints(ctx)
	r.keep(VPCEndpoints, err, func() { r.endpoints = slices.Clone(es) })
	return es, err
}

// KMSKey implements Provider. kmsKeys is a lookup section: a failed question only leaves its
// reference out.
func (r *Recorder) KMSKey(ctx context.Context, ref string) (*KMSKey, error) {
	k, err := r.p.KMSKey(ctx, ref)
	r.keep(KMSKeys, err, func() {
		if k != nil {
			r.kmsKeys[ref] = *k
		}
	})
	return k, err
}

// ServiceQuota implements Provider; serviceQuotas is a lookup section, like kmsKeys.
func (r *Recorder) ServiceQuota(ctx context.Context, code string) (int, error) {
	v, err := r.p.ServiceQuota(ctx, code)
	r.keep(ServiceQuotas, err, func() { r.quotas[code] = v })
	return v, err
}

// CapacityReservations implements Provider.
func (r *Recorder) CapacityReservations(ctx context.Context) ([]CapacityReservation, error) {
	cs, err := r.p.CapacityReservations(ctx)
	r.keep(CapacityReservations, err, func() { r.reserved = slices.Clone(cs) })
	return cs, err
}

// InstanceTypes implements Provider.
func (r *Recorder) InstanceTypes(ctx context.Context) ([]InstanceType, error) {
	ts, err := r.p.InstanceTypes(ctx)
	r.keep(InstanceTypes, err, func() { r.types = ts }) // shared and never modified
	return ts, err
}

// SectionCluster is the recorder's name for the cluster section (in Gaps), which answers the three
// cluster facts.
const SectionCluster Fact = "cluster"

// Gap is a snapshot section the recorder could not write whole.
type Gap struct {
	// Section is the snapshot section: cluster, accessEntries, roles, images, ...
	Section Fact
	// Partial is true when the provider knew the section but some lookups in it failed: the
	// section is left out, and a snapshot without it knows less than the account could tell.
	// False means the provider could not tell the section at all (a denied permission, no
	// access to aws-auth).
	Partial bool
	// Transient is true when a failure may not happen again (throttling, a timeout, a server
	// error): asking again later may fill the section.
	Transient bool
	// Reasons are the distinct errors, in the order they happened.
	Reasons []string
}

// Gaps returns the sections left out of the snapshot for want of an answer, by section name.
func (r *Recorder) Gaps() []Gap {
	r.mu.Lock()
	defer r.mu.Unlock()
	var gaps []Gap
	for f, reasons := range r.failed {
		if f == SectionCluster && r.cluster != nil {
			continue // one answer is the whole section
		}
		gaps = append(gaps, Gap{Section: f, Partial: r.known[f], Transient: r.transient[f], Reasons: slices.Clone(reasons)})
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].Section < gaps[j].Section })
	return gaps
}

// Snapshot returns what was recorded, in a stable order (by id or name). Sections with a failed
// lookup are left out (see Gaps).
func (r *Recorder) Snapshot() *ClusterFacts {
	r.mu.Lock()
	defer r.mu.Unlock()
	whole := func(f Fact) bool { return r.known[f] && len(r.failed[f]) == 0 }
	cf := &ClusterFacts{APIVersion: SnapshotAPIVersion, Kind: SnapshotKind, Cluster: r.cluster}
	if r.cluster != nil && whole(ClusterPodIdentityAssociations) && r.pia != nil {
		c := *r.cluster
		n := *r.pia
		c.PodIdentityAssociations = &n
		cf.Cluster = &c
	}
	if whole(KarpenterController) && r.ctrl != nil {
		kc := *r.ctrl
		cf.KarpenterController = &kc
	}
	if whole(VPCCNI) && r.cni != nil {
		cni := *r.cni
		cf.VPCCNI = &cni
	}
	if r.known[Simulations] {
		sims := *sortedValues(r.sims)
		cf.Simulations = &sims
	}
	if whole(AccessEntries) && (r.cluster == nil || r.cluster.AuthenticationMode != ModeConfigMap || len(r.entries) > 0) {
		cf.AccessEntries = sortedValues(r.entries)
	}
	if whole(AWSAuth) {
		a := r.awsAuth
		cf.AWSAuth = &a
	}
	if whole(Roles) {
		cf.Roles = sortedValues(r.roles)
	}
	if whole(InstanceProfiles) {
		cf.InstanceProfiles = sortedValues(r.profiles)
	}
	if whole(Images) {
		cf.Images = sortedValues(r.images)
	}
	if whole(SSMParameters) {
		m := maps.Clone(r.ssm)
		cf.SSMParameters = &m
	}
	if whole(Subnets) {
		cf.Subnets = sortedValues(r.subnets)
	}
	if whole(SecurityGroups) {
		cf.SecurityGroups = sortedValues(r.groups)
	}
	if whole(EBSDefaults) && r.ebs != nil {
		d := *r.ebs
		cf.EBSDefaults = &d
	}
	if whole(VPC) && r.vpc != nil {
		v := *r.vpc
		cf.VPC = &v
	}
	if whole(NATGateways) {
		ns := nonNil(r.nats)
		cf.NATGateways = &ns
	}
	if whole(VPCEndpoints) {
		es := nonNil(r.endpoints)
		cf.VPCEndpoints = &es
	}
	if r.known[KMSKeys] {
		cf.KMSKeys = sortedValues(r.kmsKeys)
	}
	if r.known[ServiceQuotas] {
		q := maps.Clone(r.quotas)
		cf.ServiceQuotas = &q
	}
	if whole(CapacityReservations) {
		cs := nonNil(r.reserved)
		cf.CapacityReservations = &cs
	}
	if whole(InstanceTypes) {
		ts := nonNil(r.types)
		cf.InstanceTypes = &ts
	}
	return cf
}

// sortedValues returns a pointer to m's values ordered by key: an authoritative section, even empty.
func sortedValues[T any](m map[string]T) *[]T {
	out := make([]T, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return &out
}

// nonNil returns s, or an empty slice for nil: a section that is known and empty.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
