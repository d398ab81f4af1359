package fix

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrSymlink is the error ReplaceFile returns, wrapped in an *fs.PathError, for a symbolic link at the
// path it is asked to write.
var ErrSymlink = errors.New("is a symbolic link, which karpenter-guard does not write through")

// ErrNotRegular is the error ReplaceFile returns, wrapped in an *fs.PathError, for a directory, a
// device or a pipe at the path it is asked to write.
var ErrNotRegular = errors.New("is not a regular file")

// ReplaceFile writes data to path as os.WriteFile does, but never leaves it half written and never
// writes through a symbolic link. Data goes to a temporary file in the same directory (so that the
// rename stays within one file system), synced to disk and renamed over path: an interrupted run
// leaves the old file or the new one, never a truncated one. It never writes through a symbolic link:
// a link at path is refused with ErrSymlink, so that a link planted in a repository or a shared
// directory cannot turn the write into one of a file elsewhere, and anything else but a regular file
// with ErrNotRegular. An existing file keeps its permission bits; a new file gets perm. A link
// planted after the check is replaced by the rename, not followed. On any error path is untouched.
func ReplaceFile(path string, data []byte, perm fs.FileMode) error {
	if err := CheckReplaceable(path); err != nil {
		return err
	}
	if info, err := os.Lstat(path); err == nil {
		perm = info.Mode().Perm()
	}
	return writeAtomic(path, data, perm)
}

// CheckReplaceable reports, without writing anything, whether ReplaceFile may write path: it does not
// exist, or is a regular file. A command calls it before a long run, so that a path it will refuse is
// refused before the work is done.
func CheckReplaceable(path string) error {
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case info.Mode()&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "write", Path: path, Err: ErrSymlink}
	case !info.Mode().IsRegular():
		return &fs.PathError{Op: "write", Path: path, Err: ErrNotRegular}
	}
	return nil
}

// writeAtomic writes data to a temporary file beside target, with mode perm exactly, syncs it and
// renames it over target; on an error it removes the temporary file and leaves target as it was.
func writeAtomic(target string, data []byte, perm fs.FileMode) (err error) {
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
