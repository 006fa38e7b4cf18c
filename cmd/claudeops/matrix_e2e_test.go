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
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0])
		cmd.Env = env
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
	stop := func(cmd *exec.Cmd) {
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
	reply := func(room id.RoomID, root id.EventID, want string) {
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
	device := func() string {
		st, err := store.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		a, ok, err := st.ChatAccount(context.Background(), "matrix", botUser.ID.String())
		if err != nil || !ok || a.AccessToken == "" || a.DeviceID == "" {
			t.Fatalf("login not kept: %+v %v %v", a, ok, err)
		}
		return a.DeviceID
	}

	cmd := start()
	room := alice.CreateRoom(dendrite.RoomOptions{Name: "ops", Invite: []id.UserID{botUser.ID}})
	if !alice.WaitFor(90*time.Second, func() bool { return alice.Membership(room, botUser.ID) == event.MembershipJoin }) {
		t.Fatal("the bot did not join")
	}
	root := alice.SendText(room, "first words", botUser.ID, "")
	reply(room, root, "heard: first words")
	// While it runs, every file of its state, the SQLite side files of both
	// databases included, is the bot's user's alone.
	crypto := strings.TrimSuffix(db, ".db") + ".matrix-crypto.db"
	private := []string{db, db + "-wal", db + "-shm"}
	if matrixadapter.EncryptionSupported() {
		private = append(private, crypto, crypto+"-wal", crypto+"-shm", recoveryKey)
	}
	for _, f := range private {
		wantMode(t, f, 0o600)
	}
	wantMode(t, state, 0o700)
	if k, err := os.ReadFile(recoveryKey); matrixadapter.EncryptionSupported() && (err != nil || string(k) == "stale") {
		t.Errorf("the recovery key was not written: %q %v", k, err)
	}
	stop(cmd)
	first := device()
	if first == string(botUser.DeviceID) {
		t.Fatal("the bot should have logged in a device of its own")
	}
	if _, err := os.Stat(strings.TrimSuffix(db, ".db") + ".matrix-crypto.db"); err != nil && matrixadapter.EncryptionSupported() {
		t.Errorf("crypto state beside the database: %v", err)
	}

	alice.SendText(room, "said while down", "", root)
	cmd = start()
	reply(room, root, "said while down")
	stop(cmd)
	if again := device(); again != first {
		t.Errorf("the restart logged in again: device %s, then %s", first, again)
	}

	// The login is revoked while the bot is down (a logout, a password
	// change): it logs in again as a new device, signed with the recovery key.
	revoke(t, srv.URL, botUser.ID, db)
	alice.SendText(room, "after the logout", "", root)
	cmd = start()
	reply(room, root, "after the logout")
	stop(cmd)
	renewed := device()
	if renewed == first {
		t.Fatalf("still device %s after its login was revoked", first)
	}
	if !matrixadapter.EncryptionSupported() {
		return
	}
	if _, err := os.Stat(strings.TrimSuffix(db, ".db") + ".matrix-crypto.retired-" + first + ".db"); err != nil {
		t.Errorf("the old device's crypto state was not kept aside: %v", err)
	}
	keys, err := alice.Matrix.QueryKeys(context.Background(), &mautrix.ReqQueryKeys{DeviceKeys: mautrix.DeviceKeysRequest{botUser.ID: {id.DeviceID(renewed)}}})
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
