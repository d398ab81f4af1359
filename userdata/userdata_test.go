package userdata

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
)

// mimeDoc builds a multipart/mixed userData document with boundary B from already formatted parts
// (headers, blank line, body), the way EC2NodeClass userData is usually written.
func mimeDoc(parts ...string) string {
	var b strings.Builder
	b.WriteString("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n")
	for _, p := range parts {
		b.WriteString("--B\n")
		b.WriteString(p)
		if !strings.HasSuffix(p, "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString("--B--\n")
	return b.String()
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func gzipB64(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatalf("gzip: %v", err)
	}
	if err := zw.Close(); err != nil {
		t.Fatalf("gzip: %v", err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

const (
	nodeConfig = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      maxPods: 110\n"
	shellPart  = "Content-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash\necho hello\n"
	ncPart     = "Content-Type: application/node.eks.aws\n\n" + nodeConfig
)

func TestParseAccepts(t *testing.T) {
	crlf := "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"==BOUNDARY==\"\r\n\r\n" +
		"--==BOUNDARY==\r\nContent-Type: application/node.eks.aws\r\n\r\n---\r\napiVersion: node.eks.aws/v1alpha1\r\nkind: NodeConfig\r\n" +
		"--==BOUNDARY==\r\nContent-Type: text/x-shellscript\r\n\r\n#!/bin/bash\r\necho hi\r\n" +
		"--==BOUNDARY==--\r\n"
	tests := []struct {
		name   string
		family string
		text   string
		want   UserData
	}{
		{
			// Karpenter's own examples/v1/al2023-custom-userdata.yaml: the last part is delimited, and
			// the body ends without the closing --//-- line, which Karpenter's reader accepts.
			name:   "AL2023 MIME ending on a boundary line, not the closing one",
			family: FamilyAL2023,
			text: "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: application/node.eks.aws\n\n" +
				"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  instance:\n    localStorage:\n      strategy: Mount\n\n" +
				"--//\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash\necho \"Hello, AL2023!\"\n--//\n",
			want: UserData{MIME: true, Parts: []Part{
				{ContentType: NodeConfigContentType, Kind: KindNodeConfig, Body: "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  instance:\n    localStorage:\n      strategy: Mount\n"},
				{ContentType: "text/x-shellscript", Kind: KindShell, Body: "#!/bin/bash\necho \"Hello, AL2023!\""},
			}},
		},
		{
			name:   "AL2 plain shell script",
			family: FamilyAL2,
			text:   "#!/bin/bash\necho hello\n",
			want:   UserData{Parts: []Part{{ContentType: "text/x-shellscript", Kind: KindShell, Body: "#!/bin/bash\necho hello\n"}}},
		},
		{
			name:   "AL2 treats NodeConfig-looking text as a shell script",
			family: FamilyAL2,
			text:   nodeConfig,
			want:   UserData{Parts: []Part{{ContentType: "text/x-shellscript", Kind: KindShell, Body: nodeConfig}}},
		},
		{
			name:   "AL2 MIME multipart with shell, plain-text script and plain text parts",
			family: FamilyAL2,
			text: mimeDoc(shellPart,
				"Content-Type: text/plain\n\n  #!/bin/sh\nexit 0\n",
				"Content-Type: text/plain\n\njust notes\n",
				"\nno headers at all\n"),
			want: UserData{MIME: true, Parts: []Part{
				{ContentType: "text/x-shellscript", Kind: KindShell, Body: "#!/bin/bash\necho hello"},
				{ContentType: "text/plain", Kind: KindShell, Body: "  #!/bin/sh\nexit 0"},
				{ContentType: "text/plain", Kind: KindOther, Body: "just notes"},
				{ContentType: "text/plain", Kind: KindOther, Body: "no headers at all"},
			}},
		},
		{
			name:   "AL2023 MIME with NodeConfig and shell parts",
			family: FamilyAL2023,
			text:   mimeDoc(ncPart, shellPart),
			want: UserData{MIME: true, Parts: []Part{
				{ContentType: NodeConfigContentType, Kind: KindNodeConfig, Body: strings.TrimSuffix(nodeConfig, "\n")},
				{ContentType: "text/x-shellscript", Kind: KindShell, Body: "#!/bin/bash\necho hello"},
			}},
		},
		{
			name:   "AL2023 MIME with CRLF line endings and a leading --- in the NodeConfig",
			family: FamilyAL2023,
			text:   crlf,
			want: UserData{MIME: true, Parts: []Part{
				{ContentType: NodeConfigContentType, Kind: KindNodeConfig, Body: "---\r\napiVersion: node.eks.aws/v1alpha1\r\nkind: NodeConfig"},
				{ContentType: "text/x-shellscript", Kind: KindShell, Body: "#!/bin/bash\r\necho hi"},
			}},
		},
		{
			name:   "MIME header names and media types are case-insensitive",
			family: FamilyAL2023,
			text:   "mime-version: 1.0\ncontent-type: Multipart/Mixed; boundary=B\n\n--B\ncontent-type: TEXT/X-SHELLSCRIPT\n\necho hi\n--B--\n",
			want:   UserData{MIME: true, Parts: []Part{{ContentType: "text/x-shellscript", Kind: KindShell, Body: "echo hi"}}},
		},
		{
			name:   "MIME without MIME-Version but starting with a multipart Content-Type",
			family: FamilyAL2023,
			text:   "Content-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: text/x-sh\n\necho hi\n--B--\n",
			want:   UserData{MIME: true, Parts: []Part{{ContentType: "text/x-sh", Kind: KindShell, Body: "echo hi"}}},
		},
		{
			name:   "nested multipart part is kept whole, not descended into",
			family: FamilyAL2023,
			text:   mimeDoc("Content-Type: multipart/alternative; boundary=C\n\n--C\nContent-Type: text/x-shellscript\n\necho inner\n--C--\n"),
			want: UserData{MIME: true, Parts: []Part{
				{ContentType: "multipart/alternative", Kind: KindOther, Body: "--C\nContent-Type: text/x-shellscript\n\necho inner\n--C--"},
			}},
		},
		{
			name:   "quoted-printable part is decoded",
			family: FamilyAL2023,
			text:   mimeDoc("Content-Type: text/x-shellscript\nContent-Transfer-Encoding: quoted-printable\n\nFOO=3Dbar\n"),
			want:   UserData{MIME: true, Parts: []Part{{ContentType: "text/x-shellscript", Kind: KindShell, Body: "FOO=bar"}}},
		},
		{
			name:   "base64 part is decoded, as its Content-Transfer-Encoding says",
			family: FamilyAL2023,
			text:   mimeDoc("Content-Type: application/node.eks.aws\nContent-Transfer-Encoding: base64\n\n" + b64(nodeConfig) + "\n"),
			want:   UserData{MIME: true, Parts: []Part{{ContentType: NodeConfigContentType, Kind: KindNodeConfig, Body: nodeConfig}}},
		},
		{
			name:   "base64 NodeConfig part without Content-Transfer-Encoding is accepted, as nodeadm decodes it",
			family: FamilyAL2023,
			text:   mimeDoc("Content-Type: application/node.eks.aws\n\n" + b64(nodeConfig) + "\n"),
			want:   UserData{MIME: true, Parts: []Part{{ContentType: NodeConfigContentType, Kind: KindNodeConfig, Body: b64(nodeConfig)}}},
		},
		{
			name:   "part whose base64 does not decode is kept as it is",
			family: FamilyAL2,
			text:   mimeDoc("Content-Type: text/x-shellscript\nContent-Transfer-Encoding: base64\n\necho not base64\n"),
			want:   UserData{MIME: true, Parts: []Part{{ContentType: "text/x-shellscript", Kind: KindShell, Body: "echo not base64"}}},
		},
		{
			name:   "cloud-init part types: boothooks and per-boot scripts are shell, cloud-config is YAML",
			family: FamilyAL2,
			text: mimeDoc("Content-Type: text/cloud-boothook\n\necho early\n", "Content-Type: text/x-shellscript-per-boot\n\necho boot\n",
				"Content-Type: text/cloud-config\n\nruncmd: [x]\n", "Content-Type: text/plain\n\n#cloud-config\nruncmd: [x]\n"),
			want: UserData{MIME: true, Parts: []Part{
				{ContentType: "text/cloud-boothook", Kind: KindShell, Body: "echo early"},
				{ContentType: "text/x-shellscript-per-boot", Kind: KindShell, Body: "echo boot"},
				{ContentType: "text/cloud-config", Kind: KindCloudConfig, Body: "runcmd: [x]"},
				{ContentType: "text/plain", Kind: KindCloudConfig, Body: "#cloud-config\nruncmd: [x]"},
			}},
		},
		{
			name:   "gzip+base64 NodeConfig part is accepted, as nodeadm decompresses it",
			family: FamilyAL2023,
			text:   mimeDoc("Content-Type: application/node.eks.aws\n\n" + gzipB64(t, nodeConfig) + "\n"),
			want:   UserData{MIME: true, Parts: []Part{{ContentType: NodeConfigContentType, Kind: KindNodeConfig, Body: gzipB64(t, nodeConfig)}}},
		},
		{
			name:   "NodeConfig part with only empty documents",
			family: FamilyAL2023,
			text:   mimeDoc("Content-Type: application/node.eks.aws\n\n---\n# nothing yet\n---\n"),
			want:   UserData{MIME: true, Parts: []Part{{ContentType: NodeConfigContentType, Kind: KindNodeConfig, Body: "---\n# nothing yet\n---"}}},
		},
		{
			name:   "AL2023 plain NodeConfig",
			family: FamilyAL2023,
			text:   nodeConfig,
			want:   UserData{Parts: []Part{{ContentType: NodeConfigContentType, Kind: KindNodeConfig, Body: nodeConfig}}},
		},
		{
			name:   "AL2023 plain NodeConfig with several documents and a leading ---",
			family: FamilyAL2023,
			text:   "---\n" + nodeConfig + "---\n" + nodeConfig,
			want:   UserData{Parts: []Part{{ContentType: NodeConfigContentType, Kind: KindNodeConfig, Body: "---\n" + nodeConfig + "---\n" + nodeConfig}}},
		},
		{
			name:   "AL2023 shell script with a shebang is a script even with a kind: line",
			family: FamilyAL2023,
			text:   "#!/bin/bash\ncat <<EOF > /tmp/x.yaml\nkind: Pod\nEOF\n",
			want:   UserData{Parts: []Part{{ContentType: "text/x-shellscript", Kind: KindShell, Body: "#!/bin/bash\ncat <<EOF > /tmp/x.yaml\nkind: Pod\nEOF\n"}}},
		},
		{
			name:   "AL2023 script without shebang or NodeConfig keys is a shell script",
			family: FamilyAL2023,
			text:   "echo hello\n",
			want:   UserData{Parts: []Part{{ContentType: "text/x-shellscript", Kind: KindShell, Body: "echo hello\n"}}},
		},
		{
			name:   "AL2023 empty userData is an empty shell script",
			family: FamilyAL2023,
			text:   "",
			want:   UserData{Parts: []Part{{ContentType: "text/x-shellscript", Kind: KindShell, Body: ""}}},
		},
		{
			name:   "Bottlerocket TOML settings",
			family: FamilyBottlerocket,
			text:   "[settings.kubernetes]\nmax-pods = 110\n\n[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\"true:NoExecute\"]\n",
			want: UserData{Parts: []Part{{ContentType: "application/toml", Kind: KindTOML,
				Body: "[settings.kubernetes]\nmax-pods = 110\n\n[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\"true:NoExecute\"]\n"}}},
		},
		{
			name:   "Bottlerocket empty userData is empty TOML",
			family: FamilyBottlerocket,
			text:   "",
			want:   UserData{Parts: []Part{{ContentType: "application/toml", Kind: KindTOML, Body: ""}}},
		},
		{
			name:   "Windows userData is opaque, even when it looks like broken MIME",
			family: FamilyWindows2022,
			text:   "MIME-Version: 1.0\nContent-Type: multipart/mixed\n\n<powershell>Write-Host hi</powershell>",
			want:   UserData{Parts: []Part{{Kind: KindOther, Body: "MIME-Version: 1.0\nContent-Type: multipart/mixed\n\n<powershell>Write-Host hi</powershell>"}}},
		},
		{
			name:   "Custom shell script, as cloud-init reads it",
			family: FamilyCustom,
			text:   "\n#!/bin/bash\n/opt/join.sh\n",
			want:   UserData{Parts: []Part{{ContentType: "text/x-shellscript", Kind: KindShell, Body: "\n#!/bin/bash\n/opt/join.sh\n"}}},
		},
		{
			name:   "Custom cloud-config",
			family: FamilyCustom,
			text:   "#cloud-config\nruncmd: [x]\n",
			want:   UserData{Parts: []Part{{ContentType: "text/cloud-config", Kind: KindCloudConfig, Body: "#cloud-config\nruncmd: [x]\n"}}},
		},
		{
			name:   "Custom boothook",
			family: FamilyCustom,
			text:   "#cloud-boothook\necho early\n",
			want:   UserData{Parts: []Part{{ContentType: "text/cloud-boothook", Kind: KindShell, Body: "#cloud-boothook\necho early\n"}}},
		},
		{
			name:   "Custom NodeConfig, as nodeadm reads it, even when it is broken",
			family: FamilyCustom,
			text:   "[not toml\napiVersion: nope\n",
			want:   UserData{Parts: []Part{{ContentType: NodeConfigContentType, Kind: KindNodeConfig, Body: "[not toml\napiVersion: nope\n"}}},
		},
		{
			name:   "Custom Bottlerocket settings, as Bottlerocket reads them",
			family: FamilyCustom,
			text:   "[settings.kubernetes]\nmax-pods = 110\n",
			want:   UserData{Parts: []Part{{ContentType: "application/toml", Kind: KindTOML, Body: "[settings.kubernetes]\nmax-pods = 110\n"}}},
		},
		{
			name:   "Custom text no agent reads is opaque",
			family: FamilyCustom,
			text:   "just = \"toml without settings\"\n",
			want:   UserData{Parts: []Part{{Kind: KindOther, Body: "just = \"toml without settings\"\n"}}},
		},
		{
			name:   "Custom MIME whose last part is cut off by the end, which cloud-init still reads",
			family: FamilyCustom,
			text:   "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: text/x-shellscript\n\n#!/bin/bash\necho hi\n",
			want:   UserData{MIME: true, Parts: []Part{{ContentType: "text/x-shellscript", Kind: KindShell, Body: "#!/bin/bash\necho hi"}}},
		},
		{
			name:   "Custom single-part MIME, which cloud-init reads",
			family: FamilyCustom,
			text:   "MIME-Version: 1.0\nContent-Type: text/cloud-config\n\nruncmd: [x]\n",
			want:   UserData{MIME: true, Parts: []Part{{ContentType: "text/cloud-config", Kind: KindCloudConfig, Body: "runcmd: [x]\n"}}},
		},
		{
			name:   "Custom MIME that cannot be read is one opaque part",
			family: FamilyCustom,
			text:   "MIME-Version: 1.0\nContent-Type: multipart/mixed\n\n--B\n\necho hi\n--B--\n",
			want:   UserData{Parts: []Part{{Kind: KindOther, Body: "MIME-Version: 1.0\nContent-Type: multipart/mixed\n\n--B\n\necho hi\n--B--\n"}}},
		},
		{
			name:   "Bottlerocket settings may start with a #! comment",
			family: FamilyBottlerocket,
			text:   "#!toml\n[settings.kubernetes]\nmax-pods = 110\n",
			want:   UserData{Parts: []Part{{ContentType: "application/toml", Kind: KindTOML, Body: "#!toml\n[settings.kubernetes]\nmax-pods = 110\n"}}},
		},
		{
			name:   "unknown family is opaque",
			family: "",
			text:   "anything",
			want:   UserData{Parts: []Part{{Kind: KindOther, Body: "anything"}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.family, tc.text)
			if err != nil {
				t.Fatalf("Parse(%q) returned error %q, want none", tc.family, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q) =\n  %#v\nwant\n  %#v", tc.family, got, tc.want)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	const wantNodeadm = "; nodeadm reads apiVersion node.eks.aws/v1alpha1, kind NodeConfig"
	tests := []struct {
		name    string
		family  string
		text    string
		wantErr string
	}{
		{
			name:    "multipart Content-Type without boundary",
			family:  FamilyAL2023,
			text:    "MIME-Version: 1.0\nContent-Type: multipart/mixed\n\n--B\n\necho hi\n--B--\n",
			wantErr: "userData MIME Content-Type is multipart but has no boundary parameter",
		},
		{
			name:    "boundary never used in the body",
			family:  FamilyAL2023,
			text:    "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--B\n\necho hi\n--B--\n",
			wantErr: `userData MIME body never uses its boundary "//"`,
		},
		{
			name:    "unterminated boundary",
			family:  FamilyAL2023,
			text:    "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: text/x-shellscript\n\necho hi\n",
			wantErr: `userData MIME part 1 is cut off by the end of the body: end it with a boundary line, "--//--"`,
		},
		{
			name:    "unterminated boundary on AL2 too",
			family:  FamilyAL2,
			text:    "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"B\"\r\n\r\n--B\r\nContent-Type: text/x-shellscript\r\n\r\necho hi\r\n",
			wantErr: `userData MIME part 1 is cut off by the end of the body: end it with a boundary line, "--B--"`,
		},
		{
			name:    "only a closing boundary",
			family:  FamilyAL2023,
			text:    "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=B\n\n--B--\n",
			wantErr: "userData MIME document has no parts",
		},
		{
			name:    "part with a bad Content-Type",
			family:  FamilyAL2023,
			text:    mimeDoc(shellPart, "Content-Type: ;charset=utf-8\n\necho hi\n"),
			wantErr: `userData MIME part 2 has an invalid Content-Type ";charset=utf-8": mime: no media type`,
		},
		{
			name:    "part with a header line without colon",
			family:  FamilyAL2023,
			text:    mimeDoc("Content-Type text/x-shellscript\n\necho hi\n"),
			wantErr: `userData MIME part 1 cannot be read: malformed MIME header: missing colon: "Content-Type text/x-shellscript"`,
		},
		{
			name:    "top-level header line without colon",
			family:  FamilyAL2023,
			text:    "MIME-Version: 1.0\nContent-Type multipart/mixed\n\n--B\n\nx\n--B--\n",
			wantErr: "userData looks like MIME but its headers cannot be read: malformed header line: Content-Type multipart/mixed",
		},
		{
			name:    "header followed by a lone carriage return (found by FuzzParse)",
			family:  FamilyAL2,
			text:    "MIME-Version:\n\r",
			wantErr: "userData looks like MIME but its headers cannot be read: malformed header line:",
		},
		{
			name:    "MIME-Version without Content-Type",
			family:  FamilyAL2,
			text:    "MIME-Version: 1.0\n\n#!/bin/bash\necho hi\n",
			wantErr: `userData looks like MIME but has no Content-Type header; expected e.g. Content-Type: multipart/mixed; boundary="BOUNDARY"`,
		},
		{
			name:    "top-level Content-Type that is not a media type",
			family:  FamilyAL2023,
			text:    "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary\n\n--B\n\nx\n--B--\n",
			wantErr: "userData MIME Content-Type header is invalid: mime: invalid media parameter",
		},
		{
			name:    "leading blank lines before the MIME headers",
			family:  FamilyAL2023,
			text:    "\n\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=B\n\n--B\n\necho hi\n--B--\n",
			wantErr: "userData MIME headers must start on the first line: Karpenter reads the blank lines or spaces before them as an empty header",
		},
		{
			name:    "indented MIME headers",
			family:  FamilyAL2,
			text:    "  MIME-Version: 1.0\n  Content-Type: multipart/mixed; boundary=B\n\n--B\n\necho hi\n--B--\n",
			wantErr: "userData MIME headers must start on the first line: Karpenter reads the blank lines or spaces before them as an empty header",
		},
		{
			name:    "single-part (non-multipart) MIME document",
			family:  FamilyAL2023,
			text:    "MIME-Version: 1.0\nContent-Type: text/x-shellscript\n\n#!/bin/bash\nnodeadm init\n",
			wantErr: `userData MIME Content-Type is text/x-shellscript, but Karpenter accepts only multipart MIME userData; expected Content-Type: multipart/mixed; boundary="BOUNDARY"`,
		},
		{
			name:    "single-part NodeConfig MIME document without MIME-Version",
			family:  FamilyAL2,
			text:    "Content-Type: application/node.eks.aws\n\n" + nodeConfig,
			wantErr: `userData MIME Content-Type is application/node.eks.aws, but Karpenter accepts only multipart MIME userData; expected Content-Type: multipart/mixed; boundary="BOUNDARY"`,
		},
		{
			name:    "NodeConfig part with wrong apiVersion",
			family:  FamilyAL2023,
			text:    mimeDoc("Content-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1\nkind: NodeConfig\n"),
			wantErr: `NodeConfig in MIME part 1 of userData has apiVersion "node.eks.aws/v1" and kind "NodeConfig"` + wantNodeadm,
		},
		{
			name:    "NodeConfig part with wrong kind",
			family:  FamilyAL2023,
			text:    mimeDoc(shellPart, "Content-Type: application/node.eks.aws\n\n---\napiVersion: node.eks.aws/v1alpha1\nkind: KubeletConfiguration\n"),
			wantErr: `NodeConfig in MIME part 2 of userData has apiVersion "node.eks.aws/v1alpha1" and kind "KubeletConfiguration"` + wantNodeadm,
		},
		{
			name:    "NodeConfig part whose second document is wrong",
			family:  FamilyAL2023,
			text:    mimeDoc("Content-Type: application/node.eks.aws\n\n" + nodeConfig + "---\napiVersion: v1\nkind: ConfigMap\n"),
			wantErr: `NodeConfig in MIME part 1 of userData has apiVersion "v1" and kind "ConfigMap"` + wantNodeadm,
		},
		{
			name:    "NodeConfig part that is a list",
			family:  FamilyAL2023,
			text:    mimeDoc("Content-Type: application/node.eks.aws\n\n# header\n- apiVersion: node.eks.aws/v1alpha1\n"),
			wantErr: "NodeConfig in MIME part 1 of userData (line 2 of the part) is not a YAML mapping with string apiVersion and kind" + wantNodeadm,
		},
		{
			name:    "NodeConfig part without apiVersion and kind",
			family:  FamilyAL2023,
			text:    mimeDoc("Content-Type: application/node.eks.aws\n\nspec:\n  cluster:\n    name: prod\n"),
			wantErr: `NodeConfig in MIME part 1 of userData has apiVersion "" and kind ""` + wantNodeadm,
		},
		{
			name:    "NodeConfig part with a list as kind",
			family:  FamilyAL2023,
			text:    mimeDoc("Content-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: [NodeConfig]\n"),
			wantErr: "NodeConfig in MIME part 1 of userData (line 1 of the part) is not a YAML mapping with string apiVersion and kind" + wantNodeadm,
		},
		{
			name:    "NodeConfig part that is invalid YAML",
			family:  FamilyAL2023,
			text:    mimeDoc("Content-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n\tkubelet: {}\n"),
			wantErr: "NodeConfig in MIME part 1 of userData is not valid YAML: line 4 of the part: found character that cannot start any token",
		},
		{
			name:    "base64 NodeConfig part with the wrong kind",
			family:  FamilyAL2023,
			text:    mimeDoc("Content-Type: application/node.eks.aws\nContent-Transfer-Encoding: base64\n\n" + b64("apiVersion: node.eks.aws/v1alpha1\nkind: Pod\n") + "\n"),
			wantErr: `NodeConfig in MIME part 1 of userData has apiVersion "node.eks.aws/v1alpha1" and kind "Pod"` + wantNodeadm,
		},
		{
			name:    "base64 NodeConfig part with broken gzip data",
			family:  FamilyAL2023,
			text:    mimeDoc("Content-Type: application/node.eks.aws\n\n" + b64("\x1f\x8bnot really gzip") + "\n"),
			wantErr: "NodeConfig in MIME part 1 of userData is gzip data that cannot be decompressed: gzip: invalid header",
		},
		{
			name:    "plain NodeConfig with wrong apiVersion",
			family:  FamilyAL2023,
			text:    "apiVersion: node.eks.aws/v1beta1\nkind: NodeConfig\n",
			wantErr: `NodeConfig in userData has apiVersion "node.eks.aws/v1beta1" and kind "NodeConfig"` + wantNodeadm,
		},
		{
			name:    "plain NodeConfig with only kind",
			family:  FamilyAL2023,
			text:    "kind: NodeConfig\nspec: {}\n",
			wantErr: `NodeConfig in userData has apiVersion "" and kind "NodeConfig"` + wantNodeadm,
		},
		{
			name:    "plain NodeConfig with invalid YAML names the line",
			family:  FamilyAL2023,
			text:    "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: [\n",
			wantErr: "NodeConfig in userData is not valid YAML: line 3: did not find expected node content",
		},
		{
			name:    "Bottlerocket MIME document with a shell part",
			family:  FamilyBottlerocket,
			text:    mimeDoc(ncPart, shellPart),
			wantErr: `Bottlerocket reads userData as TOML settings; this is a shell script: MIME part 2 is text/x-shellscript ("#!/bin/bash"), which Bottlerocket never runs`,
		},
		{
			// Karpenter's own examples/v1/custom-family-with-alias.yaml (its last part open at the end).
			name:    "Bottlerocket MIME document with a bootstrap.sh script",
			family:  FamilyBottlerocket,
			text:    "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n--BOUNDARY\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash\necho \"Running my custom set-up\"\n\n# Have the kubelet label the node\n/etc/eks/bootstrap.sh my-cluster --kubelet-extra-args='--node-labels=foo=bar'\n\n--BOUNDARY\n",
			wantErr: `Bottlerocket reads userData as TOML settings; this is a shell script: MIME part 1 is text/x-shellscript ("#!/bin/bash"), which Bottlerocket never runs`,
		},
		{
			name:    "Bottlerocket MIME document without a script",
			family:  FamilyBottlerocket,
			text:    mimeDoc("Content-Type: text/plain\n\n[settings.kubernetes]\nmax-pods = 110\n"),
			wantErr: "Bottlerocket reads userData as TOML settings; this is a MIME multi-part document, not TOML",
		},
		{
			name:    "Bottlerocket shell script",
			family:  FamilyBottlerocket,
			text:    "\n#!/bin/bash\n/etc/eks/bootstrap.sh prod\n",
			wantErr: `Bottlerocket reads userData as TOML settings; this is a shell script: "#!/bin/bash" on line 2, which Bottlerocket never runs`,
		},
		{
			name:    "Bottlerocket shell script that is valid TOML without settings",
			family:  FamilyBottlerocket,
			text:    "#!/bin/sh\nCLUSTER=\"prod\"\n",
			wantErr: `Bottlerocket reads userData as TOML settings; this is a shell script: "#!/bin/sh" on line 1, which Bottlerocket never runs`,
		},
		{
			name:    "Bottlerocket YAML instead of TOML",
			family:  FamilyBottlerocket,
			text:    "settings:\n  kubernetes:\n    max-pods: 110\n",
			wantErr: "Bottlerocket userData is not valid TOML: toml: line 1: expected '.' or '=', but got ':' instead",
		},
		{
			name:    "Bottlerocket unterminated table header",
			family:  FamilyBottlerocket,
			text:    "[settings.kubernetes\nmax-pods = 110\n",
			wantErr: `Bottlerocket userData is not valid TOML: toml: line 2: expected '.' or ']' to end table name, but got '\n' instead`,
		},
		{
			name:    "Bottlerocket duplicate key",
			family:  FamilyBottlerocket,
			text:    "[settings.kubernetes]\nmax-pods = 110\nmax-pods = 58\n",
			wantErr: `Bottlerocket userData is not valid TOML: toml: line 3 (last key "settings.kubernetes.max-pods"): Key 'settings.kubernetes.max-pods' has already been defined.`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.family, tc.text)
			if err == nil {
				t.Fatalf("Parse(%q) = %#v, want error %q", tc.family, got, tc.wantErr)
			}
			if err.Error() != tc.wantErr {
				t.Errorf("Parse(%q) error\n  got  %q\n  want %q", tc.family, err, tc.wantErr)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("error %q spans several lines; want one sentence", err)
			}
			if !reflect.DeepEqual(got, UserData{}) {
				t.Errorf("Parse returned %#v alongside the error, want the zero UserData", got)
			}
		})
	}
}

func TestBootstrapCalls(t *testing.T) {
	tests := []struct {
		name   string
		family string
		text   string
		want   []Command
	}{
		{
			name:   "plain AL2023 script with bootstrap.sh and nodeadm init",
			family: FamilyAL2023,
			text: "#!/bin/bash\n" +
				"set -euo pipefail\n" +
				"/etc/eks/bootstrap.sh prod --kubelet-extra-args '--max-pods=110'\n" +
				"  nodeadm   init --config-source file:///etc/nc.yaml  \n" +
				"nodeadm config check\n" +
				"nodeadm initialize\n",
			want: []Command{
				{Part: 1, Line: 3, Text: "/etc/eks/bootstrap.sh prod --kubelet-extra-args '--max-pods=110'"},
				{Part: 1, Line: 4, Text: "nodeadm   init --config-source file:///etc/nc.yaml"},
			},
		},
		{
			name:   "comment lines are not counted but still numbered",
			family: FamilyAL2,
			text: "#!/bin/bash\n" +
				"# /etc/eks/bootstrap.sh prod\n" +
				"    #nodeadm init\n" +
				"\t# nodeadm init\n" +
				"B=/etc/eks/bootstrap.sh # run it\n",
			want: []Command{{Part: 1, Line: 5, Text: "B=/etc/eks/bootstrap.sh # run it"}},
		},
		{
			name:   "CRLF script keeps line numbers and trims the carriage return",
			family: FamilyAL2,
			text:   "#!/bin/bash\r\necho hi\r\n\r\n/etc/eks/bootstrap.sh prod\r\n",
			want:   []Command{{Part: 1, Line: 4, Text: "/etc/eks/bootstrap.sh prod"}},
		},
		{
			name:   "calls inside MIME parts carry the part and the line inside it",
			family: FamilyAL2023,
			text: mimeDoc(
				ncPart,
				"Content-Type: text/x-shellscript\n\n#!/bin/bash\necho one\nnodeadm init\n",
				"Content-Type: text/plain\n\n#!/bin/sh\n# /etc/eks/bootstrap.sh\n/etc/eks/bootstrap.sh prod\n",
			),
			want: []Command{
				{Part: 2, Line: 3, Text: "nodeadm init"},
				{Part: 3, Line: 3, Text: "/etc/eks/bootstrap.sh prod"},
			},
		},
		{
			name:   "CRLF MIME part",
			family: FamilyAL2,
			text:   "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"B\"\r\n\r\n--B\r\nContent-Type: text/x-shellscript\r\n\r\n#!/bin/bash\r\necho hi\r\n/etc/eks/bootstrap.sh c\r\n--B--\r\n",
			want:   []Command{{Part: 1, Line: 3, Text: "/etc/eks/bootstrap.sh c"}},
		},
		{
			name:   "non-shell parts are not searched",
			family: FamilyAL2023,
			text: mimeDoc(
				"Content-Type: text/plain\n\nrun /etc/eks/bootstrap.sh later\n",
				"Content-Type: text/cloud-config\n\nruncmd:\n  - nodeadm init\n",
				"Content-Type: application/node.eks.aws\n\n"+nodeConfig+"# nodeadm init /etc/eks/bootstrap.sh\n",
			),
			want: nil,
		},
		{
			name:   "NodeConfig userData has no shell lines",
			family: FamilyAL2023,
			text:   nodeConfig + "# /etc/eks/bootstrap.sh\n",
			want:   nil,
		},
		{
			name:   "Bottlerocket TOML is not a script",
			family: FamilyBottlerocket,
			text:   "[settings.host-containers.admin]\nsource = \"/etc/eks/bootstrap.sh\"\n",
			want:   nil,
		},
		{
			name:   "Custom userData is read as the script cloud-init runs",
			family: FamilyCustom,
			text:   "#!/bin/bash\n/etc/eks/bootstrap.sh prod\n",
			want:   []Command{{Part: 1, Line: 2, Text: "/etc/eks/bootstrap.sh prod"}},
		},
		{
			name:   "Windows userData is not read as a script",
			family: FamilyWindows2022,
			text:   "#!/bin/bash\n/etc/eks/bootstrap.sh prod\n",
			want:   nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ud, err := Parse(tc.family, tc.text)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.family, err)
			}
			got := ud.BootstrapCalls()
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("BootstrapCalls() =\n  %#v\nwant\n  %#v", got, tc.want)
			}
		})
	}
}

func TestBootstrapCallsLongLine(t *testing.T) {
	// A line longer than bufio's default 64 KiB token still gets scanned.
	long := "echo " + strings.Repeat("x", 200_000) + " && /etc/eks/bootstrap.sh prod"
	ud := UserData{Parts: []Part{{Kind: KindShell, Body: "#!/bin/bash\n" + long + "\n"}}}
	got := ud.BootstrapCalls()
	if len(got) != 1 || got[0].Line != 2 || got[0].Part != 1 || got[0].Text != long {
		t.Fatalf("BootstrapCalls() on a 200 KB line = %d calls %+v, want one call on line 2 of part 1", len(got), summarize(got))
	}
}

func summarize(cs []Command) []Command {
	out := make([]Command, len(cs))
	for i, c := range cs {
		if len(c.Text) > 40 {
			c.Text = c.Text[:40] + "..."
		}
		out[i] = c
	}
	return out
}

func TestIsWindows(t *testing.T) {
	tests := []struct {
		family string
		want   bool
	}{
		{FamilyWindows2019, true},
		{FamilyWindows2022, true},
		{FamilyWindows2025, true},
		{FamilyAL2, false},
		{FamilyAL2023, false},
		{FamilyBottlerocket, false},
		{FamilyCustom, false},
		{FamilyUbuntu, false},
		{"", false},
	}
	for _, tc := range tests {
		t.Run(tc.family, func(t *testing.T) {
			if got := IsWindows(tc.family); got != tc.want {
				t.Errorf("IsWindows(%q) = %v, want %v", tc.family, got, tc.want)
			}
		})
	}
}
