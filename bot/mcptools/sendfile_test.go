package mcptools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// The oracle of these tests is the real filesystem: real files, links,
// FIFOs and /proc under t.TempDir(), and what Post received, byte for
// byte. A refused call must post nothing at all.

const secret = "SECRET: the bot's state, never to be posted\n"

// tree is a workspace with a file outside it, beside it in the same
// directory (so that "../" names it), and the bot's "state" next door.
type tree struct {
	base, ws, outside, state string
}

func newTree(t *testing.T) tree {
	t.Helper()
	base := t.TempDir()
	tr := tree{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside.txt"), state: filepath.Join(base, "state")}
	mkdir(t, tr.ws)
	mkdir(t, filepath.Join(tr.ws, "sub"))
	mkdir(t, tr.state)
	write(t, tr.outside, secret)
	write(t, filepath.Join(tr.state, "claudeops.db"), secret)
	write(t, filepath.Join(tr.ws, "report.txt"), "the report\n")
	write(t, filepath.Join(tr.ws, "sub", "b.txt"), "bee\n")
	return tr
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func newServer(dir string, max int64) (*Server, *poster) {
	p := &poster{}
	return New(Env{Dir: dir, MaxFile: max, Post: p.post}), p
}

func TestSendFileRefusesWhatLeavesTheWorkspace(t *testing.T) {
	tr := newTree(t)
	ws := tr.ws
	// Links made inside the workspace, each an escape of its own kind.
	symlink(t, tr.outside, filepath.Join(ws, "abs-link"))
	symlink(t, "../outside.txt", filepath.Join(ws, "rel-link"))
	symlink(t, tr.base, filepath.Join(ws, "dir-link"))
	symlink(t, "chain2", filepath.Join(ws, "chain1"))
	symlink(t, "sub/chain3", filepath.Join(ws, "chain2"))
	symlink(t, "../../outside.txt", filepath.Join(ws, "sub", "chain3"))
	symlink(t, "/proc/self/root"+tr.outside, filepath.Join(ws, "proc-root-link"))
	symlink(t, "/proc/self/cwd/sendfile_test.go", filepath.Join(ws, "proc-cwd-link"))
	symlink(t, tr.state, filepath.Join(ws, "state-link"))
	symlink(t, "/etc/passwd", filepath.Join(ws, "passwd-link"))
	f, err := os.Open(tr.outside)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	symlink(t, fmt.Sprintf("/proc/self/fd/%d", f.Fd()), filepath.Join(ws, "proc-fd-link"))
	// A hard link shares an outside file's inode: inside by name only.
	// (Its own file: a second link to tr.outside would make every case
	// above refused for that reason alone.)
	linked := filepath.Join(tr.base, "linked.txt")
	write(t, linked, secret)
	if err := os.Link(linked, filepath.Join(ws, "hard-link")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, path string
		want       string // in the message
	}{
		{"parent", "../outside.txt", "outside the working directory"},
		{"climbs through a directory", "sub/../../outside.txt", "outside the working directory"},
		{"climbs then comes back", "../ws/../outside.txt", "outside the working directory"},
		{"absolute outside", tr.outside, "outside the working directory"},
		{"absolute climbing out", ws + "/../outside.txt", "outside the working directory"},
		{"absolute system file", "/etc/passwd", "outside the working directory"},
		{"proc root of the bot", "/proc/self/root" + tr.outside, "outside the working directory"},
		{"proc root, passwd", "/proc/self/root/etc/passwd", "outside the working directory"},
		{"absolute symlink out", "abs-link", "could not be opened"},
		{"relative symlink out", "rel-link", "could not be opened"},
		{"symlinked directory out", "dir-link/outside.txt", "could not be opened"},
		{"symlink chain out", "chain1", "could not be opened"},
		{"symlink to /proc/self/root", "proc-root-link", "could not be opened"},
		{"symlink to /proc/self/cwd", "proc-cwd-link", "could not be opened"},
		{"symlink to /proc/self/fd", "proc-fd-link", "could not be opened"},
		{"symlink to the bot's state", "state-link/claudeops.db", "could not be opened"},
		{"symlink to /etc/passwd", "passwd-link", "could not be opened"},
		{"absolute through a symlink out", ws + "/dir-link/outside.txt", "could not be opened"},
		{"hard link to an outside file", "hard-link", "other hard links"},
		{"NUL byte", "report.txt\x00../../outside.txt", "NUL"},
		{"missing", "nope.txt", "does not exist"},
		{"empty", "", `"path" is required`},
		{"blank", "  ", `"path" is required`},
		{"the workspace itself", ".", "is a directory"},
		{"a directory", "sub", "is a directory"},
		{"absolute workspace", ws, "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, p := newServer(ws, 1<<20)
			text, isErr := callTool(t, s, sendFileName, map[string]any{"path": tt.path})
			if !isErr || !strings.Contains(text, tt.want) {
				t.Errorf("send_file %q = %q (isError %v), want an error saying %q", tt.path, text, isErr, tt.want)
			}
			if got := p.got(); len(got) != 0 {
				t.Errorf("send_file %q posted %d files: %q", tt.path, len(got), got[0].Data)
			}
		})
	}
}

func TestSendFileRefusesSpecialFilesWithoutBlocking(t *testing.T) {
	tr := newTree(t)
	ws := tr.ws
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, "fifo", filepath.Join(ws, "fifo-link"))
	// A socket path must be short: bind it from inside the workspace.
	sock := filepath.Join(ws, "s.sock")
	if l, err := net.Listen("unix", sock); err == nil {
		defer l.Close()
	} else {
		t.Logf("no unix socket (%v): that case is skipped", err)
		sock = ""
	}
	cases := map[string]string{"fifo": "named pipe", "fifo-link": "named pipe"}
	if sock != "" {
		cases["s.sock"] = "socket"
	}
	// A device node in the workspace, where mknod is allowed (/dev/zero
	// would never end).
	if err := syscall.Mknod(filepath.Join(ws, "zero"), syscall.S_IFCHR|0o644, 1<<8|5); err == nil {
		cases["zero"] = "device"
	} else {
		t.Logf("mknod refused (%v): the device case is left to the symlink cases", err)
	}
	symlink(t, "/dev/zero", filepath.Join(ws, "dev-link"))
	cases["dev-link"] = "could not be opened"
	for path, want := range cases {
		t.Run(path, func(t *testing.T) {
			s, p := newServer(ws, 1<<20)
			done := make(chan struct{})
			var text string
			var isErr bool
			go func() {
				defer close(done)
				text, isErr = callTool(t, s, sendFileName, map[string]any{"path": path})
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("send_file %s blocked (a FIFO opened for reading waits for a writer)", path)
			}
			if !isErr || !strings.Contains(text, want) {
				t.Errorf("send_file %s = %q (isError %v), want an error saying %q", path, text, isErr, want)
			}
			if len(p.got()) != 0 {
				t.Errorf("send_file %s posted something", path)
			}
		})
	}
}

