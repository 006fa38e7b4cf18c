package bot

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/console"
)

// source stands for a platform's file host: it counts downloads and the
// bytes the bot read from them.
type source struct {
	opens atomic.Int64
	read  atomic.Int64
}

// file is an attachment whose content is size bytes of fill (a generator:
// nothing the size of the file is ever held in memory).
func (s *source) file(name, mime string, declared int64, content io.Reader) adapters.File {
	return adapters.File{
		Name: name, MimeType: mime, Size: declared,
		Open: func(context.Context) (io.ReadCloser, error) {
			s.opens.Add(1)
			return io.NopCloser(&counting{r: content, n: &s.read}), nil
		},
	}
}

type counting struct {
	r io.Reader
	n *atomic.Int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// zeros is n zero bytes, generated as they are read.
func zeros(n int64) io.Reader { return io.LimitReader(zeroReader{}, n) }

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func (h *harness) sendFiles(thread adapters.ThreadRef, id, user, text string, files ...adapters.File) {
	h.t.Helper()
	err := h.b.Deliver(context.Background(), adapters.Event{
		Thread: thread, User: adapters.User{ID: user},
		Message: &adapters.Incoming{ID: id, Text: text, Mentioned: true, Files: files},
	})
	if err != nil {
		h.t.Fatal(err)
	}
}

// threadDir is where a console thread's attachments go.
func (h *harness) threadDir(thread string) string {
	return filepath.Join(h.workdir, attachDir, threadDirName(console.Thread(thread).Key()))
}

// TestAttachedFiles: files that come with a prompt are saved 0600 in the
// thread's own 0700 directory under attachments/, the prompt says where,
// and images also go to Claude as image content.
func TestAttachedFiles(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var pngData bytes.Buffer
	if err := png.Encode(&pngData, img); err != nil {
		t.Fatal(err)
	}
	var src source
	h.sendFiles(console.Thread("main"), "files-1", console.OperatorID, "look at these",
		src.file("notes.txt", "text/plain", 18, strings.NewReader("remember the milk\n")),
		src.file("../../escape.png", "image/png", 0, bytes.NewReader(pngData.Bytes())))
	h.expect(`claude: ok: .*look at these`)
	dir := h.threadDir("main")
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "remember the milk\n" {
		t.Errorf("notes.txt: %q %v", b, err)
	}
	for _, p := range []string{filepath.Join(h.workdir, "escape.png"), filepath.Join(filepath.Dir(h.workdir), "escape.png")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists: a name with ../ left the directory", p)
		}
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		fi, err := os.Lstat(filepath.Join(dir, e.Name()))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want a regular file 0600", e.Name(), fi.Mode(), err)
		}
	}
	if len(names) != 2 || !strings.Contains(strings.Join(names, " "), "escape.png") {
		t.Errorf("saved %v, want notes.txt and the renamed escape.png", names)
	}
	for _, d := range []string{filepath.Join(h.workdir, attachDir), dir} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want a directory 0700", d, fi.Mode(), err)
		}
	}
	reqs := h.api.Requests()
	last := reqs[len(reqs)-1]
	if text := last.LastUserText(); !strings.Contains(text, filepath.Join(dir, "notes.txt")) {
		t.Errorf("prompt does not say where the files are: %q", text)
	}
	images := 0
	for _, m := range last.Messages {
		for _, b := range m.Content {
			if b.Type == "image" {
				images++
			}
		}
	}
	if images != 1 {
		t.Errorf("%d image blocks reached the model, want 1", images)
	}
}

