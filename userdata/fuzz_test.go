package userdata

import (
	"reflect"
	"strings"
	"testing"
)

// fuzzFamilies are the families FuzzParse picks from; the last two are not real families.
var fuzzFamilies = []string{
	FamilyAL2, FamilyAL2023, FamilyBottlerocket, FamilyCustom, FamilyUbuntu,
	FamilyWindows2019, FamilyWindows2022, FamilyWindows2025, "", "al2023",
}

// FuzzParse checks that Parse never panics, that a rejection is a single non-empty line, that an
// acceptance is well formed for its family, that BootstrapCalls only reports non-comment shell lines
// that exist, and that parsing is deterministic.
func FuzzParse(f *testing.F) {
	f.Add(uint8(0), "#!/bin/bash\n/etc/eks/bootstrap.sh prod\n")
	f.Add(uint8(1), mimeDoc(ncPart, shellPart))
	f.Add(uint8(1), "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"//\"\r\n\r\n--//\r\nContent-Type: text/x-shellscript\r\n\r\nnodeadm init\r\n--//--\r\n")
	f.Add(uint8(1), "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: text/x-shellscript\n\necho unterminated\n")
	f.Add(uint8(1), "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: application/node.eks.aws\n\n"+b64(nodeConfig)+"\n--B--\n")
	f.Add(uint8(1), nodeConfig)
	f.Add(uint8(1), "apiVersion: node.eks.aws/v1alpha1\nkind: Pod\n---\n- x\n")
	f.Add(uint8(2), "[settings.kubernetes]\nmax-pods = 110\n")
	f.Add(uint8(2), "[settings.kubernetes\n")
	f.Add(uint8(6), "<powershell>Write-Host hi</powershell>")
	f.Fuzz(func(t *testing.T, fam uint8, text string) {
		family := fuzzFamilies[int(fam)%len(fuzzFamilies)]
		// Comments only ever take the taint away, and without a '#' nothing is a comment.
		plain := strings.Contains(text, "karpenter.sh/unregistered") && strings.Contains(text, "NoExecute")
		if got := RegistersUnregisteredTaint(text); (got && !plain) || (!strings.Contains(text, "#") && got != plain) {
			t.Fatalf("RegistersUnregisteredTaint(%q) = %v, while the text itself says %v", text, got, plain)
		}
		ud, err := Parse(family, text)
		ud2, err2 := Parse(family, text)
		if !reflect.DeepEqual(ud, ud2) || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("Parse(%q) is not deterministic: (%#v, %v) then (%#v, %v)", family, ud, err, ud2, err2)
		}
		if err != nil {
			msg := err.Error()
			if strings.TrimSpace(msg) == "" || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("Parse(%q) error %q: want one non-empty line", family, msg)
			}
			if !reflect.DeepEqual(ud, UserData{}) {
				t.Fatalf("Parse(%q) returned %#v with error %q, want the zero UserData", family, ud, msg)
			}
			switch family {
			case FamilyAL2, FamilyAL2023, FamilyBottlerocket:
			default:
				t.Fatalf("Parse(%q) rejected opaque userData: %v", family, err)
			}
			return
		}
		if len(ud.Parts) == 0 {
			t.Fatalf("Parse(%q) accepted userData with no parts", family)
		}
		for i, p := range ud.Parts {
			switch p.Kind {
			case KindShell, KindNodeConfig, KindTOML, KindOther:
			default:
				t.Fatalf("part %d has unknown kind %q", i+1, p.Kind)
			}
		}
		switch family {
		case FamilyBottlerocket:
			if ud.MIME || len(ud.Parts) != 1 || ud.Parts[0].Kind != KindTOML || ud.Parts[0].Body != text {
				t.Fatalf("Bottlerocket userData parsed as %#v, want one TOML part holding the text", ud)
			}
		case FamilyAL2, FamilyAL2023:
			if !ud.MIME && (len(ud.Parts) != 1 || ud.Parts[0].Body != text) {
				t.Fatalf("non-MIME %s userData parsed as %#v, want one part holding the text", family, ud)
			}
		default:
			if ud.MIME || len(ud.Parts) != 1 || ud.Parts[0].Kind != KindOther || ud.Parts[0].Body != text {
				t.Fatalf("%q userData parsed as %#v, want one opaque part holding the text", family, ud)
			}
		}
		for _, c := range ud.BootstrapCalls() {
			if c.Part < 1 || c.Part > len(ud.Parts) {
				t.Fatalf("call %+v names part %d of %d", c, c.Part, len(ud.Parts))
			}
			p := ud.Parts[c.Part-1]
			if p.Kind != KindShell {
				t.Fatalf("call %+v is in a %s part, want only shell parts", c, p.Kind)
			}
			lines := strings.Split(p.Body, "\n")
			if c.Line < 1 || c.Line > len(lines) {
				t.Fatalf("call %+v names line %d of a %d-line part", c, c.Line, len(lines))
			}
			if c.Text != strings.TrimSpace(strings.TrimSuffix(lines[c.Line-1], "\r")) {
				t.Fatalf("call %+v text differs from line %d %q", c, c.Line, lines[c.Line-1])
			}
			if c.Text == "" || strings.HasPrefix(c.Text, "#") {
				t.Fatalf("call %+v is empty or a comment", c)
			}
			if !strings.Contains(c.Text, "/etc/eks/bootstrap.sh") && !strings.Contains(c.Text, "nodeadm") {
				t.Fatalf("call %+v runs neither bootstrap.sh nor nodeadm", c)
			}
		}
	})
}
