package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	matrixadapter "github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/internal/dendrite"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
)

// End-to-end tests of the bot's own tools for Claude on Matrix: the built
// bot with the real CLI and the fake model API, on a real homeserver. The
// oracles are outside the bot: what alice's client receives (and
// downloads), and what the CLI sent back to the model.

// matrixToolsRun is the bot on a homeserver, with CLAUDEOPS_WORKDIR work.
type matrixToolsRun struct {
	*matrixEnvRun
	api        *fakeanthropic.Server
	work, home string // the sessions' working directory and HOME
}

// startMatrixTools starts the homeserver, alice's client (a crypto device
// when crypto) and the bot, logged in with its password.
func startMatrixTools(t *testing.T, script fakeanthropic.Script, crypto bool) *matrixToolsRun {
	t.Helper()
	bin := testcli.Bin(t)
	srv := dendrite.Start(t)
	botUser := srv.Register(t, "claude")
	alice := srv.Client(t, srv.Register(t, "alice"), dendrite.ClientOptions{Crypto: crypto})
	api := fakeanthropic.Start(t, script)
	home, state, work := t.TempDir(), t.TempDir(), t.TempDir()
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_STATE_DIR="+state, "CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
		"CLAUDEOPS_ALLOWED_USERS="+alice.User.ID.String(),
		"MATRIX_HOMESERVER="+srv.URL, "MATRIX_USER_ID="+botUser.ID.String(), "MATRIX_PASSWORD="+botUser.Password,
		"CLAUDEOPS_TEST_RUN_MAIN=1",
	)
	env = append(env, testrunner.Env(t, home)...)
	r := &matrixToolsRun{
		matrixEnvRun: &matrixEnvRun{t: t, srv: srv, bot: botUser, alice: alice, state: state,
			db: filepath.Join(state, "claudeops.db"), recoveryKey: filepath.Join(state, "claudeops.matrix-recovery-key"), env: env},
		api: api, work: work, home: home,
	}
	return r
}

// room has alice create a room with the bot (and others) invited, and
// waits for the bot to join.
func (r *matrixToolsRun) room(encrypted bool, others ...id.UserID) id.RoomID {
	t := r.t
	t.Helper()
	room := r.alice.CreateRoom(dendrite.RoomOptions{Name: "ops", Encrypted: encrypted, Invite: append([]id.UserID{r.bot.ID}, others...)})
	if !r.alice.WaitFor(90*time.Second, func() bool { return r.alice.Membership(room, r.bot.ID) == event.MembershipJoin }) {
		t.Fatal("the bot did not join")
	}
	return room
}

