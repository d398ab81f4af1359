package fakeaws

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// KMS speaks JSON-RPC (awsJson1_1): POST / with X-Amz-Target: TrentService.<Operation> and a JSON body;
// errors are {"__type": code, "message": …}. The fake serves DescribeKey from the snapshot's kmsKeys
// section, a lookup keyed by the reference as a class writes it (an alias name or ARN, a key id or
// ARN), matched exactly:
//
//   - an entry found: true answers the key's metadata; found: false, NotFoundException; error:
//     AccessDenied, the AccessDeniedException of a key policy that does not let the caller read the
//     key (an answer, for the live provider, as for the snapshot);
//   - a reference without an entry is unknown, as it is to the snapshot provider: KMSInternalException
//     (a server error, which the live provider reports as unknown with the fake's message);
//   - the nil key id 00000000-0000-0000-0000-000000000000, alone or in a key ARN, never names a key:
//     NotFoundException, as KMS answers it (the live provider's permission probe asks it);
//   - without the section, every call is denied (AccessDeniedException), as for any unknown section.
type kmsAPI struct{}

const (
	kmsContentType = "application/x-amz-json-1.1"
	// kmsNilKeyID names no key in any account.
	kmsNilKeyID = "00000000-0000-0000-0000-000000000000"
	// kmsCreationDate is the CreationDate of every key (2025-01-01T00:00:00Z): the snapshot has none.
	kmsCreationDate = 1735689600
)

type kmsDescribeKeyInput struct {
	KeyID       *string  `json:"KeyId"`
	GrantTokens []string `json:",omitempty"`
}

type kmsKeyMetadata struct {
	AWSAccountID          string   `json:"AWSAccountId,omitempty"`
	KeyID                 string   `json:"KeyId"`
	Arn                   string   `json:"Arn,omitempty"`
	CreationDate          float64  `json:"CreationDate"`
	Enabled               bool     `json:"Enabled"`
	Description           string   `json:"Description"`
	KeyUsage              string   `json:"KeyUsage,omitempty"`
	KeyState              string   `json:"KeyState,omitempty"`
	Origin                string   `json:"Origin"`
	KeyManager            string   `json:"KeyManager"`
	CustomerMasterKeySpec string   `json:"CustomerMasterKeySpec,omitempty"`
	KeySpec               string   `json:"KeySpec,omitempty"`
	EncryptionAlgorithms  []string `json:"EncryptionAlgorithms,omitempty"`
	MultiRegion           bool     `json:"MultiRegion"`
}

func (kmsAPI) parse(r *request) error {
	target := r.Header.Get("X-Amz-Target")
	op, ok := strings.CutPrefix(target, "TrentService.")
	if !ok || op == "" {
		return badRequest("UnknownOperationException", "X-Amz-Target %q names no TrentService operation", target)
	}
	r.op = op
	if op != "DescribeKey" {
		return badRequest("UnknownOperationException", "fakeaws serves only DescribeKey of KMS, not %s", op)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return fmt.Errorf("read request body: %w", err)
	}
	var in kmsDescribeKeyInput
	if err := json.Unmarshal(body, &in); err != nil {
		return badRequest("SerializationException", "cannot decode the request body: %v", err)
	}
	if in.KeyID == nil || *in.KeyID == "" {
		return badRequest("ValidationException", "1 validation error detected: Value null at 'keyId' failed to satisfy constraint: Member must not be null")
	}
	r.params = &in
	return nil
}

