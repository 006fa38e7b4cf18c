package health

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/claudeproc"
)

// Bounds and rates of the checks.
const (
	readyBudget   = 3 * time.Second  // the most /readyz waits for its checks
	dbProbeLimit  = 2 * time.Second  // one write probe
	dbProbeFresh  = 2 * time.Second  // a write probe's result serves this long
	cliRecheck    = time.Minute      // the CLI is checked again at most this often
	cliCheckLimit = 30 * time.Second // one CLI check (the docker runner starts a container)
	// The database's integrity: a quick_check reads every page, so its
	// result serves this long unless a storage fault asks again.
	integrityEvery = 10 * time.Minute
	integrityLimit = time.Minute
)

// Conn is an adapter that reports its link (adapters.ConnReporter): not
// connected, the bot is not ready.
type Conn interface {
	Name() string
	adapters.ConnReporter
}

// Sessions is what readiness shows of the bot (bot.Bot); it does not
// decide readiness.
type Sessions interface {
	LiveSessions() int
	QueuedSessions() int
}

// WriteProber is the database's write check (store.Store): a nil error
// when a write would be taken now. It may block; it is given a deadline.
type WriteProber interface {
	ProbeWrite(ctx context.Context) error
}

// Config is what the endpoints look at.
type Config struct {
	Version  string
	Adapters []Conn
	Sessions Sessions
	DB       WriteProber
	// Integrity checks the database file's pages (store's quick_check): a
	// nil error when sound. It reads the whole file, so it runs at most
	// every IntegrityEvery (10 minutes when 0), or at once after
	// RecheckIntegrity; nil checks nothing.
	Integrity      func(context.Context) error
	IntegrityEvery time.Duration
	// CheckCLI checks the CLI sessions run, as claudeproc.CheckVersion
	// does: the error (wrapping claudeproc.ErrNotFound or
	// ErrIncompatible) says sessions cannot run it.
	CheckCLI func(context.Context) (claudeproc.VersionInfo, error)
	// CLIRecheck and CLICheckLimit, when set, replace cliRecheck and
	// cliCheckLimit: a check that starts a Pod is made less often, and
	// given longer.
	CLIRecheck, CLICheckLimit time.Duration
	// Runner names the runner sessions run in and why it was chosen; it
	// is shown, it does not decide readiness (local is a choice, not a
	// fault).
	Runner Runner
	// SettingsFile, when set, says which settings file is in use and why
	// the one on disk was refused, if it was; shown, it does not decide
	// readiness: the bot works on the last good file.
	SettingsFile func() SettingsFile
	// Secrets are values no body may show (tokens, passwords, the
	// database's path); any found in an error's text is replaced.
	Secrets []string
	Now     func() time.Time
}

// Runner is the runner in use: its CLAUDEOPS_RUNNER name, and how it was
// chosen (set, or the default and why).
type Runner struct {
	Name string `json:"name"`
	Why  string `json:"why"`
}

// SettingsFile is the settings file's state (CLAUDEOPS_SETTINGS_FILE).
type SettingsFile struct {
	// InUse is the SHA-256 (hex) of the content whose settings apply, and
	// Since when it was put in place.
	InUse string    `json:"in_use_sha256"`
	Since time.Time `json:"since"`
	// Refused is why the file on disk is not the one in use ("" when it
	// is), RefusedAt when that was found.
	Refused   string    `json:"refused,omitempty"`
	RefusedAt time.Time `json:"refused_at,omitzero"`
}

// cliResult is one check of the claude CLI.
type cliResult struct {
	info claudeproc.VersionInfo
	err  error
}

// Health answers /healthz and /readyz. Make it with New; stop its checks
// with BeginShutdown. A nil *Health (no HTTP address) takes SeedCLI and
// BeginShutdown as no-ops.
type Health struct {
	cfg      Config
	started  time.Time
	redactor *strings.Replacer
	db       *probe[error]
	intact   *probe[error] // nil without Config.Integrity
	cli      *probe[cliResult]
	stopping atomic.Bool
	cancel   context.CancelFunc // ends the checks in flight
}

// New makes the endpoints' view of c; nothing is checked until asked.
func New(c Config) *Health {
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
	checkCLI := func(ctx context.Context) cliResult {
		info, err := c.CheckCLI(ctx)
		return cliResult{info: info, err: err}
	}
	h := &Health{
		cfg: c, started: c.Now(), redactor: strings.NewReplacer(pairs...), cancel: cancel,
		db: &probe[error]{check: c.DB.ProbeWrite, fresh: dbProbeFresh, limit: dbProbeLimit, now: c.Now, base: base},
		cli: &probe[cliResult]{check: checkCLI, fresh: cmp.Or(c.CLIRecheck, cliRecheck),
			limit: cmp.Or(c.CLICheckLimit, cliCheckLimit), now: c.Now, base: base},
	}
	if c.Integrity != nil {
		h.intact = &probe[error]{check: c.Integrity, fresh: cmp.Or(c.IntegrityEvery, integrityEvery),
			limit: integrityLimit, now: c.Now, base: base}
	}
	return h
}

// SeedIntegrity takes the start's check of the database as the first
// result (no second full read at the first probe).
func (h *Health) SeedIntegrity(err error) {
	if h != nil && h.intact != nil {
		h.intact.seed(err, h.started)
	}
}

// RecheckIntegrity makes the next /readyz check the database's pages
// again: a storage fault was met (store.Faults.OnFault).
func (h *Health) RecheckIntegrity() {
	if h != nil && h.intact != nil {
		h.intact.expire()
	}
}

// Register adds the endpoints to mux.
func (h *Health) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", h.serveAlive)
	mux.HandleFunc("GET /readyz", h.serveReady)
}

// SeedCLI takes the start's check of the CLI as the first result: the
// local CLI's, or for a runner whose CLI is an image's the image's (a zero
// info seeds nothing).
func (h *Health) SeedCLI(info claudeproc.VersionInfo) {
	if h != nil && info.Bin != "" {
		h.cli.seed(cliResult{info: info}, h.started)
	}
}

// BeginShutdown turns both endpoints to 503 and ends the checks in flight.
func (h *Health) BeginShutdown() {
	if h == nil {
		return
	}
	h.stopping.Store(true)
	h.cancel()
}

// redact hides the secrets in s.
func (h *Health) redact(s string) string { return h.redactor.Replace(s) }

type aliveReport struct {
	Status        string    `json:"status"` // alive, shutting down
	Version       string    `json:"version"`
	StartedAt     time.Time `json:"started_at"`
	UptimeSeconds int64     `json:"uptime_seconds"`
}

func (h *Health) serveAlive(w http.ResponseWriter, r *http.Request) {
	rep := aliveReport{Status: "alive", Version: h.cfg.Version, StartedAt: h.started.UTC(),
		UptimeSeconds: int64(h.cfg.Now().Sub(h.started) / time.Second)}
	code := http.StatusOK
	if h.stopping.Load() {
		rep.Status, code = "shutting down", http.StatusServiceUnavailable
	}
	writeJSON(w, code, rep)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away
}
