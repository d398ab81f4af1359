// Package iam is the live provider's IAM concept: roles and instance profiles by name and the policy
// simulator's answers, each kind of answer in a cache of its own, and the permission probes that tell
// whether they can be asked at all.
package iam

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// API is what the provider calls of IAM: the SDK's client, or anything with its methods.
type API interface {
	GetRole(context.Context, *iam.GetRoleInput, ...func(*iam.Options)) (*iam.GetRoleOutput, error)
	GetInstanceProfile(context.Context, *iam.GetInstanceProfileInput, ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error)
	SimulatePrincipalPolicy(context.Context, *iam.SimulatePrincipalPolicyInput, ...func(*iam.Options)) (*iam.SimulatePrincipalPolicyOutput, error)
	// The reading of a role's policies (policies.go).
	ListRolePolicies(context.Context, *iam.ListRolePoliciesInput, ...func(*iam.Options)) (*iam.ListRolePoliciesOutput, error)
	GetRolePolicy(context.Context, *iam.GetRolePolicyInput, ...func(*iam.Options)) (*iam.GetRolePolicyOutput, error)
	ListAttachedRolePolicies(context.Context, *iam.ListAttachedRolePoliciesInput, ...func(*iam.Options)) (*iam.ListAttachedRolePoliciesOutput, error)
	GetPolicy(context.Context, *iam.GetPolicyInput, ...func(*iam.Options)) (*iam.GetPolicyOutput, error)
	GetPolicyVersion(context.Context, *iam.GetPolicyVersionInput, ...func(*iam.Options)) (*iam.GetPolicyVersionOutput, error)
}

// probeName names no role or instance profile that exists, inside the resources the shipped IAM
// policy scopes to.
const probeName = "karpenter-guard-permission-probe"

// Provider answers the IAM facts (facts.Roles, facts.InstanceProfiles, facts.Simulations) through its
// own caches. Close it to stop the fetches in flight.
//
// Simulations are shared between rows that differ only in context values no policy of the principal
// tells apart (policies.go): the simulator is asked once per distinct answer, not once per object.
type Provider struct {
	api         API
	caller      awscall.Caller
	roles       *cache.Cache[*facts.Role]
	profiles    *cache.Cache[*facts.InstanceProfile]
	simulations *cache.Cache[simulated]
	// policies are what principals' policies test of the request context (policies.go); versions
	// are managed policies' documents by ARN and version, which never change.
	policies *cache.Cache[*contextTests]
	versions *cache.Cache[string]
	readings *readings
	shared   *representatives

	probes       map[facts.Fact]awscall.Probe
	probeAnswers *cache.Cache[bool]
}

// NewProvider returns a provider that asks api, caching its answers as opts say. It makes no call.
func NewProvider(api API, caller awscall.Caller, opts cache.Options) *Provider {
	return &Provider{
		api:         api,
		caller:      caller,
		roles:       cache.New[*facts.Role](opts),
		profiles:    cache.New[*facts.InstanceProfile](opts),
		simulations: cache.New[simulated](opts),
		policies:    cache.New[*contextTests](opts),
		versions:    cache.New[string](versionOptions(opts)),
		readings:    newReadings(),
		shared:      newRepresentatives(),
		probes: map[facts.Fact]awscall.Probe{
			facts.Roles: {Action: "iam:GetRole", Ask: func(ctx context.Context) error {
				_, err := api.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(probeName)})
				return err
			}},
			facts.InstanceProfiles: {Action: "iam:GetInstanceProfile", Ask: func(ctx context.Context) error {
				_, err := api.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(probeName)})
				return err
			}},
		},
		probeAnswers: cache.New[bool](opts),
	}
}

// Close stops the fetches in flight and waits for them.
func (p *Provider) Close() {
	p.roles.Close()
	p.profiles.Close()
	p.simulations.Close()
	p.readings.close()
	p.policies.Close()
	p.versions.Close()
	p.probeAnswers.Close()
}

// Role returns the role of that name with IAM GetRole; nil when none exists (NoSuchEntity). Names are
// case-insensitive, as IAM's are. The trust policy comes URL-encoded, as IAM returns every policy
// document; one that does not decode is left unknown ("").
func (p *Provider) Role(ctx context.Context, name string) (*facts.Role, error) {
	q := awscall.Question{Fact: facts.Roles, Action: "iam:GetRole", Key: strings.ToLower(name)}
	return awscall.Lookup(ctx, p.caller, p.roles, q, func(ctx context.Context) (*facts.Role, bool, error) {
		out, err := p.api.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
		if awscall.Classify(err) == awscall.OutcomeNotFound {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, err
		}
		if out.Role == nil {
			return nil, false, errors.New("GetRole answered without a role")
		}
		r := out.Role
		trust, err := url.QueryUnescape(aws.ToString(r.AssumeRolePolicyDocument))
		if err != nil {
			trust = ""
		}
		return &facts.Role{
			Name: aws.ToString(r.RoleName), Path: aws.ToString(r.Path), ARN: aws.ToString(r.Arn), CreateDate: aws.ToTime(r.CreateDate).UTC(),
			AssumeRolePolicyDocument: trust,
		}, false, nil
	})
}

// InstanceProfile returns the instance profile of that name with IAM GetInstanceProfile; nil when
// none exists (NoSuchEntity).
func (p *Provider) InstanceProfile(ctx context.Context, name string) (*facts.InstanceProfile, error) {
	q := awscall.Question{Fact: facts.InstanceProfiles, Action: "iam:GetInstanceProfile", Key: strings.ToLower(name)}
	return awscall.Lookup(ctx, p.caller, p.profiles, q, func(ctx context.Context) (*facts.InstanceProfile, bool, error) {
		out, err := p.api.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
		if awscall.Classify(err) == awscall.OutcomeNotFound {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, err
		}
		if out.InstanceProfile == nil {
			return nil, false, errors.New("GetInstanceProfile answered without a profile")
		}
		ip := out.InstanceProfile
		prof := &facts.InstanceProfile{Name: aws.ToString(ip.InstanceProfileName), ARN: aws.ToString(ip.Arn), Roles: []string{}}
		for _, r := range ip.Roles {
			prof.Roles = append(prof.Roles, aws.ToString(r.RoleName))
		}
		return prof, false, nil
	})
}

// Known tells whether roles and instance profiles can be had, from a permission probe
// (awscall.Probe) once per TTL. It returns nil for any other fact: those are not this provider's, and
// simulations, whose probe needs the account (SimulationsKnown).
func (p *Provider) Known(ctx context.Context, f facts.Fact) error {
	probe, ok := p.probes[f]
	if !ok {
		return nil
	}
	return probe.Known(ctx, p.caller, p.probeAnswers, f)
}