// botSaid waits for a message of the bot in root's thread that ok accepts.
func (r *matrixToolsRun) botSaid(room id.RoomID, root id.EventID, what string, ok func(dendrite.Message) bool) dendrite.Message {
	t := r.t
	t.Helper()
	var got dendrite.Message
	if !r.alice.WaitFor(90*time.Second, func() bool {
		for _, m := range r.alice.Thread(room, root) {
			if m.Sender == r.bot.ID && ok(m) {
				got = m
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the bot did not post %s in the thread: %+v", what, r.alice.Thread(room, root))
	}
	return got
}

// noPrompt fails when the thread shows an approval prompt: the built-in
// rule allows the bot's own tools.
func (r *matrixToolsRun) noPrompt(room id.RoomID, root id.EventID) {
	t := r.t
	t.Helper()
	for _, m := range r.alice.Thread(room, root) {
		if m.Sender == r.bot.ID && strings.Contains(strings.ToLower(m.Body), "approv") {
			t.Errorf("an approval prompt was posted for the bot's own tool: %q", m.Body)
		}
	}
}

// download is the bytes of the file of an m.file as a client gets them:
// from its url, or from its encrypted file, decrypted with the event's key.
func (r *matrixToolsRun) download(m dendrite.Message) []byte {
	t := r.t
	t.Helper()
	raw, err := json.Marshal(m.Raw)
	if err != nil {
		t.Fatal(err)
	}
	var c event.MessageEventContent
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("the file's event: %v", err)
	}
	uri := c.URL
	if c.File != nil {
		uri = c.File.URL
	}
	mxc, err := uri.Parse()
	if err != nil {
		t.Fatalf("the file's url %q: %v", uri, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	data, err := r.alice.Matrix.DownloadBytes(ctx, mxc)
	if err != nil {
		t.Fatalf("download %s: %v", mxc, err)
	}
	if c.File != nil {
		if err := c.File.DecryptInPlace(data); err != nil {
			t.Fatalf("decrypt %s: %v", mxc, err)
		}
	}
	return data
}

// TestToolsMatrixSendFile: Claude calls send_file on report.md of its
// working directory; alice sees an m.file by the bot in the thread that
// asked, named report.md with the comment as its caption, whose download
// is the file byte for byte; no approval is asked. In an encrypted room
// the file is encrypted, and alice's client decrypts it.
func TestToolsMatrixSendFile(t *testing.T) {
	for _, encrypted := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "encrypted"}[encrypted]
		t.Run(name, func(t *testing.T) {
			if encrypted && !matrixadapter.EncryptionSupported() {
				t.Skip("encrypted rooms need -tags goolm")
			}
			r := startMatrixTools(t, toolScript(map[string]fakeanthropic.Block{
				"send the nightly report": fakeanthropic.ToolUse(sendFileTool, map[string]string{"path": "report.md", "comment": "nightly report"}),
			}), encrypted)
			if err := os.WriteFile(filepath.Join(r.work, "report.md"), reportBytes, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := r.start()
			room := r.room(encrypted)
			root := r.alice.SendText(room, "send the nightly report", r.bot.ID, "")
			file := r.botSaid(room, root, "a file", func(m dendrite.Message) bool { return m.MsgType == event.MsgFile })
			if got := r.download(file); !bytes.Equal(got, reportBytes) {
				t.Errorf("the file downloads as %q, want %q", got, reportBytes)
			}
			if fn, _ := file.Raw["filename"].(string); fn != "report.md" || file.Body != "nightly report" {
				t.Errorf("file named %q with caption %q, want report.md with %q", fn, file.Body, "nightly report")
			}
			_, hasURL := file.Raw["url"]
			if _, hasFile := file.Raw["file"]; encrypted && (hasURL || !hasFile) || !encrypted && !hasURL {
				t.Errorf("in a room encrypted=%v the file's content is %v", encrypted, file.Raw)
			}
			res := toolResultFor(t, r.api, sendFileTool, func() string { return "(in the test's output)" })
			if res.IsError || !strings.Contains(res.Content, "report.md") {
				t.Errorf("send_file's result: %+v", res)
			}
			r.botSaid(room, root, "the model's answer", func(m dendrite.Message) bool { return strings.Contains(m.Body, "the tool has answered") })
			r.noPrompt(room, root)
			r.stop(cmd)
		})
	}
}

// TestToolsMatrixReadThread: alice and mallory talk in a thread without
// mentioning the bot; then alice mentions it there, and Claude calls
// read_thread. What the CLI hands the model has their messages, in order,
// with their authors' user ids, and nothing from outside the thread.
func TestToolsMatrixReadThread(t *testing.T) {
	r := startMatrixTools(t, toolScript(map[string]fakeanthropic.Block{
		"what did mallory say": fakeanthropic.ToolUse(readThreadTool, map[string]int{"limit": 20}),
	}), false)
	mallory := r.srv.Client(t, r.srv.Register(t, "mallory"), dendrite.ClientOptions{})
	cmd := r.start()
	room := r.room(false, mallory.User.ID)
	mallory.Join(room)
	alice := r.alice
	if !alice.WaitFor(90*time.Second, func() bool { return alice.Membership(room, mallory.User.ID) == event.MembershipJoin }) {
		t.Fatal("mallory did not join")
	}
	mallory.SendText(room, "decoy: unrelated chatter in the room", "", "")
	root := alice.SendText(room, "deploy window opens at 14:00 UTC", "", "")
	mallory.SendText(room, "the canary failed on eu-west-2, rolling back", "", root)
	alice.SendText(room, "ok, holding the release & waiting <for> mallory", "", root)
	alice.SendText(room, "what did mallory say?", r.bot.ID, root)

	res := toolResultFor(t, r.api, readThreadTool, func() string { return "(in the test's output)" })
	if res.IsError {
		t.Fatalf("read_thread failed: %s", res.Content)
	}
	t.Logf("read_thread's result:\n%s", res.Content)
	a, m := alice.User.ID.String(), mallory.User.ID.String()
	wantInOrder := []string{
		a, "deploy window opens at 14:00 UTC",
		m, "the canary failed on eu-west-2, rolling back",
		a, "ok, holding the release & waiting <for> mallory",
		a, "what did mallory say?",
	}
	rest := res.Content
	for _, want := range wantInOrder {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("read_thread's result lacks %q (in order); it was:\n%s", want, res.Content)
		}
		rest = rest[i+len(want):]
	}
	if strings.Contains(res.Content, "decoy") {
		t.Errorf("read_thread returned a message from outside the thread:\n%s", res.Content)
	}
	r.botSaid(room, root, "the model's answer", func(m dendrite.Message) bool { return strings.Contains(m.Body, "the tool has answered") })
	r.noPrompt(room, root)
	r.stop(cmd)
}
