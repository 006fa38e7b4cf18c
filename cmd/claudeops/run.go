package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/health"
	"github.com/claudeops/claudeops/metrics"
	"github.com/claudeops/claudeops/scheduler"
	"github.com/claudeops/claudeops/store"
)

// startBot checks what a run needs of the host (startChecks), reports
// every problem of the configuration at once, loadConfig's (cfgErr)
// included, and runs the bot when there is none.
func startBot(ctx context.Context, cfg config, cfgErr error, consoleOnly bool, log *slog.Logger, sig *stopper, stdin io.Reader, stdout, stderr io.Writer) int {
	// From the start of a run a SIGHUP never stops the bot: it rereads the
	// settings file once the bot runs (settingsfile.go).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	runnerWarning := cfg.Runner.choose(ctx)
	bad, info := startChecks(ctx, cfg, consoleOnly)
	var ce *configError
	switch {
	case errors.As(cfgErr, &ce):
		ce.problems = append(ce.problems, bad...)
		return reportConfig(stderr, ce)
	case cfgErr != nil:
		return reportConfig(stderr, cfgErr)
	case len(bad) > 0:
		return reportConfig(stderr, &configError{problems: bad, raw: cfg.raw})
	}
	if err := prepareStateDir(cfg.StateDir); err != nil {
		log.Error("state directory", "path", cfg.StateDir, "err", err)
		return exitFailure
	}
	// One bot per database: a second would split threads into two
	// sessions and lose one. Taken before anything in the state is opened
	// (the log file, the database: a second start changes nothing, no
	// migration either), and released once runBot has closed the store.
	// Beside the database's real path: two bots reaching one file by
	// different links share one lock.
	db := dbFile(cfg)
	lock, err := store.TakeLock(db, time.Now())
	if err != nil {
		return reportConfig(stderr, lockProblem(cfg, err))
	}
	defer releaseLock(lock, log) // this log: the log file is closed first
	// Not inside the conversation: a file when the console shares one
	// terminal with stderr (logging.go).
	log, logFile, err := consoleLogger(cfg, consoleOnly, log, stdout, stderr)
	if err != nil {
		log.Error("log file", "path", logPath(cfg), "err", err)
		return exitFailure
	}
	defer logFile.Close()
	// Before anything opens it: a damaged or vanished database is refused,
	// not opened (nor migrated, nor made anew). After the log is set: what
	// it logs must not land inside the console's conversation.
	if code := examineDB(ctx, db, log, stderr); code != exitOK {
		return code
	}
	// The console at a terminal keeps its log in a file: what the
	// operator must see is said on stderr too.
	_, toFile := logFile.(*os.File)
	sig.running(log, toFile, nil)
	if runnerWarning != "" {
		log.Warn(runnerWarning, "runner", cfg.Runner.Kind)
		if toFile { // that sessions are not sandboxed, before the conversation
			fmt.Fprintf(stderr, "claudeops: %s\n", runnerWarning)
		}
	} else {
		log.Info("runner", "runner", cfg.Runner.Kind, "chosen", cfg.Runner.why)
	}
	if msg := credentialWarning(cfg, cfg.raw); msg != "" {
		log.Warn(msg, "runner", cfg.Runner.Kind)
	}
	switch {
	case info.Message == "": // the docker and kubernetes runners check their image's CLI
	case info.Level != claudeproc.CompatFull:
		log.Warn(info.Message, "bin", info.Bin)
	default:
		log.Info(info.Message, "bin", info.Bin)
	}
	ties := settingsTies{hup: hup}
	if toFile { // what the operator must see, when the log is in a file
		ties.notice = stderr
	}
	return runBot(ctx, cfg, consoleOnly, log, stdin, stdout, ties, info, func(k sessionKiller) { sig.running(log, toFile, k) })
}

func releaseLock(l *store.Lock, log *slog.Logger) {
	if err := l.Close(); err != nil {
		log.Error("release the database's lock", "err", err)
	}
}

