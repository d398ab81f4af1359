// Package instancetype is the live provider's instance-type concept: the region's instance types
// (DescribeInstanceTypes, filtered as Karpenter's instance-type provider filters them) with the zones
// that offer each (DescribeInstanceTypeOfferings), the few fields the NodePool rules compute labels
// from.
//
// The list is large (about a thousand types per region, ten pages and more) and changes rarely, so it
// is kept for long and refreshed in the background: once the region's list has been had, a question is
// always answered from the cache at once, however old the list (a refresh that keeps failing is named
// in the evaluation's notes), and a list older than the refresh interval is asked again on a goroutine
// of its own. Only the first question of a region waits, at most the budget, for the list.
package instancetype

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// API is what the provider calls of EC2: the SDK's client, or anything with its methods.
type API interface {
	DescribeInstanceTypes(context.Context, *ec2.DescribeInstanceTypesInput, ...func(*ec2.Options)) (*ec2.DescribeInstanceTypesOutput, error)
	DescribeInstanceTypeOfferings(context.Context, *ec2.DescribeInstanceTypeOfferingsInput, ...func(*ec2.Options)) (*ec2.DescribeInstanceTypeOfferingsOutput, error)
}

// Defaults of Options.
const (
	// RefreshInterval is how old the list grows before it is asked again, in the background.
	RefreshInterval = time.Hour
	// TTL is how old the list grows before an answer from it is noted as stale: it is still served,
	// since a list of types a day old is better than a deploy blocked on AWS.
	TTL = 24 * time.Hour
	// FetchTimeout is the least time one fetch of the list (every page of both calls) is given,
	// whatever the cache's FetchTimeout: the list takes many round trips.
	FetchTimeout = time.Minute
)

// The IAM actions of the calls.
const (
	describeTypes     = "ec2:DescribeInstanceTypes"
	describeOfferings = "ec2:DescribeInstanceTypeOfferings"
)

// Page sizes: the most each call returns per page.
const (
	typesPageSize     = 100
	offeringsPageSize = 1000
)

// Options tune a Provider.
type Options struct {
	// Cache tunes the cache of the list: its clock (Now), MaxWait, ErrorBackoff, NegativeTTL (for an
	// endpoint without the API) and FetchTimeout (at least FetchTimeout). Its TTL does not apply: the
	// list is kept until a refresh replaces it.
	Cache cache.Options
	// RefreshInterval (default RefreshInterval) and TTL (default TTL): see those constants.
	RefreshInterval time.Duration
	TTL             time.Duration
}

// Provider answers facts.InstanceTypes through its own cache. Close it to stop the refreshes and the
// fetch in flight.
type Provider struct {
	api    API
	caller awscall.Caller
	region string
	opts   Options
	types  *cache.Cache[[]facts.InstanceType]
	key    string // the list's key in types, as awscall.Lookup keys it

	// done ends with Close: background refreshes stop waiting and start no more.
	done  context.Context
	close context.CancelFunc
	wg    sync.WaitGroup

	mu         sync.Mutex
	refreshing bool  // a question's background refresh runs
	looping    bool  // the refresh loop runs
	refreshErr error // why the last refresh failed, until one succeeds
}

// never is the cache TTL of the list: it is kept until a refresh replaces it.
const never = 100 * 365 * 24 * time.Hour

// NewProvider returns a provider that asks api, whose region is region. It makes no call.
func NewProvider(api API, region string, caller awscall.Caller, opts Options) *Provider {
	if region == "" {
		region = "region"
	}
	if opts.RefreshInterval <= 0 {
		opts.RefreshInterval = RefreshInterval
	}
	if opts.TTL <= 0 {
		opts.TTL = TTL
	}
	co := opts.Cache
	co.TTL, co.MaxEntries = never, 1 // NegativeTTL stays: it is how long an API the endpoint lacks is not asked again
	co.FetchTimeout = max(co.FetchTimeout, FetchTimeout)
	done, cancel := context.WithCancel(context.Background())
	return &Provider{
		api: api, caller: caller, region: region, opts: opts,
		types: cache.New[[]facts.InstanceType](co), key: describeTypes + " " + region,
		done: done, close: cancel,
	}
}

