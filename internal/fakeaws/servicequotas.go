package fakeaws

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// Service Quotas speaks JSON-RPC (awsJson1_1): POST / with X-Amz-Target:
// ServiceQuotasV20190624.<Operation>. The fake serves GetServiceQuota from the snapshot's
// serviceQuotas section, a lookup keyed by "service/quota-code": a quota with an entry answers its
// applied value; one without has no applied value the snapshot knows, which Service Quotas answers
// NoSuchResourceException (the live provider reports the quota as unknown, as the snapshot provider
// does). Without the section every call is denied (AccessDeniedException), as for any unknown section.
type serviceQuotasAPI struct{}

const serviceQuotasContentType = "application/x-amz-json-1.1"

type getServiceQuotaInput struct {
	ServiceCode *string
	QuotaCode   *string
	ContextID   *string `json:"ContextId,omitempty"`
}

type serviceQuota struct {
	ServiceCode string
	ServiceName string `json:",omitempty"`
	QuotaArn    string
	QuotaCode   string
	QuotaName   string `json:",omitempty"`
	Value       float64
	Unit        string
	Adjustable  bool
	GlobalQuota bool
}

// quotaNames are the names of the quotas the rules read, as Service Quotas gives them.
var quotaNames = map[string][2]string{
	facts.QuotaSecurityGroupsPerENI: {"Amazon Virtual Private Cloud (Amazon VPC)", "Security groups per network interface"},
}

func (serviceQuotasAPI) parse(r *request) error {
	target := r.Header.Get("X-Amz-Target")
	op, ok := strings.CutPrefix(target, "ServiceQuotasV20190624.")
	if !ok || op == "" {
		return badRequest("UnknownOperationException", "X-Amz-Target %q names no ServiceQuotasV20190624 operation", target)
	}
	r.op = op
	if op != "GetServiceQuota" {
		return badRequest("UnknownOperationException", "fakeaws serves only GetServiceQuota of Service Quotas, not %s", op)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return fmt.Errorf("read request body: %w", err)
	}
	var in getServiceQuotaInput
	if err := json.Unmarshal(body, &in); err != nil {
		return badRequest("SerializationException", "cannot decode the request body: %v", err)
	}
	for name, v := range map[string]*string{"serviceCode": in.ServiceCode, "quotaCode": in.QuotaCode} {
		if v == nil || *v == "" {
			return badRequest("ValidationException", "1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", name)
		}
	}
	r.params = &in
	return nil
}

func (serviceQuotasAPI) serve(w http.ResponseWriter, r *request, wd *world) error {
	in := r.params.(*getServiceQuotaInput)
	if wd.cf.ServiceQuotas == nil {
		return denied(r, wd)
	}
	name := *in.ServiceCode + "/" + *in.QuotaCode
	value, ok := (*wd.cf.ServiceQuotas)[name]
	if !ok {
		return badRequest("NoSuchResourceException", "The request failed because the specified service quota does not exist.")
	}
	names := quotaNames[name]
	return writeJSON(w, serviceQuotasContentType, r, map[string]any{"Quota": serviceQuota{
		ServiceCode: *in.ServiceCode, ServiceName: names[0], QuotaArn: quotaARN(wd, in), QuotaCode: *in.QuotaCode, QuotaName: names[1],
		Value: float64(value), Unit: "None", Adjustable: true,
	}})
}

// quotaARN is a quota's ARN: arn:aws:servicequotas:us-east-1:111122223333:vpc/L-2AFB9258.
func quotaARN(wd *world, in *getServiceQuotaInput) string {
	return wd.arn("servicequotas", wd.region, wd.account, *in.ServiceCode+"/"+*in.QuotaCode)
}

func (serviceQuotasAPI) fail(w http.ResponseWriter, r *request, e *apiError) {
	failJSON(w, r, serviceQuotasContentType, e)
}

func (serviceQuotasAPI) resource(r *request, wd *world) string {
	in, ok := r.params.(*getServiceQuotaInput)
	if !ok {
		return ""
	}
	return quotaARN(wd, in)
}
