package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var ebsKMSKeyUnusable = &validators.Rule{
	ID:            "ebs-kms-key-unusable",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionDeny,
	// Keys are asked only when a volume uses one other than AWS's own alias/aws/ebs.
	MayNeed: []facts.Fact{facts.KMSKeys, facts.EBSDefaults},
	Summary: "a KMS key the class's EBS volumes would be encrypted with is missing, disabled, pending deletion, asymmetric or in another region",
	Doc: "EC2 encrypts a launch's EBS volumes with the mapping's kmsKeyID, or with the account's default EBS key " +
		"when the volume is encrypted without one (Karpenter's default root volume is). A key that does not " +
		"exist, is disabled or pending deletion, is not a symmetric encryption key, or lives in another " +
		"region makes every instance go from pending to terminated (Client.InternalError or " +
		"Client.InvalidKMSKey.InvalidState), and Karpenter keeps replacing it. A key being created or " +
		"updated gives a warning. A key whose DescribeKey the key policy refuses is not evaluated.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		uses, defErr := kmsKeyUses(c, o)
		var out []validators.Finding
		var unknown []string
		var firstErr error
		for _, u := range uses {
			k, err := c.Facts.KMSKey(c, u.ref)
			if err == nil && k.Error != "" {
				err = facts.Unknown(facts.KMSKeys, fmt.Sprintf("kms:DescribeKey of %s was refused (%s): let the guard's role describe the key in its key policy", u.ref, k.Error))
			}
			if err != nil {
				if !facts.IsUnknown(err) {
					return nil, err
				}
				unknown = append(unknown, u.ref)
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			if f, ok := kmsFinding(c, o, u, k); ok {
				out = append(out, f)
			}
		}
		switch {
		case len(out) > 0 && (defErr != nil || firstErr != nil):
			if defErr == nil {
				defErr = firstErr
			}
			return out, &validators.PartlyEvaluated{Err: defErr}
		case len(out) > 0:
			return out, nil
		case defErr != nil:
			return nil, defErr
		case firstErr != nil:
			if len(unknown) > 1 {
				return nil, facts.Unknown(facts.KMSKeys, "no answer for the keys "+strings.Join(unknown, ", ")+": "+facts.Reason(firstErr))
			}
			return nil, firstErr
		}
		return nil, nil
	},
}

// kmsKeyUse is one key an EBS volume of the class would be encrypted with.
type kmsKeyUse struct {
	ref   string
	field string
	line  int
	// byDefault is true for the account's default EBS key (no kmsKeyID on an encrypted volume).
	byDefault bool
	device    string
}

// kmsKeyUses returns the keys the class's volumes use: each mapping's kmsKeyID, and the account's
// default EBS key for an encrypted volume without one (Karpenter's default root volume when the class
// has no mappings), unless that is AWS's managed alias/aws/ebs. The error is set when the EBS
// defaults are unknown and a volume may use the default key.
func kmsKeyUses(c *validators.Context, o *objects.Object) ([]kmsKeyUse, error) {
	spec := o.NodeClass.Spec
	var out []kmsKeyUse
	needDefault := len(spec.BlockDeviceMappings) == 0 // Karpenter's default root volume: encrypted, no key
	maybeDefault := false                             // an omitted encrypted: encrypted only by default
	defField, defLine, defDevice := "spec.blockDeviceMappings", o.Fields.Line("spec"), ""
	for i, b := range spec.BlockDeviceMappings {
		if b.EBS == nil {
			continue
		}
		field := fmt.Sprintf("spec.blockDeviceMappings[%d].ebs", i)
		if b.EBS.KMSKeyID != "" {
			out = append(out, kmsKeyUse{ref: b.EBS.KMSKeyID, field: field + ".kmsKeyID", line: o.Fields.Line("spec", "blockDeviceMappings", i, "ebs", "kmsKeyID"), device: deviceLabel(o, i)})
			continue
		}
		switch {
		case b.EBS.Encrypted != nil && *b.EBS.Encrypted:
			if !needDefault {
				defField, defLine, defDevice = field, o.Fields.Line("spec", "blockDeviceMappings", i, "ebs"), deviceLabel(o, i)
			}
			needDefault = true
		case !needDefault && !maybeDefault: // encrypted left out or false: encrypted only by default
			maybeDefault = true
			defField, defLine, defDevice = field, o.Fields.Line("spec", "blockDeviceMappings", i, "ebs"), deviceLabel(o, i)
		}
	}
	if !needDefault && !maybeDefault {
		return out, nil
	}
	d, err := c.Facts.EBSDefaults(c)
	if err == nil && d == nil {
		err = facts.Unknown(facts.EBSDefaults, "the facts provider answered without EBS defaults")
	}
	if err != nil {
		return out, err
	}
	if (needDefault || d.EncryptionByDefault) && d.KMSKeyID != "" && !strings.HasSuffix(d.KMSKeyID, "alias/aws/ebs") {
		out = append(out, kmsKeyUse{ref: d.KMSKeyID, field: defField, line: defLine, byDefault: true, device: defDevice})
	}
	return out, nil
}

