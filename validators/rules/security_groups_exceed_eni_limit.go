package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/network"
)

// defaultGroupsPerENI is the default of the quota "Security groups per network interface".
const defaultGroupsPerENI = 5

var securityGroupsExceedENILimit = &validators.Rule{
	ID:            "security-groups-exceed-eni-limit",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	Needs:         []facts.Fact{facts.SecurityGroups},
	MayNeed:       []facts.Fact{facts.ServiceQuotas},
	Summary:       "the class selects more security groups than a network interface accepts",
	Doc: "Karpenter puts every security group the class selects on the instance's primary network interface. " +
		"More than the quota \"Security groups per network interface\" (vpc/L-2AFB9258, 5 unless raised, at " +
		"most 16) fails every launch with SecurityGroupsPerInterfaceLimitExceeded. Narrow the selector, or " +
		"raise the quota. When the quota cannot be read, more than 5 groups gives a warning.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		groups, err := network.SelectedGroups(c, o)
		if err != nil || len(groups) <= defaultGroupsPerENI {
			return nil, err // within the default the quota cannot be lower
		}
		field, line := network.SelectorField(o, "securityGroupSelectorTerms")
		ids := strings.Join(network.GroupIDs(groups), ", ")
		quota, qerr := c.Facts.ServiceQuota(c, facts.QuotaSecurityGroupsPerENI)
		f := validators.Finding{Field: field, Line: line,
			Fix: fmt.Sprintf("narrow securityGroupSelectorTerms, or `aws service-quotas request-service-quota-increase --service-code vpc --quota-code L-2AFB9258 --desired-value %d` (the quota times the rules per group may not exceed 1000)", len(groups))}
		switch {
		case qerr != nil && !facts.IsUnknown(qerr):
			return nil, qerr
		case qerr != nil:
			f.AtMost = config.ActionWarn
			f.Message = fmt.Sprintf("the class selects %d security groups (%s) and a network interface accepts %d unless the quota vpc/L-2AFB9258 was raised, which the guard could not read: if it was not, every launch fails with SecurityGroupsPerInterfaceLimitExceeded", len(groups), ids, defaultGroupsPerENI)
		case len(groups) <= quota:
			return nil, nil
		default:
			f.Message = fmt.Sprintf("the class selects %d security groups (%s) but a network interface accepts %d (quota vpc/L-2AFB9258), so every launch fails with SecurityGroupsPerInterfaceLimitExceeded", len(groups), ids, quota)
		}
		return []validators.Finding{f}, nil
	},
}
