package fakeaws

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// SSM speaks JSON-RPC (awsJson1_1): POST / with X-Amz-Target: AmazonSSM.<Operation> and a JSON body;
// errors are {"__type": code, "message": …} with a 400 for client errors.
type ssmAPI struct{}

const ssmContentType = "application/x-amz-json-1.1"

// ssmLastModified is the LastModifiedDate of every parameter (2025-01-01T00:00:00Z): the snapshot has none.
const ssmLastModified = 1735689600

type ssmGetParameterInput struct {
	Name           *string
	WithDecryption *bool
}

type ssmParameter struct {
	Name             string
	Type             string
	Value            string
	Version          int64
	LastModifiedDate float64
	ARN              string
	DataType         string
	Selector         string `json:",omitempty"`
}

func (ssmAPI) parse(r *request) error {
	target := r.Header.Get("X-Amz-Target")
	op, ok := strings.CutPrefix(target, "AmazonSSM.")
	if !ok || op == "" {
		return badRequest("UnknownOperationException", "X-Amz-Target %q names no AmazonSSM operation", target)
	}
	r.op = op
	if op != "GetParameter" {
		return badRequest("UnknownOperationException", "fakeaws serves only GetParameter of SSM, not %s", op)
	}
	in, err := ssmInput(r)
	if err != nil {
		return err
	}
	r.params = in
	return nil
}

func (ssmAPI) serve(w http.ResponseWriter, r *request, wd *world) error {
	in := r.params.(*ssmGetParameterInput)
	name, selector := ssmName(*in.Name)
	if wd.cf.SSMParameters == nil {
		return denied(r, wd)
	}
	value, ok := (*wd.cf.SSMParameters)[name]
	if !ok && strings.HasPrefix(*in.Name, "arn:") {
		// …:parameter/plain is the ARN of "plain" as well as of "/plain".
		name = strings.TrimPrefix(name, "/")
		value, ok = (*wd.cf.SSMParameters)[name]
	}
	if !ok {
		return &apiError{status: http.StatusBadRequest, code: "ParameterNotFound"} // SSM sends no message
	}
	if selector != "" && selector != ":1" {
		return badRequest("ParameterVersionNotFound", "Systems Manager could not find version %s of %s. Verify the version and try again.", strings.TrimPrefix(selector, ":"), name)
	}
	dataType := "text"
	if strings.HasPrefix(value, "ami-") {
		dataType = "aws:ec2:image"
	}
	out := ssmParameter{Name: name, Type: "String", Value: value, Version: 1, LastModifiedDate: ssmLastModified,
		ARN: ssmARN(wd, name), DataType: dataType, Selector: selector}
	return writeJSON(w, ssmContentType, r, map[string]any{"Parameter": out})
}

// ssmInput decodes GetParameter's body.
func ssmInput(r *request) (*ssmGetParameterInput, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	var in ssmGetParameterInput
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, badRequest("SerializationException", "cannot decode the request body: %v", err)
	}
	if in.Name == nil || *in.Name == "" {
		return nil, badRequest("ValidationException", "1 validation error detected: Value null at 'name' failed to satisfy constraint: Member must not be null")
	}
	return &in, nil
}

// ssmName splits a GetParameter Name into the parameter's name and its selector (":1", ":label"): it may
// be an ARN (arn:aws:ssm:REGION:ACCOUNT:parameter/NAME) and carry a version or label selector.
func ssmName(name string) (string, string) {
	if strings.HasPrefix(name, "arn:") {
		if _, res, ok := strings.Cut(name, ":parameter"); ok {
			name = res
		}
	}
	if i := strings.LastIndex(name, ":"); i >= 0 {
		return name[:i], name[i:]
	}
	return name, ""
}

// ssmARN is a parameter's ARN: AWS's public parameters (/aws/service/…) have no account.
func ssmARN(wd *world, name string) string {
	account := wd.account
	if strings.HasPrefix(name, "/aws/service/") {
		account = ""
	}
	return wd.arn("ssm", wd.region, account, "parameter/"+strings.TrimPrefix(name, "/"))
}

func (ssmAPI) fail(w http.ResponseWriter, r *request, e *apiError) {
	body := map[string]string{"__type": e.code}
	if e.message != "" {
		body["message"] = e.message
	}
	w.Header().Set("X-Amzn-RequestId", r.id)
	_ = writeJSONStatus(w, ssmContentType, e.status, body)
}

func (ssmAPI) resource(r *request, wd *world) string {
	in, ok := r.params.(*ssmGetParameterInput)
	if !ok {
		return ""
	}
	name, _ := ssmName(*in.Name)
	return ssmARN(wd, name)
}
