package ec2

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// ebsDefaultsKey is the cache key of the EBS defaults: one answer per client, whose region it is.
const ebsDefaultsKey = "region"

// EBSDefaults returns the account's EBS encryption by default in the client's region, with EC2
// GetEbsEncryptionByDefault and GetEbsDefaultKmsKeyId, asked once per TTL. The two calls answer one
// fact, as the snapshot's ebsDefaults section holds it: when either fails, the fact is unknown with
// that call's reason (the IAM action to grant, throttling, a late answer).
func (p *Provider) EBSDefaults(ctx context.Context) (*facts.EBSEncryption, error) {
	q := awscall.Question{Fact: facts.EBSDefaults, Action: "ec2:GetEbsEncryptionByDefault", Key: ebsDefaultsKey}
	budget := p.caller.Budget
	return awscall.Lookup(ctx, p.caller, p.ebs, q, func(ctx context.Context) (*facts.EBSEncryption, bool, error) {
		enc, err := p.api.GetEbsEncryptionByDefault(ctx, &ec2.GetEbsEncryptionByDefaultInput{})
		if err != nil {
			return nil, false, err // worded by Lookup, with the question's action
		}
		if enc.EbsEncryptionByDefault == nil {
			return nil, false, awscall.NewCallError("ec2:GetEbsEncryptionByDefault", errors.New("the answer does not say whether EBS encryption by default is on"), budget)
		}
		key, err := p.api.GetEbsDefaultKmsKeyId(ctx, &ec2.GetEbsDefaultKmsKeyIdInput{})
		if err != nil {
			return nil, false, awscall.NewCallError("ec2:GetEbsDefaultKmsKeyId", err, budget)
		}
		return &facts.EBSEncryption{EncryptionByDefault: aws.ToBool(enc.EbsEncryptionByDefault), KMSKeyID: aws.ToString(key.KmsKeyId)}, false, nil
	})
}
