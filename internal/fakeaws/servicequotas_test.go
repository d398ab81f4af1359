package fakeaws_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas"
	sqtypes "github.com/aws/aws-sdk-go-v2/service/servicequotas/types"
)

func TestServiceQuotasGetServiceQuota(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, header+`cluster: {name: c, region: eu-west-1, accountID: "111122223333"}
serviceQuotas: {vpc/L-2AFB9258: 16, ec2/L-1216C47A: 640}
`))
	out, err := c.sq.GetServiceQuota(ctx, &servicequotas.GetServiceQuotaInput{ServiceCode: aws.String("vpc"), QuotaCode: aws.String("L-2AFB9258")})
	if err != nil {
		t.Fatal(err)
	}
	q := out.Quota
	if aws.ToFloat64(q.Value) != 16 || aws.ToString(q.ServiceCode) != "vpc" || aws.ToString(q.QuotaCode) != "L-2AFB9258" ||
		aws.ToString(q.QuotaName) != "Security groups per network interface" || aws.ToString(q.QuotaArn) != "arn:aws:servicequotas:eu-west-1:111122223333:vpc/L-2AFB9258" ||
		!q.Adjustable || aws.ToString(q.Unit) != "None" {
		t.Errorf("quota %+v", q)
	}
	out, err = c.sq.GetServiceQuota(ctx, &servicequotas.GetServiceQuotaInput{ServiceCode: aws.String("ec2"), QuotaCode: aws.String("L-1216C47A")})
	if err != nil || aws.ToFloat64(out.Quota.Value) != 640 {
		t.Errorf("ec2/L-1216C47A: %+v, %v", out, err)
	}

	// A quota without an entry has no applied value the snapshot knows.
	_, err = c.sq.GetServiceQuota(ctx, &servicequotas.GetServiceQuotaInput{ServiceCode: aws.String("vpc"), QuotaCode: aws.String("L-0EA8095F")})
	wantTyped[*sqtypes.NoSuchResourceException](t, err)
	wantAPIError(t, err, "NoSuchResourceException", http.StatusBadRequest, "does not exist")

	_, err = c.sq.ListServiceQuotas(ctx, &servicequotas.ListServiceQuotasInput{ServiceCode: aws.String("vpc")})
	wantAPIError(t, err, "UnknownOperationException", http.StatusBadRequest, "ListServiceQuotas")

	// No serviceQuotas section: unknown, so access is denied.
	_, c = start(t, snapshot(t, header+`cluster: {name: c, accountID: "111122223333"}`+"\n"))
	_, err = c.sq.GetServiceQuota(ctx, &servicequotas.GetServiceQuotaInput{ServiceCode: aws.String("vpc"), QuotaCode: aws.String("L-2AFB9258")})
	wantTyped[*sqtypes.AccessDeniedException](t, err)
	wantAPIError(t, err, "AccessDeniedException", http.StatusBadRequest,
		"is not authorized to perform: servicequotas:GetServiceQuota on resource: arn:aws:servicequotas:us-east-1:111122223333:vpc/L-2AFB9258")
}