func (kmsAPI) serve(w http.ResponseWriter, r *request, wd *world) error {
	ref := *r.params.(*kmsDescribeKeyInput).KeyID
	if wd.cf.KMSKeys == nil {
		return denied(r, wd)
	}
	if ref == kmsNilKeyID || strings.HasPrefix(ref, "arn:") && strings.HasSuffix(ref, ":key/"+kmsNilKeyID) {
		return kmsNotFound(wd, ref)
	}
	var k *facts.KMSKey
	for i := range *wd.cf.KMSKeys {
		if e := &(*wd.cf.KMSKeys)[i]; e.Ref == ref {
			k = e
			break
		}
	}
	switch {
	case k == nil:
		return &apiError{status: http.StatusInternalServerError, code: "KMSInternalException",
			message: fmt.Sprintf("fakeaws: the facts snapshot has no kmsKeys entry for %s, so what KMS answers is unknown", ref)}
	case k.Error == facts.KMSAccessDenied:
		return &apiError{status: http.StatusBadRequest, code: "AccessDeniedException",
			message: "User: " + wd.caller + " is not authorized to perform: kms:DescribeKey on resource: " + kmsResource(wd, ref) +
				" because no resource-based policy allows the kms:DescribeKey action"}
	case k.Found == nil || !*k.Found:
		return kmsNotFound(wd, ref)
	}
	return writeJSON(w, kmsContentType, r, map[string]any{"KeyMetadata": kmsMetadata(wd, k)})
}

// kmsMetadata is DescribeKey's KeyMetadata for a key the snapshot found: its id and account come from
// its ARN.
func kmsMetadata(wd *world, k *facts.KMSKey) kmsKeyMetadata {
	md := kmsKeyMetadata{
		KeyID: k.ARN[strings.LastIndex(k.ARN, "/")+1:], Arn: k.ARN, CreationDate: kmsCreationDate,
		Enabled: k.KeyState == facts.KeyStateEnabled, KeyUsage: k.KeyUsage, KeyState: k.KeyState,
		Origin: "AWS_KMS", KeyManager: "CUSTOMER", CustomerMasterKeySpec: k.KeySpec, KeySpec: k.KeySpec,
	}
	if parts := strings.SplitN(k.ARN, ":", 6); len(parts) == 6 {
		md.AWSAccountID = parts[4]
	}
	if strings.HasPrefix(k.Ref, "alias/aws/") || strings.Contains(k.Ref, ":alias/aws/") {
		md.KeyManager = "AWS"
	}
	if k.KeySpec == "SYMMETRIC_DEFAULT" {
		md.EncryptionAlgorithms = []string{"SYMMETRIC_DEFAULT"}
	}
	return md
}

// kmsNotFound is KMS's NotFoundException for ref, worded as KMS words it for an alias and for a key.
func kmsNotFound(wd *world, ref string) *apiError {
	msg := fmt.Sprintf("Key '%s' does not exist", kmsResource(wd, ref))
	if strings.HasPrefix(ref, "alias/") || strings.Contains(ref, ":alias/") {
		msg = fmt.Sprintf("Alias %s is not found.", kmsResource(wd, ref))
	}
	return &apiError{status: http.StatusBadRequest, code: "NotFoundException", message: msg}
}

// kmsResource is the ARN of a key reference: itself when it is one, else the alias or key of the
// caller's account and region.
func kmsResource(wd *world, ref string) string {
	switch {
	case strings.HasPrefix(ref, "arn:"):
		return ref
	case strings.HasPrefix(ref, "alias/"):
		return wd.arn("kms", wd.region, wd.account, ref)
	}
	return wd.arn("kms", wd.region, wd.account, "key/"+ref)
}

func (kmsAPI) fail(w http.ResponseWriter, r *request, e *apiError) { failJSON(w, r, kmsContentType, e) }

func (kmsAPI) resource(r *request, wd *world) string {
	in, ok := r.params.(*kmsDescribeKeyInput)
	if !ok {
		return ""
	}
	return kmsResource(wd, *in.KeyID)
}

// failJSON writes an error of a JSON-RPC service (awsJson1_1): {"__type": code, "message": …}.
func failJSON(w http.ResponseWriter, r *request, contentType string, e *apiError) {
	body := map[string]string{"__type": e.code}
	if e.message != "" {
		body["message"] = e.message
	}
	w.Header().Set("X-Amzn-RequestId", r.id)
	_ = writeJSONStatus(w, contentType, e.status, body)
}