func TestSendFilePostsFilesOfTheWorkspace(t *testing.T) {
	tr := newTree(t)
	ws := tr.ws
	symlink(t, "sub/b.txt", filepath.Join(ws, "inner-link"))
	symlink(t, "sub", filepath.Join(ws, "sub-link"))
	// The workspace named through a symlink: a path through either name
	// is inside.
	alias := filepath.Join(tr.base, "alias")
	symlink(t, ws, alias)
	tests := []struct {
		name, dir, path, file string // file: what must be posted
	}{
		{"relative", ws, "report.txt", "report.txt"},
		{"dot slash", ws, "./sub/b.txt", "sub/b.txt"},
		{"climbs and stays inside", ws, "sub/../report.txt", "report.txt"},
		{"absolute inside", ws, filepath.Join(ws, "sub", "b.txt"), "sub/b.txt"},
		{"symlink inside", ws, "inner-link", "sub/b.txt"},
		{"symlinked directory inside", ws, "sub-link/b.txt", "sub/b.txt"},
		{"workspace is a link, path by the link", alias, filepath.Join(alias, "report.txt"), "report.txt"},
		{"workspace is a link, path resolved", alias, filepath.Join(ws, "report.txt"), "report.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, p := newServer(tt.dir, 1<<20)
			text, isErr := callTool(t, s, sendFileName, map[string]any{"path": tt.path})
			want, err := os.ReadFile(filepath.Join(ws, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got := p.got()
			if isErr || len(got) != 1 {
				t.Fatalf("send_file %q = %q (isError %v), posted %d", tt.path, text, isErr, len(got))
			}
			if !bytes.Equal(got[0].Data, want) || got[0].Name != filepath.Base(tt.path) && got[0].Name != filepath.Base(tt.file) {
				t.Errorf("posted %q as %q, want %q", got[0].Data, got[0].Name, want)
			}
			if !contains(text, "Posted", got[0].Name, fmt.Sprint(len(want), " bytes")) {
				t.Errorf("result %q does not say what was posted", text)
			}
		})
	}
}

func TestSendFileSizeLimit(t *testing.T) {
	ws := t.TempDir()
	const max = 100
	write(t, filepath.Join(ws, "exact"), strings.Repeat("x", max))
	write(t, filepath.Join(ws, "over"), strings.Repeat("y", max+1))
	write(t, filepath.Join(ws, "empty"), "")
	for _, tt := range []struct {
		path string
		ok   bool
	}{{"exact", true}, {"over", false}, {"empty", true}} {
		s, p := newServer(ws, max)
		text, isErr := callTool(t, s, sendFileName, map[string]any{"path": tt.path})
		got := p.got()
		if tt.ok {
			want, _ := os.ReadFile(filepath.Join(ws, tt.path))
			if isErr || len(got) != 1 || !bytes.Equal(got[0].Data, want) {
				t.Errorf("%s: %q (isError %v), posted %d", tt.path, text, isErr, len(got))
			}
			continue
		}
		if !isErr || len(got) != 0 || !contains(text, "101 bytes", "at most 100 bytes") {
			t.Errorf("%s: %q (isError %v), posted %d: want refused, naming the size and the limit", tt.path, text, isErr, len(got))
		}
	}
}

func TestSendFileCommentIsMadePlain(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "r.txt"), "r")
	tests := []struct{ in, want string }{
		{"the report", "the report"},
		// Markup stays as written: the adapter shows it as its own text.
		{"<!channel> *bold* <https://evil|click> @room", "<!channel> *bold* <https://evil|click> @room"},
		{"  a\r\nb\rc\t\td  ", "a\nb\nc  d"},
		{"colour \x1b[31mred\x1b[0m\x07 bell\x00nul", "colour [31mred[0m bellnul"},
		{"file‮txt.exe‬ zero​width", "filetxt.exe zerowidth"},
		{"a\n\n\n\n\nb", "a\n\nb"},
		{"bad \xff\xfe utf8", "bad \uFFFD\uFFFD utf8"}, // JSON has made each bad byte a U+FFFD
		{strings.Repeat("é", maxCommentRunes+10), strings.Repeat("é", maxCommentRunes) + "…"},
	}
	for _, tt := range tests {
		s, p := newServer(ws, 100)
		if text, isErr := callTool(t, s, sendFileName, map[string]any{"path": "r.txt", "comment": tt.in}); isErr {
			t.Fatalf("%q: %s", tt.in, text)
		}
		if got := p.got()[0].Comment; got != tt.want {
			t.Errorf("comment %q became %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSendFileNameIsMadePlain(t *testing.T) {
	ws := t.TempDir()
	name := "evil\nname‮fdp.exe"
	write(t, filepath.Join(ws, name), "x")
	s, p := newServer(ws, 100)
	if text, isErr := callTool(t, s, sendFileName, map[string]any{"path": name}); isErr {
		t.Fatal(text)
	}
	if got := p.got()[0].Name; got != "evil namefdp.exe" {
		t.Errorf("name %q", got)
	}
}

func TestSendFilePlatformFailures(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "r.txt"), "r")
	s := New(Env{Dir: ws, MaxFile: 100, Post: func(ctx context.Context, f adapters.OutFile) error {
		return errors.New("slack: file upload refused: too_many_files")
	}})
	text, isErr := callTool(t, s, sendFileName, map[string]any{"path": "r.txt"})
	if !isErr || !contains(text, "could not post r.txt", "too_many_files") {
		t.Errorf("= %q (isError %v)", text, isErr)
	}
	for name, env := range map[string]Env{
		"no poster":    {Dir: ws, MaxFile: 100},
		"no file size": {Dir: ws, Post: (&poster{}).post},
	} {
		s := New(env)
		m := rpc(t, s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_file","arguments":{"path":"r.txt"}}}`)
		if m["error"] == nil {
			t.Errorf("%s: send_file answered %v, want unknown tool", name, m)
		}
	}
	for name, dir := range map[string]string{"no workspace": "", "relative workspace": "ws"} {
		s, p := newServer(dir, 100)
		if text, isErr := callTool(t, s, sendFileName, map[string]any{"path": "r.txt"}); !isErr || !strings.Contains(text, "no working directory") || len(p.got()) != 0 {
			t.Errorf("%s: %q (isError %v)", name, text, isErr)
		}
	}
}

func TestSendFileBadArguments(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "r.txt"), "r")
	for _, args := range []string{`{"path":7}`, `{"path":["r.txt"]}`, `"r.txt"`, `{"path":"r.txt","comment":{}}`, `{}`, `null`} {
		s, p := newServer(ws, 100)
		m := rpc(t, s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_file","arguments":`+args+`}}`)
		text, isErr := resultText(t, m)
		if !isErr || len(p.got()) != 0 {
			t.Errorf("arguments %s: %q (isError %v), posted %d", args, text, isErr, len(p.got()))
		}
	}
}

