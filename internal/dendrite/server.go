package dendrite

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"
	"maunium.net/go/mautrix/synapseadmin"

	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testserver"
)

// Version is the Dendrite release scripts/dendrite builds.
const Version = "v0.15.2"

const (
	startTimeout = 60 * time.Second
	stopTimeout  = 5 * time.Second
	opTimeout    = 30 * time.Second // per client-server request
)

// Server is a running Dendrite.
type Server struct {
	URL        string // http://127.0.0.1:port
	ServerName string // the part after the colon in user IDs

	secret    string // shared secret for admin registration
	dir       string
	maxUpload int64
}

// User is an account on the server, logged in on a device of its own.
type User struct {
	ID          id.UserID
	Password    string
	AccessToken string
	DeviceID    id.DeviceID
	// RecoveryKey is the account's cross-signing recovery key, once a
	// crypto Client set the identity up (shared by the account's Users).
	RecoveryKey string
}

// Options configure StartWith.
type Options struct {
	// MaxUploadBytes is the media API's upload limit (max_file_size_bytes,
	// served as m.upload.size); 0 means 256 MiB.
	MaxUploadBytes int64
}

// defaultMaxUpload: tests send files far over the bot's 20 MiB attachment
// limit (Dendrite's own default is 10 MiB).
const defaultMaxUpload = 256 << 20

// Start runs a fresh Dendrite for the test and stops it when the test ends.
// Without the binaries it skips the test, unless CLAUDEOPS_REQUIRE_DENDRITE=1
// (scripts/test, CI), where that is a failure.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start with opts.
func StartWith(t testing.TB, opts Options) *Server {
	t.Helper()
	bin := binDir(t)
	s := &Server{ServerName: "localhost", secret: rand.Text(), dir: t.TempDir(), maxUpload: opts.MaxUploadBytes}
	if s.maxUpload <= 0 {
		s.maxUpload = defaultMaxUpload
	}

	key := filepath.Join(s.dir, "matrix_key.pem")
	if out, err := exec.Command(filepath.Join(bin, "generate-keys"), "-private-key", key).CombinedOutput(); err != nil {
		t.Fatalf("dendrite: generate-keys: %v\n%s", err, out)
	}
	cfg := filepath.Join(s.dir, "dendrite.yaml")
	if err := os.WriteFile(cfg, []byte(s.config(key)), 0o600); err != nil {
		t.Fatalf("dendrite: writing config: %v", err)
	}
	addr := testserver.FreeAddr(t)
	s.URL = "http://" + addr

	logPath := filepath.Join(s.dir, "dendrite.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("dendrite: %v", err)
	}
	defer logFile.Close() // the child keeps its own descriptor
	cmd := exec.Command(filepath.Join(bin, "dendrite"), "-config", cfg, "-http-bind-address", addr)
	cmd.Dir = s.dir // any relative path Dendrite defaults to lands in the temp dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("dendrite: starting: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { testserver.Stop(t, "dendrite", cmd.Process, exited, stopTimeout) })

	if err := testserver.WaitReady(s.URL+"/_matrix/client/versions", exited, startTimeout); err != nil {
		t.Fatalf("dendrite: %v\nlast lines of %s:\n%s", err, logPath, testserver.Tail(logPath, 40))
	}
	return s
}

// binDir finds the directory with the dendrite and generate-keys binaries.
func binDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("CLAUDEOPS_TEST_DENDRITE_BIN")
	if dir == "" {
		dir = filepath.Join(testcli.RepoRoot(), ".cache", "dendrite-"+Version, "bin")
	}
	for _, name := range []string{"dendrite", "generate-keys"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			if os.Getenv("CLAUDEOPS_REQUIRE_DENDRITE") == "1" {
				t.Fatalf("Dendrite %s is not built (%v): run scripts/test or scripts/dendrite", Version, err)
			}
			t.Skipf("Dendrite %s is not built (scripts/test builds it): %v", Version, err)
		}
	}
	return dir
}

