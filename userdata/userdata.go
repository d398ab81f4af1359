// Package userdata parses EC2NodeClass userData the way each AMI family consumes it: MIME multi-part
// documents and shell scripts for AL2, NodeConfig YAML, shell or MIME for AL2023 (nodeadm), TOML for
// Bottlerocket. The rules read the parts; they never execute or rewrite them.
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
	KindShell      Kind = "shell"
	KindNodeConfig Kind = "nodeconfig"
	KindTOML       Kind = "toml"
	KindOther      Kind = "other"
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
// agent would not accept it.
func Parse(family, text string) (UserData, error) {
	switch {
	case family == FamilyBottlerocket:
		if looksLikeMIME(text) {
			return UserData{}, errors.New("Bottlerocket userData must be TOML settings, not a MIME document")
		}
		var v map[string]any
		if _, err := toml.Decode(text, &v); err != nil {
			return UserData{}, fmt.Errorf("Bottlerocket userData is not valid TOML: %s", wording.OneLine(err.Error()))
		}
		return UserData{Parts: []Part{{ContentType: "application/toml", Kind: KindTOML, Body: text}}}, nil
	case family == FamilyAL2 || family == FamilyAL2023:
		if looksLikeMIME(text) {
			parts, err := parseMIME(text)
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
	default:
		// Windows (PowerShell) and Custom userData are passed to the instance verbatim.
		return UserData{Parts: []Part{{Kind: KindOther, Body: text}}}, nil
	}
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

func parseMIME(text string) ([]Part, error) {
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
	if !strings.HasPrefix(mediaType, "multipart/") {
		// Karpenter merges its own parts into custom MIME userData and rejects a single-part document.
		return nil, fmt.Errorf("userData MIME Content-Type is %s, but Karpenter accepts only multipart MIME userData; expected Content-Type: multipart/mixed; boundary=\"BOUNDARY\"", mediaType)
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, errors.New("userData MIME Content-Type is multipart but has no boundary parameter")
	}
	body, err := io.ReadAll(io.LimitReader(msg.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("userData MIME body cannot be read: %s", wording.OneLine(err.Error()))
	}
	if !bytes.Contains(body, []byte("--"+boundary)) {
		return nil, fmt.Errorf("userData MIME body never uses its boundary %q", boundary)
	}
	// Like Karpenter's reader, a body may end without the closing boundary (--BOUNDARY--) once its
	// last part is delimited: the reader's EOF after a boundary line ends the parts. A part cut off
	// by the end of the body is refused, by Karpenter too.
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
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("userData MIME part %d is cut off by the end of the body: end it with a boundary line, \"--%s--\"", len(parts)+1, boundary)
		}
		if err != nil {
			return nil, fmt.Errorf("userData MIME part %d cannot be read: %s", len(parts)+1, wording.OneLine(err.Error()))
		}
		ct := p.Header.Get("Content-Type")
		mt := "text/plain"
		if ct != "" {
			if mt, _, err = mime.ParseMediaType(ct); err != nil {
				return nil, fmt.Errorf("userData MIME part %d has an invalid Content-Type %q: %s", len(parts)+1, ct, wording.OneLine(err.Error()))
			}
		}
		parts = append(parts, classify(mt, string(b)))
	}
	if len(parts) == 0 {
		return nil, errors.New("userData MIME document has no parts")
	}
	return parts, nil
}

func classify(mediaType, body string) Part {
	k := KindOther
	switch mediaType {
	case NodeConfigContentType:
		k = KindNodeConfig
	case "text/x-shellscript", "text/x-sh":
		k = KindShell
	case "text/plain":
		if strings.HasPrefix(strings.TrimSpace(body), "#!") {
			k = KindShell
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
// apiVersion and kind and parses as YAML. Empty documents (a leading ---) are skipped. part is the
// MIME part the text is (0: the whole userData); errors name it, and their line numbers count
// within it.
func checkNodeConfig(text string, part int) error {
	// In a part, "line 4" would be read as a line of the whole userData.
	lineSuffix := ""
	if part > 0 {
		lineSuffix = " of the part"
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
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

// RegistersUnregisteredTaint reports whether the userData registers the node with Karpenter's
// karpenter.sh/unregistered:NoExecute taint, in any form (kubelet flag, KubeletConfiguration,
// NodeConfig, Bottlerocket settings): the key and the NoExecute effect both appear outside comments.
// A commented-out flag registers nothing, and those nodes are deleted after 15 minutes.
func RegistersUnregisteredTaint(text string) bool {
	text = withoutComments(text)
	return strings.Contains(text, "karpenter.sh/unregistered") && strings.Contains(text, "NoExecute")
}

// withoutComments drops what shell, YAML and TOML all read as comments: a '#' at the start of a word
// (line start or after a space or tab) outside quotes, to the end of its line. The shebang goes too,
// which says nothing about taints. Written by hand: the text mixes the three languages (and MIME
// headers), and no one library reads them all; only comments need telling apart here.
func withoutComments(text string) string {
	if !strings.Contains(text, "#") {
		return text
	}
	var b strings.Builder
	for rest := text; rest != ""; {
		line, after, _ := strings.Cut(rest, "\n")
		rest = after
		var quote byte
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case quote != 0:
				if c == quote {
					quote = 0
				}
			case c == '\'' || c == '"':
				quote = c
			case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
				line = line[:i]
			}
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
