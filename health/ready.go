package health

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/claudeproc"
)

// readyReport is /readyz's body; "ready" and the status code agree.
type readyReport struct {
	Ready     bool            `json:"ready"`
	Reasons   []string        `json:"reasons"` // why not; [] when ready
	Version   string          `json:"version"`
	CheckedAt time.Time       `json:"checked_at"`
	Adapters  []adapterReport `json:"adapters"`
	Database  dbReport        `json:"database"`
	CLI       cliReport       `json:"cli"`
	Runner    Runner          `json:"runner"`
	Sessions  sessionsReport  `json:"sessions"`
	// SettingsFile is omitted without one.
	SettingsFile *SettingsFile `json:"settings_file,omitempty"`
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
	// Integrity is the latest check of the file's pages: "ok", or what it
	// found; IntegrityCheckedAt when it ran.
	Integrity          string    `json:"integrity,omitempty"`
	IntegrityCheckedAt time.Time `json:"integrity_checked_at,omitzero"`
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

func (h *Health) serveReady(w http.ResponseWriter, r *http.Request) {
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
func (h *Health) ready(ctx context.Context) readyReport {
	rep := readyReport{Version: h.cfg.Version, CheckedAt: h.cfg.Now().UTC(), Reasons: []string{},
		Runner: Runner{Name: h.cfg.Runner.Name, Why: h.redact(h.cfg.Runner.Why)}}
	var (
		wg            sync.WaitGroup
		db            dbReport
		cli           cliReport
		dbWhy, cliWhy string
	)
	var intactWhy string
	wg.Go(func() {
		db, dbWhy = h.checkDB(ctx)
		intactWhy = h.checkIntegrity(ctx, &db)
	})
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
	if h.cfg.SettingsFile != nil {
		sf := h.cfg.SettingsFile()
		sf.Since, sf.RefusedAt, sf.Refused = sf.Since.UTC(), sf.RefusedAt.UTC(), h.redact(sf.Refused)
		rep.SettingsFile = &sf
	}
	wg.Wait()
	rep.Database, rep.CLI = db, cli
	for _, why := range []string{dbWhy, intactWhy, cliWhy} {
		if why != "" {
			rep.Reasons = append(rep.Reasons, why)
		}
	}
	rep.Ready = len(rep.Reasons) == 0
	return rep
}

// adapter reports one adapter's link, and why it is not ready ("" when
// connected).
func (h *Health) adapter(a Conn) (adapterReport, string) {
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
func (h *Health) checkDB(ctx context.Context) (dbReport, string) {
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

// checkIntegrity adds the latest check of the database's pages to rep,
// and says why it stands in the way ("" when sound). A check that runs
// past ctx leaves the previous result.
func (h *Health) checkIntegrity(ctx context.Context, rep *dbReport) string {
	if h.intact == nil {
		return ""
	}
	err, at, _ := h.intact.get(ctx)
	if at.IsZero() {
		return ""
	}
	rep.IntegrityCheckedAt = at.UTC()
	if err == nil {
		rep.Integrity = "ok"
		return ""
	}
	rep.Integrity = h.redact(err.Error())
	return "database damaged: " + rep.Integrity + " (restore from a backup: claudeops restore)"
}

// checkCLI reports the CLI's latest check (again at most once a minute;
// one still running when ctx ends leaves the previous result).
func (h *Health) checkCLI(ctx context.Context) (cliReport, string) {
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
