package live

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// Role implements facts.Provider with IAM GetRole (NoSuchEntity: nil).
func (p *Provider) Role(ctx context.Context, name string) (*facts.Role, error) {
	return lookup(ctx, p, facts.Roles, "iam:GetRole", strings.ToLower(name), func(ctx context.Context) (*facts.Role, bool, error) {
		out, err := p.opts.Clients.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
		if classify(err) == OutcomeNotFound {
			return nil, true, nil
		}
		if err != nil || out.Role == nil {
			return nil, false, errors.Join(err, errorIf(out != nil && out.Role == nil, "GetRole answered without a role"))
		}
		r := out.Role
		return &facts.Role{Name: aws.ToString(r.RoleName), Path: aws.ToString(r.Path), ARN: aws.ToString(r.Arn), CreateDate: aws.ToTime(r.CreateDate).UTC()}, false, nil
	})
}

// InstanceProfile implements facts.Provider with IAM GetInstanceProfile (NoSuchEntity: nil).
func (p *Provider) InstanceProfile(ctx context.Context, name string) (*facts.InstanceProfile, error) {
	return lookup(ctx, p, facts.InstanceProfiles, "iam:GetInstanceProfile", strings.ToLower(name), func(ctx context.Context) (*facts.InstanceProfile, bool, error) {
		out, err := p.opts.Clients.IAM.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
		if classify(err) == OutcomeNotFound {
			return nil, true, nil
		}
		if err != nil || out.InstanceProfile == nil {
			return nil, false, errors.Join(err, errorIf(out != nil && out.InstanceProfile == nil, "GetInstanceProfile answered without a profile"))
		}
		ip := out.InstanceProfile
		prof := &facts.InstanceProfile{Name: aws.ToString(ip.InstanceProfileName), ARN: aws.ToString(ip.Arn), Roles: []string{}}
		for _, r := range ip.Roles {
			prof.Roles = append(prof.Roles, aws.ToString(r.RoleName))
		}
		return prof, false, nil
	})
}
