package giteatest

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testserver"
)

// Version is the Gitea release scripts/gitea builds.
const Version = "v1.26.0"

const (
	startTimeout = 120 * time.Second // the first start migrates a new database
	stopTimeout  = 5 * time.Second
	opTimeout    = 30 * time.Second // per API request
)

// Server is a running Gitea.
type Server struct {
	URL      string // http://127.0.0.1:port, no trailing slash
	Admin    string // the admin user's name; repositories are made under it
	Password string // the admin's password
	Token    string // an API token of the admin's, every scope

	dir     string
	bin     string
	logPath string
	acct    account
}

// Start runs a fresh Gitea for the test and stops it when the test ends.
// Without the binary it skips the test, unless CLAUDEOPS_REQUIRE_GITEA=1
// (scripts/test, CI), where that is a failure.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, options := binPath(t)
	acct, err := runAccount()
	if err != nil {
		t.Fatalf("gitea: %v", err)
	}
	if bin, options, err = acct.reachable(bin, options); err != nil {
		t.Fatalf("gitea: %s cannot reach the binary: %v", acct.name, err)
	}
	s := &Server{Admin: "claudeops-admin", Password: rand.Text(), bin: bin, acct: acct}
	s.dir = workDir(t, acct, options)
	s.logPath = filepath.Join(s.dir, "gitea.log")
	addr := testserver.FreeAddr(t)
	s.URL = "http://" + addr
	if err := s.writeConfig(addr); err != nil {
		t.Fatalf("gitea: writing app.ini: %v", err)
	}

	logFile, err := os.Create(s.logPath)
	if err != nil {
		t.Fatalf("gitea: %v", err)
	}
	defer logFile.Close() // the child keeps its own descriptor
	cmd := s.command("web")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("gitea: starting: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { testserver.Stop(t, "gitea", cmd.Process, exited, stopTimeout) })

	if err := testserver.WaitReady(s.URL+"/api/v1/version", exited, startTimeout); err != nil {
		t.Fatalf("gitea: %v\nlast lines of %s:\n%s", err, s.logPath, testserver.Tail(s.logPath, 40))
	}
	s.createAdmin(t)
	return s
}

// binPath finds the gitea binary and the options/ directory beside its
// bin/ (scripts/gitea puts both in .cache/gitea-<version>).
func binPath(t testing.TB) (bin, options string) {
	t.Helper()
	dir := os.Getenv("CLAUDEOPS_TEST_GITEA_BIN")
	if dir == "" {
		dir = filepath.Join(testcli.RepoRoot(), ".cache", "gitea-"+Version, "bin")
	}
	bin = filepath.Join(dir, "gitea")
	options = filepath.Join(filepath.Dir(dir), "options")
	for _, p := range []string{bin, filepath.Join(options, "locale")} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CLAUDEOPS_REQUIRE_GITEA") == "1" {
				t.Fatalf("Gitea %s is not built (%v): run scripts/test or scripts/gitea", Version, err)
			}
			// The variable named: scripts/test builds Gitea beside the
			// suite and runs again what skipped for want of it.
			t.Skipf("Gitea %s is not built yet (CLAUDEOPS_TEST_GITEA_BIN=%q; scripts/test builds it): %v", Version, os.Getenv("CLAUDEOPS_TEST_GITEA_BIN"), err)
		}
	}
	return bin, options
}

// workDir makes the server's work path, owned by acct: not t.TempDir,
// whose parent only root may enter. Gitea reads its options/ (locales,
// the README template of a new repository) from there, through a link.
func workDir(t testing.TB, acct account, options string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "giteatest-")
	if err != nil {
		t.Fatalf("gitea: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	for _, sub := range []string{"custom", "data", "repos", "log", "home", "tmp"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatalf("gitea: %v", err)
		}
	}
	if err := os.Symlink(options, filepath.Join(dir, "options")); err != nil {
		t.Fatalf("gitea: %v", err)
	}
	err = filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return acct.chown(p)
	})
	if err != nil {
		t.Fatalf("gitea: giving the work path to %s: %v", acct.name, err)
	}
	return dir
}

