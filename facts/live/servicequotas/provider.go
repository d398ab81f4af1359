// Package servicequotas is the live provider's Service Quotas concept: the applied values of the
// quotas the rules ask about ("vpc/L-2AFB9258"), in a cache of their own, and the permission probe
// that tells whether quotas can be asked about at all.
package servicequotas

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// API is what the provider calls of Service Quotas: the SDK's client, or anything with its methods.
type API interface {
	GetServiceQuota(context.Context, *servicequotas.GetServiceQuotaInput, ...func(*servicequotas.Options)) (*servicequotas.GetServiceQuotaOutput, error)
}

// action is the IAM action of every call.
const action = "servicequotas:GetServiceQuota"

// Provider answers facts.ServiceQuotas through its own caches. Close it to stop the fetches in flight.
type Provider struct {
	api    API
	caller awscall.Caller
	quotas *cache.Cache[quota]

	probe        awscall.Probe
	probeAnswers *cache.Cache[bool]
}

// quota is a quota's applied value, and whether Service Quotas has one.
type quota struct {
	value int
	ok    bool
}

// NewProvider returns a provider that asks api, caching its answers as opts say. It makes no call.
func NewProvider(api API, caller awscall.Caller, opts cache.Options) *Provider {
	service, code, _ := strings.Cut(facts.QuotaSecurityGroupsPerENI, "/")
	return &Provider{
		api: api, caller: caller,
		quotas: cache.New[quota](opts),
		// The probe asks for the quota the rules read: granted, it has a value or none (both say the
		// call is allowed); a made-up quota code could be refused as invalid rather than absent.
		probe: awscall.Probe{Action: action, Ask: func(ctx context.Context) error {
			_, err := api.GetServiceQuota(ctx, &servicequotas.GetServiceQuotaInput{ServiceCode: aws.String(service), QuotaCode: aws.String(code)})
			if noValue(err) {
				return nil
			}
			return err
		}},
		probeAnswers: cache.New[bool](opts),
	}
}

// Close stops the fetches in flight and waits for them.
func (p *Provider) Close() {
	p.quotas.Close()
	p.probeAnswers.Close()
}

// Quota returns the applied value of the quota named "service/quota-code" with Service Quotas
// GetServiceQuota, rounded to an integer (the values the rules read are counts). A quota without an
// applied value (NoSuchResourceException) is unknown: its AWS default applies, which the guard does not
// assume; that answer is kept for the negative TTL.
func (p *Provider) Quota(ctx context.Context, name string) (int, error) {
	service, code, ok := strings.Cut(name, "/")
	if !ok || service == "" || code == "" {
		return 0, facts.Unknown(facts.ServiceQuotas, fmt.Sprintf("%q names no quota: expected service/quota-code, such as %s", name, facts.QuotaSecurityGroupsPerENI))
	}
	q := awscall.Question{Fact: facts.ServiceQuotas, Action: action, Key: name}
	v, err := awscall.Lookup(ctx, p.caller, p.quotas, q, func(ctx context.Context) (quota, bool, error) {
		out, err := p.api.GetServiceQuota(ctx, &servicequotas.GetServiceQuotaInput{ServiceCode: aws.String(service), QuotaCode: aws.String(code)})
		switch {
		case noValue(err):
			return quota{}, true, nil
		case err != nil:
			return quota{}, false, err
		case out.Quota == nil || out.Quota.Value == nil:
			return quota{}, false, errors.New("GetServiceQuota answered without a value")
		}
		return quota{value: int(math.Round(*out.Quota.Value)), ok: true}, false, nil
	})
	if err != nil {
		return 0, err
	}
	if !v.ok {
		return 0, facts.Unknown(facts.ServiceQuotas, fmt.Sprintf("Service Quotas has no applied value of %s (NoSuchResourceException): its AWS default applies, which the guard does not assume", name))
	}
	return v.value, nil
}

// noValue reports whether err is Service Quotas' "no such quota, or no applied value for it".
func noValue(err error) bool { return awscall.Classify(err) == awscall.OutcomeNotFound }

// Known tells whether quotas can be asked, from a permission probe (awscall.Probe) once per TTL. It
// returns nil for any other fact: those are not this provider's.
func (p *Provider) Known(ctx context.Context, f facts.Fact) error {
	if f != facts.ServiceQuotas {
		return nil
	}
	return p.probe.Known(ctx, p.caller, p.probeAnswers, f)
}