// Close stops the refreshes and the fetch in flight and waits for them.
func (p *Provider) Close() {
	p.mu.Lock()
	p.close() // under mu: no refresh starts after this
	p.mu.Unlock()
	p.types.Close()
	p.wg.Wait()
}

// InstanceTypes returns the region's instance types, each with the zones that offer it, in the order
// EC2 lists them. The list is shared between callers: they must not modify it.
func (p *Provider) InstanceTypes(ctx context.Context) ([]facts.InstanceType, error) {
	if l, ok, err := p.types.Cached(p.key, 0); ok && err == nil {
		return p.serve(ctx, l), nil
	}
	q := awscall.Question{Fact: facts.InstanceTypes, Action: describeTypes, Key: p.region}
	v, err := awscall.Lookup(ctx, p.caller, p.types, q, p.fetch)
	if err == nil {
		p.startLoop()
	}
	return v, err
}

// Known tells whether instance types can be had by asking for them: one question answers the whole
// fact. It returns nil for any other fact: those are not this provider's.
func (p *Provider) Known(ctx context.Context, f facts.Fact) error {
	if f != facts.InstanceTypes {
		return nil
	}
	_, err := p.InstanceTypes(ctx)
	return err
}

// serve answers with the cached list l, however old, starting a background refresh when it is older
// than the refresh interval, and noting it in ctx when it is older than the TTL.
func (p *Provider) serve(ctx context.Context, l cache.Lookup[[]facts.InstanceType]) []facts.InstanceType {
	p.startLoop()
	if l.Age >= p.opts.RefreshInterval {
		p.refreshInBackground()
	}
	result := cache.Hit
	if l.Age >= p.opts.TTL {
		result = cache.Stale
		facts.Note(ctx, fmt.Sprintf("used a cached answer %s old for %s %s: %s", l.Age.Round(time.Second), describeTypes, p.region, p.why()))
	}
	p.caller.Metrics.CountLookup(facts.InstanceTypes, result)
	return l.Value
}

// why says why the list has not been refreshed.
func (p *Provider) why() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ce *awscall.CallError
	switch {
	case errors.As(p.refreshErr, &ce):
		return ce.Reason()
	case p.refreshErr != nil:
		return p.refreshErr.Error()
	}
	return "a refresh is under way"
}

// refreshInBackground starts a refresh on a goroutine of its own, unless one runs.
func (p *Provider) refreshInBackground() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refreshing || p.done.Err() != nil {
		return
	}
	p.refreshing = true
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.refresh(p.opts.RefreshInterval)
		p.mu.Lock()
		p.refreshing = false
		p.mu.Unlock()
	}()
}

// startLoop starts the loop that refreshes the list every refresh interval, once the list has been
// had, so that an idle webhook's next question meets a fresh list.
func (p *Provider) startLoop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.looping || p.done.Err() != nil {
		return
	}
	p.looping = true
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(p.opts.RefreshInterval)
		defer t.Stop()
		for {
			select {
			case <-p.done.Done():
				return
			case <-t.C:
				// A list younger than half the interval was refreshed for a question meanwhile.
				p.refresh(p.opts.RefreshInterval / 2)
			}
		}
	}()
}

