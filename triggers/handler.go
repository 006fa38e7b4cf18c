package triggers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/claudeops/claudeops/store"
)

// MaxBody caps a request's body.
const MaxBody = 1 << 20

// Records is where requests and runs are recorded; *store.Store is it.
// StartTriggerRun stores a run only while the trigger has started fewer
// than perHour in the hour before it, atomically.
type Records interface {
	TriggerDelivered(ctx context.Context, trigger, delivery string, at time.Time) (bool, error)
	CountTrigger(ctx context.Context, trigger, outcome string, n int64, at time.Time) error
	StartTriggerRun(ctx context.Context, r store.TriggerRun, perHour int) (int64, bool, error)
	EndTriggerRun(ctx context.Context, id int64, r store.TriggerRun) error
}

// Runner runs an accepted event: it opens a thread in f's channel (its
// first message f.Head), runs f.Prompt there unattended under the
// channel's settings and policy, and returns when the run's turn ends or
// ctx does (the turn is then stopped).
type Runner interface {
	RunTrigger(ctx context.Context, f Fire) (Ran, error)
}

// Observer is told each request's outcome, for metrics (cmd hands it
// the metrics); trigger is a configured trigger's name.
type Observer interface {
	TriggerRequest(trigger, outcome string)
}

type nopObserver struct{}

func (nopObserver) TriggerRequest(string, string) {}

// Ran is what a run came to.
type Ran struct {
	ThreadKey string
	CostUSD   float64
}

// Handler serves POST /triggers/{name}.
type Handler struct {
	byName map[string]*Trigger
	rec    Records
	run    Runner
	// reviews takes review triggers' events (review.go); nil: none.
	reviews Reviews
	obs     Observer
	log     *slog.Logger
	now     func() time.Time
	// base is the runs' context: they outlive their request.
	base context.Context
	runs sync.WaitGroup
	// counts are the requests' outcomes not yet in the store (Flush): a
	// flood of bad requests costs no write each.
	counts counts
}

// Config is what a Handler is made of.
type Config struct {
	Triggers []Trigger
	Records  Records
	Runner   Runner
	// Reviews takes the review triggers' events (nil when none is).
	Reviews Reviews
	// Observer is told the outcomes (nil: nobody).
	Observer Observer
	Log      *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// New makes the handler; runs started after ctx ends are not started.
func New(ctx context.Context, cfg Config) *Handler {
	h := &Handler{byName: map[string]*Trigger{}, rec: cfg.Records, run: cfg.Runner, reviews: cfg.Reviews, obs: cfg.Observer, log: cfg.Log, now: cfg.Now, base: ctx}
	if h.obs == nil {
		h.obs = nopObserver{}
	}
	for i := range cfg.Triggers {
		h.byName[cfg.Triggers[i].Name] = &cfg.Triggers[i]
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	return h
}

// Wait waits for the runs under way (their context ended: stopped), and
// stores the counts.
func (h *Handler) Wait() {
	h.runs.Wait()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(h.base), 5*time.Second)
	defer cancel()
	if err := h.Flush(ctx); err != nil {
		h.log.Warn("store the trigger requests' counts", "err", err)
	}
}

// Flush stores the requests' counts added since the last Flush (what
// `triggers` shows: cmd flushes before, and every second).
func (h *Handler) Flush(ctx context.Context) error {
	for k, c := range h.counts.take() {
		if err := h.rec.CountTrigger(ctx, k.trigger, k.outcome, c.n, c.last); err != nil {
			return err
		}
	}
	return nil
}

type countKey struct{ trigger, outcome string }

type count struct {
	n    int64
	last time.Time
}

// counts are outcomes counted in memory, bounded by the triggers and
// outcomes there are.
type counts struct {
	mu sync.Mutex
	m  map[countKey]count
}

func (c *counts) add(trigger, outcome string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[countKey]count{}
	}
	k := countKey{trigger, outcome}
	c.m[k] = count{n: c.m[k].n + 1, last: at}
}

func (c *counts) take() map[countKey]count {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.m
	c.m = nil
	return m
}

// Triggers are the configured triggers, in the file's order.
func (h *Handler) Triggers() []*Trigger {
	out := make([]*Trigger, 0, len(h.byName))
	for _, t := range h.byName {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Trigger) int { return a.Line - b.Line })
	return out
}

// answer is a request's outcome: what is recorded and what is said.
type answer struct {
	outcome string
	status  int
	text    string
}

