package userdata

import "testing"

func TestFeatureGate(t *testing.T) {
	gate := func(v string) string {
		return "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  featureGates:\n    InstanceIdNodeName: " + v + "\n"
	}
	part := func(body string) string { return "Content-Type: application/node.eks.aws\n\n" + body }
	tests := []struct {
		name         string
		family, text string
		enabled, set bool
	}{
		{"bare NodeConfig", FamilyAL2023, gate("true"), true, true},
		{"bare NodeConfig, off", FamilyAL2023, gate("false"), false, true},
		{"MIME part", FamilyAL2023, mimeDoc(shellPart, part(gate("true"))), true, true},
		{"base64 part", FamilyAL2023, mimeDoc("Content-Type: application/node.eks.aws\n\n" + b64(gate("true"))), true, true},
		{"gzip part", FamilyAL2023, mimeDoc("Content-Type: application/node.eks.aws\n\n" + gzipB64(t, gate("true"))), true, true},
		{"the last part wins", FamilyAL2023, mimeDoc(part(gate("true")), part(gate("false"))), false, true},
		{"the last document wins", FamilyAL2023, gate("false") + "---\n" + gate("true"), true, true},
		{"a part that does not set it changes nothing", FamilyAL2023, mimeDoc(part(gate("true")), ncPart), true, true},
		{"kubelet feature gates are not nodeadm's", FamilyAL2023,
			"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      featureGates:\n        InstanceIdNodeName: true\n", false, false},
		{"a string is no boolean", FamilyAL2023, gate(`"true"`), false, false},
		{"no NodeConfig", FamilyAL2023, "#!/bin/bash\necho hi\n", false, false},
		{"a shell part naming it", FamilyAL2023, mimeDoc("Content-Type: text/x-shellscript\n\n#!/bin/bash\necho 'InstanceIdNodeName: true'\n"), false, false},
		{"Custom with a NodeConfig", FamilyCustom, gate("true"), true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ud, err := Parse(tc.family, tc.text)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			enabled, set := ud.FeatureGate("InstanceIdNodeName")
			if enabled != tc.enabled || set != tc.set {
				t.Errorf("FeatureGate = %v, %v; want %v, %v", enabled, set, tc.enabled, tc.set)
			}
		})
	}
}

func TestHasNodeConfig(t *testing.T) {
	for _, tc := range []struct {
		family, text string
		want         bool
	}{
		{FamilyCustom, nodeConfig, true},
		{FamilyCustom, mimeDoc(shellPart, ncPart), true},
		{FamilyCustom, "#!/bin/bash\necho hi\n", false},
		{FamilyAL2023, "#!/bin/bash\necho hi\n", false},
	} {
		ud, err := Parse(tc.family, tc.text)
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		if got := ud.HasNodeConfig(); got != tc.want {
			t.Errorf("%s %q: HasNodeConfig = %v, want %v", tc.family, tc.text, got, tc.want)
		}
	}
}