// refresh fetches the list again when it is older than maxAge (one fetch for every refresher and
// question), and remembers why it failed. A refresh that outlasts the cache's MaxWait goes on
// detached; the next refresh joins it.
func (p *Provider) refresh(maxAge time.Duration) {
	l, err := p.types.GetWithin(p.done, p.key, maxAge, func(ctx context.Context) (cache.Answer[[]facts.InstanceType], error) {
		v, _, err := p.fetch(ctx)
		return cache.Answer[[]facts.InstanceType]{Value: v}, err
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err == nil && l.Result == cache.Miss:
		p.refreshErr = nil
	case err == nil && l.Result == cache.Stale && !errors.Is(l.RefreshErr, cache.ErrLate):
		p.refreshErr = l.RefreshErr
	}
}

// fetch asks EC2 for every page of the region's instance types and of their zone offerings, both
// calls at once. A failure is worded with the action that failed; when both fail, the types' failure
// is the answer (the offerings are of no use without the types).
func (p *Provider) fetch(ctx context.Context) ([]facts.InstanceType, bool, error) {
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	var zones map[string][]string
	var oerr error
	offered := make(chan struct{})
	go func() {
		defer close(offered)
		zones, oerr = p.describeOfferings(octx)
	}()
	types, err := p.describeTypes(ctx)
	if err != nil {
		cancel()
	}
	<-offered
	switch {
	case err != nil:
		return nil, false, err
	case oerr != nil:
		return nil, false, oerr
	}
	// Most types are offered in the same zones: they share one slice (the list is read-only).
	sets := map[string][]string{}
	for i := range types {
		z := zones[types[i].InstanceType]
		if len(z) == 0 {
			continue
		}
		key := strings.Join(z, "\x00")
		if shared, ok := sets[key]; ok {
			types[i].Zones = shared
			continue
		}
		sets[key] = slices.Clip(z)
		types[i].Zones = sets[key]
	}
	return types, false, nil
}

// describeTypes lists the region's types as Karpenter does: HVM, x86_64 or arm64.
func (p *Provider) describeTypes(ctx context.Context) ([]facts.InstanceType, error) {
	in := &ec2.DescribeInstanceTypesInput{
		Filters: []ec2types.Filter{
			{Name: aws.String("supported-virtualization-type"), Values: []string{string(ec2types.VirtualizationTypeHvm)}},
			{Name: aws.String("processor-info.supported-architecture"), Values: []string{string(ec2types.ArchitectureTypeX8664), string(ec2types.ArchitectureTypeArm64)}},
		},
		MaxResults: aws.Int32(typesPageSize),
	}
	c := newConverter()
	out := []facts.InstanceType{} // known and empty, not unknown
	for pages := ec2.NewDescribeInstanceTypesPaginator(p.api, in); pages.HasMorePages(); {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, awscall.NewCallError(describeTypes, err, p.caller.Budget)
		}
		for i := range page.InstanceTypes {
			out = append(out, c.instanceType(&page.InstanceTypes[i]))
		}
	}
	return slices.Clip(out), nil
}

// describeOfferings returns the zones that offer each type, in the order EC2 lists the offerings.
func (p *Provider) describeOfferings(ctx context.Context) (map[string][]string, error) {
	in := &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZone, MaxResults: aws.Int32(offeringsPageSize)}
	zones := map[string][]string{}
	intern := map[string]string{}
	for pages := ec2.NewDescribeInstanceTypeOfferingsPaginator(p.api, in); pages.HasMorePages(); {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, awscall.NewCallError(describeOfferings, err, p.caller.Budget)
		}
		for _, o := range page.InstanceTypeOfferings {
			zone := aws.ToString(o.Location)
			if s, ok := intern[zone]; ok {
				zone = s
			} else {
				intern[zone] = zone
			}
			zones[string(o.InstanceType)] = append(zones[string(o.InstanceType)], zone)
		}
	}
	return zones, nil
}

// converter turns DescribeInstanceTypes' answers into facts, sharing the strings and booleans many
// types have alike (architectures, usage classes, manufacturers), since the list is long-lived.
type converter struct {
	strs    map[string]string
	lists   map[string][]string
	yes, no *bool
}

func newConverter() *converter {
	yes, no := true, false
	return &converter{strs: map[string]string{}, lists: map[string][]string{}, yes: &yes, no: &no}
}

// str returns the shared copy of s.
func (c *converter) str(s string) string {
	if v, ok := c.strs[s]; ok {
		return v
	}
	c.strs[s] = s
	return s
}

