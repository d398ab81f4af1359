package scheduling

import (
	"math/bits"
	"strconv"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// Unusable says why an instance type cannot launch with a class at all, whatever the pool requires.
type Unusable string

// Why a type is unusable, in the order Labels checks.
const (
	// Usable: the type can launch with the class.
	Usable Unusable = ""
	// UnusableArchitecture: the class's AMIs do not serve the type's architecture.
	UnusableArchitecture Unusable = "architecture"
	// UnusableAMIFamily: the family excludes the type (a1 under AL2023, arm64 under Windows).
	UnusableAMIFamily Unusable = "amiFamily"
	// UnusableZones: no zone of the class's subnets offers the type.
	UnusableZones Unusable = "zones"
	// UnusableCapacityTypes: the type is neither on-demand nor spot, and has no reservation in a usable zone.
	UnusableCapacityTypes Unusable = "capacityTypes"
)

// kind is how a label value is held.
type kind uint8

const (
	kindUndefined kind = iota
	kindText           // s
	kindKebab          // s lower-cased with spaces turned into dashes, as Karpenter writes names
	kindNumber         // n, written in decimal
	kindSet            // members of the key's vocabulary (see vocabulary)
)

// value is one type's value of one label, held so that matching it allocates nothing.
type value struct {
	kind kind
	s    string
	n    int
	set  uint64
}

// Capacity types as bits of a set value, in vocabulary order; and both tenancies.
const (
	bitOnDemand = 1 << iota
	bitSpot
	bitReserved

	bitsTenancies = 0b11 // default, dedicated
)

// basics is what decides whether a type is usable, kept for its labels.
type basics struct {
	arch     string
	zones    uint64
	capacity uint64
}

// inspect computes a type's architecture, usable zones and capacity types in p, and whether it is usable.
func inspect(t *facts.InstanceType, p *prepared) (basics, Unusable) {
	var b basics
	b.arch = architecture(t)
	switch {
	case b.arch == archAMD64 && !p.amd64, b.arch == archARM64 && !p.arm64, b.arch == "":
		return b, UnusableArchitecture
	case p.al2023 && strings.HasPrefix(t.InstanceType, "a1."), p.build != "" && b.arch != archAMD64:
		return b, UnusableAMIFamily
	}
	b.zones = p.zoneMask(t.Zones)
	if b.zones == 0 {
		return b, UnusableZones
	}
	b.capacity = capacityTypes(t, p, b.zones)
	if b.capacity == 0 {
		return b, UnusableCapacityTypes
	}
	return b, Usable
}

// architecture returns the Kubernetes name of the first architecture of a type that Karpenter
// recognizes (x86_64 → amd64, arm64), or "" when it has none.
func architecture(t *facts.InstanceType) string {
	for _, a := range t.SupportedArchitectures {
		switch a {
		case awsArchX86:
			return archAMD64
		case awsArchARM:
			return archARM64
		}
	}
	return ""
}

// capacityTypes returns a type's capacity types: on-demand and spot as its usage classes say, plus
// reserved when the class matched a reservation of it in one of its usable zones.
func capacityTypes(t *facts.InstanceType, p *prepared, zones uint64) uint64 {
	var c uint64
	for _, u := range t.SupportedUsageClasses {
		switch u {
		case capacityOnDemand:
			c |= bitOnDemand
		case capacitySpot:
			c |= bitSpot
		}
	}
	if p.reserved != nil && p.reserved[t.InstanceType]&zones != 0 {
		c |= bitReserved
	}
	return c
}

// valueOf computes one label of a type whose basics are b.
func valueOf(t *facts.InstanceType, p *prepared, b *basics, k key) value {
	var v value
	v.fill(t, p, b, k)
	return v
}

// fill sets v to one label of a type whose basics are b. The zero value of a field of the type (0, "",
// nil) is "not set" and leaves its label undefined, except the hypervisor, whose empty value is bare
// metal; the GPU and accelerator labels are defined whenever the type has the one device they describe,
// as Karpenter defines them (g6f's fractional GPU has count 0).
// Filter's loop fills one value in place: a value returned by a call is copied through the stack in a
// way that defeats the processor's store forwarding, which cost a third of Filter.
func (v *value) fill(t *facts.InstanceType, p *prepared, b *basics, k key) {
	v.kind = kindUndefined
	switch k {
	case keyInstanceType:
		v.text(t.InstanceType)
	case keyArch:
		v.textIfSet(b.arch)
	case keyOS:
		switch {
		case p.build == "":
			v.text(osLinux)
		case b.arch == archAMD64:
			v.text(osWindows)
		}
	case keyWindowsBuild:
		v.textIfSet(p.build)
	case keyZone, keyZoneID:
		v.members(b.zones)
	case keyRegion:
		v.textIfSet(p.env.Region)
	case keyCapacityType:
		v.members(b.capacity)
	case keyCPU:
		v.number(t.DefaultVCPUs)
	case keyMemory:
		v.number(t.MemorySizeInMiB)
	case keyCPUMaker:
		v.kebabIfSet(t.ProcessorManufacturer)
	case keyClockSpeed:
		v.number(t.SustainedClockSpeedInMhz)
	case keyCategory, keyGeneration:
		if category, generation, ok := categoryGeneration(t.InstanceType); ok && k == keyCategory {
			v.text(category)
		} else if ok {
			v.text(generation)
		}
	case keyFamily, keySize:
		if family, size, ok := familySize(t.InstanceType); ok && k == keyFamily {
			v.text(family)
		} else if ok {
			v.text(size)
		}
	case keyFlex:
		v.text(strconv.FormatBool(flex(t.InstanceType)))
	case keyHypervisor:
		v.text(t.Hypervisor)
	case keyEncryption:
		if e := t.EncryptionInTransitSupported; e != nil {
			v.text(strconv.FormatBool(*e))
		}
	case keyLocalNVMe:
		v.number(t.NVMeTotalSizeInGB)
	case keyEBSBandwidth:
		v.number(t.EBSMaximumBandwidthInMbps)
	case keyGPUName, keyGPUMaker, keyGPUCount, keyGPUMemory:
		if len(t.GPUs) != 1 {
			return
		}
		switch g := &t.GPUs[0]; k {
		case keyGPUName:
			v.kebab(g.Name)
		case keyGPUMaker:
			v.kebab(g.Manufacturer)
		case keyGPUCount:
			v.integer(g.Count)
		default:
			v.integer(g.MemorySizeInMiB)
		}
	case keyAccelName, keyAccelMaker, keyAccelCount:
		v.accelerator(t, k)
	case keyTenancy:
		v.members(bitsTenancies)
	}
}

// accelerator sets v to an accelerator label: from the one Neuron device, else from the one inference
// accelerator of a type without Neuron devices.
func (v *value) accelerator(t *facts.InstanceType, k key) {
	var name, maker string
	var count int
	switch {
	case len(t.NeuronDevices) == 1:
		name, maker, count = t.NeuronDevices[0].Name, neuronManufacturer, t.NeuronDevices[0].Count
	case len(t.NeuronDevices) == 0 && len(t.InferenceAccelerators) == 1:
		a := &t.InferenceAccelerators[0]
		name, maker, count = a.Name, a.Manufacturer, a.Count
	default:
		return
	}
	switch k {
	case keyAccelName:
		v.kebab(name)
	case keyAccelMaker:
		v.kebab(maker)
	default:
		v.integer(count)
	}
}

func (v *value) text(s string) { v.kind, v.s = kindText, s }

func (v *value) textIfSet(s string) {
	if s != "" {
		v.text(s)
	}
}

func (v *value) kebab(s string) { v.kind, v.s = kindKebab, s }

func (v *value) kebabIfSet(s string) {
	if s != "" {
		v.kebab(s)
	}
}

func (v *value) integer(n int) { v.kind, v.n = kindNumber, n }

func (v *value) number(n int) {
	if n != 0 {
		v.integer(n)
	}
}

func (v *value) members(m uint64) { v.kind, v.set = kindSet, m }

// familySize splits a type name at its one dot (m7g.large → m7g, large).
func familySize(name string) (family, size string, ok bool) {
	i := strings.IndexByte(name, '.')
	if i < 0 || strings.IndexByte(name[i+1:], '.') >= 0 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

// flex reports whether the family part of a type name (before the first dot) contains -flex.
func flex(name string) bool {
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	return strings.Contains(name, "-flex")
}

// categoryGeneration returns groups 1 and 3 of Karpenter's `^([a-z]+)(-[0-9]+tb)?([0-9]+).*\.` on a
// type name (m7g.large → m, 7; u-6tb1.metal → u, 1), matched by hand: the pattern cannot backtrack
// usefully, and a regexp per type and requirement would cost more than all the other labels.
func categoryGeneration(name string) (category, generation string, ok bool) {
	i := 0
	for i < len(name) && 'a' <= name[i] && name[i] <= 'z' {
		i++
	}
	if i == 0 {
		return "", "", false
	}
	j := i
	if j < len(name) && name[j] == '-' {
		k := j + 1
		for k < len(name) && isDigit(name[k]) {
			k++
		}
		if k > j+1 && strings.HasPrefix(name[k:], "tb") {
			j = k + 2
		}
	}
	d := j
	for d < len(name) && isDigit(name[d]) {
		d++
	}
	if d == j || strings.IndexByte(name[d:], '.') < 0 {
		return "", "", false
	}
	return name[:i], name[j:d], true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// kebabCase is Karpenter's lowerKabobCase: lower case, spaces turned into dashes.
func kebabCase(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "-")) }

// kebabEqual reports whether kebabCase(raw) == want without building it.
func kebabEqual(raw, want string) bool {
	if len(raw) != len(want) {
		return hasNonASCII(raw) && kebabCase(raw) == want
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c >= 0x80:
			return kebabCase(raw) == want
		case c == ' ':
			c = '-'
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false
		}
	}
	return true
}

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// vocabulary returns the strings the bits of a set value of key k stand for in p.
func (p *prepared) vocabulary(k key) []string {
	switch k {
	case keyZone, keyZoneID:
		n := min(len(p.env.Zones), maxZones)
		words := make([]string, n)
		for i := range n {
			if k == keyZone {
				words[i] = p.env.Zones[i].Name
			} else {
				words[i] = p.env.Zones[i].ID
			}
		}
		return words
	case keyCapacityType:
		return []string{capacityOnDemand, capacitySpot, capacityReserved}
	case keyTenancy:
		return []string{tenancyDefault, tenancyDedicated}
	}
	return nil
}

