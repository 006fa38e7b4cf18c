package mcptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/fspath"
)

// sendFile posts one file of the workspace. The file is opened through
// os.Root, so that no path, "..", absolute path or symlink (however
// chained) reaches outside Env.Dir; then it must be a regular file, the
// one that was checked, with no other hard link (which could be a file
// from outside), of at most MaxFile bytes, also after it was read.
func (s *Server) sendFile(ctx context.Context, raw []byte) (string, error) {
	var in struct {
		Path    *string `json:"path"`
		Comment *string `json:"comment"`
	}
	if err := arguments(raw, &in); err != nil {
		return "", err
	}
	if in.Path == nil || strings.TrimSpace(*in.Path) == "" {
		return "", errors.New(`"path" is required: the file to post, relative to the working directory`)
	}
	shown := truncate(*in.Path, 300)
	rel, err := s.relPath(*in.Path)
	if err != nil {
		return "", err
	}
	data, err := readFile(s.env.Dir, rel, s.env.MaxFile, s.env.Hidden)
	if err != nil {
		return "", fmt.Errorf("not posted: %q %w", shown, err)
	}
	name := plainLine(filepath.Base(rel), 200)
	if name == "" || name == "." {
		name = "file"
	}
	var comment string
	if in.Comment != nil {
		comment = plainText(*in.Comment, maxCommentRunes)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("not posted: %s: the call was cancelled", name)
	}
	if err := s.env.Post(ctx, adapters.OutFile{Name: name, Data: data, Comment: comment}); err != nil {
		return "", fmt.Errorf("could not post %s: %s", name, truncate(err.Error(), 300))
	}
	return fmt.Sprintf("Posted %s (%d bytes) to the thread.", name, len(data)), nil
}

// relPath makes p relative to the workspace: a relative p as it is (the
// root refuses what climbs out), an absolute one only inside the
// workspace, as named or with its symlinks resolved.
func (s *Server) relPath(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", errors.New("not posted: the path contains a NUL byte")
	}
	if s.env.Dir == "" || !filepath.IsAbs(s.env.Dir) {
		return "", errors.New("not posted: this session has no working directory")
	}
	if !filepath.IsAbs(p) {
		if !filepath.IsLocal(p) {
			return "", fmt.Errorf("not posted: %q leads outside the working directory", truncate(p, 300))
		}
		return filepath.Clean(p), nil
	}
	p = filepath.Clean(p)
	bases := []string{filepath.Clean(s.env.Dir)}
	if real, err := filepath.EvalSymlinks(s.env.Dir); err == nil && real != bases[0] {
		bases = append(bases, real)
	}
	for _, base := range bases {
		if fspath.Within(p, base) {
			rel, err := filepath.Rel(base, p)
			if err == nil {
				return rel, nil
			}
		}
	}
	return "", fmt.Errorf("not posted: %q is outside the working directory %s", truncate(p, 300), s.env.Dir)
}

// beforeOpen, when set (by tests only), runs between the checks and the
// open: where a file can be swapped under the bot.
var beforeOpen func()

// readFile reads rel below dir under the rules of sendFile; hidden, when
// set, refuses a file the session cannot see, judged by where the opened
// file really is.
func readFile(dir, rel string, max int64, hidden func(string) bool) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("could not be opened: the working directory is unreadable (%v)", reason(err))
	}
	defer root.Close()
	st, err := root.Stat(rel)
	if err != nil {
		return nil, openError(err)
	}
	if err := fitting(st, max); err != nil {
		return nil, err
	}
	if beforeOpen != nil {
		beforeOpen()
	}
	// O_NONBLOCK: should a FIFO take the file's place after the check,
	// opening it does not wait for a writer (and it is refused below).
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, openError(err)
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("could not be read (%v)", reason(err))
	}
	if !os.SameFile(st, opened) {
		return nil, errors.New("changed while it was being opened")
	}
	if hidden != nil && hiddenFile(f, filepath.Join(dir, rel), hidden) {
		return nil, errors.New("is hidden from this session")
	}
	if err := fitting(opened, max); err != nil {
		return nil, err
	}
	return readCapped(f, max)
}

// hiddenFile reports whether the session cannot see the opened f: by
// the path the kernel gives for the descriptor (where the file really
// is, whatever links led there), and by the path as named, the way a
// sandbox's mounts cover it. When the kernel cannot say, it is hidden.
func hiddenFile(f *os.File, named string, hidden func(string) bool) bool {
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || !filepath.IsAbs(real) {
		return true
	}
	return hidden(real) || hidden(named)
}

// readCapped reads r to its end, refusing it whole when it holds more
// than max bytes: a file that grew after its size was checked is not cut
// to size.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("could not be read (%v)", reason(err))
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("grew past this platform's limit of %d bytes while it was being read", max)
	}
	return data, nil
}

// fitting: a regular file of at most max bytes, with no other hard link.
func fitting(st fs.FileInfo, max int64) error {
	switch m := st.Mode(); {
	case m.IsDir():
		return errors.New("is a directory: name a file")
	case m&fs.ModeNamedPipe != 0:
		return errors.New("is a named pipe, not a file")
	case m&fs.ModeSocket != 0:
		return errors.New("is a socket, not a file")
	case m&fs.ModeDevice != 0:
		return errors.New("is a device, not a file")
	case !m.IsRegular():
		return errors.New("is not a regular file")
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return errors.New("has other hard links, which may lie outside the working directory: copy it first")
	}
	if st.Size() > max {
		return fmt.Errorf("is %d bytes: this platform takes files of at most %d bytes", st.Size(), max)
	}
	return nil
}

func openError(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("does not exist in the working directory")
	}
	return fmt.Errorf("could not be opened: %s (links and paths may not lead outside the working directory)", reason(err))
}

// reason is err without the path an os error repeats.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
