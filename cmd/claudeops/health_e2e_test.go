package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/dendrite"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
	"github.com/claudeops/claudeops/store"
)

// End to end through the built bot (the test binary re-executed as main):
// /healthz and /readyz as an orchestrator reads them, after real turns
// with the real CLI, while the platform goes away and comes back.

// readyDoc is /readyz's body as a client reads it.
type readyDoc struct {
	Ready    *bool    `json:"ready"`
	Reasons  []string `json:"reasons"`
	Adapters []struct {
		Name, State, Via string
		LastError        string `json:"last_error"`
	} `json:"adapters"`
	Database struct{ Writable bool } `json:"database"`
	CLI      struct {
		Found                bool
		Path, Version, Level string
	} `json:"cli"`
	Sessions struct{ Live, Queued int } `json:"sessions"`
	Runner   struct{ Name, Why string } `json:"runner"`
	// SettingsFile is absent without CLAUDEOPS_SETTINGS_FILE.
	SettingsFile *struct {
		InUse   string `json:"in_use_sha256"`
		Refused string `json:"refused"`
	} `json:"settings_file"`
}

// opsView reads a running bot's endpoints and keeps every body it got,
// for the secrets check at the end.
type opsView struct {
	t      *testing.T
	addr   string
	log    func() string // the bot's log, for failures
	mu     sync.Mutex
	bodies []string
}

func newOpsView(t *testing.T, log func() string) *opsView {
	return &opsView{t: t, addr: httpAddr(t, log), log: log}
}

func (o *opsView) get(path string) (int, []byte) {
	o.t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get("http://" + o.addr + path)
	if err != nil {
		o.t.Fatalf("GET %s: %v; log:\n%s", path, err, o.log())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		o.t.Fatal(err)
	}
	o.mu.Lock()
	o.bodies = append(o.bodies, string(body))
	o.mu.Unlock()
	return resp.StatusCode, body
}

// ready reads /readyz: its "ready" must agree with the status code.
func (o *opsView) ready() (int, readyDoc) {
	o.t.Helper()
	code, body := o.get("/readyz")
	var d readyDoc
	if err := json.Unmarshal(body, &d); err != nil || d.Ready == nil || *d.Ready != (code == http.StatusOK) {
		o.t.Fatalf("/readyz answered %d %s (%v): want JSON whose \"ready\" agrees with the status", code, body, err)
	}
	return code, d
}

// waitReady polls /readyz until cond holds of its answer.
func (o *opsView) waitReady(what string, cond func(d readyDoc) bool) readyDoc {
	o.t.Helper()
	var last readyDoc
	testkit.WaitForf(o.t, 90*time.Second, func() bool {
		_, last = o.ready()
		return cond(last)
	}, func() string {
		js, _ := json.MarshalIndent(last, "", "  ")
		return "/readyz never showed " + what + "; last:\n" + string(js) + "\nlog:\n" + o.log()
	})
	return last
}

// noSecrets: no body the bot served holds any of secrets.
func (o *opsView) noSecrets(secrets ...string) {
	o.t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, b := range o.bodies {
		for _, s := range secrets {
			if s != "" && strings.Contains(b, s) {
				o.t.Errorf("an endpoint showed the secret %q:\n%s", s, b)
			}
		}
	}
}

func reasons(d readyDoc) string { return strings.Join(d.Reasons, "\n") }

