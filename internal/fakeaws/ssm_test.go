package fakeaws_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
)

func TestSSMGetParameter(t *testing.T) {
	ctx := context.Background()
	const x86 = "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.33-v20251112/image_id"
	_, c := start(t, production(t))
	for _, tc := range []struct {
		name, ask, value, arn, selector string
	}{
		{"by name", x86, "ami-0aa11bb22cc33dd44", "arn:aws:ssm:us-east-1::parameter" + x86, ""},
		{"by ARN", "arn:aws:ssm:us-east-1::parameter" + x86, "ami-0aa11bb22cc33dd44", "arn:aws:ssm:us-east-1::parameter" + x86, ""},
		{"version selector", x86 + ":1", "ami-0aa11bb22cc33dd44", "arn:aws:ssm:us-east-1::parameter" + x86, ":1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(tc.ask)})
			if err != nil {
				t.Fatal(err)
			}
			p := out.Parameter
			if aws.ToString(p.Name) != x86 || aws.ToString(p.Value) != tc.value || aws.ToString(p.ARN) != tc.arn || p.Type != ssmtypes.ParameterTypeString ||
				p.Version != 1 || aws.ToString(p.DataType) != "aws:ec2:image" || aws.ToString(p.Selector) != tc.selector {
				t.Errorf("parameter %+v", p)
			}
			if p.LastModifiedDate == nil || !p.LastModifiedDate.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("LastModifiedDate %v", p.LastModifiedDate)
			}
		})
	}

	// A parameter of one's own account has the account in its ARN.
	_, c = start(t, snapshot(t, header+`cluster: {name: c, region: eu-west-1, accountID: "111122223333"}
ssmParameters: {/team/golden-ami: ami-0123, plain: text}
`))
	out, err := c.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/team/golden-ami"), WithDecryption: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(out.Parameter.ARN); got != "arn:aws:ssm:eu-west-1:111122223333:parameter/team/golden-ami" {
		t.Errorf("ARN %q", got)
	}
	for _, ask := range []string{"plain", "arn:aws:ssm:eu-west-1:111122223333:parameter/plain"} {
		out, err = c.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(ask)})
		if err != nil || aws.ToString(out.Parameter.Name) != "plain" || aws.ToString(out.Parameter.DataType) != "text" ||
			aws.ToString(out.Parameter.ARN) != "arn:aws:ssm:eu-west-1:111122223333:parameter/plain" {
			t.Errorf("%s: %+v, %v", ask, out, err)
		}
	}
}

func TestSSMErrors(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, production(t))
	_, err := c.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/aws/service/eks/optimized-ami/1.99/amazon-linux-2023/x86_64/standard/recommended/image_id")})
	wantTyped[*ssmtypes.ParameterNotFound](t, err)
	wantAPIError(t, err, "ParameterNotFound", http.StatusBadRequest, "")

	const x86 = "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.33-v20251112/image_id"
	_, err = c.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(x86 + ":2")})
	wantTyped[*ssmtypes.ParameterVersionNotFound](t, err)

	_, err = c.ssm.GetParameters(ctx, &ssm.GetParametersInput{Names: []string{x86}})
	wantAPIError(t, err, "UnknownOperationException", http.StatusBadRequest, "GetParameters")

	// No ssmParameters section: unknown, so access is denied (SSM answers that with a 400).
	_, c = start(t, snapshot(t, header+`cluster: {name: c, accountID: "111122223333"}`+"\n"))
	_, err = c.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(x86)})
	wantTyped[*ssmtypes.AccessDeniedException](t, err)
	wantAPIError(t, err, "AccessDeniedException", http.StatusBadRequest, "is not authorized to perform: ssm:GetParameter on resource: arn:aws:ssm:us-east-1::parameter"+x86)
}