// TestAttachmentsFetchedOnlyForAllowedSenders: a file from someone not
// allowed, or in a thread the bot has no session in, is never downloaded.
func TestAttachmentsFetchedOnlyForAllowedSenders(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	var src source
	h.sendFiles(console.Thread("main"), "mallory-1", "mallory", "take this", src.file("evil.bin", "", 4, strings.NewReader("evil")))
	// Not mentioned, in a thread without a session: not for the bot.
	err := h.b.Deliver(context.Background(), adapters.Event{
		Thread: console.Thread("quiet"), User: adapters.User{ID: "bob"},
		Message: &adapters.Incoming{ID: "chat-1", Text: "just chatting",
			Files: []adapters.File{src.file("chat.txt", "", 2, strings.NewReader("hi"))}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// An allowed user afterwards: the bot has handled what came before.
	var ok source
	h.sendFiles(console.Thread("main"), "bob-1", "bob", "mine", ok.file("mine.txt", "", 2, strings.NewReader("ok")))
	h.expect(`claude: ok: .*mine`)
	if n := src.opens.Load(); n != 0 {
		t.Errorf("%d downloads for files the bot must not fetch", n)
	}
	if n := ok.opens.Load(); n != 1 {
		t.Errorf("%d downloads of an allowed user's file, want 1", n)
	}
	if _, err := os.Lstat(filepath.Join(h.threadDir("main"), "evil.bin")); !os.IsNotExist(err) {
		t.Errorf("the refused sender's file was saved: %v", err)
	}
}

// TestAttachmentOverTheLimit: a file over 20 MiB, declared or not, is not
// saved; at most limit+1 bytes are read; the sender is told the name and
// the limit; the message still reaches Claude.
func TestAttachmentOverTheLimit(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	cases := []struct {
		name     string
		declared int64
		wantOpen int64
	}{
		{"declared.iso", 100 << 20, 0}, // refused on its word, not fetched
		{"lying.iso", 10, 1},           // says 10 bytes, sends 100 MiB
		{"unknown.iso", 0, 1},          // no size given
	}
	for i, c := range cases {
		var src source
		h.sendFiles(console.Thread("main"), "big-"+c.name, console.OperatorID, "about "+c.name,
			src.file(c.name, "application/octet-stream", c.declared, zeros(100<<20)))
		h.expect(`Not saved`)
		h.expect("`" + c.name + "`: it is over the 20 MiB limit")
		h.expect(`claude: ok: .*about ` + c.name + `.*not saved: ` + "`" + c.name + "`")
		if n := src.opens.Load(); n != c.wantOpen {
			t.Errorf("%s: %d downloads, want %d", c.name, n, c.wantOpen)
		}
		if n := src.read.Load(); n > maxFileBytes+1 {
			t.Errorf("%s: %d bytes read, want at most the limit + 1 (%d)", c.name, n, maxFileBytes+1)
		}
		if _, err := os.Lstat(filepath.Join(h.threadDir("main"), c.name)); !os.IsNotExist(err) {
			t.Errorf("%s: saved anyway (%v)", c.name, err)
		}
		if n := len(h.api.Requests()); n != i+1 {
			t.Errorf("%s: %d model requests, want %d: the message was lost", c.name, n, i+1)
		}
	}
	// Exactly at the limit: saved.
	var src source
	h.sendFiles(console.Thread("main"), "exact", console.OperatorID, "exact", src.file("exact.bin", "", maxFileBytes, zeros(maxFileBytes)))
	h.expect(`claude: ok: .*exact`)
	if fi, err := os.Stat(filepath.Join(h.threadDir("main"), "exact.bin")); err != nil || fi.Size() != maxFileBytes {
		t.Errorf("a file of exactly the limit: %v %v", fi, err)
	}
}

// TestAttachmentsNeverThroughSymlinks: the model may plant symlinks in the
// working directory before the next upload. Nothing is written through
// them, nothing existing is written over, and the message still arrives.
func TestAttachmentsNeverThroughSymlinks(t *testing.T) {
	cases := []struct {
		name string
		// plant prepares the working directory; victim is a directory
		// outside it that must stay as it was.
		plant func(t *testing.T, h *harness, victim string)
		saved bool // the upload itself is still saved (elsewhere)
	}{
		{"attachments is a symlink", func(t *testing.T, h *harness, victim string) {
			symlink(t, victim, filepath.Join(h.workdir, attachDir))
		}, false},
		{"the thread's directory is a symlink", func(t *testing.T, h *harness, victim string) {
			mkdir(t, filepath.Join(h.workdir, attachDir))
			symlink(t, victim, h.threadDir("main"))
		}, false},
		{"the thread's directory links to another inside", func(t *testing.T, h *harness, victim string) {
			mkdir(t, filepath.Join(h.workdir, attachDir))
			mkdir(t, filepath.Join(h.workdir, attachDir, "elsewhere"))
			symlink(t, "elsewhere", h.threadDir("main"))
		}, false},
		{"the file name is a symlink", func(t *testing.T, h *harness, victim string) {
			mkdir(t, filepath.Join(h.workdir, attachDir))
			mkdir(t, h.threadDir("main"))
			symlink(t, filepath.Join(victim, "authorized_keys"), filepath.Join(h.threadDir("main"), "report.pdf"))
		}, true},
		{"the file name links to a file beside it", func(t *testing.T, h *harness, victim string) {
			mkdir(t, filepath.Join(h.workdir, attachDir))
			mkdir(t, h.threadDir("main"))
			if err := os.WriteFile(filepath.Join(h.threadDir("main"), "notes.txt"), []byte("keep me"), 0o600); err != nil {
				t.Fatal(err)
			}
			symlink(t, "notes.txt", filepath.Join(h.threadDir("main"), "report.pdf"))
		}, true},
		{"the file name is a dangling symlink", func(t *testing.T, h *harness, victim string) {
			mkdir(t, filepath.Join(h.workdir, attachDir))
			mkdir(t, h.threadDir("main"))
			symlink(t, filepath.Join(victim, "new-file"), filepath.Join(h.threadDir("main"), "report.pdf"))
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, script(nil), nil)
			victim := t.TempDir()
			keys := filepath.Join(victim, "authorized_keys")
			if err := os.WriteFile(keys, []byte("ssh-ed25519 AAAA the owner\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			c.plant(t, h, victim)
			before := snapshot(t, victim)
			var src source
			h.sendFiles(console.Thread("main"), "up-1", console.OperatorID, "here it is",
				src.file("report.pdf", "application/pdf", 30, strings.NewReader("ssh-ed25519 AAAA the attacker\n")))
			h.expect(`claude: ok: .*here it is`)
			if after := snapshot(t, victim); after != before {
				t.Errorf("the directory outside changed:\nbefore %s\nafter  %s", before, after)
			}
			if _, err := os.Lstat(filepath.Join(h.workdir, attachDir, "elsewhere", "report.pdf")); !os.IsNotExist(err) {
				t.Errorf("written through a symlink inside the working directory: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(h.threadDir("main"), "notes.txt")); err == nil && string(b) != "keep me" {
				t.Errorf("a file beside the upload was written over: %q", b)
			}
			if c.saved {
				b, err := os.ReadFile(filepath.Join(h.threadDir("main"), "report-1.pdf"))
				if err != nil || !strings.Contains(string(b), "attacker") {
					t.Errorf("report-1.pdf: %q %v, want the upload under a free name", b, err)
				}
			} else if h.count("`report.pdf`: .*not a plain directory") != 2 {
				t.Error("the sender and Claude were not told why the file was not saved")
			}
		})
	}
}

// TestSameNameIsNumbered: uploads of one name never replace each other or a
// file the model wrote; threads have their own directories.
func TestSameNameIsNumbered(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	dir := h.threadDir("main")
	mkdir(t, filepath.Join(h.workdir, attachDir))
	mkdir(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "report-1.pdf"), []byte("the model's own"), 0o644); err != nil {
		t.Fatal(err)
	}
	var src source
	for _, body := range []string{"first", "second", "third"} {
		h.sendFiles(console.Thread("main"), "same-"+body, console.OperatorID, "upload "+body, src.file("report.pdf", "application/pdf", 0, strings.NewReader(body)))
		h.expect(`claude: ok: .*upload ` + body)
	}
	h.sendFiles(console.Thread("other"), "other-1", console.OperatorID, "upload other", src.file("report.pdf", "application/pdf", 0, strings.NewReader("other thread")))
	h.expect(`claude: ok: .*upload other`)
	want := map[string]string{
		filepath.Join(dir, "report.pdf"):                  "first",
		filepath.Join(dir, "report-1.pdf"):                "the model's own",
		filepath.Join(dir, "report-2.pdf"):                "second",
		filepath.Join(dir, "report-3.pdf"):                "third",
		filepath.Join(h.threadDir("other"), "report.pdf"): "other thread",
	}
	for p, body := range want {
		if b, err := os.ReadFile(p); err != nil || string(b) != body {
			t.Errorf("%s: %q %v, want %q", p, b, err, body)
		}
	}
	if h.threadDir("main") == h.threadDir("other") {
		t.Error("two threads share a directory")
	}
}

func TestSafeName(t *testing.T) {
	long := strings.Repeat("é", 200) + ".pdf" // 404 bytes
	cases := []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"../../etc/passwd", "____etc_passwd"},
		{"..", "_"},
		{".", "file"},
		{"", "file"},
		{"a\x00b.txt", "a_b.txt"},
		{"a/b\\c.txt", "a_b_c.txt"},
		{"line\nbreak\r.txt", "line_break_.txt"},
		{"evil\u202Etxt.exe", "evil_txt.exe"},
		{"bad\xffutf8.txt", "bad_utf8.txt"},
		{"report..final.pdf", "report_final.pdf"},
		{"...", "_."},
		{".env", ".env"},
		{long, ""}, // checked below
	}
	for _, c := range cases {
		got := safeName(c.in)
		if c.in == long {
			if len(got) > maxNameBytes || !strings.HasSuffix(got, ".pdf") || !strings.HasPrefix(got, "éé") {
				t.Errorf("long name → %q (%d bytes): want ≤ %d bytes, ending .pdf", got, len(got), maxNameBytes)
			}
			continue
		}
		if got != c.want {
			t.Errorf("safeName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Numbered names stay within the limit too.
	if n := numbered(strings.Repeat("x", 300), ".pdf", 12); len(n) > maxNameBytes || !strings.HasSuffix(n, "-12.pdf") {
		t.Errorf("numbered long name %q (%d bytes)", n, len(n))
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
}

// snapshot lists a directory tree: names, modes, sizes and contents.
func snapshot(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b.WriteString(rel + " " + fi.Mode().String())
		if fi.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			b.WriteString(" " + string(data))
		}
		b.WriteString("; ")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
