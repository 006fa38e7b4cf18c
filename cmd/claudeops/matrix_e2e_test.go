package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	matrixadapter "github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/internal/dendrite"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testrunner"
	"github.com/claudeops/claudeops/store"
)

// TestMatrixFromEnvironment runs claudeops as an operator would: Matrix
// configured by MATRIX_* with a password, against a real homeserver. The
// login it makes is kept: a restart reuses the token and device (the crypto
// state belongs to that device) and answers what was said while it was down.
func TestMatrixFromEnvironment(t *testing.T) {
	r := newMatrixEnvRun(t)
	alice, botUser, db := r.alice, r.bot, r.db

	cmd := r.start()
	room := alice.CreateRoom(dendrite.RoomOptions{Name: "ops", Invite: []id.UserID{botUser.ID}})
	if !alice.WaitFor(90*time.Second, func() bool { return alice.Membership(room, botUser.ID) == event.MembershipJoin }) {
		t.Fatal("the bot did not join")
	}
	root := alice.SendText(room, "first words", botUser.ID, "")
	r.reply(room, root, "heard: first words")
	r.checkStatePrivate()
	r.stop(cmd)
	first := r.device()
	if first == string(botUser.DeviceID) {
		t.Fatal("the bot should have logged in a device of its own")
	}
	if _, err := os.Stat(strings.TrimSuffix(db, ".db") + ".matrix-crypto.db"); err != nil && matrixadapter.EncryptionSupported() {
		t.Errorf("crypto state beside the database: %v", err)
	}

	alice.SendText(room, "said while down", "", root)
	cmd = r.start()
	r.reply(room, root, "said while down")
	r.stop(cmd)
	if again := r.device(); again != first {
		t.Errorf("the restart logged in again: device %s, then %s", first, again)
	}

	// The login is revoked while the bot is down (a logout, a password
	// change): it logs in again as a new device, signed with the recovery key.
	revoke(t, r.srv.URL, botUser.ID, db)
	alice.SendText(room, "after the logout", "", root)
	cmd = r.start()
	r.reply(room, root, "after the logout")
	r.stop(cmd)
	renewed := r.device()
	if renewed == first {
		t.Fatalf("still device %s after its login was revoked", first)
	}
	if !matrixadapter.EncryptionSupported() {
		return
	}
	r.checkNewDeviceCrossSigned(first, renewed)
}

// matrixEnvRun is the harness TestMatrixFromEnvironment restarts the bot
// in: one homeserver, one state directory and one environment for every run,
// so that what a run leaves behind is what the next one finds.
type matrixEnvRun struct {
	t     *testing.T
	srv   *dendrite.Server
	bot   *dendrite.User
	alice *dendrite.Client
	// state is the state directory; db and recoveryKey are files in it.
	state, db, recoveryKey string
	env                    []string
}

