package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docRef is a document named in a comment or doc: a path ending in .md, with an optional section.
// A path inside a URL (preceded by "/" or ":") is not one.
var docRef = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./:-])([A-Za-z0-9_.-][A-Za-z0-9_./-]*\.md)(?: §([0-9]+))?`)

// writeUp is a field report named by its file.
var writeUp = regexp.MustCompile(`[a-z0-9-]+\.txt\b`)

// TestDesignReferencesStayInTheRepository: every Markdown document a Go file, a manifest or a doc
// names is a file of this repository, and every "§N" it cites is a heading of that file, so a reader
// never meets a reference to a document they do not have. Write-ups named by file (*.txt) in the
// examples and docs are not in the repository either: they describe them instead.
func TestDesignReferencesStayInTheRepository(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "dist") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".yaml", ".md":
		default:
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range writeUp.FindAllString(string(src), -1) {
			// checksums.txt is no write-up but the list of checksums a release publishes (.goreleaser.yaml).
			if m != "checksums.txt" && filepath.Ext(path) != ".go" {
				t.Errorf("%s names the write-up %s, which is not in the repository: describe it instead", path, m)
				break
			}
		}
		for _, m := range docRef.FindAllStringSubmatch(string(src), -1) {
			ref := m[1]
			// From the repository root, from the file itself (as Markdown links are), or in docs/ (as
			// the README's tree names them).
			var doc []byte
			for _, dir := range []string{root, filepath.Dir(path), filepath.Join(root, "docs")} {
				if doc, err = os.ReadFile(filepath.Join(dir, ref)); err == nil {
					break
				}
			}
			if err != nil {
				t.Errorf("%s names %s, which is not a file of the repository", path, ref)
				continue
			}
			checked++
			if m[2] != "" && !regexp.MustCompile(`(?m)^#+ §`+m[2]+` `).Match(doc) {
				t.Errorf("%s cites %s §%s, which has no such section", path, ref, m[2])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Errorf("only %d references checked: the walk missed the repository", checked)
	}
}
