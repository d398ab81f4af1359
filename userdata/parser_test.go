package userdata

import (
	"reflect"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
)

// TestParserAnswersAsParse: for valid and invalid texts of every family, a Parser answers exactly as
// Parse does, the first time and from memory after, and forgets the oldest text beyond its size.
func TestParserAnswersAsParse(t *testing.T) {
	texts := []struct{ family, text string }{
		{FamilyAL2023, corpus.UserData},
		{FamilyAL2023, "#!/bin/bash\n/etc/eks/bootstrap.sh my-cluster\n"},
		{FamilyAL2023, "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: [\n--B--\n"},
		{FamilyBottlerocket, "[settings.kubernetes]\nmax-pods = 110\n"},
		{FamilyBottlerocket, "[settings\n"},
		{FamilyAL2, corpus.UserData},
	}
	p := NewParser(len(texts))
	for round := range 2 {
		for _, tc := range texts {
			want, wantErr := Parse(tc.family, tc.text)
			got, gotErr := p.Parse(tc.family, tc.text)
			if !reflect.DeepEqual(got, want) || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("round %d, %s %.30q: Parser gave %+v, %v; Parse %+v, %v", round, tc.family, tc.text, got, gotErr, want, wantErr)
			}
		}
	}
	if n := p.results.Len(); n != len(texts) {
		t.Errorf("remembers %d texts, want %d", n, len(texts))
	}
	p.Parse(FamilyAL2023, "#!/bin/bash\necho one more\n")
	if n := p.results.Len(); n != len(texts) {
		t.Errorf("remembers %d texts after one more than its size, want %d", n, len(texts))
	}
	long := "#!/bin/bash\n" + strings.Repeat("# padding\n", MaxRemembered/10)
	if _, err := p.Parse(FamilyAL2023, long); err != nil {
		t.Fatal(err)
	}
	if p.results.Contains(parseKey{FamilyAL2023, long}) {
		t.Error("a text over MaxRemembered was remembered")
	}
}

// TestParserRegisters: a Parser reads the taint as Parse and Registers do, the first time and from
// memory after, and says why a text it cannot parse registers nothing.
func TestParserRegisters(t *testing.T) {
	texts := []struct{ family, text string }{
		{FamilyCustom, "#!/bin/bash\nkubelet --register-with-taints=karpenter.sh/unregistered:NoExecute\n"},
		{FamilyCustom, "#!/bin/bash\n# kubelet --register-with-taints=karpenter.sh/unregistered:NoExecute\n"},
		{FamilyCustom, "#!/bin/bash\nkubelet --register-with-taints=$T\n"},
		{FamilyBottlerocket, "[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\":NoExecute\"]\n"},
		{FamilyBottlerocket, "#!/bin/bash\necho hi\n"},
		{FamilyCustom, "#!/bin/bash\nkubelet --register-with-taints=karpenter.sh/unregistered:NoExecute\n" + strings.Repeat("# padding\n", MaxRemembered/10)},
	}
	p := NewParser(len(texts))
	for round := range 2 {
		for _, tc := range texts {
			var want Registration
			ud, wantErr := Parse(tc.family, tc.text)
			if wantErr == nil {
				want = ud.Registers(UnregisteredTaintKey, UnregisteredTaintEffect)
			}
			got, gotErr := p.Registers(tc.family, tc.text, UnregisteredTaintKey, UnregisteredTaintEffect)
			if !reflect.DeepEqual(got, want) || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("round %d, %s %.30q: Parser gave %+v, %v; Parse and Registers %+v, %v", round, tc.family, tc.text, got, gotErr, want, wantErr)
			}
		}
	}
	if n := p.readings.Len(); n != len(texts)-1 {
		t.Errorf("remembers %d readings, want %d (the long text is not remembered)", n, len(texts)-1)
	}
}
