package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Unread is a path the reader found under an input and deliberately did not read, with the reason:
// a symbolic link out of the tree given, a special file, a kustomize patch. It is reported, not an
// error: the rest of the tree is still checked.
type Unread struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	// Kind groups the reasons: UnreadLink, UnreadSpecial, UnreadPatch.
	Kind string `json:"kind"`
}

// The kinds of Unread.
const (
	// UnreadLink is a symbolic link that leads out of the tree given, or to a directory.
	UnreadLink = "symlink"
	// UnreadSpecial is a FIFO, a device or a socket: reading one can block forever or never end.
	UnreadSpecial = "special"
	// UnreadPatch is a file a kustomization uses as a patch or as generator input, never as a whole
	// object (see Reader.Kustomize).
	UnreadPatch = "kustomize-patch"
)

// walk lists the manifest files under a path given to the reader.
type walk struct {
	exclude   []string
	factsHome bool

	// root is the directory walked, and real the same directory with every symbolic link resolved:
	// the tree a link must stay in to be followed.
	root, real string
	// ignore is root's ignore file, if any.
	ignore *Ignore

	// files are the manifest files found, in lexical order.
	files []string
	// kustomizations are the directories holding a kustomization file, in lexical order.
	kustomizations []string
	// charts are the Helm chart directories skipped.
	charts []string
	// excluded are the paths left out by exclude or the ignore file.
	excluded []string
	// unread are the paths found and not read: links out of the tree, special files.
	unread []Unread
	// homes are the facts snapshots found in the walked directories (factsHome).
	homes []string
	// errs are the ignore file's errors and the links that lead nowhere.
	errs []Error
}

// expand lists the manifest files under a path: the path itself when it is a file, else every
// .yaml/.yml/.json file below it (hidden directories, Helm charts and the paths excluded by --exclude or
// the directory's ignore file skipped), in lexical order, and the chart directories it skipped. A file
// given by name is read even when a glob matches it.
//
// The directory given is the boundary: a symbolic link below it is followed only to a file inside it
// (a link out of it could make a pull request's check read the runner's files), never to a directory,
// and FIFOs, devices and sockets are never opened (reading one blocks or never ends). Each is listed
// in unread with the reason.
func (w *walk) expand(root string) error {
	info, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("cannot read: %w", unwrapPath(err))
	}
	if !info.IsDir() {
		w.files = []string{root}
		return nil
	}
	w.root = root
	if w.real, err = realPath(root); err != nil {
		return fmt.Errorf("cannot read: %w", unwrapPath(err))
	}
	ignorePath := filepath.Join(root, IgnoreFile)
	if _, err := os.Lstat(ignorePath); err == nil && !regularInside(ignorePath) {
		w.errs = append(w.errs, Error{File: ignorePath, Message: "not read: not a regular file, or a symbolic link out of the repository; write the ignore file itself"})
	} else if data, err := readRegular(ignorePath, DefaultMaxFileSize); err == nil {
		w.ignore, w.errs = ParseIgnore(ignorePath, data)
	} else if !errors.Is(err, fs.ErrNotExist) {
		w.errs = append(w.errs, Error{File: ignorePath, Message: "cannot read: " + unwrapPath(err).Error()})
	}
	// A directory given as a symbolic link is walked where it leads: WalkDir does not follow a link,
	// and the trailing separator makes it resolve the root.
	start := root
	if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		start = root + string(filepath.Separator)
	}
	err = filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == start {
			return w.dir(root) // a chart given as the directory is skipped too; its facts home counts
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if w.excludes(p, d.IsDir()) {
			w.excluded = append(w.excluded, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return w.dir(p)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			w.link(p)
			return nil
		}
		if isKustomizationName(d.Name()) {
			w.kustomizations = append(w.kustomizations, filepath.Dir(p))
		}
		if !isManifestName(p) {
			return nil
		}
		if !d.Type().IsRegular() {
			w.unread = append(w.unread, Unread{Path: p, Kind: UnreadSpecial, Reason: specialReason(d.Type()) + ", not a regular file: not read"})
			return nil
		}
		w.files = append(w.files, p)
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot walk directory: %w", unwrapPath(err))
	}
	sort.Strings(w.files)
	sort.Strings(w.kustomizations)
	if len(w.files) == 0 && len(w.charts) == 0 && len(w.homes) == 0 && len(w.excluded) == 0 && len(w.unread) == 0 {
		return errors.New("directory holds no .yaml, .yml or .json file")
	}
	return nil
}

