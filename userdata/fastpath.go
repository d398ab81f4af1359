package userdata

import (
	"mime"
	"strings"
)

// This file holds exact fast paths for the two expensive steps of Parse, for the shapes of userData
// people actually write. Parsing one EC2NodeClass's MIME userData with net/mail, mime/multipart and
// yaml.v3 costs about 20 µs and 23 KB (two 4 KiB bufio readers, a YAML parser and its node tree):
// more than the rest of the static catalog together, paid again on every admission review. No
// library splits MIME or validates YAML without that setup, so the simple cases are recognised here
// by hand.
//
// Each fast path only ever answers "this is valid, and here is the result"; on anything it does not
// fully understand it declines and the library path runs, which also writes every error message.
// FuzzFastMIME and FuzzSimpleNodeConfig check on arbitrary input that whenever a fast path answers,
// the library path gives the same answer.

// fastParseMIME splits a multipart MIME document exactly as mail.ReadMessage and
// multipart.Reader.NextPart followed by parseMIME's checks would, when the document uses only LF
// line endings, unfolded "Name: value" headers, exact boundary lines and no transfer encoding. ok is
// false when the document is outside that subset or would be rejected: the caller then runs the
// library path.
func fastParseMIME(text string) (parts []Part, ok bool) {
	if len(text) > 1<<20 || strings.IndexByte(text, '\r') >= 0 {
		return nil, false
	}
	ct, body, ok := fastHeaders(text, false)
	if !ok || ct == "" {
		return nil, false
	}
	mediaType, boundary, err := mediaTypeAndBoundary(ct)
	if err != nil || !strings.HasPrefix(mediaType, "multipart/") || boundary == "" {
		return nil, false
	}
	dash := "--" + boundary
	// Preamble: lines before the first boundary line are skipped, as NextPart does.
	rest := body
	for {
		line, after, found := strings.Cut(rest, "\n")
		if !found {
			return nil, false // no boundary line ends with a newline: let the library decide
		}
		if len(line) > 1000 {
			return nil, false // NextPart reads preamble lines into a 4 KiB buffer and fails on longer ones
		}
		if strings.HasPrefix(line, dash) {
			if line != dash {
				return nil, false // the close boundary, or a boundary with padding or junk
			}
			rest = after
			break
		}
		rest = after
	}
	for {
		// rest starts just after a delimiter line: the part's headers, a blank line, the body.
		pct, afterHeaders, ok := fastHeaders(rest, true)
		if !ok {
			return nil, false
		}
		bodyText, next, final, ok := fastPartBody(afterHeaders, dash)
		if !ok {
			return nil, false
		}
		mt := "text/plain"
		if pct != "" {
			if mt, _, err = mediaTypeAndBoundary(pct); err != nil {
				return nil, false
			}
		}
		parts = append(parts, classify(mt, bodyText))
		if final {
			return parts, true
		}
		rest = next
	}
}

// mediaTypeAndBoundary is mime.ParseMediaType for a Content-Type, keeping only the boundary
// parameter. The forms userData uses ("text/x-shellscript", `multipart/mixed; boundary="//"`) are
// read by simpleMediaType, without the map of parameters the library makes; the rest by the library.
func mediaTypeAndBoundary(v string) (mediaType, boundary string, err error) {
	if mediaType, boundary, ok := simpleMediaType(v); ok {
		return mediaType, boundary, nil
	}
	mediaType, params, err := mime.ParseMediaType(v)
	return mediaType, params["boundary"], err
}

// simpleMediaType reads "type/subtype", optionally followed by one boundary parameter whose value
// is a token or a quoted string without escapes, all in ASCII, as mime.ParseMediaType would; ok is
// false for anything else. FuzzSimpleMediaType holds it to the library.
func simpleMediaType(v string) (mediaType, boundary string, ok bool) {
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			return "", "", false
		}
	}
	mt, params, hasParams := strings.Cut(v, ";")
	mt = strings.ToLower(trimSpace(mt))
	typ, sub, found := strings.Cut(mt, "/")
	if !found || !isToken(typ) || !isToken(sub) {
		return "", "", false
	}
	if !hasParams {
		return mt, "", true
	}
	name, value, found := strings.Cut(params, "=")
	if !found || !strings.EqualFold(trimSpace(name), "boundary") {
		return "", "", false
	}
	value = trimSpace(value)
	if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
		value = value[1 : len(value)-1]
		if strings.ContainsAny(value, "\"\\\r\n") {
			return "", "", false
		}
		return mt, value, true
	}
	if value == "" || !isToken(value) {
		return "", "", false
	}
	return mt, value, true
}

