package scheduling

import "math/bits"

// Env is what the cluster and the NodePool's EC2NodeClass contribute to an instance type's labels.
type Env struct {
	// Region is cluster.region, the value of topology.kubernetes.io/region ("" leaves it not computable).
	Region string
	// Architectures are the architectures the class's AMIs serve, as Kubernetes names them (amd64,
	// arm64). A type of another architecture is unusable.
	Architectures []string
	// AMIFamily is the class's family as Karpenter names it (AL2023, AL2, Bottlerocket, Windows2019,
	// Windows2022, Windows2025, Custom): AL2023 excludes a1 types, Windows sets the OS and build.
	AMIFamily string
	// Zones are the zones of the class's subnets, each with its zone ID ("" when unknown).
	Zones []Zone
	// Reservations maps an instance type to the zones where the class matched an active capacity
	// reservation of it: the type has capacity type reserved when one of them is a usable zone.
	Reservations map[string][]string
}

// Zone is an availability zone of the class's subnets.
type Zone struct {
	Name string
	ID   string
}

// maxZones is how many subnet zones an Env may have: zone sets are bit masks. No region has more
// than a few dozen zones, local zones included.
const maxZones = 64

// prepared is an Env made cheap to ask per instance type.
type prepared struct {
	env    *Env
	amd64  bool
	arm64  bool
	al2023 bool
	// build is the Windows build ("" for Linux families).
	build string
	// byLast maps the last byte of a zone name to the Env zones ending with it: one string compare
	// finds a type's zone instead of a map lookup (hashing) per zone of 1,000 types.
	byLast [256]uint64
	// idsKnown reports whether every Env zone has a zone ID.
	idsKnown bool
	// reserved maps a type to its reservation zones as a mask over Env zones.
	reserved map[string]uint64
}

// prepare precomputes what every type of a Filter or Labels call shares.
func prepare(env *Env) *prepared {
	p := &prepared{env: env, idsKnown: len(env.Zones) > 0}
	for _, a := range env.Architectures {
		switch a {
		case archAMD64:
			p.amd64 = true
		case archARM64:
			p.arm64 = true
		}
	}
	p.al2023 = env.AMIFamily == familyAL2023
	p.build = windowsBuild(env.AMIFamily)
	for i, z := range env.Zones {
		if i == maxZones {
			break
		}
		if z.Name != "" {
			p.byLast[z.Name[len(z.Name)-1]] |= 1 << i
		}
		p.idsKnown = p.idsKnown && z.ID != ""
	}
	if len(env.Reservations) > 0 {
		p.reserved = make(map[string]uint64, len(env.Reservations))
		for t, zones := range env.Reservations {
			p.reserved[t] = p.zoneMask(zones)
		}
	}
	return p
}

// windowsBuild returns the Windows build of a family, or "" for a Linux family.
func windowsBuild(family string) string {
	switch family {
	case familyWindows2019:
		return buildWindows2019
	case familyWindows2022:
		return buildWindows2022
	case familyWindows2025:
		return buildWindows2025
	}
	return ""
}

// zoneMask returns the Env zones among names.
func (p *prepared) zoneMask(names []string) uint64 {
	var m uint64
	for _, n := range names {
		if n == "" {
			continue
		}
		for c := p.byLast[n[len(n)-1]]; c != 0; c &= c - 1 {
			i := bits.TrailingZeros64(c)
			if p.env.Zones[i].Name == n {
				m |= 1 << i
				break
			}
		}
	}
	return m
}
