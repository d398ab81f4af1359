// Package ssm is the live provider's SSM concept: parameters by name (the image ids an AMI alias
// resolves to), in a cache of their own, and the permission probe that tells whether they can be
// asked at all.
package ssm

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// API is what the provider calls of SSM: the SDK's client, or anything with its methods.
type API interface {
	GetParameter(context.Context, *ssm.GetParameterInput, ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// probeParam names no parameter that exists, inside the public parameters the shipped IAM policy
// scopes to.
const probeParam = "/aws/service/karpenter-guard/permission-probe"

// Provider answers facts.SSMParameters through its own caches. Close it to stop the fetches in flight.
type Provider struct {
	api    API
	caller awscall.Caller
	params *cache.Cache[parameter]

	probe        awscall.Probe
	probeAnswers *cache.Cache[bool]
}

// parameter is a parameter's value, and whether it exists.
type parameter struct {
	value string
	ok    bool
}

// NewProvider returns a provider that asks api, caching its answers as opts say. It makes no call.
func NewProvider(api API, caller awscall.Caller, opts cache.Options) *Provider {
	return &Provider{
		api: api, caller: caller,
		params: cache.New[parameter](opts),
		probe: awscall.Probe{Action: "ssm:GetParameter", Ask: func(ctx context.Context) error {
			_, err := api.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(probeParam)})
			return err
		}},
		probeAnswers: cache.New[bool](opts),
	}
}

// Close stops the fetches in flight and waits for them.
func (p *Provider) Close() {
	p.params.Close()
	p.probeAnswers.Close()
}

// Parameter returns the value of the parameter name with SSM GetParameter, and false when it does not
// exist (ParameterNotFound). A parameter outside the public /aws/service/ tree that AWS denies is
// worded as a policy to extend, not an action to grant.
func (p *Provider) Parameter(ctx context.Context, name string) (string, bool, error) {
	const action = "ssm:GetParameter"
	q := awscall.Question{Fact: facts.SSMParameters, Action: action, Key: name}
	v, err := awscall.Lookup(ctx, p.caller, p.params, q, func(ctx context.Context) (parameter, bool, error) {
		out, err := p.api.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
		switch awscall.Classify(err) {
		case awscall.OutcomeNotFound:
			return parameter{}, true, nil
		case awscall.OutcomeDenied:
			if !strings.HasPrefix(name, "/aws/service/") {
				return parameter{}, false, &awscall.CallError{Action: action, Outcome: awscall.OutcomeDenied, Err: err,
					Hint: "manifests/iam-policy.json grants the public /aws/service/* parameters only: add " + name + " to its ssm:GetParameter statement"}
			}
		}
		if err != nil {
			return parameter{}, false, err
		}
		if out.Parameter == nil {
			return parameter{}, false, errors.New("GetParameter answered without a parameter")
		}
		return parameter{value: aws.ToString(out.Parameter.Value), ok: true}, false, nil
	})
	return v.value, v.ok, err
}

// Known tells whether parameters can be had, from a permission probe (awscall.Probe) once per TTL. It
// returns nil for any other fact: those are not this provider's.
func (p *Provider) Known(ctx context.Context, f facts.Fact) error {
	if f != facts.SSMParameters {
		return nil
	}
	return p.probe.Known(ctx, p.caller, p.probeAnswers, f)
}