// config is a single-process Dendrite that talks to nobody else: no
// federation, no stats, no identity servers, one SQLite file per component
// (SQLite cannot share one between them). Registration is closed except
// through the shared secret, and rate limiting is off so tests never see 429
// from the client API; bcrypt cost 4 keeps logins fast. Uploads may be up
// to s.maxUpload. No logging hooks:
// Dendrite always logs at info level to its stdout, which Start sends to
// dendrite.log in the data directory.
func (s *Server) config(keyPath string) string {
	db := func(name string) string {
		return fmt.Sprintf("{connection_string: %q}", "file:"+filepath.Join(s.dir, name+".db"))
	}
	return fmt.Sprintf(`version: 2
global:
  server_name: %q
  private_key: %q
  disable_federation: true
  trusted_third_party_id_servers: []
  presence: {enable_inbound: false, enable_outbound: false}
  report_stats: {enabled: false}
  jetstream: {storage_path: %q}
client_api:
  registration_disabled: true
  registration_shared_secret: %q
  rate_limiting: {enabled: false}
federation_api: {database: %s, key_perspectives: []}
key_server: {database: %s}
media_api: {database: %s, base_path: %q, max_file_size_bytes: %d}
mscs: {database: %s}
relay_api: {database: %s}
room_server: {database: %s}
sync_api: {database: %s, search: {enabled: false}}
user_api: {account_database: %s, bcrypt_cost: 4}
`, s.ServerName, keyPath, filepath.Join(s.dir, "jetstream"), s.secret,
		db("federationapi"), db("keyserver"), db("mediaapi"), filepath.Join(s.dir, "media"), s.maxUpload,
		db("mscs"), db("relayapi"), db("roomserver"), db("syncapi"), db("userapi"))
}

// Register creates a user through shared-secret registration, then logs in
// with the password: the registration's own token belongs to a device
// Dendrite always names shared_secret_registration, unfit for E2EE.
func (s *Server) Register(t testing.TB, localpart string) *User {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cli, err := mautrix.NewClient(s.URL, "", "")
	if err != nil {
		t.Fatalf("dendrite: %v", err)
	}
	password := rand.Text()
	admin := synapseadmin.Client{Client: cli}
	if _, err := admin.SharedSecretRegister(ctx, s.secret, synapseadmin.ReqSharedSecretRegister{
		Username: localpart, Password: password,
	}); err != nil {
		t.Fatalf("dendrite: registering %s: %v", localpart, err)
	}
	return s.login(t, ctx, cli, &User{Password: password}, localpart)
}

// Login logs u's account in again: the same account on a device of its
// own (a second session). It carries u's recovery key, so log in after the
// account's first crypto Client has set its cross-signing up.
func (s *Server) Login(t testing.TB, u *User) *User {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cli, err := mautrix.NewClient(s.URL, "", "")
	if err != nil {
		t.Fatalf("dendrite: %v", err)
	}
	return s.login(t, ctx, cli, &User{Password: u.Password, RecoveryKey: u.RecoveryKey}, u.ID.Localpart())
}

// login logs localpart in with u's password and fills in u's device.
func (s *Server) login(t testing.TB, ctx context.Context, cli *mautrix.Client, u *User, localpart string) *User {
	t.Helper()
	resp, err := cli.Login(ctx, &mautrix.ReqLogin{
		Type:                     mautrix.AuthTypePassword,
		Identifier:               mautrix.UserIdentifier{Type: mautrix.IdentifierTypeUser, User: localpart},
		Password:                 u.Password,
		InitialDeviceDisplayName: "test " + localpart,
	})
	if err != nil {
		t.Fatalf("dendrite: logging in %s: %v", localpart, err)
	}
	u.ID, u.AccessToken, u.DeviceID = resp.UserID, resp.AccessToken, resp.DeviceID
	return u
}