// TestReadyzSlack: on a fake Slack over Socket Mode, after a real turn
// /readyz is 200 with the live session, the CLI's own version and level
// and the adapter connected; when Slack's sockets go (dropped, new ones
// refused) it is 503 naming the adapter, and 200 again once the adapter
// has reconnected. /healthz is alive throughout. No body shows a token,
// the model API's key or the state's place.
func TestReadyzSlack(t *testing.T) {
	bin := testcli.Bin(t)
	fs := fakeslack.Start(t, fakeslack.Options{}) // not Strict: the outage makes slack-go retry apps.connections.open fast
	api := fakeanthropic.Start(t, fakeanthropic.ChatScript(nil))
	home, work, state := t.TempDir(), t.TempDir(), t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=sk-test-readyz-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"CLAUDEOPS_STATE_DIR=" + state, "CLAUDEOPS_CLAUDE_BIN=" + bin, "CLAUDEOPS_WORKDIR=" + work,
		"SLACK_API_URL=" + fs.URL + "/api/", "SLACK_BOT_TOKEN=" + fs.Opts.BotToken, "SLACK_APP_TOKEN=" + fs.Opts.AppToken,
		"CLAUDEOPS_ALLOWED_USERS=U0ALICE001", "CLAUDEOPS_HTTP_ADDR=127.0.0.1:0",
	}
	env = append(env, testrunner.Env(t, home)...)
	const general, alice, mention = "C0GENERAL1", "U0ALICE001", "<@U0FAKEBOT1> "
	b := startSlackBot(t, env)
	o := newOpsView(t, b.stderr.String)

	root := fs.Post(alice, general, mention+"hello there")
	for _, pattern := range []string{`ok: hello there`, `✓ .* turns?$`} {
		re := regexp.MustCompile(pattern)
		if !fs.WaitFor(90*time.Second, func() bool {
			for _, m := range fs.Thread(general, root) {
				if m.BotID != "" && re.MatchString(m.VisibleText()) {
					return true
				}
			}
			return false
		}) {
			t.Fatalf("no bot message matching %q; the bot's log:\n%s", pattern, b.stderr.String())
		}
	}
	// The oracle for the CLI is the CLI itself.
	want := testcli.BinVersion(t, bin)
	v, err := claudeproc.ParseVersion(want)
	if err != nil {
		t.Fatal(err)
	}
	d := o.waitReady("the turn's session live", func(d readyDoc) bool { return *d.Ready && d.Sessions.Live == 1 })
	if !d.CLI.Found || d.CLI.Path != bin || d.CLI.Version != want || d.CLI.Level != claudeproc.Classify(v).String() {
		t.Errorf("cli %+v, want %s at %s", d.CLI, want, bin)
	}
	if len(d.Adapters) != 1 || d.Adapters[0].Name != "slack" || d.Adapters[0].State != "connected" ||
		d.Adapters[0].Via != "socket mode" || !d.Database.Writable || d.Sessions.Queued != 0 {
		t.Errorf("adapters %+v, database %+v, sessions %+v", d.Adapters, d.Database, d.Sessions)
	}

	fs.SetOffline(true)
	// First connecting (the socket dropped), then disconnected with the
	// refusal of the new socket.
	d = o.waitReady("503 naming slack, refused", func(d readyDoc) bool {
		return !*d.Ready && strings.Contains(reasons(d), "slack adapter disconnected") && d.Adapters[0].LastError != ""
	})
	if len(d.Reasons) != 1 || d.Adapters[0].State != "disconnected" || !d.Database.Writable || !d.CLI.Found {
		t.Errorf("during the outage: reasons %q, adapters %+v", d.Reasons, d.Adapters)
	}
	if code, body := o.get("/healthz"); code != http.StatusOK || !strings.Contains(string(body), `"status": "alive"`) {
		t.Errorf("/healthz during the outage: %d %s", code, body)
	}
	fs.SetOffline(false)
	d = o.waitReady("ready again", func(d readyDoc) bool { return *d.Ready })
	if d.Adapters[0].State != "connected" || d.Adapters[0].LastError == "" {
		t.Errorf("after the outage: %+v (the outage's error should stay shown)", d.Adapters[0])
	}
	b.stop(t)
	o.noSecrets(fs.Opts.BotToken, fs.Opts.AppToken, fs.Opts.SigningSecret, "sk-test-readyz-key", state)
}

// TestReadyzConsoleQueue: the console with one session slot: a thread
// waiting on an approval holds it, a second thread's message waits;
// /readyz shows one live and one queued, still ready (a queue is load,
// not a fault), the console connected; once the first is decided the
// second runs and the queue is empty.
func TestReadyzConsoleQueue(t *testing.T) {
	bin := testcli.Bin(t)
	api := fakeanthropic.Start(t, fakeanthropic.ChatScript(nil))
	home, work := t.TempDir(), t.TempDir()
	db := filepath.Join(t.TempDir(), "claudeops.db")
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=sk-test-readyz-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"CLAUDEOPS_DB=" + db, "CLAUDEOPS_CLAUDE_BIN=" + bin, "CLAUDEOPS_WORKDIR=" + work,
		"CLAUDEOPS_MAX_SESSIONS=1", "CLAUDEOPS_HTTP_ADDR=127.0.0.1:0",
	}
	env = append(env, testrunner.Env(t, home)...)
	b := startBotProc(t, env)
	o := newOpsView(t, func() string { return strings.Join(b.logLines(), "\n") })

	b.say("run touch a.txt")
	b.expect(`^\[main\] \? approval \w+: Bash`)
	b.say("/thread other")
	b.expect(`^\[other\] \* switched to thread other$`)
	b.say("hello other")
	d := o.waitReady("one live, one queued", func(d readyDoc) bool { return d.Sessions.Live == 1 && d.Sessions.Queued == 1 })
	if !*d.Ready || len(d.Adapters) != 1 || d.Adapters[0].Name != "console" || d.Adapters[0].State != "connected" || d.Adapters[0].Via != "terminal" {
		t.Errorf("with a queue: ready %v, reasons %q, adapters %+v", *d.Ready, d.Reasons, d.Adapters)
	}
	b.say("/thread main")
	b.say("deny")
	b.expect(`^\[other\] claude: ok: .*hello other$`)
	o.waitReady("the queue empty", func(d readyDoc) bool { return *d.Ready && d.Sessions.Live == 1 && d.Sessions.Queued == 0 })
	if err := b.endInput(90 * time.Second); err != nil {
		t.Errorf("bot exit: %v", err)
	}
	o.noSecrets("sk-test-readyz-key", db)
}

