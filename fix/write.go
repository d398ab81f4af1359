package fix

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes data to the file at path, as os.WriteFile does, but never leaves it half written:
// data goes to a temporary file in the same directory (so that the rename stays within one file
// system), which gets mode perm exactly (not reduced by the umask: the mode of the file it replaces),
// is synced to disk, and is renamed over path. An interrupted run leaves the old file or the new one,
// never a truncated manifest; on an error the temporary file is removed. A symbolic link at path is
// kept: the file it points to is replaced (a link to nothing is replaced by a file). The new file
// belongs to the user who writes it.
func WriteFile(path string, data []byte, perm fs.FileMode) (err error) {
	target, err := filepath.EvalSymlinks(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		target = path // a new file
	case err != nil:
		return err
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close() // already closed after a failed rename: the error is not news
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), target); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable. The file is replaced either way; a file system that cannot
// sync a directory only loses that guarantee, so errors are ignored.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