// list returns the shared copy of a list of enum values.
func list[T ~string](c *converter, values []T) []string {
	if len(values) == 0 {
		return nil
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = string(v)
	}
	key := strings.Join(parts, "\x00")
	if v, ok := c.lists[key]; ok {
		return v
	}
	for i := range parts {
		parts[i] = c.str(parts[i])
	}
	c.lists[key] = parts
	return parts
}

// instanceType keeps the fields the NodePool rules compute labels from, as Karpenter reads them: the
// sustained clock speed in whole MHz, the NVMe instance store only when NVMe is supported, the EBS
// bandwidth only for types EBS-optimized by default.
func (c *converter) instanceType(it *ec2types.InstanceTypeInfo) facts.InstanceType {
	t := facts.InstanceType{
		InstanceType:          string(it.InstanceType),
		SupportedUsageClasses: list(c, it.SupportedUsageClasses),
		Hypervisor:            c.str(string(it.Hypervisor)),
	}
	if pi := it.ProcessorInfo; pi != nil {
		t.SupportedArchitectures = list(c, pi.SupportedArchitectures)
		t.ProcessorManufacturer = c.str(aws.ToString(pi.Manufacturer))
		if pi.SustainedClockSpeedInGhz != nil {
			t.SustainedClockSpeedInMhz = int(math.Round(*pi.SustainedClockSpeedInGhz * 1000))
		}
	}
	if v := it.VCpuInfo; v != nil {
		t.DefaultVCPUs = int(aws.ToInt32(v.DefaultVCpus))
	}
	if m := it.MemoryInfo; m != nil {
		t.MemorySizeInMiB = int(aws.ToInt64(m.SizeInMiB))
	}
	if n := it.NetworkInfo; n != nil && n.EncryptionInTransitSupported != nil {
		t.EncryptionInTransitSupported = c.no
		if *n.EncryptionInTransitSupported {
			t.EncryptionInTransitSupported = c.yes
		}
	}
	if s := it.InstanceStorageInfo; s != nil && s.NvmeSupport != ec2types.EphemeralNvmeSupportUnsupported {
		t.NVMeTotalSizeInGB = int(aws.ToInt64(s.TotalSizeInGB))
	}
	if e := it.EbsInfo; e != nil && e.EbsOptimizedSupport == ec2types.EbsOptimizedSupportDefault && e.EbsOptimizedInfo != nil {
		t.EBSMaximumBandwidthInMbps = int(aws.ToInt32(e.EbsOptimizedInfo.MaximumBandwidthInMbps))
	}
	if g := it.GpuInfo; g != nil {
		for _, d := range g.Gpus {
			a := facts.Accelerator{Name: c.str(aws.ToString(d.Name)), Manufacturer: c.str(aws.ToString(d.Manufacturer)), Count: int(aws.ToInt32(d.Count))}
			if d.MemoryInfo != nil {
				a.MemorySizeInMiB = int(aws.ToInt32(d.MemoryInfo.SizeInMiB))
			}
			t.GPUs = append(t.GPUs, a)
		}
	}
	if ia := it.InferenceAcceleratorInfo; ia != nil {
		for _, d := range ia.Accelerators {
			a := facts.Accelerator{Name: c.str(aws.ToString(d.Name)), Manufacturer: c.str(aws.ToString(d.Manufacturer)), Count: int(aws.ToInt32(d.Count))}
			if d.MemoryInfo != nil {
				a.MemorySizeInMiB = int(aws.ToInt32(d.MemoryInfo.SizeInMiB))
			}
			t.InferenceAccelerators = append(t.InferenceAccelerators, a)
		}
	}
	if ni := it.NeuronInfo; ni != nil {
		for _, d := range ni.NeuronDevices {
			t.NeuronDevices = append(t.NeuronDevices, facts.NeuronDevice{Name: c.str(aws.ToString(d.Name)), Count: int(aws.ToInt32(d.Count))})
		}
	}
	return t
}