var (
	tooLarge    = answer{"too_large", http.StatusRequestEntityTooLarge, "body over 1 MiB"}
	unsigned    = answer{"unauthorized", http.StatusUnauthorized, "bad or missing signature"}
	duplicate   = answer{"duplicate", http.StatusOK, "duplicate"}
	badBody     = answer{"bad_body", http.StatusBadRequest, "the body is not a JSON object"}
	ignored     = answer{"ignored", http.StatusOK, "ignored"}
	unbound     = answer{"unbound", http.StatusOK, "ignored: repository not bound"}
	rateLimited = answer{"rate_limited", http.StatusTooManyRequests, "over the trigger's rate"}
	failed      = answer{"error", http.StatusInternalServerError, "not recorded"}
	accepted    = answer{"accepted", http.StatusAccepted, "accepted"}
)

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t, ok := h.byName[r.PathValue("name")]
	if !ok {
		// Not recorded by name: the name is the sender's.
		h.log.Info("trigger request for no trigger", "remote", r.RemoteAddr)
		http.Error(w, "no such trigger", http.StatusNotFound)
		return
	}
	a := h.check(r.Context(), t, w, r)
	h.counts.add(t.Name, a.outcome, h.now())
	h.obs.TriggerRequest(t.Name, a.outcome)
	h.log.Info("trigger request", "trigger", t.Name, "outcome", a.outcome, "status", a.status)
	http.Error(w, a.text, a.status)
}

// check runs the checks in order and, for an event that passes them all,
// starts its run.
func (h *Handler) check(ctx context.Context, t *Trigger, w http.ResponseWriter, r *http.Request) answer {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return tooLarge
		}
		return badBody
	}
	if !t.verify(r, body) {
		return unsigned
	}
	now := h.now()
	delivery := t.delivery(r)
	if delivery != "" {
		fresh, err := h.rec.TriggerDelivered(ctx, t.Name, delivery, now)
		if err != nil {
			h.log.Error("store a trigger's delivery", "trigger", t.Name, "err", err)
			return failed
		}
		if !fresh {
			return duplicate
		}
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return badBody
	}
	event := t.event(r)
	if !t.takes(event, obj) {
		return ignored
	}
	if t.Kind != KindGeneric && !slices.Contains(t.Repos, repo(obj)) {
		return unbound
	}
	if t.Review {
		return h.routeReview(ctx, t, event, obj, delivery, now)
	}
	f, err := t.render(event, obj, delivery)
	if err != nil {
		h.log.Warn("trigger prompt", "trigger", t.Name, "err", err)
		return badBody
	}
	id, refused, ok := h.startRun(ctx, t, event, delivery, now)
	if !ok {
		return refused
	}
	h.start(id, f)
	return accepted
}

// startRun records a run of t if its rate lets it start (the store
// counts the hour's runs in the same statement); when not, ok is false
// and refused is the answer.
func (h *Handler) startRun(ctx context.Context, t *Trigger, event, delivery string, now time.Time) (id int64, refused answer, ok bool) {
	id, ok, err := h.rec.StartTriggerRun(ctx, store.TriggerRun{Trigger: t.Name, Delivery: delivery, Event: event, StartedAt: now}, t.PerHour)
	switch {
	case err != nil:
		h.log.Error("record a trigger run", "trigger", t.Name, "err", err)
		return 0, failed, false
	case !ok:
		return 0, rateLimited, false
	}
	return id, answer{}, true
}

// start runs f in the background and records its end.
func (h *Handler) start(id int64, f Fire) {
	h.runs.Add(1)
	go func() {
		defer h.runs.Done()
		ran, err := h.run.RunTrigger(h.base, f)
		end := store.TriggerRun{EndedAt: h.now(), Status: "ok", ThreadKey: ran.ThreadKey, CostUSD: ran.CostUSD}
		if err != nil {
			end.Status, end.Error = "failed", err.Error()
			h.log.Warn("trigger run", "trigger", f.Trigger, "err", err)
		}
		// The run's end is recorded even as the bot stops.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(h.base), 5*time.Second)
		defer cancel()
		if err := h.rec.EndTriggerRun(ctx, id, end); err != nil {
			h.log.Error("record a trigger run's end", "trigger", f.Trigger, "err", err)
			return
		}
		h.log.Info("trigger run ended", "trigger", f.Trigger, "status", end.Status, "thread", end.ThreadKey)
	}()
}