// TestSendFileSeesWhatTheSessionSees: what the session's runner hides
// inside its working directory (a sandbox's CLAUDEOPS_SANDBOX_HIDE: a
// file, a directory) is not posted, however it is named (directly, by a
// link to it, through "..", absolutely); the rest of the workspace is.
// (With a real sandbox: TestConsoleSendFileHidden in bot.)
func TestSendFileSeesWhatTheSessionSees(t *testing.T) {
	tr := newTree(t)
	ws := tr.ws
	write(t, filepath.Join(ws, ".env"), secret)
	mkdir(t, filepath.Join(ws, "vault"))
	write(t, filepath.Join(ws, "vault", "key"), secret)
	symlink(t, ".env", filepath.Join(ws, "env-link"))
	symlink(t, "vault", filepath.Join(ws, "vault-link"))
	hiddenPaths := []string{filepath.Join(ws, ".env"), filepath.Join(ws, "vault")}
	hidden := func(p string) bool {
		for _, h := range hiddenPaths {
			if p == h || strings.HasPrefix(p, h+"/") {
				return true
			}
		}
		return false
	}
	p := &poster{}
	s := New(Env{Dir: ws, MaxFile: 1 << 20, Post: p.post, Hidden: hidden})
	for _, path := range []string{".env", "env-link", "sub/../.env", ws + "/.env", "vault/key", "vault-link/key"} {
		text, isErr := callTool(t, s, sendFileName, map[string]any{"path": path})
		if !isErr || !strings.Contains(text, "hidden from this session") {
			t.Errorf("%s: %q (error %v), want refused as hidden", path, text, isErr)
		}
	}
	if got := p.got(); len(got) != 0 {
		t.Fatalf("hidden files were posted: %v", got)
	}
	if text, isErr := callTool(t, s, sendFileName, map[string]any{"path": "report.txt"}); isErr {
		t.Fatalf("report.txt: %s", text)
	}
	if got := p.got(); len(got) != 1 || string(got[0].Data) != "the report\n" {
		t.Fatalf("posted %v, want report.txt", got)
	}
}