// labelValues returns the label values v stands for (none when undefined).
func (v value) labelValues(p *prepared, k key) []string {
	switch v.kind {
	case kindText:
		return []string{v.s}
	case kindKebab:
		return []string{kebabCase(v.s)}
	case kindNumber:
		return []string{strconv.Itoa(v.n)}
	case kindSet:
		words := p.vocabulary(k)
		out := make([]string, 0, bits.OnesCount64(v.set))
		for m := v.set; m != 0; m &= m - 1 {
			out = append(out, words[bits.TrailingZeros64(m)])
		}
		return out
	}
	return nil
}

// Labels computes the label values of one instance type in env, keyed by label (an undefined label is
// absent; zones, zone IDs, capacity types and tenancy have several values), and whether the type is
// usable at all. The labels of an unusable type are computed as far as they can be: zone and
// capacity-type sets may be empty. Region and zone ID are absent when env does not know them.
func Labels(t *facts.InstanceType, env Env) (map[string][]string, Unusable) {
	p := prepare(&env)
	b, why := inspect(t, p)
	if why != Usable {
		b.zones = p.zoneMask(t.Zones)
		b.capacity = capacityTypes(t, p, b.zones)
	}
	out := make(map[string][]string, numKeys)
	for k := range numKeys {
		if !p.computable(k) {
			continue
		}
		if vs := valueOf(t, p, &b, k).labelValues(p, k); len(vs) > 0 {
			out[k.name()] = vs
		}
	}
	return out, why
}

// computable reports whether k can be judged in p: the region and zone IDs only when env knows them.
func (p *prepared) computable(k key) bool {
	switch k {
	case keyRegion:
		return p.env.Region != ""
	case keyZoneID:
		return p.idsKnown
	}
	return true
}
