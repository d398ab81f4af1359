// Package userdata parses EC2NodeClass userData the way each AMI family consumes it: MIME multi-part
// documents and shell scripts for AL2, NodeConfig YAML, shell or MIME for AL2023 (nodeadm), TOML for
// Bottlerocket, and for amiFamily Custom whatever the image's boot agent (cloud-init, nodeadm or
// Bottlerocket) would take. It reads which taints the kubelet registers the node with (Registers)
// through real parsers: a shell parser for scripts, YAML for NodeConfig and cloud-config, TOML for
// Bottlerocket settings. The rules read the parts; they never execute or rewrite them.
package userdata

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
	yaml "go.yaml.in/yaml/v3"

	"github.com/karpenter-guard/karpenter-guard/internal/wording"
	"github.com/karpenter-guard/karpenter-guard/internal/yamlbudget"
	"github.com/karpenter-guard/karpenter-guard/internal/yamlpos"
)

// Families as written in spec.amiFamily.
const (
	FamilyAL2          = "AL2"
	FamilyAL2023       = "AL2023"
	FamilyBottlerocket = "Bottlerocket"
	FamilyCustom       = "Custom"
	FamilyUbuntu       = "Ubuntu"
	FamilyWindows2019  = "Windows2019"
	FamilyWindows2022  = "Windows2022"
	FamilyWindows2025  = "Windows2025"
)

// IsWindows reports whether family is one of the Windows families.
func IsWindows(family string) bool { return strings.HasPrefix(family, "Windows") }

// Kind says what a part of userData holds.
type Kind string

// Part kinds.
const (
	KindShell       Kind = "shell"
	KindNodeConfig  Kind = "nodeconfig"
	KindTOML        Kind = "toml"
	KindCloudConfig Kind = "cloud-config"
	KindOther       Kind = "other"
)

// NodeConfigContentType is the MIME type nodeadm reads a NodeConfig from.
const NodeConfigContentType = "application/node.eks.aws"

// Part is one piece of userData: the whole text, or one MIME part.
type Part struct {
	ContentType string
	Kind        Kind
	Body        string
}

// UserData is parsed userData.
type UserData struct {
	// MIME is true when the userData is a MIME multi-part document.
	MIME  bool
	Parts []Part
}

// Parse parses userData for an AMI family. The error says, in one sentence, why the family's boot
// agent would not accept it. amiFamily Custom userData is never refused: Karpenter passes it to the
// instance untouched, so it is read as the image's boot agent would read it (see parseCustom).
func Parse(family, text string) (UserData, error) {
	switch {
	case family == FamilyBottlerocket:
		if err := bottlerocketNotTOML(text); err != nil {
			return UserData{}, err
		}
		var v map[string]any
		if _, err := toml.Decode(text, &v); err != nil {
			return UserData{}, fmt.Errorf("Bottlerocket userData is not valid TOML: %s", wording.OneLine(err.Error()))
		}
		return UserData{Parts: []Part{{ContentType: "application/toml", Kind: KindTOML, Body: text}}}, nil
	case family == FamilyAL2 || family == FamilyAL2023:
		if looksLikeMIME(text) {
			parts, err := parseMIME(text, false)
			if err != nil {
				return UserData{}, err
			}
			for i, p := range parts {
				if p.Kind == KindNodeConfig {
					body, err := nodeConfigPartText(p.Body, i+1)
					if err != nil {
						return UserData{}, err
					}
					if err := checkNodeConfig(body, i+1); err != nil {
						return UserData{}, err
					}
				}
			}
			return UserData{MIME: true, Parts: parts}, nil
		}
		if family == FamilyAL2023 && looksLikeNodeConfig(text) {
			if err := checkNodeConfig(text, 0); err != nil {
				return UserData{}, err
			}
			return UserData{Parts: []Part{{ContentType: NodeConfigContentType, Kind: KindNodeConfig, Body: text}}}, nil
		}
		return UserData{Parts: []Part{{ContentType: "text/x-shellscript", Kind: KindShell, Body: text}}}, nil
	case family == FamilyCustom:
		return parseCustom(text), nil
	default:
		// Windows (PowerShell) userData is passed to the instance verbatim.
		return UserData{Parts: []Part{{Kind: KindOther, Body: text}}}, nil
	}
}

// ErrScript is what Parse's error is (errors.Is) when the userData is a shell script and the family's
// boot agent runs none: Bottlerocket.
var ErrScript = errors.New("userData is a shell script")

// scriptError is an error of Parse that is ErrScript.
type scriptError struct{ msg string }

