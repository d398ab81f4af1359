package live

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// SSMParameter implements facts.Provider with SSM GetParameter (ParameterNotFound: absent).
func (p *Provider) SSMParameter(ctx context.Context, name string) (string, bool, error) {
	type param struct {
		value string
		ok    bool
	}
	v, err := lookup(ctx, p, facts.SSMParameters, "ssm:GetParameter", name, func(ctx context.Context) (param, bool, error) {
		out, err := p.opts.Clients.SSM.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
		switch classify(err) {
		case OutcomeNotFound:
			return param{}, true, nil
		case OutcomeDenied:
			if !strings.HasPrefix(name, "/aws/service/") {
				return param{}, false, &CallError{Action: "ssm:GetParameter", Outcome: OutcomeDenied, Err: err,
					Hint: "manifests/iam-policy.json grants the public /aws/service/* parameters only: add " + name + " to its ssm:GetParameter statement"}
			}
		}
		if err != nil || out.Parameter == nil {
			return param{}, false, errors.Join(err, errorIf(out != nil && out.Parameter == nil, "GetParameter answered without a parameter"))
		}
		return param{value: aws.ToString(out.Parameter.Value), ok: true}, false, nil
	})
	return v.value, v.ok, err
}