// runBot builds the app and runs it until ctx ends (a signal), a part
// fails, or, for the console, its input ends and the running turns are
// done; then it stops the parts in order (see app.shutdown). running is
// given the bot, whose sessions a forced exit kills (force.go).
func runBot(ctx context.Context, cfg config, consoleOnly bool, log *slog.Logger, stdin io.Reader, stdout io.Writer, ties settingsTies, cli claudeproc.VersionInfo, running func(sessionKiller)) int {
	a, code := buildApp(ctx, cfg, consoleOnly, log, stdin, stdout, ties)
	if a == nil {
		return code
	}
	running(a.b)
	a.health.SeedCLI(cli) // /readyz starts from the start's check
	return a.run(ctx)
}

// app is the bot with everything it runs: built by buildApp, run by run.
type app struct {
	log *slog.Logger
	st  *store.Store
	db  string // the database's real path: its mark (dbcheck.go)
	b   *bot.Bot
	sch *scheduler.Scheduler
	// adapters are the running platforms' (platform.go), in the order of
	// their settings.
	adapters []adapters.Adapter
	srv      *http.Server   // nil without CLAUDEOPS_HTTP_ADDR
	health   *health.Health // /healthz, /readyz (healthwire.go); nil without it
	ln       net.Listener
	stdout   io.Writer
	ties     settingsTies     // SIGHUP, the operator's terminal
	met      *metrics.Metrics // what /metrics shows (metrics.go)
	settings *settingsFile    // the settings file, watched (settingsfile.go)
	triggers *triggerRuns     // the triggers' runs (triggers.go); nil without a triggers file
}

// buildApp opens the store and builds the bot, its adapters, the scheduler
// and the HTTP listener. On failure it returns nil and the exit code,
// having closed what it opened.
func buildApp(ctx context.Context, cfg config, consoleOnly bool, log *slog.Logger, stdin io.Reader, stdout io.Writer, ties settingsTies) (*app, int) {
	a := &app{log: log, stdout: stdout, ties: ties}
	if old := leftBehind(cfg); old != "" {
		log.Warn("a database at the old default place is not used: the bot's state now lives in its state directory; "+
			"move the file (with its -wal, -shm and .matrix-* files) there, or set CLAUDEOPS_DB outside the working directory",
			"old", old, "db", cfg.DB)
	}
	st, err := store.Open(ctx, cfg.DB)
	if err != nil {
		log.Error("open database", "path", cfg.DB, "err", err)
		return nil, exitFailure
	}
	a.st, a.db = st, dbFile(cfg)
	markOpen(a.db, log)
	// Room for the records of what threads are shown, should the disk
	// fill up (store.FreeReserve, bot/records.go).
	if err := st.KeepReserve(); err != nil {
		log.Warn("no disk space kept for a full disk: a turn shown then may go unrecorded", "err", err)
	}
	if code := a.build(ctx, cfg, cfg.Platforms.running(consoleOnly), stdin); code != exitOK {
		a.closeStore()
		return nil, code
	}
	return a, exitOK
}

