package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/claudeproc"
)

// The operational endpoints, served on CLAUDEOPS_HTTP_ADDR:
//
//   - GET /healthz (liveness): 200 {"status":"alive",…} while the process
//     serves, 503 {"status":"shutting down",…} once shutdown has begun.
//     It checks nothing else: a liveness probe must not restart a bot
//     whose platform is down.
//   - GET /readyz (readiness): 200 with "ready": true when every adapter
//     is connected, the database takes a write and the claude CLI is found
//     and not incompatible; else 503 with every reason in "reasons". It
//     also shows the live and queued sessions.
//
// Every check is bounded (readyBudget) and runs at most once at a time, so
// a stuck database cannot hang the endpoint nor pile up probes. The bodies
// hold no secret: no token, no database path; errors pass through redact.

// Bounds and rates of the checks.
const (
	readyBudget   = 3 * time.Second  // the most /readyz waits for its checks
	dbProbeLimit  = 2 * time.Second  // one write probe
	dbProbeFresh  = 2 * time.Second  // a write probe's result serves this long
	cliRecheck    = time.Minute      // the CLI is checked again at most this often
	cliCheckLimit = 30 * time.Second // one CLI check (the docker runner starts a container)
)

// connAdapter is an adapter that reports its link (adapters.ConnReporter).
type connAdapter interface {
	Name() string
	adapters.ConnReporter
}

// sessionCounter is what readiness shows of the bot (bot.Bot).
type sessionCounter interface {
	LiveSessions() int
	QueuedSessions() int
}

// writeProber is the database's write check (store.Store).
type writeProber interface {
	ProbeWrite(ctx context.Context) error
}

// cliResult is one check of the claude CLI: err is non-nil (wrapping
// claudeproc.ErrNotFound or ErrIncompatible) when sessions cannot run it.
type cliResult struct {
	info claudeproc.VersionInfo
	err  error
}

// healthConfig is what the endpoints look at.
type healthConfig struct {
	Version  string
	Adapters []connAdapter
	Sessions sessionCounter
	DB       writeProber
	CheckCLI func(context.Context) cliResult
	// CLIRecheck and CLICheckLimit, when set, replace cliRecheck and
	// cliCheckLimit: a check that starts a Pod is made less often, and
	// given longer.
	CLIRecheck, CLICheckLimit time.Duration
	// Secrets are values no body may show (tokens, passwords, the
	// database's path); any found in an error's text is replaced.
	Secrets []string
	Now     func() time.Time
}

// health answers /healthz and /readyz. Make it with newHealth; stop its
// checks with beginShutdown.
type health struct {
	cfg      healthConfig
	started  time.Time
	redactor *strings.Replacer
	db       *probe[error]
	cli      *probe[cliResult]
	stopping atomic.Bool
	cancel   context.CancelFunc // ends the checks in flight
}

func newHealth(c healthConfig) *health {
	if c.Now == nil {
		c.Now = time.Now
	}
	base, cancel := context.WithCancel(context.Background())
	var pairs []string
	for _, s := range c.Secrets {
		if s != "" {
			pairs = append(pairs, s, "[redacted]")
		}
	}
	return &health{
		cfg: c, started: c.Now(), redactor: strings.NewReplacer(pairs...), cancel: cancel,
		db: &probe[error]{check: c.DB.ProbeWrite, fresh: dbProbeFresh, limit: dbProbeLimit, now: c.Now, base: base},
		cli: &probe[cliResult]{check: c.CheckCLI, fresh: cmp.Or(c.CLIRecheck, cliRecheck),
			limit: cmp.Or(c.CLICheckLimit, cliCheckLimit), now: c.Now, base: base},
	}
}

// register adds the endpoints to mux.
func (h *health) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", h.serveAlive)
	mux.HandleFunc("GET /readyz", h.serveReady)
}

// seedCLI takes the start's check of the CLI as the first result: the
// local CLI's, or for the docker and kubernetes runners the image's (a
// zero info seeds nothing).
func (h *health) seedCLI(info claudeproc.VersionInfo) {
	if h != nil && info.Bin != "" {
		h.cli.seed(cliResult{info: info}, h.started)
	}
}

// beginShutdown turns both endpoints to 503 and ends the checks in flight.
// Safe on a nil health (no CLAUDEOPS_HTTP_ADDR).
func (h *health) beginShutdown() {
	if h == nil {
		return
	}
	h.stopping.Store(true)
	h.cancel()
}

// redact hides the secrets in s.
func (h *health) redact(s string) string { return h.redactor.Replace(s) }

type aliveReport struct {
	Status        string    `json:"status"` // alive, shutting down
	Version       string    `json:"version"`
	StartedAt     time.Time `json:"started_at"`
	UptimeSeconds int64     `json:"uptime_seconds"`
}

func (h *health) serveAlive(w http.ResponseWriter, r *http.Request) {
	rep := aliveReport{Status: "alive", Version: h.cfg.Version, StartedAt: h.started.UTC(),
		UptimeSeconds: int64(h.cfg.Now().Sub(h.started) / time.Second)}
	code := http.StatusOK
	if h.stopping.Load() {
		rep.Status, code = "shutting down", http.StatusServiceUnavailable
	}
	writeJSON(w, code, rep)
}