// newMatrixEnvRun starts the homeserver and the fake API and prepares the
// state directory as an earlier, careless run left it.
func newMatrixEnvRun(t *testing.T) *matrixEnvRun {
	bin := testcli.Bin(t)
	srv := dendrite.Start(t)
	botUser := srv.Register(t, "claude")
	alice := srv.Client(t, srv.Register(t, "alice"), dendrite.ClientOptions{})
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("heard: " + req.LastUserText())}}
	})
	// The state directory an earlier run left wide, and a recovery-key file
	// someone made readable to all: the bot makes both private again.
	state := t.TempDir()
	if err := os.Chmod(state, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(state, "claudeops.db")
	recoveryKey := filepath.Join(state, "claudeops.matrix-recovery-key")
	if err := os.WriteFile(recoveryKey, []byte("stale"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(recoveryKey, 0o666); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"CLAUDEOPS_STATE_DIR=" + state, "CLAUDEOPS_CLAUDE_BIN=" + bin, "CLAUDEOPS_WORKDIR=" + t.TempDir(),
		"CLAUDEOPS_ALLOWED_USERS=@a*:" + srv.ServerName,
		"MATRIX_HOMESERVER=" + srv.URL, "MATRIX_USER_ID=" + botUser.ID.String(), "MATRIX_PASSWORD=" + botUser.Password,
		"CLAUDEOPS_TEST_RUN_MAIN=1",
	}
	env = append(env, testrunner.Env(t, t.TempDir())...)
	return &matrixEnvRun{t: t, srv: srv, bot: botUser, alice: alice,
		state: state, db: db, recoveryKey: recoveryKey, env: env}
}

// start runs the bot once more, with the same environment and state.
func (r *matrixEnvRun) start() *exec.Cmd {
	t := r.t
	cmd := exec.Command(os.Args[0])
	cmd.Env = testrunner.Explicit(r.env)
	cmd.Stdin = nil
	cmd.Stderr = &testLog{t: t}
	var err error
	withUmask(0, func() { err = cmd.Start() }) // nothing may rely on the umask
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// stop ends a run the way a service manager does, and wants a clean exit.
func (r *matrixEnvRun) stop(cmd *exec.Cmd) {
	t := r.t
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("claudeops exited with %v after SIGTERM", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("claudeops did not stop after SIGTERM")
	}
}

// reply waits for the bot to say want in the thread of root.
func (r *matrixEnvRun) reply(room id.RoomID, root id.EventID, want string) {
	t, alice, botUser := r.t, r.alice, r.bot
	t.Helper()
	if !alice.WaitFor(90*time.Second, func() bool {
		for _, m := range alice.Thread(room, root) {
			if m.Sender == botUser.ID && strings.Contains(m.Body, want) {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no reply %q in the thread: %+v", want, alice.Thread(room, root))
	}
}

// device reads the login the bot stored, which must be complete, and
// returns its device.
func (r *matrixEnvRun) device() string {
	t := r.t
	st, err := store.Open(context.Background(), r.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, ok, err := st.ChatAccount(context.Background(), "matrix", r.bot.ID.String())
	if err != nil || !ok || a.AccessToken == "" || a.DeviceID == "" {
		t.Fatalf("login not kept: %+v %v %v", a, ok, err)
	}
	return a.DeviceID
}

// checkStatePrivate runs while the bot does: every file of its state, the
// SQLite side files of both databases included, is the bot's user's alone.
func (r *matrixEnvRun) checkStatePrivate() {
	t, db, recoveryKey := r.t, r.db, r.recoveryKey
	crypto := strings.TrimSuffix(db, ".db") + ".matrix-crypto.db"
	private := []string{db, db + "-wal", db + "-shm"}
	if matrixadapter.EncryptionSupported() {
		private = append(private, crypto, crypto+"-wal", crypto+"-shm", recoveryKey)
	}
	for _, f := range private {
		wantMode(t, f, 0o600)
	}
	wantMode(t, r.state, 0o700)
	if k, err := os.ReadFile(recoveryKey); matrixadapter.EncryptionSupported() && (err != nil || string(k) == "stale") {
		t.Errorf("the recovery key was not written: %q %v", k, err)
	}
}

// checkNewDeviceCrossSigned wants, after a revoked login, the first
// device's crypto state kept aside and the renewed device signed with the
// recovery key, as another user's client sees it.
func (r *matrixEnvRun) checkNewDeviceCrossSigned(first, renewed string) {
	t, botUser := r.t, r.bot
	if _, err := os.Stat(strings.TrimSuffix(r.db, ".db") + ".matrix-crypto.retired-" + first + ".db"); err != nil {
		t.Errorf("the old device's crypto state was not kept aside: %v", err)
	}
	keys, err := r.alice.Matrix.QueryKeys(context.Background(), &mautrix.ReqQueryKeys{DeviceKeys: mautrix.DeviceKeysRequest{botUser.ID: {id.DeviceID(renewed)}}})
	if err != nil {
		t.Fatal(err)
	}
	if sigs := keys.DeviceKeys[botUser.ID][id.DeviceID(renewed)].Signatures[botUser.ID]; len(sigs) < 2 {
		t.Errorf("the new device is not cross-signed: signatures %v", sigs)
	}
}

// revoke logs the bot's stored login out on the homeserver.
func revoke(t *testing.T, hs string, user id.UserID, db string) {
	t.Helper()
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := st.ChatAccount(context.Background(), "matrix", user.String())
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := mautrix.NewClient(hs, user, a.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Logout(context.Background()); err != nil {
		t.Fatalf("log the bot out: %v", err)
	}
}