// dir handles a directory the walk enters: a Helm chart is skipped, a facts home noted.
func (w *walk) dir(p string) error {
	if _, err := os.Lstat(filepath.Join(p, "Chart.yaml")); err == nil {
		w.charts = append(w.charts, p)
		return filepath.SkipDir
	}
	if w.factsHome {
		home := filepath.Join(p, FactsHome, FactsHomeFile)
		if regularInside(home) {
			w.homes = append(w.homes, home)
		}
	}
	return nil
}

// link handles a symbolic link below the root: followed to a regular manifest file inside the tree,
// listed as unread otherwise.
func (w *walk) link(p string) {
	// A link out of the tree is judged by its text alone: whether, and what, a file outside the tree
	// is, is none of the run's business (a note that said so would let a pull request probe the
	// runner). It is listed when named like a manifest, and otherwise ignored like any other file.
	target, err := realPath(p)
	if err != nil || !within(w.real, target) {
		switch {
		case err == nil || !w.lexicallyInside(p):
			if isManifestName(p) {
				w.unread = append(w.unread, Unread{Path: p, Kind: UnreadLink,
					Reason: fmt.Sprintf("symbolic link to %s, outside %s: not followed", linkText(p), w.root)})
			}
		case isManifestName(p):
			w.errs = append(w.errs, Error{File: p, Message: "cannot read: symbolic link to " + linkText(p) + ", which does not exist"})
		}
		return
	}
	info, err := os.Stat(target)
	if err != nil {
		return
	}
	switch {
	case info.IsDir():
		w.unread = append(w.unread, Unread{Path: p, Kind: UnreadLink,
			Reason: "symbolic link to a directory: not followed (give the directory itself with -f)"})
	case !isManifestName(p):
	case !info.Mode().IsRegular():
		w.unread = append(w.unread, Unread{Path: p, Kind: UnreadSpecial,
			Reason: fmt.Sprintf("symbolic link to %s, %s, not a regular file: not read", linkText(p), specialReason(info.Mode()))})
	default:
		w.files = append(w.files, p)
	}
}

// lexicallyInside reports whether a link that leads nowhere names a path inside the tree, as written.
func (w *walk) lexicallyInside(p string) bool {
	t, err := os.Readlink(p)
	if err != nil {
		return false
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(p), t)
	}
	abs, err1 := filepath.Abs(t)
	root, err2 := filepath.Abs(w.root)
	return err1 == nil && err2 == nil && (within(root, abs) || within(w.real, abs))
}

// excludes reports whether the walk leaves out path p: a directory, or a manifest file, that a
// --exclude glob or the ignore file matches. Other files are not read anyway, so they are not
// counted.
func (w *walk) excludes(p string, dir bool) bool {
	if !dir && !isManifestName(p) {
		return false
	}
	rel, err := filepath.Rel(w.root, p)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	for _, g := range w.exclude {
		if matchExclude(g, rel) {
			return true
		}
	}
	return w.ignore.Excluded(rel, dir)
}

func isManifestName(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// realPath returns the absolute path of p with every symbolic link resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// within reports whether path (resolved) is dir (resolved) or below it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// linkText is what a symbolic link says, as committed, for messages.
func linkText(p string) string {
	t, err := os.Readlink(p)
	if err != nil {
		return "?"
	}
	return t
}

// specialReason names a file type that is not a regular file.
func specialReason(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeDir != 0:
		return "a directory"
	}
	return "a special file"
}

// readRegular reads a regular file of at most max bytes. Anything else (a FIFO, a device, a socket) is
// refused before it is opened: opening a FIFO blocks until a writer comes, and a device may never end.
func readRegular(path string, max int64) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, notRegular(info.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil {
		return nil, err
	} else if !info.Mode().IsRegular() { // replaced since the first look
		return nil, notRegular(info.Mode())
	}
	return readAllLimited(f, max)
}

func notRegular(m fs.FileMode) error {
	return fmt.Errorf("%s, not a regular file: only files, directories and - (standard input) are read", specialReason(m))
}