// trimSpace trims the ASCII bytes unicode.IsSpace accepts, as the library does around types and
// parameters.
func trimSpace(s string) string {
	return strings.Trim(s, " \t\n\v\f\r")
}

// isToken reports whether s is a non-empty RFC 2045 token: ASCII without controls, space or
// tspecials.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?=`, c) >= 0 {
			return false
		}
	}
	return true
}

// maxFastHeaders is the most header lines the fast path reads in a block; userData has a handful.
const maxFastHeaders = 100

// fastHeaders reads a header block of "Name: value" lines ended by a blank line and returns the
// first Content-Type value and the text after the blank line. It declines folded lines, names with
// characters outside letters, digits and '-', a missing blank line, and (in a part, where NextPart
// would decode it) Content-Transfer-Encoding.
func fastHeaders(text string, part bool) (contentType, rest string, ok bool) {
	seen := false
	for n := 0; ; n++ {
		if n == maxFastHeaders {
			return "", "", false // multipart refuses parts with more than 10,000 headers
		}
		line, after, found := strings.Cut(text, "\n")
		if !found {
			return "", "", false
		}
		if line == "" {
			return contentType, after, true
		}
		name, value, hasColon := strings.Cut(line, ":")
		if !hasColon || !isHeaderName(name) || !printable(value) || (len(after) > 0 && (after[0] == ' ' || after[0] == '\t')) {
			return "", "", false
		}
		if part && strings.EqualFold(name, "Content-Transfer-Encoding") {
			return "", "", false
		}
		if !seen && strings.EqualFold(name, "Content-Type") {
			contentType, seen = strings.Trim(value, " \t"), true
		}
		text = after
	}
}

// printable reports whether s is printable ASCII: header values textproto accepts unchanged.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func isHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// fastPartBody returns a part's body: the text up to the newline before the next boundary line, as
// multipart's part reader delimits it. final is true when that line is the close boundary. It
// declines boundary lines with padding or trailing text, and a document that ends without a close
// boundary line.
func fastPartBody(text, dash string) (body, rest string, final, ok bool) {
	// A boundary directly after the headers is an empty body.
	delim := "\n" + dash
	start, skip := 0, 0
	if strings.HasPrefix(text, dash) {
		start, skip = 0, len(dash)
	} else {
		i := strings.Index(text, delim)
		for i >= 0 {
			// "\n--B" followed by anything other than a newline, "--" or white space is body text.
			after := text[i+len(delim):]
			if after == "" || after[0] == '\n' || after[0] == ' ' || after[0] == '\t' || after[0] == '\r' || strings.HasPrefix(after, "--") {
				break
			}
			j := strings.Index(after, delim)
			if j < 0 {
				i = -1
				break
			}
			i += len(delim) + j
		}
		if i < 0 {
			return "", "", false, false
		}
		start, skip = i, len(delim)
	}
	after := text[start+skip:]
	switch {
	case strings.HasPrefix(after, "\n"):
		return text[:start], after[1:], false, true
	case after == "--" || strings.HasPrefix(after, "--\n"):
		return text[:start], "", true, true
	}
	return "", "", false, false
}