func (e *scriptError) Error() string        { return e.msg }
func (e *scriptError) Is(target error) bool { return target == ErrScript }

// bottlerocketNotTOML says why userData is no Bottlerocket settings at all, nil when it may be TOML.
// Bottlerocket reads userData as TOML settings only: a shell script (a #! first line, or a MIME
// document with a shell part) never runs there, and a MIME document is no TOML.
func bottlerocketNotTOML(text string) error {
	const reads = "Bottlerocket reads userData as TOML settings; "
	if looksLikeMIME(text) {
		if parts, err := parseMIME(text, true); err == nil {
			for i, p := range parts {
				if p.Kind == KindShell {
					return &scriptError{fmt.Sprintf(reads+"this is a shell script: MIME part %d is %s (%q), which Bottlerocket never runs", i+1, p.ContentType, firstLine(p.Body))}
				}
			}
		}
		return errors.New(reads + "this is a MIME multi-part document, not TOML")
	}
	t := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(t, "#!") {
		return nil
	}
	// A #! line is a TOML comment too: settings that start with one are still settings.
	var v map[string]any
	if _, err := toml.Decode(text, &v); err == nil && v["settings"] != nil {
		return nil
	}
	line := 1 + strings.Count(text[:len(text)-len(t)], "\n")
	return &scriptError{fmt.Sprintf(reads+"this is a shell script: %q on line %d, which Bottlerocket never runs", firstLine(t), line)}
}

// firstLine returns the first non-blank line of text, trimmed and cut to 60 runes.
func firstLine(text string) string {
	for rest := text; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if line = strings.TrimSpace(line); line != "" {
			if r := []rune(line); len(r) > 60 {
				return string(r[:59]) + "…"
			}
			return line
		}
	}
	return ""
}

// parseCustom reads amiFamily Custom userData as the image's boot agent would: Karpenter neither
// merges nor checks it. A MIME document is read as cloud-init reads one, leniently (a part cut off by
// the end, or a single-part document, is still read); other text by what it starts with, as
// cloud-init tells its formats apart (#!, #cloud-config, #cloud-boothook), or as the NodeConfig
// nodeadm reads, or the TOML settings Bottlerocket reads. What none of them would read is one
// KindOther part, as is MIME that cannot be read at all.
func parseCustom(text string) UserData {
	if looksLikeMIME(text) {
		if parts, err := parseMIME(text, true); err == nil {
			return UserData{MIME: true, Parts: parts}
		}
		return UserData{Parts: []Part{{Kind: KindOther, Body: text}}}
	}
	t := strings.TrimLeft(text, " \t\r\n")
	switch {
	case strings.HasPrefix(t, "#!"):
		return UserData{Parts: []Part{{ContentType: "text/x-shellscript", Kind: KindShell, Body: text}}}
	case hasPrefixFold(t, "#cloud-config"):
		return UserData{Parts: []Part{{ContentType: "text/cloud-config", Kind: KindCloudConfig, Body: text}}}
	case hasPrefixFold(t, "#cloud-boothook"):
		return UserData{Parts: []Part{{ContentType: "text/cloud-boothook", Kind: KindShell, Body: text}}}
	case looksLikeNodeConfig(text):
		return UserData{Parts: []Part{{ContentType: NodeConfigContentType, Kind: KindNodeConfig, Body: text}}}
	}
	var v map[string]any
	if _, err := toml.Decode(text, &v); err == nil && v["settings"] != nil {
		return UserData{Parts: []Part{{ContentType: "application/toml", Kind: KindTOML, Body: text}}}
	}
	return UserData{Parts: []Part{{Kind: KindOther, Body: text}}}
}

// looksLikeMIME reports whether Karpenter would read userData as MIME: it starts, after white space,
// with a MIME-Version or Content-Type header.
func looksLikeMIME(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	return hasPrefixFold(t, "MIME-Version:") || hasPrefixFold(t, "Content-Type:")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// looksLikeNodeConfig reports whether plain (non-MIME) AL2023 userData is meant as a NodeConfig
// rather than a shell script: it is a YAML mapping carrying apiVersion or kind.
func looksLikeNodeConfig(text string) bool {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "#!") {
		return false
	}
	return nodeConfigHeadRE.MatchString(t)
}