// command is a gitea command on this server's app.ini, run as its account
// with an environment of its own (nothing of the test's leaks in).
func (s *Server) command(args ...string) *exec.Cmd {
	cmd := exec.Command(s.bin, append(args, "--config", filepath.Join(s.dir, "app.ini"))...)
	cmd.Dir = s.dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(s.dir, "home"),
		"USER=" + s.acct.name,
		"TMPDIR=" + filepath.Join(s.dir, "tmp"),
		"GITEA_WORK_DIR=" + s.dir,
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.acct.cred, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// writeConfig writes app.ini: installed (INSTALL_LOCK), SQLite, HTTP on
// addr only (no SSH, no LFS, no mail, no actions, offline), in-memory
// queues and sessions so each server is self-contained; webhooks may go to
// loopback, where the tests' receivers listen. Secrets are given so that
// Gitea never writes app.ini back.
func (s *Server) writeConfig(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	d := func(sub string) string { return filepath.Join(s.dir, sub) }
	ini := fmt.Sprintf(appIni, s.acct.name, s.dir, host, port, s.URL, d("data"), s.dir, d("data/gitea.db"), d("repos"),
		d("tmp/local-repo"), rand.Text(), rand.Text(), jwtSecret(), d("log"))
	path := d("app.ini")
	if err := os.WriteFile(path, []byte(ini), 0o600); err != nil {
		return err
	}
	return s.acct.chown(path)
}

// jwtSecret is a secret in the form Gitea generates: 32 random bytes,
// base64 without padding.
func jwtSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// createAdmin makes the admin user with Gitea's own command, then its
// API token through the API with the password.
func (s *Server) createAdmin(t testing.TB) {
	t.Helper()
	out, err := s.command("admin", "user", "create", "--admin", "--username", s.Admin,
		"--password", s.Password, "--email", s.Admin+"@example.com", "--must-change-password=false").CombinedOutput()
	if err != nil {
		t.Fatalf("gitea: creating the admin: %v\n%s", err, out)
	}
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	body := map[string]any{"name": "claudeops-test", "scopes": []string{"all"}}
	if err := s.request("POST", "/users/"+s.Admin+"/tokens", body, &tok, true); err != nil {
		t.Fatalf("gitea: creating the admin's token: %v", err)
	}
	s.Token = tok.SHA1
}

// Log is what Gitea logged so far.
func (s *Server) Log() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// appIni is app.ini, filled in by writeConfig.
const appIni = `APP_NAME = claudeops test
RUN_USER = %s
RUN_MODE = prod
WORK_PATH = %s

[server]
PROTOCOL = http
HTTP_ADDR = %s
HTTP_PORT = %s
ROOT_URL = %s/
DISABLE_SSH = true
START_SSH_SERVER = false
LFS_START_SERVER = false
OFFLINE_MODE = true
APP_DATA_PATH = %s
STATIC_ROOT_PATH = %s

[database]
DB_TYPE = sqlite3
PATH = %s
SQLITE_JOURNAL_MODE = WAL
SQLITE_TIMEOUT = 5000

[repository]
ROOT = %s
DEFAULT_BRANCH = main

[repository.local]
LOCAL_COPY_PATH = %s

[security]
INSTALL_LOCK = true
SECRET_KEY = %s
INTERNAL_TOKEN = %s
PASSWORD_COMPLEXITY = off

[oauth2]
ENABLED = false
JWT_SECRET = %s

[service]
DISABLE_REGISTRATION = true

[webhook]
ALLOWED_HOST_LIST = loopback
DELIVER_TIMEOUT = 10

[queue]
TYPE = channel

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[session]
PROVIDER = memory

[mailer]
ENABLED = false

[actions]
ENABLED = false

[packages]
ENABLED = false

[picture]
DISABLE_GRAVATAR = true

[cron.update_checker]
ENABLED = false

[log]
MODE = console
LEVEL = Info
ROOT_PATH = %s
`
