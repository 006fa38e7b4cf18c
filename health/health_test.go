package health

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/dbdamage"
	"github.com/claudeops/claudeops/store"
)

// stubConn is an adapter's reported link (the edge: adapters' own tests
// hold how each reports it).
type stubConn struct {
	name string
	st   adapters.ConnStatus
}

func (s stubConn) Name() string                    { return s.name }
func (s stubConn) ConnStatus() adapters.ConnStatus { return s.st }

func connected(name string) stubConn { return connState(name, adapters.Connected, "") }

func connState(name string, s adapters.ConnState, err string) stubConn {
	st := adapters.ConnStatus{State: s, Since: time.Now(), Via: "test", LastError: err}
	if err != "" {
		st.LastErrorAt = time.Now()
	}
	return stubConn{name, st}
}

// stubSessions: two live, one queued.
type stubSessions struct{}

func (stubSessions) LiveSessions() int   { return 2 }
func (stubSessions) QueuedSessions() int { return 1 }

// readyDoc is /readyz's body as a client reads it.
type readyDoc struct {
	Ready    *bool    `json:"ready"`
	Reasons  []string `json:"reasons"`
	Adapters []struct {
		Name, State, Via string
		LastError        string `json:"last_error"`
	} `json:"adapters"`
	Database struct {
		Writable bool
		Error    string
	} `json:"database"`
	Runner struct{ Name, Why string } `json:"runner"`
	CLI    struct {
		Found                bool
		Path, Version, Level string
		Message              string
		CheckedAt            time.Time `json:"checked_at"`
	} `json:"cli"`
	Sessions struct{ Live, Queued int } `json:"sessions"`
}

// get asks srv for path and returns the status and the body, checking
// that it is JSON.
func get(t *testing.T, srv *httptest.Server, path string) (int, []byte) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" || !json.Valid(body) {
		t.Fatalf("GET %s: %s (Content-Type %q), want JSON", path, body, ct)
	}
	return resp.StatusCode, body
}

// readyz asks srv for /readyz and decodes its body.
func readyz(t *testing.T, srv *httptest.Server) (int, readyDoc) {
	t.Helper()
	code, body := get(t, srv, "/readyz")
	var d readyDoc
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	return code, d
}

func serve(t *testing.T, h *Health) *httptest.Server {
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(h.BeginShutdown)
	return srv
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "claudeops.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func cliAt(bin string) func(context.Context) (claudeproc.VersionInfo, error) {
	return func(ctx context.Context) (claudeproc.VersionInfo, error) { return claudeproc.CheckVersion(ctx, bin) }
}