// parseMIME reads a MIME document as Karpenter's merger does, or with lenient set as cloud-init does:
// then a single-part document is one part, and a part cut off by the end of the body keeps what it
// holds (Python's email parser records a defect and goes on). Parts sent base64
// (Content-Transfer-Encoding: base64) are decoded, as cloud-init decodes them; quoted-printable ones
// mime/multipart decodes itself.
func parseMIME(text string, lenient bool) ([]Part, error) {
	if strings.TrimLeft(text, " \t\r\n") != text {
		return nil, errors.New("userData MIME headers must start on the first line: Karpenter reads the blank lines or spaces before them as an empty header")
	}
	// net/mail and mime/multipart, as Karpenter reads it; their errors say why a document is refused.
	// net/mail wants CRLF or LF headers followed by a blank line; userData written in YAML block scalars
	// uses LF, which it accepts.
	msg, err := mail.ReadMessage(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("userData looks like MIME but its headers cannot be read: %s", wording.OneLine(err.Error()))
	}
	if msg.Header.Get("Content-Type") == "" {
		return nil, errors.New("userData looks like MIME but has no Content-Type header; expected e.g. Content-Type: multipart/mixed; boundary=\"BOUNDARY\"")
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("userData MIME Content-Type header is invalid: %s", wording.OneLine(err.Error()))
	}
	body, err := io.ReadAll(io.LimitReader(msg.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("userData MIME body cannot be read: %s", wording.OneLine(err.Error()))
	}
	if !strings.HasPrefix(mediaType, "multipart/") {
		if lenient {
			return []Part{classify(mediaType, decodeTransfer(msg.Header.Get("Content-Transfer-Encoding"), string(body)))}, nil
		}
		// Karpenter merges its own parts into custom MIME userData and rejects a single-part document.
		return nil, fmt.Errorf("userData MIME Content-Type is %s, but Karpenter accepts only multipart MIME userData; expected Content-Type: multipart/mixed; boundary=\"BOUNDARY\"", mediaType)
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, errors.New("userData MIME Content-Type is multipart but has no boundary parameter")
	}
	if !bytes.Contains(body, []byte("--"+boundary)) {
		return nil, fmt.Errorf("userData MIME body never uses its boundary %q", boundary)
	}
	// Like Karpenter's reader, a body may end without the closing boundary (--BOUNDARY--) once its
	// last part is delimited: the reader's EOF after a boundary line ends the parts. A part cut off
	// by the end of the body is refused, by Karpenter too (its io.ReadAll of the part fails); only a
	// lenient read, as cloud-init's, keeps it.
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	var parts []Part
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("userData MIME part %d cannot be read: %s", len(parts)+1, wording.OneLine(err.Error()))
		}
		b, err := io.ReadAll(io.LimitReader(p, 1<<20))
		cutOff := errors.Is(err, io.ErrUnexpectedEOF)
		if cutOff && !lenient {
			return nil, fmt.Errorf("userData MIME part %d is cut off by the end of the body: end it with a boundary line, \"--%s--\"", len(parts)+1, boundary)
		}
		if err != nil && !cutOff {
			return nil, fmt.Errorf("userData MIME part %d cannot be read: %s", len(parts)+1, wording.OneLine(err.Error()))
		}
		ct := p.Header.Get("Content-Type")
		mt := "text/plain"
		if ct != "" {
			if mt, _, err = mime.ParseMediaType(ct); err != nil {
				return nil, fmt.Errorf("userData MIME part %d has an invalid Content-Type %q: %s", len(parts)+1, ct, wording.OneLine(err.Error()))
			}
		}
		parts = append(parts, classify(mt, decodeTransfer(p.Header.Get("Content-Transfer-Encoding"), string(b))))
		if cutOff {
			break
		}
	}
	if len(parts) == 0 {
		return nil, errors.New("userData MIME document has no parts")
	}
	return parts, nil
}

// decodeTransfer returns a part's body as the boot agent reads it: base64-decoded when its
// Content-Transfer-Encoding says base64 and it decodes, else as it is.
func decodeTransfer(encoding, body string) string {
	if !strings.EqualFold(strings.TrimSpace(encoding), "base64") {
		return body
	}
	d, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(body), ""))
	if err != nil {
		return body
	}
	return string(d)
}

// classify tells a MIME part's kind from its media type, and for text/plain (what a part without a
// Content-Type is) from what its body starts with, as cloud-init does.
func classify(mediaType, body string) Part {
	k := KindOther
	switch mediaType {
	case NodeConfigContentType:
		k = KindNodeConfig
	case "text/x-shellscript", "text/x-sh", "text/cloud-boothook",
		"text/x-shellscript-per-boot", "text/x-shellscript-per-instance", "text/x-shellscript-per-once":
		k = KindShell
	case "text/cloud-config":
		k = KindCloudConfig
	case "text/plain", "text/x-not-multipart":
		switch t := strings.TrimSpace(body); {
		case strings.HasPrefix(t, "#!"), hasPrefixFold(t, "#cloud-boothook"):
			k = KindShell
		case hasPrefixFold(t, "#cloud-config"):
			k = KindCloudConfig
		}
	}
	return Part{ContentType: mediaType, Kind: k, Body: body}
}

