package userdata

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxNesting bounds how deep here-documents that hold scripts that hold here-documents are read;
// deeper ones are opaque.
const maxNesting = 4

// readShell reads a shell script the way bash parses it. Comments are not in the syntax tree, so
// they never count. The arguments of each simple command are read together as one command line (a
// flag's value may be the next argument); every other word (an assignment's value, an array
// element, a test operand, a parameter's default) on its own. Text only known at run time becomes
// runtimeMark. A here-document is read as the file it writes (readDocument), unless it is fed to
// `:`, `true` or `false`, the idiom for a block comment. A script for another interpreter, or one
// bash cannot parse, is opaque.
func (r *taintReader) readShell(script string, loc location, depth int) {
	if !shellInterpreter(script) {
		r.readOpaque(script, loc)
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		r.readOpaque(script, loc)
		return
	}
	r.readShellFile(f, loc, depth)
}

// heredoc is how a here-document's body reads: discarded (fed to a no-op), quoted (its delimiter is
// quoted, so nothing in it expands), dash (<<-, leading tabs stripped).
type heredoc struct{ discard, quoted, dash bool }

// readShellFile reads a parsed script; loc.line is the line the script starts on.
func (r *taintReader) readShellFile(f *syntax.File, loc location, depth int) {
	args := map[*syntax.Word]bool{}
	docs := map[*syntax.Word]heredoc{}
	lineOf := func(n syntax.Node) location {
		l := loc
		l.line += int(n.Pos().Line()) - 1
		return l
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if r.done() {
			return false
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			for _, rd := range n.Redirs {
				if rd.Hdoc != nil {
					docs[rd.Hdoc] = heredoc{discard: isNoOp(n.Cmd), quoted: isQuoted(rd.Word), dash: rd.Op == syntax.DashHdoc}
				}
			}
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				break
			}
			var b strings.Builder
			for i, w := range n.Args {
				args[w] = true
				if i > 0 {
					b.WriteByte(' ')
				}
				writeWord(&b, w)
			}
			r.readText(b.String(), lineOf(n.Args[0]))
		case *syntax.Word:
			if len(n.Parts) == 0 {
				return false
			}
			if h, ok := docs[n]; ok {
				if h.discard {
					return false
				}
				r.readDocument(h.text(n), lineOf(n), depth+1)
				return true // a $(command) in the body still runs
			}
			if !args[n] {
				var b strings.Builder
				writeWord(&b, n)
				r.readText(b.String(), lineOf(n))
			}
		}
		return true
	})
}

// readDocument reads a file a script writes from a here-document, or one a YAML string holds (a
// cloud-config write_files content): a script (#!), YAML holding mappings or lists (a NodeConfig, a
// kubelet configuration, in YAML or JSON), or text shaped like shell (an environment file, a systemd
// drop-in, a script without #!: assignments and words, # comments). Other text is opaque.
func (r *taintReader) readDocument(text string, loc location, depth int) {
	if depth > maxNesting {
		r.readOpaque(text, loc)
		return
	}
	if strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "#!") {
		r.readShell(text, loc, depth)
		return
	}
	if docs, err := yamlDocuments(text); err == nil && structured(docs) {
		r.readYAMLDocs(docs, loc, false, depth)
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil {
		r.readOpaque(text, loc)
		return
	}
	r.readShellFile(f, loc, depth)
}

// text returns the body of here-document w as the file it writes: expansions are runtimeMark
// unless the delimiter is quoted; with <<- the leading tabs of each line go.
func (h heredoc) text(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if h.quoted {
				b.WriteString(p.Value)
			} else {
				b.WriteString(unescape(p.Value, "$`\\\n"))
			}
		default:
			b.WriteRune(runtimeMark)
		}
	}
	s := b.String()
	if h.dash {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimLeft(l, "\t")
		}
		s = strings.Join(lines, "\n")
	}
	return s
}

// writeWord writes the text of w as bash would give it to a command, quotes removed; what only runs
// would tell is runtimeMark.
func writeWord(b *strings.Builder, w *syntax.Word) {
	for _, p := range w.Parts {
		writePart(b, p, false)
	}
}

func writePart(b *strings.Builder, p syntax.WordPart, inDouble bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		if inDouble {
			b.WriteString(unescape(p.Value, "$`\"\\\n"))
		} else {
			b.WriteString(unescape(p.Value, ""))
		}
	case *syntax.SglQuoted:
		if p.Dollar {
			b.WriteString(unescapeANSIC(p.Value))
		} else {
			b.WriteString(p.Value)
		}
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			writePart(b, q, true)
		}
	default:
		b.WriteRune(runtimeMark)
	}
}

// unescape removes the backslashes that quote the next character: before any character when
// escapable is empty (an unquoted word), else before those in escapable. A backslash before a newline
// goes with the newline (a line continuation).
func unescape(s, escapable string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (escapable == "" || strings.IndexByte(escapable, s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeANSIC reads the common escapes of a $'…' string; the others stay as written.
func unescapeANSIC(s string) string {
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`, `\'`, `'`, `\"`, `"`).Replace(s)
}

// isNoOp reports whether cmd is `:`, `true` or `false`, which read no here-document: `: <<'EOF'` is
// how scripts comment out a block.
func isNoOp(cmd syntax.Command) bool {
	c, ok := cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return false
	}
	switch c.Args[0].Lit() {
	case ":", "true", "false":
		return true
	}
	return false
}

// isQuoted reports whether a here-document delimiter is quoted ('EOF', "EOF", \EOF), which keeps
// its body from expanding.
func isQuoted(delim *syntax.Word) bool {
	if delim == nil {
		return false
	}
	for _, p := range delim.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return true
			}
		}
	}
	return false
}

// shellInterpreter reports whether a script is for a POSIX shell: it has no #! line, or one that
// names sh, bash, dash, ash, ksh, mksh or zsh, directly or through env. A script for python or perl
// is no shell script, whatever its MIME type says.
func shellInterpreter(script string) bool {
	t := strings.TrimLeft(script, " \t\r\n")
	if !strings.HasPrefix(t, "#!") {
		return true
	}
	line, _, _ := strings.Cut(t[2:], "\n")
	fields := strings.Fields(line)
	for len(fields) > 0 && path.Base(fields[0]) == "env" {
		fields = fields[1:]
		for len(fields) > 0 && (strings.HasPrefix(fields[0], "-") || strings.Contains(fields[0], "=")) {
			fields = fields[1:]
		}
	}
	if len(fields) == 0 {
		return true
	}
	switch path.Base(fields[0]) {
	case "sh", "bash", "dash", "ash", "ksh", "mksh", "zsh":
		return true
	}
	return false
}