// build makes the bot, the adapters of the platforms, the scheduler and
// the HTTP listener over the open store; it returns an exit code.
func (a *app) build(ctx context.Context, cfg config, platforms []platform, stdin io.Reader) int {
	log := a.log
	runner, startCLI, err := buildRunner(ctx, cfg, log)
	if err != nil {
		log.Error("set up the session runner", "err", err)
		return exitFailure
	}
	bcfg := botConfig(cfg, runner, log)
	clearSkills(cfg, log)
	bcfg.Observer = a.observe()
	// A storage fault logged once per cause; each new one has the
	// database's pages checked (dbcheck.go), by the bot and by /readyz.
	fc := &faultCheck{st: a.st, log: log, recheck: func() { a.health.RecheckIntegrity() }}
	bcfg.Faults = &store.Faults{Log: log, OnFault: fc.onFault}
	ext, err := newExtensions(cfg, a.st, log)
	if err != nil {
		log.Error("set up the workspaces", "err", err)
		return exitFailure
	}
	bcfg.Extensions = ext.list()
	for _, p := range platforms {
		if c, ok := p.(botConfigurer); ok {
			c.configureBot(&bcfg)
		}
	}
	if len(bcfg.AllowedUsers) == 0 {
		log.Warn("CLAUDEOPS_ALLOWED_USERS is empty: nobody may use the bot")
	}
	if bcfg.Scopes, err = newScopes(ctx, cfg, bcfg, a.st, log); err != nil {
		log.Error("read the settings set in chat", "err", err)
		return exitFailure
	}
	ext.checkSettings(bcfg.Scopes)
	if ps := bcfg.Scopes.CheckFile(cfg.settingsLayer); len(ps) > 0 {
		// What only the parts can tell (a server the servers file does
		// not list, an image where the runner has none): a configuration
		// problem like the file's others.
		for _, p := range ps {
			log.Error("configuration", "var", settingsFileVar, "problem", p.Error())
		}
		return exitConfig
	}
	a.settings = newSettingsFile(cfg, bcfg.Scopes, log, a.ties)
	a.b = bot.New(bcfg, a.st)
	if code := a.addAdapters(ctx, platforms, wiring{cfg: cfg, log: log, st: a.st, b: a.b, stdin: stdin, stdout: a.stdout}); code != exitOK {
		return code
	}
	if err := a.b.Recover(ctx); err != nil {
		log.Error("recover state", "err", err)
		return exitFailure
	}
	scfg := cfg.Scheduler
	scfg.Logger = log
	scfg.Observer = a.met
	scfg.OwnsDatabase = true // run() holds the one-bot lock
	if a.sch, err = scheduler.New(scfg, a.st, a.b); err != nil {
		log.Error("scheduler", "err", err)
		return exitFailure
	}
	ext.schedules.SetScheduler(a.sch)
	if cfg.HTTPAddr != "" {
		a.health = a.newHealth(cfg, runner)
		a.health.SeedCLI(startCLI) // the image's CLI was just checked: no second probe
		if a.srv, a.ln, err = newHTTP(cfg.HTTPAddr, a.adapters, a.health, a.met.Handler(), a.newTriggers(ctx, cfg, ext)); err != nil {
			log.Error("listen", "addr", cfg.HTTPAddr, "err", err)
			return exitFailure
		}
	}
	return exitOK
}

// apiObserved is an adapter that reports its platform's API calls
// (adapters.APIObserver) to whoever is set: the metrics.
type apiObserved interface {
	SetAPIObserver(o adapters.APIObserver)
}

// connecter is an adapter that logs in before it runs (Matrix): before
// Recover, which edits prompts a previous run left open.
type connecter interface {
	Connect(ctx context.Context) error
}

// addAdapters makes each platform's adapter and hands it to the bot, its
// API calls reported to the metrics, logged in where it must be; it
// returns an exit code.
func (a *app) addAdapters(ctx context.Context, platforms []platform, w wiring) int {
	for _, p := range platforms {
		ad, err := p.build(w)
		if err != nil {
			a.log.Error("set up the chat platform", "err", err)
			if errors.As(err, new(settingsError)) {
				return exitConfig
			}
			return exitFailure
		}
		if o, ok := ad.(apiObserved); ok {
			o.SetAPIObserver(a.met)
		}
		a.b.AddAdapter(ad)
		a.adapters = append(a.adapters, ad)
		if c, ok := ad.(connecter); ok {
			if err := c.Connect(ctx); err != nil {
				a.log.Error("connect", "platform", ad.Name(), "err", err)
				return exitFailure
			}
		}
	}
	return exitOK
}

// botConfig is the bot's settings as parsed, with the parts cmd makes.
func botConfig(cfg config, runner claudeproc.Runner, log *slog.Logger) bot.Config {
	b := cfg.Bot
	b.Runner, b.Logger = runner, log
	b.ProtectedPaths = slices.Concat(ownFiles(cfg), lockFiles(cfg), workspaceOwnDirs(cfg))
	b.SkillsBase = skillsBase(cfg)
	return b
}