// unusableKeyStates are the KMS key states in which EBS cannot use a key.
var unusableKeyStates = map[string]bool{"Disabled": true, "PendingDeletion": true, "PendingImport": true, "Unavailable": true, "PendingReplicaDeletion": true}

// kmsFinding returns the finding for a key that EBS cannot use, if it cannot.
func kmsFinding(c *validators.Context, o *objects.Object, u kmsKeyUse, k *facts.KMSKey) (validators.Finding, bool) {
	vol := "EBS volume " + u.device
	if u.device == "" {
		vol = "Karpenter's default root volume (the class has no blockDeviceMappings)"
	}
	what := fmt.Sprintf("%s is encrypted with KMS key %s", vol, u.ref)
	if u.byDefault {
		what = fmt.Sprintf("%s is encrypted with the account's default EBS key %s", vol, u.ref)
	}
	f := validators.Finding{Field: u.field, Line: u.line}
	const effect = "so instances go from pending to terminated (state reason Client.InternalError or Client.InvalidKMSKey.InvalidState) and Karpenter keeps replacing them"
	id := k.ARN
	if id == "" {
		id = u.ref
	}
	region := keyRegion(k.ARN)
	if region == "" {
		region = keyRegion(u.ref)
	}
	cl, _ := c.Facts.Cluster(c)
	switch {
	case k.Found != nil && !*k.Found:
		f.Message = fmt.Sprintf("%s, which does not exist, %s", what, effect)
		f.Fix = "set kmsKeyID to a symmetric key of the cluster's region (`aws kms list-aliases`)"
	case unusableKeyStates[k.KeyState]:
		f.Message = fmt.Sprintf("%s, which is %s, %s", what, k.KeyState, effect)
		f.Fix = fmt.Sprintf("`aws kms enable-key --key-id %s`", id)
		if k.KeyState == "PendingDeletion" {
			f.Fix = fmt.Sprintf("`aws kms cancel-key-deletion --key-id %s` then `aws kms enable-key --key-id %s`", id, id)
		}
	case k.KeySpec != "" && k.KeySpec != "SYMMETRIC_DEFAULT", k.KeyUsage != "" && k.KeyUsage != "ENCRYPT_DECRYPT":
		f.Message = fmt.Sprintf("%s, whose spec is %s and usage %s, but EBS supports only symmetric encryption keys (SYMMETRIC_DEFAULT, ENCRYPT_DECRYPT), %s", what, k.KeySpec, k.KeyUsage, effect)
		f.Fix = "set kmsKeyID to a symmetric encryption key of the cluster's region"
	case cl != nil && region != "" && cl.Region != "" && region != cl.Region:
		f.Message = fmt.Sprintf("%s, which lives in %s while the cluster's instances launch in %s, %s", what, region, cl.Region, effect)
		f.Fix = fmt.Sprintf("set kmsKeyID to a symmetric key of %s (a multi-Region replica of the key, or another key)", cl.Region)
	case k.KeyState == "Creating" || k.KeyState == "Updating":
		f.Message = fmt.Sprintf("%s, which is %s; until it is Enabled launches fail", what, k.KeyState)
		f.Fix = fmt.Sprintf("wait until `aws kms describe-key --key-id %s` says Enabled", id)
		f.AtMost = config.ActionWarn
	default:
		return f, false
	}
	if u.byDefault {
		f.Fix += ", or set kmsKeyID on the mapping, or `aws ec2 modify-ebs-default-kms-key-id --kms-key-id <a usable key>`"
	}
	return f, true
}

// keyRegion returns the region of a KMS key ARN ("" when it is not an ARN).
func keyRegion(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 || parts[0] != "arn" || parts[2] != "kms" {
		return ""
	}
	return parts[3]
}
