package bot

// Attachments. The files of a message are fetched here, on the thread's
// worker: after Deliver has checked the sender and the worker has loaded the
// thread, never while an event is being received. Each is read through a
// reader capped at maxFileBytes+1 and written into
// <cwd>/attachments/<thread>/, a directory per thread that the bot creates
// 0700 and reaches without following a symlink: the model writes in the
// working directory and may plant `attachments -> /etc` or
// `attachments/<thread> -> ~/.ssh` before the next upload. A file is created
// with O_EXCL, so nothing that exists is ever written over (and a symlink at
// the name counts as existing). Whatever fails, the message still goes to
// Claude, and the sender is told which file was not saved and why.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/claudeproc"
)

const (
	// maxFileBytes bounds one attachment (docs/USER_GUIDE.md, "Attachments": 20 MiB each).
	maxFileBytes = 20 << 20
	// fetchTimeout bounds the downloads of one message's files: the
	// thread's worker waits for them.
	fetchTimeout = 5 * time.Minute
	// maxNameBytes is the longest file name most file systems take.
	maxNameBytes = 255
	// maxSameName bounds report-1.pdf, report-2.pdf … in one directory.
	maxSameName = 1000
	attachDir   = "attachments"
)

// imageTypes are the image types Claude takes as image content; the type is
// sniffed from the bytes, not taken from the sender's word.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// withFiles fetches and saves the message's files and tells Claude where
// they are; images also go along as image content. It never drops the
// message: files that could not be saved are named to Claude and to the
// sender, with the reason.
func (w *worker) withFiles(ctx context.Context, msg claudeproc.UserMessage, files []adapters.File) claudeproc.UserMessage {
	var saved, failed []string
	var images []claudeproc.ContentBlock
	cwd, sub := w.cwd(ctx), threadDirName(w.key)
	dirPath := filepath.Join(cwd, attachDir, sub)
	dir, dirErr := openAttachDir(cwd, sub)
	if dirErr != nil {
		w.log.Warn("attachments not saved", "dir", dirPath, "err", dirErr)
	} else {
		defer dir.Close()
	}
	// Downloads end with the bot, or after fetchTimeout.
	fctx, cancel := context.WithTimeout(w.life, fetchTimeout)
	defer cancel()
	for _, f := range files {
		err := dirErr
		var a attached
		if err == nil {
			a, err = fetch(fctx, dir, f)
		}
		if err != nil {
			w.log.Info("attachment not saved", "file", f.Name, "err", err)
			shown := "`" + strings.ReplaceAll(adapters.Cut(safeName(f.Name), 80), "`", "'") + "`"
			failed = append(failed, shown+": "+err.Error())
			continue
		}
		saved = append(saved, filepath.Join(dirPath, a.name))
		if a.image != nil {
			images = append(images, *a.image)
		}
	}
	text := msg.Text
	if len(saved) > 0 {
		text += "\n\n(Attached files saved to: " + strings.Join(saved, ", ") + ")"
	}
	if len(failed) > 0 {
		text += "\n\n(Attached but not saved: " + strings.Join(failed, "; ") + ")"
		w.notice(ctx, "Not saved, so Claude cannot read it:\n- "+strings.Join(failed, "\n- "), true)
	}
	if len(images) > 0 {
		msg.Content = append([]claudeproc.ContentBlock{claudeproc.TextBlock(text)}, images...)
		msg.Text = ""
	} else {
		msg.Text = text
	}
	return msg
}

type attached struct {
	name  string // as saved, in the thread's directory
	image *claudeproc.ContentBlock
}

// errTooBig says a file is over the limit, declared or read.
var errTooBig = fmt.Errorf("it is over the %d MiB limit", maxFileBytes>>20)

// fetch downloads one file into dir under a name of its own. A file over
// the limit is cut at maxFileBytes+1 bytes read and removed.
func fetch(ctx context.Context, dir *os.Root, f adapters.File) (attached, error) {
	if f.Size > maxFileBytes {
		return attached{}, errTooBig
	}
	if f.Open == nil {
		return attached{}, errors.New("the platform gave no way to download it")
	}
	out, name, err := createUnique(dir, safeName(f.Name))
	if err != nil {
		return attached{}, err
	}
	var head bytes.Buffer
	n, err := download(ctx, f, out, &head)
	if cerr := out.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("write: %w", cerr)
	}
	if err == nil && n > maxFileBytes {
		err = errTooBig
	}
	if err != nil {
		if rerr := dir.Remove(name); rerr != nil {
			err = fmt.Errorf("%w (and its partial copy %s stays: %v)", err, name, rerr)
		}
		return attached{}, err
	}
	a := attached{name: name}
	if mt := http.DetectContentType(head.Bytes()); imageTypes[mt] && strings.HasPrefix(f.MimeType, "image/") {
		img := claudeproc.ImageBlock(mt, head.Bytes())
		a.image = &img
	}
	return a, nil
}

