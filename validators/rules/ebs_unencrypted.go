package rules

import (
	"fmt"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

var ebsUnencrypted = &validators.Rule{
	ID:            "ebs-unencrypted",
	Kinds:         []string{validators.KindEC2NodeClass},
	DefaultAction: config.ActionWarn,
	MayNeed:       []facts.Fact{facts.EBSDefaults},
	Summary:       "a `blockDeviceMappings[].ebs` volume is unencrypted (`encrypted: false`, or unset without EBS encryption by default)",
	Doc: "An EBS volume created unencrypted holds container images, logs and emptyDir data at rest in clear. " +
		"A mapping with encrypted: false creates one unless the account encrypts new EBS volumes by default in " +
		"the region (EC2 encryption by default then encrypts every new volume, whatever the mapping says). A " +
		"mapping that leaves encrypted out creates one when the account does not: EC2 creates a blank volume " +
		"unencrypted, and one restored from a snapshot (the AMI's root volume) as encrypted as the snapshot, " +
		"which the EKS-optimized AMIs' are not. Without blockDeviceMappings Karpenter's own default mappings " +
		"apply, and they are encrypted. Without the account's EBS defaults (ebsDefaults), encrypted: false is " +
		"still reported and a left-out encrypted is not evaluated.",
	Check: func(c *validators.Context, o *objects.Object) ([]validators.Finding, error) {
		explicit, omitted := unencryptedMappings(o.NodeClass.Spec)
		if len(explicit)+len(omitted) == 0 {
			return nil, nil
		}
		d, err := c.Facts.EBSDefaults(c)
		if err == nil && d == nil {
			err = facts.Unknown(facts.EBSDefaults, "the facts provider answered without EBS defaults")
		}
		if err != nil {
			// Whether the account encrypts by default is unknown: encrypted: false still asks for an
			// unencrypted volume, while a left-out encrypted could be either.
			var out []validators.Finding
			for _, i := range explicit {
				out = append(out, ebsFinding(o, i, fmt.Sprintf("EBS volume %s is created unencrypted (encrypted: false), unless the account encrypts new volumes by default", deviceLabel(o, i))))
			}
			switch {
			case len(omitted) == 0:
				return out, nil
			case len(out) == 0:
				return nil, err
			}
			return out, &validators.PartlyEvaluated{Err: err}
		}
		if d.EncryptionByDefault {
			return nil, nil // EC2 encrypts every new volume, whatever the mapping says
		}
		var out []validators.Finding
		for _, i := range explicit {
			out = append(out, ebsFinding(o, i, fmt.Sprintf("EBS volume %s is created unencrypted: the mapping sets encrypted: false and the account does not encrypt new EBS volumes by default in this region", deviceLabel(o, i))))
		}
		for _, i := range omitted {
			f := ebsFinding(o, i, fmt.Sprintf("EBS volume %s is created unencrypted%s: the mapping leaves encrypted out and the account does not encrypt new EBS volumes by default in this region", deviceLabel(o, i), restoredFrom(o, i)))
			f.Fix = "encrypted: true (or encrypt every new EBS volume of the account in the cluster's region: aws ec2 enable-ebs-encryption-by-default)"
			out = append(out, f)
		}
		return out, nil
	},
}

// unencryptedMappings returns the positions of the block device mappings of spec whose EBS volume
// is not said to be encrypted: explicit ones set encrypted: false, omitted ones leave it out. An
// EC2NodeClass without mappings gets Karpenter's own, which set encrypted: true (karpenter-provider-aws
// DefaultEBS). The rule asks the EBS defaults only when one of these is not empty.
func unencryptedMappings(spec objects.EC2NodeClassSpec) (explicit, omitted []int) {
	for i, b := range spec.BlockDeviceMappings {
		switch {
		case b.EBS == nil:
		case b.EBS.Encrypted == nil:
			omitted = append(omitted, i)
		case !*b.EBS.Encrypted:
			explicit = append(explicit, i)
		}
	}
	return explicit, omitted
}

// ebsFinding is the finding about mapping i, at its encrypted field (or where it would go).
func ebsFinding(o *objects.Object, i int, msg string) validators.Finding {
	path := []any{"spec", "blockDeviceMappings", i, "ebs", "encrypted"}
	return validators.Finding{Field: objects.Path(path...), Line: o.Fields.Line(path...), Message: msg, Fix: "encrypted: true"}
}

// deviceLabel names mapping i by its device, or by its position when it names none.
func deviceLabel(o *objects.Object, i int) string {
	if dev := o.NodeClass.Spec.BlockDeviceMappings[i].DeviceName; dev != "" {
		return dev
	}
	return fmt.Sprintf("mapping %d", i)
}

// amiRootDevices are the root device names of the AMI families Karpenter launches (AL2, AL2023 and
// Bottlerocket: /dev/xvda; Windows: /dev/sda1): a mapping of one of them replaces the AMI's root volume,
// which EC2 restores from the AMI's snapshot.
var amiRootDevices = map[string]bool{"/dev/xvda": true, "/dev/sda1": true}

// restoredFrom qualifies "created unencrypted" for mapping i when its encrypted is left out and the
// volume is restored from a snapshot, whose encryption EC2 then keeps: its own snapshotID, or the
// AMI's snapshot for the root device.
func restoredFrom(o *objects.Object, i int) string {
	if id, _ := o.Fields.Value("spec", "blockDeviceMappings", i, "ebs", "snapshotID").(string); id != "" {
		return fmt.Sprintf(" unless snapshot %s is encrypted", id)
	}
	if amiRootDevices[o.NodeClass.Spec.BlockDeviceMappings[i].DeviceName] {
		return " unless the AMI's snapshot is encrypted (the EKS-optimized AMIs' are not)"
	}
	return ""
}
