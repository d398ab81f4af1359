package userdata

import (
	"reflect"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// fuzzFamilies are the families FuzzParse picks from; the last two are not real families.
var fuzzFamilies = []string{
	FamilyAL2, FamilyAL2023, FamilyBottlerocket, FamilyCustom, FamilyUbuntu,
	FamilyWindows2019, FamilyWindows2022, FamilyWindows2025, "", "al2023",
}

// FuzzParse checks that Parse never panics, that a rejection is a single non-empty line, that an
// acceptance is well formed for its family (amiFamily Custom is never refused), that BootstrapCalls
// only reports non-comment shell lines that exist, and that parsing is deterministic.
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
	f.Add(uint8(3), "#!/bin/bash\n/etc/eks/bootstrap.sh prod --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'\n")
	f.Add(uint8(3), "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: text/x-shellscript\n\necho cut off\n")
	f.Add(uint8(3), "#cloud-config\nruncmd: [echo hi]\n")
	f.Add(uint8(2), "#!/bin/bash\necho hi\n")
	for _, nc := range budgetNodeConfigs {
		f.Add(uint8(1), nc.text)
	}
	for _, cc := range budgetCloudConfigs {
		f.Add(uint8(3), cc)
	}
	f.Fuzz(func(t *testing.T, fam uint8, text string) {
		family := fuzzFamilies[int(fam)%len(fuzzFamilies)]
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
				t.Fatalf("Parse(%q) rejected userData no agent checks: %v", family, err)
			}
			return
		}
		if len(ud.Parts) == 0 {
			t.Fatalf("Parse(%q) accepted userData with no parts", family)
		}
		for i, p := range ud.Parts {
			switch p.Kind {
			case KindShell, KindNodeConfig, KindTOML, KindCloudConfig, KindOther:
			default:
				t.Fatalf("part %d has unknown kind %q", i+1, p.Kind)
			}
		}
		switch family {
		case FamilyBottlerocket:
			if ud.MIME || len(ud.Parts) != 1 || ud.Parts[0].Kind != KindTOML || ud.Parts[0].Body != text {
				t.Fatalf("Bottlerocket userData parsed as %#v, want one TOML part holding the text", ud)
			}
		case FamilyAL2, FamilyAL2023, FamilyCustom:
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

// commentedTaint is a comment line registering the unregistered taint: appended to a script, it
// must change nothing.
const commentedTaint = "\n\n# --register-with-taints=karpenter.sh/unregistered:NoExecute\n"

// FuzzRegisters checks that reading the registration taint never panics and is deterministic; that
// its answer is consistent (a registration carries no other effects, a verdict or an effect says
// where); that userData naming neither the key nor any flag registers nothing and leaves nothing to
// tell; and, on scripts bash parses, that a comment never registers, while the same flag as a command
// always does.
func FuzzRegisters(f *testing.F) {
	for _, s := range []string{
		"/etc/eks/bootstrap.sh prod --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'\n",
		"# /opt/join.sh --register-with-taints=karpenter.sh/unregistered:NoExecute\n/opt/join.sh\n",
		"export KUBELET_EXTRA_ARGS=\"--register-with-taints=karpenter.sh/unregistered=:NoExecute,a=b:NoSchedule\"\n",
		"kubelet --register-with-taints=$TAINTS --register-with-taints=\"karpenter.sh/unregistered:${E}\"\n",
		"cat <<'EOF' > /etc/eks/nc.yaml\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      registerWithTaints: [{key: karpenter.sh/unregistered, effect: NoExecute}]\nEOF\n",
		": <<'OFF'\nkubelet --register-with-taints=karpenter.sh/unregistered:NoExecute\nOFF\n",
		"cat <<-EOF >/etc/default/kubelet\n\tKUBELET_EXTRA_ARGS=--register-with-taints=karpenter.sh/unregistered:NoSchedule\n\tEOF\n",
	} {
		f.Add(uint8(3), "#!/bin/bash\n"+s)
	}
	f.Add(uint8(3), "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags: [--register-with-taints=karpenter.sh/unregistered:NoExecute]\n")
	f.Add(uint8(3), mimeDoc("Content-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      registerWithTaints:\n      - key: karpenter.sh/unregistered\n        effect: NoSchedule\n"))
	f.Add(uint8(3), "#cloud-config\nruncmd:\n  - [kubelet, --register-with-taints, karpenter.sh/unregistered:NoExecute]\n")
	f.Add(uint8(2), "[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\":NoExecute\"]\n")
	f.Add(uint8(2), "[settings.kubernetes]\nnode-taints = \"karpenter.sh/unregistered:NoExecute\"\n")
	for _, nc := range budgetNodeConfigs {
		f.Add(uint8(3), nc.text)
	}
	for _, cc := range budgetCloudConfigs {
		f.Add(uint8(3), cc)
	}
	f.Fuzz(func(t *testing.T, fam uint8, text string) {
		family := fuzzFamilies[int(fam)%len(fuzzFamilies)]
		ud, err := Parse(family, text)
		if err != nil {
			return
		}
		got := ud.Registers(UnregisteredTaintKey, UnregisteredTaintEffect)
		if again := ud.Registers(UnregisteredTaintKey, UnregisteredTaintEffect); !reflect.DeepEqual(got, again) {
			t.Fatalf("Registers is not deterministic: %+v then %+v", got, again)
		}
		switch got.Verdict {
		case Registered:
			if len(got.OtherEffects) > 0 {
				t.Fatalf("Registers = %+v: a registration with other effects", got)
			}
		case NotRegistered, CannotTell:
		default:
			t.Fatalf("Registers = %+v: unknown verdict", got)
		}
		if (got.Verdict != NotRegistered || len(got.OtherEffects) > 0) && got.Where == "" {
			t.Fatalf("Registers = %+v: says nothing of where", got)
		}
		// Without the key, a flag or an escape, and without MIME parts that decode to other text,
		// nothing can name the taint.
		if !looksLikeMIME(text) && !strings.Contains(text, UnregisteredTaintKey) && !strings.Contains(text, "with") && !strings.Contains(text, `\`) &&
			!reflect.DeepEqual(got, Registration{}) {
			t.Fatalf("Registers = %+v on text that names neither the key nor a flag", got)
		}
		if family != FamilyCustom || !strings.HasPrefix(text, "#!/bin/bash\n") || strings.Contains(text, "\r") {
			return
		}
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), ""); err != nil {
			return
		}
		commented := registers(t, family, text+commentedTaint)
		if !reflect.DeepEqual(commented, got) {
			t.Fatalf("a comment line changed Registers from %+v to %+v", got, commented)
		}
		run := text + strings.Replace(commentedTaint, "# ", "kubelet ", 1)
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(run), ""); err == nil {
			if r := registers(t, family, run); r.Verdict != Registered {
				t.Fatalf("a kubelet line with the flag, appended, gives %+v", r)
			}
		}
	})
}