// fakeCLI is a claude that prints version.
func fakeCLI(t *testing.T, version string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+version+" (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadyz: the verdict, its reasons and the status code, for each way
// the bot can be (not) ready; the parts always shown.
func TestReadyz(t *testing.T) {
	tested := claudeproc.TestedVersion.String()
	tests := []struct {
		name     string
		adapters []Conn
		db       func(t *testing.T) WriteProber
		cli      func(t *testing.T) string
		ready    bool
		reasons  []string // each in some reason, in order
		check    func(t *testing.T, d readyDoc)
	}{
		{name: "all well", adapters: []Conn{connected("slack"), connected("matrix")}, ready: true,
			check: func(t *testing.T, d readyDoc) {
				if !d.Database.Writable || !d.CLI.Found || d.CLI.Version != tested || d.CLI.Level != claudeproc.CompatFull.String() {
					t.Errorf("database %+v, cli %+v", d.Database, d.CLI)
				}
				if d.Sessions.Live != 2 || d.Sessions.Queued != 1 || len(d.Adapters) != 2 || d.Adapters[1].State != "connected" {
					t.Errorf("sessions %+v, adapters %+v", d.Sessions, d.Adapters)
				}
			}},
		{name: "a newer CLI is likely compatible, and ready", cli: func(t *testing.T) string { return fakeCLI(t, "2.9.0") }, ready: true,
			check: func(t *testing.T, d readyDoc) {
				if d.CLI.Level != claudeproc.CompatLikely.String() || d.CLI.Version != "2.9.0" {
					t.Errorf("cli %+v", d.CLI)
				}
			}},
		{name: "adapters down", adapters: []Conn{connState("slack", adapters.Disconnected, "websocket: bad handshake"),
			connected("console"), connState("matrix", adapters.Connecting, "")},
			reasons: []string{"slack adapter disconnected since ", "websocket: bad handshake", "matrix adapter connecting since "},
			check: func(t *testing.T, d readyDoc) {
				if len(d.Reasons) != 2 || d.Adapters[0].LastError != "websocket: bad handshake" || d.Adapters[0].State != "disconnected" {
					t.Errorf("reasons %q, adapters %+v", d.Reasons, d.Adapters)
				}
			}},
		{name: "closed database", db: func(t *testing.T) WriteProber {
			st := openStore(t)
			st.Close()
			return st
		}, reasons: []string{"database not writable: write probe: begin: sql: database is closed"}},
		{name: "missing CLI", cli: func(t *testing.T) string { return filepath.Join(t.TempDir(), "claude") },
			reasons: []string{"not found"}, check: func(t *testing.T, d readyDoc) {
				if d.CLI.Found || d.CLI.Level != claudeproc.CompatNotFound.String() {
					t.Errorf("cli %+v", d.CLI)
				}
			}},
		{name: "CLI too old", cli: func(t *testing.T) string { return fakeCLI(t, "1.0.22") },
			reasons: []string{"older than the minimum"}, check: func(t *testing.T, d readyDoc) {
				if !d.CLI.Found || d.CLI.Level != claudeproc.CompatIncompatible.String() || d.CLI.Version != "1.0.22" {
					t.Errorf("cli %+v", d.CLI)
				}
			}},
		{name: "everything at once", adapters: []Conn{connState("slack", adapters.Disconnected, "gone")},
			db: func(t *testing.T) WriteProber {
				st := openStore(t)
				st.Close()
				return st
			}, cli: func(t *testing.T) string { return filepath.Join(t.TempDir(), "claude") },
			reasons: []string{"slack adapter", "database not writable", "not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conns := tt.adapters
			if conns == nil {
				conns = []Conn{connected("console")}
			}
			var db WriteProber
			if tt.db != nil {
				db = tt.db(t)
			} else {
				db = openStore(t)
			}
			bin := fakeCLI(t, tested)
			if tt.cli != nil {
				bin = tt.cli(t)
			}
			srv := serve(t, New(Config{Version: "v-test", Adapters: conns, Sessions: stubSessions{}, DB: db, CheckCLI: cliAt(bin)}))
			code, body := get(t, srv, "/readyz")
			var d readyDoc
			if err := json.Unmarshal(body, &d); err != nil || d.Ready == nil {
				t.Fatalf("body %s: %v (want a boolean \"ready\")", body, err)
			}
			wantCode := http.StatusServiceUnavailable
			if tt.ready {
				wantCode = http.StatusOK
			}
			if code != wantCode || *d.Ready != tt.ready || (tt.ready && len(d.Reasons) != 0) || (!tt.ready && len(d.Reasons) == 0) {
				t.Errorf("%d ready=%v reasons %q, want %d ready=%v; body:\n%s", code, *d.Ready, d.Reasons, wantCode, tt.ready, body)
			}
			all := strings.Join(d.Reasons, "\n")
			for _, r := range tt.reasons {
				i := strings.Index(all, r)
				if i < 0 {
					t.Errorf("reasons lack %q:\n%s", r, all)
					continue
				}
				all = all[i+len(r):]
			}
			if tt.check != nil {
				tt.check(t, d)
			}
		})
	}
}

// TestReadyzShowsRunner: /readyz names the runner and why it was chosen;
// the local runner, chosen for want of bubblewrap, is said, not a fault.
func TestReadyzShowsRunner(t *testing.T) {
	why := "the default without a working bubblewrap (find bubblewrap: not found)"
	srv := serve(t, New(Config{Adapters: []Conn{connected("console")}, Sessions: stubSessions{}, DB: openStore(t),
		CheckCLI: cliAt(fakeCLI(t, claudeproc.TestedVersion.String())), Runner: Runner{Name: "local", Why: why}}))
	code, body := get(t, srv, "/readyz")
	var d readyDoc
	if err := json.Unmarshal(body, &d); err != nil || d.Ready == nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if code != http.StatusOK || !*d.Ready || d.Runner.Name != "local" || d.Runner.Why != why {
		t.Errorf("%d ready=%v runner %+v, want 200, ready, local and why; body:\n%s", code, *d.Ready, d.Runner, body)
	}
}

// TestReadyzStuckDatabase: another program holds the write lock for longer
// than SQLite waits (10 s): /readyz still answers within its budget, 503,
// and a second request runs no second probe beside the stuck one.
func TestReadyzStuckDatabase(t *testing.T) {
	st := openStore(t)
	holder, err := sql.Open("sqlite3", "file:"+st.Path()+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	tx, err := holder.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck
	if _, err := tx.Exec("PRAGMA application_id = 7"); err != nil {
		t.Fatal(err)
	}
	probes := &countingProber{st: st}
	srv := serve(t, New(Config{Adapters: []Conn{connected("console")}, Sessions: stubSessions{},
		DB: probes, CheckCLI: cliAt(fakeCLI(t, claudeproc.TestedVersion.String()))}))
	for range 2 {
		start := time.Now()
		code, body := get(t, srv, "/readyz")
		// Without the bound the probe waits out SQLite's 10 s busy timeout.
		if took := time.Since(start); code != http.StatusServiceUnavailable || took >= 9*time.Second ||
			!strings.Contains(string(body), "database not writable") {
			t.Fatalf("%d after %s:\n%s", code, took, body)
		}
	}
	if n := probes.started.Load(); n != 1 {
		t.Errorf("%d write probes started, want the one still stuck", n)
	}
}

type countingProber struct {
	st      *store.Store
	started atomic.Int32
}

func (c *countingProber) ProbeWrite(ctx context.Context) error {
	c.started.Add(1)
	return c.st.ProbeWrite(ctx)
}

// TestReadyzRechecksCLI: the CLI is checked again once a minute, not on
// every request: a CLI removed shows as not found after the minute, and a
// CLI put back shows again after the next.
func TestReadyzRechecksCLI(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	bin := fakeCLI(t, claudeproc.TestedVersion.String())
	script, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var checks atomic.Int32
	check := cliAt(bin)
	h := New(Config{Adapters: []Conn{connected("console")}, Sessions: stubSessions{}, DB: openStore(t),
		CheckCLI: func(ctx context.Context) (claudeproc.VersionInfo, error) { checks.Add(1); return check(ctx) }, Now: clock})
	info, err := claudeproc.CheckVersion(t.Context(), bin)
	if err != nil {
		t.Fatal(err)
	}
	h.SeedCLI(info)
	srv := serve(t, h)
	status := func() (int, readyDoc) { return readyz(t, srv) }
	if code, d := status(); code != http.StatusOK || d.CLI.Path != bin || checks.Load() != 0 {
		t.Fatalf("seeded: %d %+v, %d checks", code, d.CLI, checks.Load())
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	advance(30 * time.Second)
	if code, d := status(); code != http.StatusOK || !d.CLI.Found || checks.Load() != 0 {
		t.Errorf("within the minute: %d %+v, %d checks", code, d.CLI, checks.Load())
	}
	advance(31 * time.Second)
	code, d := status()
	if code != http.StatusServiceUnavailable || d.CLI.Found || checks.Load() != 1 || !d.CLI.CheckedAt.Equal(now) {
		t.Errorf("after the minute, the CLI gone: %d %+v, %d checks", code, d.CLI, checks.Load())
	}
	if err := os.WriteFile(bin, script, 0o755); err != nil {
		t.Fatal(err)
	}
	advance(time.Minute)
	if code, d := status(); code != http.StatusOK || !d.CLI.Found || checks.Load() != 2 {
		t.Errorf("the CLI back: %d %+v, %d checks", code, d.CLI, checks.Load())
	}
}

// TestHealthzAndShutdown: /healthz says alive with the version and uptime;
// once shutdown begins both endpoints answer 503 and say so.
func TestHealthzAndShutdown(t *testing.T) {
	h := New(Config{Version: "v1.2.3", Adapters: []Conn{connected("console")}, Sessions: stubSessions{},
		DB: openStore(t), CheckCLI: cliAt(fakeCLI(t, claudeproc.TestedVersion.String()))})
	srv := serve(t, h)
	var alive struct {
		Status  string
		Version string
		Uptime  *int64 `json:"uptime_seconds"`
	}
	code, body := get(t, srv, "/healthz")
	if err := json.Unmarshal(body, &alive); err != nil || code != http.StatusOK || alive.Status != "alive" || alive.Version != "v1.2.3" || alive.Uptime == nil {
		t.Errorf("/healthz: %d %s (%v)", code, body, err)
	}
	if code, body := get(t, srv, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz before shutdown: %d %s", code, body)
	}
	h.BeginShutdown()
	code, body = get(t, srv, "/healthz")
	if err := json.Unmarshal(body, &alive); err != nil || code != http.StatusServiceUnavailable || alive.Status != "shutting down" {
		t.Errorf("/healthz in shutdown: %d %s", code, body)
	}
	code, body = get(t, srv, "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(string(body), `"shutting down"`) {
		t.Errorf("/readyz in shutdown: %d %s", code, body)
	}
}

// TestReadyzShowsNoSecret: hostile: an adapter's error and the database's
// error carry the tokens and the database's path (as a careless library
// might put them); the body holds none of them.
func TestReadyzShowsNoSecret(t *testing.T) {
	const bot, app, pw = "xoxb-1111-secret-bot", "xapp-2222-secret-app", "hunter2-matrix-pw"
	dbPath := filepath.Join(t.TempDir(), "state", "claudeops.db")
	leaky := stubConn{"slack", adapters.ConnStatus{State: adapters.Disconnected, Since: time.Now(),
		LastError: "dial wss://x/?token=" + bot + "&app=" + app + " user:" + pw, LastErrorAt: time.Now()}}
	db := failingProber{"unable to open " + dbPath + " with " + pw}
	srv := serve(t, New(Config{Adapters: []Conn{leaky}, Sessions: stubSessions{}, DB: db,
		CheckCLI: cliAt(fakeCLI(t, claudeproc.TestedVersion.String())), Secrets: []string{bot, app, pw, dbPath}}))
	for _, path := range []string{"/readyz", "/healthz"} {
		_, body := get(t, srv, path)
		for _, s := range []string{bot, app, pw, dbPath, "secret", "hunter2"} {
			if strings.Contains(string(body), s) {
				t.Errorf("%s shows %q:\n%s", path, s, body)
			}
		}
	}
	if _, body := get(t, srv, "/readyz"); !strings.Contains(string(body), "[redacted]") {
		t.Errorf("the errors should still be shown, redacted:\n%s", body)
	}
}

type failingProber struct{ msg string }

func (f failingProber) ProbeWrite(context.Context) error { return errorString(f.msg) }

type errorString string

func (e errorString) Error() string { return string(e) }

// TestReadyzIntegrity: the database's pages, checked by SQLite's own
// quick_check on a real file: sound is ready; damaged under a running
// bot, the cached result serves until a storage fault asks again
// (RecheckIntegrity), then /readyz is 503 naming the damage and the way to
// restore.
func TestReadyzIntegrity(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	dbdamage.Filled(t, path)
	var checks atomic.Int32
	h := New(Config{Version: "v-test", Adapters: []Conn{connected("console")}, Sessions: stubSessions{}, DB: openStore(t),
		CheckCLI: cliAt(fakeCLI(t, claudeproc.TestedVersion.String())), Secrets: []string{path},
		Integrity: func(ctx context.Context) error {
			checks.Add(1)
			return store.CheckFile(ctx, path, false)
		}})
	srv := serve(t, h)
	read := func() (int, readyDoc) { return readyz(t, srv) }
	if code, _ := read(); code != http.StatusOK || checks.Load() != 1 {
		t.Fatalf("sound: %d after %d checks", code, checks.Load())
	}
	dbdamage.Interior(t, path, "rows")
	if code, _ := read(); code != http.StatusOK || checks.Load() != 1 {
		t.Errorf("the result serves its time: %d after %d checks", code, checks.Load())
	}
	h.RecheckIntegrity()
	code, d := read()
	if code != http.StatusServiceUnavailable || len(d.Reasons) != 1 || !strings.HasPrefix(d.Reasons[0], "database damaged: ") ||
		!strings.Contains(d.Reasons[0], "quick_check says") || !strings.Contains(d.Reasons[0], "claudeops restore") {
		t.Errorf("damaged: %d %q", code, d.Reasons)
	}
	if strings.Contains(d.Reasons[0], path) {
		t.Errorf("the reason shows a path: %q", d.Reasons[0])
	}
}