// nodeConfigPartText returns the text nodeadm reads from NodeConfig MIME part number part: like
// nodeadm, it base64-decodes a body that is valid base64, then decompresses gzip data.
func nodeConfigPartText(body string, part int) (string, error) {
	b := []byte(body)
	if d, err := base64.StdEncoding.DecodeString(body); err == nil {
		b = d
	}
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err == nil {
			b, err = io.ReadAll(io.LimitReader(zr, 1<<20))
		}
		if err != nil {
			return "", fmt.Errorf("NodeConfig in %s is gzip data that cannot be decompressed: %s", partName(part), wording.OneLine(err.Error()))
		}
	}
	return string(b), nil
}

// partName names NodeConfig text in errors: MIME part number part (1-based), or with part 0 the
// whole userData.
func partName(part int) string {
	if part == 0 {
		return "userData"
	}
	return fmt.Sprintf("MIME part %d of userData", part)
}

// checkNodeConfig verifies a NodeConfig document (or several, separated by ---) has nodeadm's
// apiVersion and kind and parses as YAML within the YAML budget (package yamlbudget). Empty documents (a leading ---) are skipped. part is the
// MIME part the text is (0: the whole userData); errors name it, and their line numbers count
// within it.
func checkNodeConfig(text string, part int) error {
	// In a part, "line 4" would be read as a line of the whole userData.
	lineSuffix := ""
	if part > 0 {
		lineSuffix = " of the part"
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	var budget yamlbudget.Budget
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil {
			// nodeadm reads NodeConfig with Kubernetes' YAML reader, which refuses what is over the
			// budget.
			err = budget.Check(&n)
		}
		if err != nil {
			msg := wording.OneLine(strings.TrimPrefix(err.Error(), "yaml: "))
			msg = yamlpos.LineRE.ReplaceAllString(msg, "line $1"+lineSuffix+":")
			return fmt.Errorf("NodeConfig in %s is not valid YAML: %s", partName(part), msg)
		}
		if len(n.Content) == 0 || (n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Tag == "!!null") {
			continue
		}
		root := n.Content[0]
		var doc struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
		}
		if root.Kind != yaml.MappingNode || root.Decode(&doc) != nil {
			return fmt.Errorf("NodeConfig in %s (line %d%s) is not a YAML mapping with string apiVersion and kind; nodeadm reads apiVersion node.eks.aws/v1alpha1, kind NodeConfig", partName(part), root.Line, lineSuffix)
		}
		if doc.APIVersion != "node.eks.aws/v1alpha1" || doc.Kind != "NodeConfig" {
			return fmt.Errorf("NodeConfig in %s has apiVersion %q and kind %q; nodeadm reads apiVersion node.eks.aws/v1alpha1, kind NodeConfig", partName(part), doc.APIVersion, doc.Kind)
		}
	}
}

// Command is a shell command found in userData.
type Command struct {
	// Part is the 1-based MIME part (1 for non-MIME userData).
	Part int
	// Line is the 1-based line inside the part.
	Line int
	Text string
}

var (
	nodeConfigHeadRE = regexp.MustCompile(`(?m)^(apiVersion|kind):`)
	bootstrapRE      = regexp.MustCompile(`/etc/eks/bootstrap\.sh`)
	nodeadmInitRE    = regexp.MustCompile(`\bnodeadm\s+init\b`)
)

// BootstrapCalls returns the shell lines that run AL2's /etc/eks/bootstrap.sh or run `nodeadm init`
// by hand. Comment lines are ignored.
func (u UserData) BootstrapCalls() []Command {
	var out []Command
	for i, p := range u.Parts {
		if p.Kind != KindShell {
			continue
		}
		if !strings.Contains(p.Body, "bootstrap.sh") && !strings.Contains(p.Body, "nodeadm") {
			continue // the common case: nothing to find, no line scan
		}
		n := 0
		for rest := p.Body; rest != ""; {
			var line string
			line, rest, _ = strings.Cut(rest, "\n")
			n++
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") {
				continue
			}
			if bootstrapRE.MatchString(line) || nodeadmInitRE.MatchString(line) {
				out = append(out, Command{Part: i + 1, Line: n, Text: line})
			}
		}
	}
	return out
}