// TestReadyzMatrixOutage: Matrix on a real homeserver, reached through a
// proxy that the test cuts (open connections closed, new ones refused)
// and mends: /readyz is 200 with the sync connected, 503 naming the
// adapter while cut, 200 once the sync is back. The access token the bot
// got at its login (read from its database at the end) and its password
// are in no body.
func TestReadyzMatrixOutage(t *testing.T) {
	bin := testcli.Bin(t)
	srv := dendrite.Start(t)
	botUser := srv.Register(t, "claude")
	px := startCutProxy(t, srv.URL)
	api := fakeanthropic.Start(t, fakeanthropic.ChatScript(nil))
	state := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=sk-test-readyz-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"CLAUDEOPS_STATE_DIR=" + state, "CLAUDEOPS_CLAUDE_BIN=" + bin, "CLAUDEOPS_WORKDIR=" + t.TempDir(),
		"CLAUDEOPS_ALLOWED_USERS=@a*:" + srv.ServerName, "CLAUDEOPS_HTTP_ADDR=127.0.0.1:0",
		"MATRIX_HOMESERVER=" + px.URL, "MATRIX_USER_ID=" + botUser.ID.String(), "MATRIX_PASSWORD=" + botUser.Password,
	}
	env = append(env, testrunner.Env(t, t.TempDir())...)
	b := startSlackBot(t, env) // any platform: the built bot, its log kept
	o := newOpsView(t, b.stderr.String)

	d := o.waitReady("ready", func(d readyDoc) bool { return *d.Ready })
	if len(d.Adapters) != 1 || d.Adapters[0].Name != "matrix" || d.Adapters[0].Via != "sync" {
		t.Errorf("adapters %+v", d.Adapters)
	}
	px.setDown(true)
	d = o.waitReady("503 naming matrix", func(d readyDoc) bool { return !*d.Ready && strings.Contains(reasons(d), "matrix adapter disconnected") })
	if d.Adapters[0].LastError == "" || len(d.Reasons) != 1 {
		t.Errorf("while cut: reasons %q, adapters %+v", d.Reasons, d.Adapters)
	}
	px.setDown(false)
	o.waitReady("ready again", func(d readyDoc) bool { return *d.Ready && d.Adapters[0].State == "connected" })
	b.stop(t)

	st, err := store.Open(context.Background(), filepath.Join(state, "claudeops.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acct, ok, err := st.ChatAccount(context.Background(), "matrix", botUser.ID.String())
	if err != nil || !ok || acct.AccessToken == "" {
		t.Fatalf("the bot's login: %+v %v %v", acct, ok, err)
	}
	o.noSecrets(acct.AccessToken, botUser.Password, "sk-test-readyz-key", state)
}

// cutProxy forwards TCP to a server until it is set down: then it closes
// the connections it holds and every new one at once, as a network path
// that fails; set up again, it forwards anew.
type cutProxy struct {
	URL    string
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{URL: u.Scheme + "://" + ln.Addr().String(), ln: ln, target: u.Host, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.setDown(true)
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			c.Close()
			continue
		}
		p.wg.Add(1)
		go p.pipe(c)
	}
}

// track adds c to what a cut closes; false when the proxy is down.
func (p *cutProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return false
	}
	p.conns[c] = true
	return true
}

func (p *cutProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *cutProxy) pipe(c net.Conn) {
	defer p.wg.Done()
	defer p.untrack(c)
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(up) {
		up.Close()
		return
	}
	defer p.untrack(up)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	<-done
}

func (p *cutProxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			c.Close()
		}
	}
}