// download copies at most maxFileBytes+1 bytes of f to out; an image's
// bytes (declared type image/*) are also kept in head, the first 512 of
// any other file (enough to sniff its type).
func download(ctx context.Context, f adapters.File, out io.Writer, head *bytes.Buffer) (int64, error) {
	rc, err := f.Open(ctx)
	if err != nil {
		return 0, fmt.Errorf("not downloaded: %w", err)
	}
	keep := int64(512)
	if strings.HasPrefix(f.MimeType, "image/") {
		keep = maxFileBytes
	}
	n, err := io.Copy(io.MultiWriter(out, &capWriter{buf: head, max: keep}), io.LimitReader(rc, maxFileBytes+1))
	cerr := rc.Close()
	switch {
	case err != nil:
		return n, fmt.Errorf("the download broke off: %w", err)
	case n > maxFileBytes:
		return n, nil // over the limit: not read further, not checked
	case cerr != nil:
		return n, fmt.Errorf("download did not check out: %w", cerr)
	}
	return n, nil
}

// capWriter keeps the first max bytes written to it and drops the rest.
type capWriter struct {
	buf *bytes.Buffer
	max int64
}

func (c *capWriter) Write(p []byte) (int, error) {
	if room := c.max - int64(c.buf.Len()); room > 0 {
		c.buf.Write(p[:min(int64(len(p)), room)])
	}
	return len(p), nil
}

// threadDirName is the thread's directory under attachments/: a short hash
// of its key, the same on every run, safe in a shell word.
func threadDirName(key adapters.ThreadKey) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:6])
}

// openAttachDir opens <cwd>/attachments/<thread>, creating what is missing
// (0700). The working directory is the operator's; below it, a component
// that is a symlink or not a directory is refused.
func openAttachDir(cwd, thread string) (*os.Root, error) {
	top, err := os.OpenRoot(cwd)
	if err != nil {
		return nil, fmt.Errorf("open the working directory: %w", err)
	}
	defer top.Close()
	att, err := subdir(top, attachDir)
	if err != nil {
		return nil, err
	}
	defer att.Close()
	return subdir(att, thread)
}

// subdir opens the directory name in r, creating it 0700 if missing. It
// refuses a symlink, and a directory swapped for another between the check
// and the open (os.Root never leaves r, but would follow a link inside it).
func subdir(r *os.Root, name string) (*os.Root, error) {
	if err := r.Mkdir(name, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	fi, err := r.Lstat(name)
	if err != nil {
		return nil, fmt.Errorf("look at %s: %w", name, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a plain directory (a symlink?); nothing is saved through it", name)
	}
	sub, err := r.OpenRoot(name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	if st, err := sub.Stat("."); err != nil || !os.SameFile(fi, st) {
		sub.Close()
		return nil, fmt.Errorf("%s changed while it was opened; nothing is saved through it", name)
	}
	return sub, nil
}

// createUnique creates name in dir, or name-1, name-2 … before the
// extension when it is taken. O_EXCL: an existing file, or a symlink at
// the name, is never opened.
func createUnique(dir *os.Root, name string) (*os.File, string, error) {
	stem, ext := splitExt(name)
	for i := range maxSameName {
		cand := numbered(stem, ext, i)
		f, err := dir.OpenFile(cand, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return f, cand, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", fmt.Errorf("create %s: %w", cand, err)
		}
	}
	return nil, "", fmt.Errorf("%d files named like %s already", maxSameName, name)
}

// numbered is stem+ext for i == 0, else stem-i+ext, cut to maxNameBytes
// (the stem gives way, the extension stays).
func numbered(stem, ext string, i int) string {
	suffix := ext
	if i > 0 {
		suffix = "-" + strconv.Itoa(i) + ext
	}
	return cutBytes(stem, maxNameBytes-len(suffix)) + suffix
}

// splitExt splits off a short extension: "report.pdf" → "report", ".pdf";
// ".env" and "archive.verylongextension…" have none.
func splitExt(name string) (stem, ext string) {
	ext = filepath.Ext(name)
	if ext == name || len(ext) > 16 {
		return name, ""
	}
	return strings.TrimSuffix(name, ext), ext
}

// safeName is a sender's file name made safe to create in one directory:
// no NUL, slash, backslash, control or format character (bidi overrides
// included), no "..", not "." or empty, at most maxNameBytes bytes, valid
// UTF-8. What is replaced becomes "_"; the extension is kept when it fits.
func safeName(name string) string {
	name = strings.ToValidUTF8(name, "_")
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return '_'
		}
		return r
	}, name)
	for strings.Contains(name, "..") {
		name = strings.ReplaceAll(name, "..", "_")
	}
	name = strings.TrimSpace(name)
	if name == "" || name == "." {
		name = "file"
	}
	if len(name) > maxNameBytes {
		stem, ext := splitExt(name)
		name = cutBytes(stem, maxNameBytes-len(ext)) + ext
	}
	return name
}

// cutBytes cuts s to at most n bytes on a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