// stage is a group of the app's goroutines that is stopped together: its
// context is cancelled, then its goroutines are waited for.
type stage struct {
	name   string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// newStage's context ends only when the stage is stopped: a signal does
// not reach the parts directly, shutdown stops them one stage at a time.
func newStage(ctx context.Context, name string) *stage {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &stage{name: name, ctx: sctx, cancel: cancel}
}

// spawn runs fn in g as part of the stage. An error before the stage is
// stopped fails the group, which starts the shutdown; after, only a part
// that did not stop counts.
func (s *stage) spawn(g *errgroup.Group, what string, fn func(context.Context) error) {
	s.wg.Add(1)
	g.Go(func() error {
		defer s.wg.Done()
		if err := fn(s.ctx); err != nil && (s.ctx.Err() == nil || errors.Is(err, errNotStopped)) {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
}

func (s *stage) stop() {
	s.cancel()
	s.wg.Wait()
}

// errNotStopped: a part did not stop within its grace after its stage was
// stopped.
var errNotStopped = errors.New("did not stop in time")

// errInputEnded ends a console run whose input ended once nothing runs.
var errInputEnded = errors.New("console input ended")

// sessionsGrace is how long the sessions get to stop.
const sessionsGrace = time.Minute

// run runs the app under one errgroup until ctx ends or a part fails or
// ends the run, then shuts down in order; it returns the exit code.
func (a *app) run(ctx context.Context) int {
	g, gctx := errgroup.WithContext(ctx)
	intake, sched, sessions := newStage(ctx, "intake"), newStage(ctx, "scheduler"), newStage(ctx, "sessions")
	sessions.spawn(g, "sessions", func(ctx context.Context) error { return runGrace(ctx, a.b.Run, sessionsGrace) })
	sched.spawn(g, "scheduler", a.sch.Run)
	if a.triggers != nil {
		sched.spawn(g, "triggers", a.triggers.run)
	}
	intake.spawn(g, "settings file", a.settings.run)
	for _, ad := range a.adapters {
		intake.spawn(g, ad.Name()+" adapter", func(ctx context.Context) error { return ad.Run(ctx, a.b.Deliver) })
		if in, ok := ad.(inputEnder); ok {
			fmt.Fprintf(a.stdout, "claudeops console: type a message for Claude; `help` lists commands, `/thread <name>` switches threads.\n")
			g.Go(func() error { return a.untilInputDone(gctx, sessions.ctx, in) })
		}
	}
	if a.srv != nil {
		intake.spawn(g, "http server", a.serveHTTP)
	}
	g.Go(func() error {
		<-gctx.Done()
		a.shutdown(intake, sched, sessions)
		return nil
	})
	err := g.Wait()
	a.closeStore()
	switch {
	case err == nil, errors.Is(err, errInputEnded):
		return exitOK
	default:
		a.log.Error("stopped", "err", err)
		return exitFailure
	}
}

// shutdown stops the app in order: intake (no new events), the scheduler
// (no new runs; a run it cuts off is recorded as interrupted while the bot
// and store still work), the sessions (claude processes closed, pending
// approvals expired), then the adapters (their queued edits sent). The
// store closes after, in run. Each step is logged: operators and tests see
// the order.
func (a *app) shutdown(stages ...*stage) {
	a.log.Info("shutting down")
	a.health.BeginShutdown() // /healthz and /readyz answer 503
	for _, s := range stages {
		a.log.Info("shutdown: stopping " + s.name)
		s.stop()
		a.log.Info("shutdown: stopped " + s.name)
	}
	a.log.Info("shutdown: closing adapters")
	for _, ad := range a.adapters {
		if c, ok := ad.(closer); ok {
			c.Close() // last edits: final texts, expired prompts
		}
	}
	a.log.Info("shutdown: closed adapters")
}

// closer is an adapter that sends what it has queued when closed.
type closer interface {
	Close()
}

// inputEnder is an adapter whose input can end (the console, the
// operator's terminal): it greets the operator, and the run ends once its
// input has.
type inputEnder interface {
	InputClosed() <-chan struct{}
}

// untilInputDone ends the run when in's input has ended and what was
// asked has finished (scripted use).
func (a *app) untilInputDone(ctx, sessions context.Context, in inputEnder) error {
	select {
	case <-in.InputClosed():
		a.b.WaitIdle(sessions)
		a.log.Info("console input ended and nothing is running; exiting")
		return errInputEnded
	case <-ctx.Done():
		return nil
	}
}

func (a *app) closeStore() {
	if err := a.st.Close(); err != nil {
		a.log.Error("close database", "err", err)
		return
	}
	if err := store.MarkClosed(a.db, time.Now()); err != nil {
		a.log.Warn("cannot mark the database closed: the next start checks it in full", "err", err)
	}
	a.log.Info("shutdown: closed store")
}

// runGrace runs fn(ctx) and returns its error, or an error when fn has not
// returned within grace after ctx ended (fn's goroutine is then left).
func runGrace(ctx context.Context, fn func(context.Context) error, grace time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("%w (%s)", errNotStopped, grace)
	}
}
