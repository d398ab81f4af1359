// Package kms is the live provider's KMS concept: what DescribeKey says of the keys EBS volumes are
// encrypted with, by the reference a class writes (a key id or ARN, an alias name or ARN), in a cache
// of its own, and the permission probe that tells whether keys can be asked about at all.
package kms

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/cache"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// API is what the provider calls of KMS: the SDK's client, or anything with its methods.
type API interface {
	DescribeKey(context.Context, *kms.DescribeKeyInput, ...func(*kms.Options)) (*kms.DescribeKeyOutput, error)
}

// ProbeKeyID is the key the permission probe describes: the nil UUID, which KMS never gives a key. KMS
// answers NotFoundException when kms:DescribeKey is granted on the account's keys, and
// AccessDeniedException when it is not.
const ProbeKeyID = "00000000-0000-0000-0000-000000000000"

// action is the IAM action of every call.
const action = "kms:DescribeKey"

// Provider answers facts.KMSKeys through its own caches. Close it to stop the fetches in flight.
type Provider struct {
	api    API
	caller awscall.Caller
	keys   *cache.Cache[*facts.KMSKey]

	probe        awscall.Probe
	probeAnswers *cache.Cache[bool]
}

// NewProvider returns a provider that asks api, caching its answers as opts say. It makes no call.
func NewProvider(api API, caller awscall.Caller, opts cache.Options) *Provider {
	return &Provider{
		api: api, caller: caller,
		keys: cache.New[*facts.KMSKey](opts),
		probe: awscall.Probe{Action: action, Ask: func(ctx context.Context) error {
			_, err := api.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String(ProbeKeyID)})
			if notFound(err) {
				return nil
			}
			return err
		}},
		probeAnswers: cache.New[bool](opts),
	}
}

// Close stops the fetches in flight and waits for them.
func (p *Provider) Close() {
	p.keys.Close()
	p.probeAnswers.Close()
}

// Key returns what KMS DescribeKey says of ref, as written: a key KMS does not know is Found false
// (NotFoundException); a key whose DescribeKey is refused while the permission probe passes (the key
// policy does not let the guard read it, or the key is another account's) is Error
// facts.KMSAccessDenied and nothing else. Both are answers, kept for the negative TTL so that a key
// being created or a key policy being fixed is seen soon. A refusal while the probe is refused too is
// the guard's own IAM policy: the key is unknown, as are keys after throttling, a timeout or a server
// error.
func (p *Provider) Key(ctx context.Context, ref string) (*facts.KMSKey, error) {
	k, err := p.key(ctx, ref)
	if err == nil && k.Error != "" {
		if perr := p.Known(ctx, facts.KMSKeys); perr != nil {
			return nil, perr
		}
	}
	return k, err
}

// key asks DescribeKey of ref through the cache.
func (p *Provider) key(ctx context.Context, ref string) (*facts.KMSKey, error) {
	q := awscall.Question{Fact: facts.KMSKeys, Action: action, Key: ref}
	return awscall.Lookup(ctx, p.caller, p.keys, q, func(ctx context.Context) (*facts.KMSKey, bool, error) {
		out, err := p.api.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String(ref)})
		switch {
		case notFound(err):
			found := false
			return &facts.KMSKey{Ref: ref, Found: &found}, true, nil
		case awscall.Classify(err) == awscall.OutcomeDenied:
			return &facts.KMSKey{Ref: ref, Error: facts.KMSAccessDenied}, true, nil
		case err != nil:
			return nil, false, err
		case out.KeyMetadata == nil:
			return nil, false, errors.New("DescribeKey answered without key metadata")
		}
		return key(ref, out.KeyMetadata), false, nil
	})
}

// key is the answer for ref from the key's metadata. KeySpec is the current name of what older keys
// also report as CustomerMasterKeySpec.
func key(ref string, md *kmstypes.KeyMetadata) *facts.KMSKey {
	found := true
	spec := string(md.KeySpec)
	if spec == "" {
		spec = string(md.CustomerMasterKeySpec)
	}
	return &facts.KMSKey{Ref: ref, Found: &found, ARN: aws.ToString(md.Arn), KeyState: string(md.KeyState), KeySpec: spec, KeyUsage: string(md.KeyUsage)}
}

// notFound reports whether err is KMS's "no such key or alias".
func notFound(err error) bool { return awscall.Classify(err) == awscall.OutcomeNotFound }

// Known tells whether keys can be described, from a permission probe (awscall.Probe) once per TTL. It
// returns nil for any other fact: those are not this provider's.
func (p *Provider) Known(ctx context.Context, f facts.Fact) error {
	if f != facts.KMSKeys {
		return nil
	}
	return p.probe.Known(ctx, p.caller, p.probeAnswers, f)
}