// readyReport is /readyz's body; "ready" and the status code agree.
type readyReport struct {
	Ready     bool            `json:"ready"`
	Reasons   []string        `json:"reasons"` // why not; [] when ready
	Version   string          `json:"version"`
	CheckedAt time.Time       `json:"checked_at"`
	Adapters  []adapterReport `json:"adapters"`
	Database  dbReport        `json:"database"`
	CLI       cliReport       `json:"cli"`
	Sessions  sessionsReport  `json:"sessions"`
}

type adapterReport struct {
	Name        string    `json:"name"`
	State       string    `json:"state"` // connecting, connected, disconnected
	Since       time.Time `json:"since"`
	Via         string    `json:"via"`
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
}

type dbReport struct {
	Writable  bool      `json:"writable"`
	CheckedAt time.Time `json:"checked_at,omitzero"`
	Error     string    `json:"error,omitempty"`
}

type cliReport struct {
	Found     bool      `json:"found"`
	Path      string    `json:"path,omitempty"`
	Version   string    `json:"version,omitempty"`
	Level     string    `json:"level,omitempty"` // claudeproc's Level.String()
	CheckedAt time.Time `json:"checked_at,omitzero"`
	Message   string    `json:"message,omitempty"`
}

type sessionsReport struct {
	Live   int `json:"live"`
	Queued int `json:"queued"`
}

func (h *health) serveReady(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyBudget)
	defer cancel()
	rep := h.ready(ctx)
	code := http.StatusOK
	if !rep.Ready {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, rep)
}

// ready runs the checks (the database and the CLI at once) and says what
// stands in the way, every reason.
func (h *health) ready(ctx context.Context) readyReport {
	rep := readyReport{Version: h.cfg.Version, CheckedAt: h.cfg.Now().UTC(), Reasons: []string{}}
	var (
		wg            sync.WaitGroup
		db            dbReport
		cli           cliReport
		dbWhy, cliWhy string
	)
	wg.Go(func() { db, dbWhy = h.checkDB(ctx) })
	wg.Go(func() { cli, cliWhy = h.checkCLI(ctx) })
	if h.stopping.Load() {
		rep.Reasons = append(rep.Reasons, "shutting down")
	}
	for _, a := range h.cfg.Adapters {
		ar, why := h.adapter(a)
		rep.Adapters = append(rep.Adapters, ar)
		if why != "" {
			rep.Reasons = append(rep.Reasons, why)
		}
	}
	rep.Sessions = sessionsReport{Live: h.cfg.Sessions.LiveSessions(), Queued: h.cfg.Sessions.QueuedSessions()}
	wg.Wait()
	rep.Database, rep.CLI = db, cli
	for _, why := range []string{dbWhy, cliWhy} {
		if why != "" {
			rep.Reasons = append(rep.Reasons, why)
		}
	}
	rep.Ready = len(rep.Reasons) == 0
	return rep
}

// adapter reports one adapter's link, and why it is not ready ("" when
// connected).
func (h *health) adapter(a connAdapter) (adapterReport, string) {
	st := a.ConnStatus()
	ar := adapterReport{Name: a.Name(), State: string(st.State), Since: st.Since.UTC(), Via: st.Via,
		LastError: h.redact(st.LastError), LastErrorAt: st.LastErrorAt.UTC()}
	if st.State == adapters.Connected {
		return ar, ""
	}
	why := fmt.Sprintf("%s adapter %s since %s", ar.Name, ar.State, ar.Since.Format(time.RFC3339))
	if ar.LastError != "" {
		why += ": " + ar.LastError
	}
	return ar, why
}

// checkDB probes a write; a probe that does not answer within ctx counts
// as a failure (its run goes on, alone).
func (h *health) checkDB(ctx context.Context) (dbReport, string) {
	err, at, ok := h.db.get(ctx)
	rep := dbReport{CheckedAt: at.UTC()}
	switch {
	case !ok:
		rep.CheckedAt = h.cfg.Now().UTC()
		rep.Error = fmt.Sprintf("the write probe did not finish within %s", readyBudget)
	case err != nil:
		rep.Error = h.redact(err.Error())
	default:
		rep.Writable = true
		return rep, ""
	}
	return rep, "database not writable: " + rep.Error
}

// checkCLI reports the CLI's latest check (again at most once a minute;
// one still running when ctx ends leaves the previous result).
func (h *health) checkCLI(ctx context.Context) (cliReport, string) {
	res, at, _ := h.cli.get(ctx)
	if at.IsZero() {
		return cliReport{}, "claude CLI not checked yet"
	}
	info := res.info
	rep := cliReport{Found: !errors.Is(res.err, claudeproc.ErrNotFound), Path: info.Bin, Level: info.Level.String(),
		CheckedAt: at.UTC(), Message: h.redact(info.Message)}
	if info.Version != (claudeproc.Version{}) {
		rep.Version = info.Version.String()
	}
	if res.err == nil {
		return rep, ""
	}
	why := rep.Message
	if why == "" {
		why = h.redact(res.err.Error())
	}
	return rep, why
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away
}
