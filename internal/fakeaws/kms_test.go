package fakeaws_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// keys is a snapshot whose kmsKeys entries use every form of reference.
const keys = header + `cluster: {name: c, region: eu-west-1, accountID: "111122223333"}
kmsKeys:
  - {ref: alias/karpenter-ebs, found: true, arn: "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
     keyState: Enabled, keySpec: SYMMETRIC_DEFAULT, keyUsage: ENCRYPT_DECRYPT}
  - {ref: "arn:aws:kms:eu-west-1:111122223333:alias/aws/ebs", found: true, arn: "arn:aws:kms:eu-west-1:111122223333:key/aaaa0000-12ab-34cd-56ef-1234567890ab",
     keyState: Disabled, keySpec: SYMMETRIC_DEFAULT, keyUsage: ENCRYPT_DECRYPT}
  - {ref: 5678abcd-12ab-34cd-56ef-1234567890ab, found: true, arn: "arn:aws:kms:eu-west-1:111122223333:key/5678abcd-12ab-34cd-56ef-1234567890ab",
     keyState: Enabled, keySpec: RSA_2048, keyUsage: SIGN_VERIFY}
  - {ref: alias/gone, found: false}
  - {ref: 9999abcd-12ab-34cd-56ef-1234567890ab, found: false}
  - {ref: "arn:aws:kms:eu-west-1:444455556666:key/0000abcd-12ab-34cd-56ef-1234567890ab", error: AccessDenied}
`

func TestKMSDescribeKey(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, keys))
	for _, tc := range []struct {
		ref, id, arn, manager string
		enabled               bool
		state                 kmstypes.KeyState
		spec                  kmstypes.KeySpec
		usage                 kmstypes.KeyUsageType
	}{
		{"alias/karpenter-ebs", "1234abcd-12ab-34cd-56ef-1234567890ab", "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab", "CUSTOMER",
			true, kmstypes.KeyStateEnabled, kmstypes.KeySpecSymmetricDefault, kmstypes.KeyUsageTypeEncryptDecrypt},
		{"arn:aws:kms:eu-west-1:111122223333:alias/aws/ebs", "aaaa0000-12ab-34cd-56ef-1234567890ab", "arn:aws:kms:eu-west-1:111122223333:key/aaaa0000-12ab-34cd-56ef-1234567890ab", "AWS",
			false, kmstypes.KeyStateDisabled, kmstypes.KeySpecSymmetricDefault, kmstypes.KeyUsageTypeEncryptDecrypt},
		{"5678abcd-12ab-34cd-56ef-1234567890ab", "5678abcd-12ab-34cd-56ef-1234567890ab", "arn:aws:kms:eu-west-1:111122223333:key/5678abcd-12ab-34cd-56ef-1234567890ab", "CUSTOMER",
			true, kmstypes.KeyStateEnabled, kmstypes.KeySpecRsa2048, kmstypes.KeyUsageTypeSignVerify},
	} {
		out, err := c.kms.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String(tc.ref)})
		if err != nil {
			t.Errorf("%s: %v", tc.ref, err)
			continue
		}
		md := out.KeyMetadata
		if aws.ToString(md.KeyId) != tc.id || aws.ToString(md.Arn) != tc.arn || aws.ToString(md.AWSAccountId) != "111122223333" ||
			md.Enabled != tc.enabled || md.KeyState != tc.state || md.KeySpec != tc.spec || md.KeyUsage != tc.usage ||
			string(md.KeyManager) != tc.manager || md.Origin != kmstypes.OriginTypeAwsKms {
			t.Errorf("%s: metadata %+v", tc.ref, md)
		}
		if md.CreationDate == nil || !md.CreationDate.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: CreationDate %v", tc.ref, md.CreationDate)
		}
	}
}

func TestKMSErrors(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, keys))
	describe := func(ref string) error {
		_, err := c.kms.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String(ref)})
		return err
	}

	err := describe("alias/gone")
	wantTyped[*kmstypes.NotFoundException](t, err)
	wantAPIError(t, err, "NotFoundException", http.StatusBadRequest, "Alias arn:aws:kms:eu-west-1:111122223333:alias/gone is not found.")
	wantAPIError(t, describe("9999abcd-12ab-34cd-56ef-1234567890ab"), "NotFoundException", http.StatusBadRequest,
		"Key 'arn:aws:kms:eu-west-1:111122223333:key/9999abcd-12ab-34cd-56ef-1234567890ab' does not exist")

	// The key policy refuses the caller: a resource-based denial, answered as KMS answers it (the SDK
	// models no type for it).
	err = describe("arn:aws:kms:eu-west-1:444455556666:key/0000abcd-12ab-34cd-56ef-1234567890ab")
	wantAPIError(t, err, "AccessDeniedException", http.StatusBadRequest,
		"is not authorized to perform: kms:DescribeKey on resource: arn:aws:kms:eu-west-1:444455556666:key/0000abcd-12ab-34cd-56ef-1234567890ab because no resource-based policy allows")

	// No entry: what KMS answers is unknown, a server error naming the reference.
	err = describe("alias/nobody")
	wantTyped[*kmstypes.KMSInternalException](t, err)
	wantAPIError(t, err, "KMSInternalException", http.StatusInternalServerError, "the facts snapshot has no kmsKeys entry for alias/nobody")

	// The nil key id never names a key, entry or not.
	for _, ref := range []string{"00000000-0000-0000-0000-000000000000", "arn:aws:kms:eu-west-1:111122223333:key/00000000-0000-0000-0000-000000000000"} {
		wantAPIError(t, describe(ref), "NotFoundException", http.StatusBadRequest, "does not exist")
	}

	_, err = c.kms.ListKeys(ctx, &kms.ListKeysInput{})
	wantAPIError(t, err, "UnknownOperationException", http.StatusBadRequest, "ListKeys")

	// No kmsKeys section: unknown, so access is denied, the probe's key included.
	_, c = start(t, snapshot(t, header+`cluster: {name: c, accountID: "111122223333"}`+"\n"))
	for _, ref := range []string{"alias/karpenter-ebs", "00000000-0000-0000-0000-000000000000"} {
		err = describe(ref)
		wantAPIError(t, err, "AccessDeniedException", http.StatusBadRequest, "is not authorized to perform: kms:DescribeKey on resource: arn:aws:kms:us-east-1:111122223333:")
	}
}

// TestJSONServicesUnsigned: a request without a signature (curl in a demo) is routed by its
// X-Amz-Target.
func TestJSONServicesUnsigned(t *testing.T) {
	srv, _ := start(t, snapshot(t, keys+"serviceQuotas: {vpc/L-2AFB9258: 5}\n"))
	url := srv.Start(t)
	for target, body := range map[string]string{
		"TrentService.DescribeKey":               `{"KeyId": "alias/karpenter-ebs"}`,
		"ServiceQuotasV20190624.GetServiceQuota": `{"ServiceCode": "vpc", "QuotaCode": "L-2AFB9258"}`,
	} {
		req, err := http.NewRequest(http.MethodPost, url+"/", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amz-Target", target)
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s unsigned: HTTP %d", target, resp.StatusCode)
		}
	}
}