// simpleNodeConfig reports whether text is one YAML document, written as block mappings and
// sequences of plain or simply quoted one-line scalars, whose top-level mapping has the apiVersion
// and kind nodeadm reads and no repeated key: a NodeConfig checkNodeConfig accepts. False means
// "not sure", never "invalid".
func simpleNodeConfig(text string) bool {
	type frame struct {
		indent int
		seq    bool
	}
	var (
		stack       []frame
		stackBuf    [8]frame
		pending     = -1 // indent of a "key:" line whose value is still open, or -1
		lastScalar  = -1 // indent of the last line that ended in a scalar, or -1
		topKeys     [16]string
		nTop        int
		api, kind   string
		haveContent bool
	)
	stack = stackBuf[:0]
	for rest := text; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimRight(line, " ")
		indent := len(line) - len(strings.TrimLeft(line, " "))
		content := line[indent:]
		if content == "" {
			continue
		}
		if !printable(content) {
			return false // tabs, control characters and anything beyond ASCII: let yaml.v3 decide
		}
		if content[0] == '#' {
			continue
		}
		if indent == 0 && (strings.HasPrefix(content, "---") || strings.HasPrefix(content, "...") || content[0] == '%') {
			return false
		}
		if lastScalar >= 0 && indent > lastScalar {
			return false // a continuation of a multi-line scalar, or an error
		}
		isSeq := content == "-" || strings.HasPrefix(content, "- ")
		if !haveContent {
			if indent != 0 || isSeq {
				return false
			}
			stack = append(stack, frame{0, false})
			haveContent = true
		} else if pending >= 0 {
			open := pending
			pending = -1
			switch {
			case indent > open:
				stack = append(stack, frame{indent, isSeq})
			case indent == open && isSeq:
				stack = append(stack, frame{indent, true}) // a sequence as a mapping value, not indented
			}
		}
		for len(stack) > 0 && (stack[len(stack)-1].indent > indent ||
			(stack[len(stack)-1].indent == indent && stack[len(stack)-1].seq && !isSeq && len(stack) > 1 && stack[len(stack)-2].indent == indent)) {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 || stack[len(stack)-1].indent != indent || stack[len(stack)-1].seq != isSeq {
			return false
		}
		lastScalar = -1
		if isSeq {
			if content == "-" || !simpleScalar(strings.TrimLeft(content[1:], " ")) {
				return false
			}
			lastScalar = indent
			continue
		}
		key, value, ok := cutKey(content)
		if !ok {
			return false
		}
		if len(stack) == 1 {
			for _, k := range topKeys[:nTop] {
				if k == key {
					return false // yaml.v3 refuses a repeated key when decoding apiVersion and kind
				}
			}
			if nTop == len(topKeys) {
				return false
			}
			topKeys[nTop] = key
			nTop++
			switch key {
			case "apiVersion":
				api = value
			case "kind":
				kind = value
			}
		}
		if value == "" {
			pending = indent
			continue
		}
		if !simpleScalar(value) {
			return false
		}
		lastScalar = indent
	}
	return api == "node.eks.aws/v1alpha1" && kind == "NodeConfig"
}

// maxFastKey is the longest mapping key the fast path accepts.
const maxFastKey = 128

// cutKey splits "key:" or "key: value" for a key of letters, digits and "_./-" that starts with a
// letter, digit or '_'.
func cutKey(s string) (key, value string, ok bool) {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return "", "", false
	}
	key = s[:i]
	if len(key) > maxFastKey {
		return "", "", false // YAML limits simple keys to 1,024 characters
	}
	for j := 0; j < len(key); j++ {
		c := key[j]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' ||
			j > 0 && (c == '.' || c == '/' || c == '-')) {
			return "", "", false
		}
	}
	switch rest := s[i+1:]; {
	case rest == "":
		return key, "", true
	case rest[0] == ' ':
		if v := strings.TrimLeft(rest, " "); v != "" && v[0] != '#' {
			return key, v, true
		}
	}
	return "", "", false
}

// simpleScalar reports whether v is a one-line scalar YAML reads as itself: plain, starting with no
// indicator (a '-' followed by a non-space character is allowed, as in "--node-labels=…") and
// holding no ": " or " #", or quoted with no quote or backslash inside.
func simpleScalar(v string) bool {
	if v == "" {
		return false
	}
	switch v[0] {
	case '"', '\'':
		return len(v) >= 2 && v[len(v)-1] == v[0] && !strings.ContainsAny(v[1:len(v)-1], `"'\`)
	case ' ', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`':
		return false
	case '-':
		if len(v) == 1 || v[1] == ' ' {
			return false
		}
	}
	return !strings.Contains(v, ": ") && !strings.Contains(v, " #") && v[len(v)-1] != ':'
}
