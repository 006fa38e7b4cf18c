package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/claudeops/claudeops/adapters/console"
	matrixadapter "github.com/claudeops/claudeops/adapters/matrix"
	slackadapter "github.com/claudeops/claudeops/adapters/slack"
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
func startBot(ctx context.Context, cfg config, cfgErr error, consoleOnly bool, log *slog.Logger, stdin io.Reader, stdout, stderr io.Writer) int {
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
	db, err := realPath(cfg.DB)
	if err != nil {
		db = absPath(cfg.DB)
	}
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
	return runBot(ctx, cfg, consoleOnly, log, stdin, stdout, info)
}

func releaseLock(l *store.Lock, log *slog.Logger) {
	if err := l.Close(); err != nil {
		log.Error("release the database's lock", "err", err)
	}
}

// runBot builds the app and runs it until ctx ends (a signal), a part
// fails, or, for the console, its input ends and the running turns are
// done; then it stops the parts in order (see app.shutdown).
func runBot(ctx context.Context, cfg config, consoleOnly bool, log *slog.Logger, stdin io.Reader, stdout io.Writer, cli claudeproc.VersionInfo) int {
	a, code := buildApp(ctx, cfg, consoleOnly, log, stdin, stdout)
	if a == nil {
		return code
	}
	a.health.SeedCLI(cli) // /readyz starts from the start's check
	return a.run(ctx)
}

// app is the bot with everything it runs: built by buildApp, run by run.
type app struct {
	log    *slog.Logger
	st     *store.Store
	b      *bot.Bot
	sch    *scheduler.Scheduler
	con    *console.Adapter
	sl     *slackadapter.Adapter
	mx     *matrixadapter.Adapter
	srv    *http.Server   // nil without CLAUDEOPS_HTTP_ADDR
	health *health.Health // /healthz, /readyz (healthwire.go); nil without it
	ln     net.Listener
	stdout io.Writer
	met    *metrics.Metrics // what /metrics shows (metrics.go)
}

// buildApp checks the platforms' configuration, opens the store and builds
// the bot, its adapters, the scheduler and the HTTP listener. On failure it
// returns nil and the exit code, having closed what it opened.
func buildApp(ctx context.Context, cfg config, consoleOnly bool, log *slog.Logger, stdin io.Reader, stdout io.Writer) (*app, int) {
	slackSet := cfg.SlackBotToken != "" || cfg.SlackAppToken != "" || cfg.SlackSigningSecret != ""
	matrixSet := cfg.MatrixHomeserver != "" || cfg.MatrixAccessToken != "" || cfg.MatrixPassword != ""
	a := &app{log: log, stdout: stdout}
	if slackSet && !consoleOnly {
		var code int
		if a.sl, code = newSlack(cfg, log); a.sl == nil {
			return nil, code
		}
	}
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
	a.st = st
	if code := a.build(ctx, cfg, consoleOnly || (!slackSet && !matrixSet), matrixSet && !consoleOnly, stdin); code != exitOK {
		a.closeStore()
		return nil, code
	}
	return a, exitOK
}

// newSlack configures the Slack adapter; nil and the exit code when it
// cannot be.
func newSlack(cfg config, log *slog.Logger) (*slackadapter.Adapter, int) {
	sl, err := slackadapter.New(slackadapter.Config{
		BotToken: cfg.SlackBotToken, AppToken: cfg.SlackAppToken, SigningSecret: cfg.SlackSigningSecret,
		APIURL: cfg.SlackAPIURL, AllowBots: cfg.SlackAllowBots, Streaming: cfg.SlackStreaming, Logger: log,
		CatchUp: cfg.SlackCatchUp,
	})
	if err != nil {
		log.Error("slack configuration", "err", err)
		return nil, exitConfig
	}
	if cfg.SlackSigningSecret != "" && cfg.HTTPAddr == "" {
		log.Error("SLACK_SIGNING_SECRET is set but CLAUDEOPS_HTTP_ADDR is not: nowhere to receive Slack's HTTP deliveries")
		return nil, exitConfig
	}
	return sl, exitOK
}

// build makes the bot, the console and Matrix adapters, the scheduler and
// the HTTP listener over the open store; it returns an exit code.
func (a *app) build(ctx context.Context, cfg config, useConsole, useMatrix bool, stdin io.Reader) int {
	log := a.log
	runner, startCLI, err := buildRunner(ctx, cfg, log)
	if err != nil {
		log.Error("set up the session runner", "err", err)
		return exitFailure
	}
	bcfg := botConfig(cfg, runner, log)
	bcfg.Observer = a.observe()
	if bcfg.Workspace.Manager, err = newWorkspaces(cfg, log); err != nil {
		log.Error("set up the workspaces", "err", err)
		return exitFailure
	}
	if useConsole {
		// The person at the console is the operator: allowed, and an admin.
		bcfg.AllowedUsers = append(bcfg.AllowedUsers, console.OperatorID)
		bcfg.Admins = append(bcfg.Admins, console.OperatorID)
		a.con = console.New(console.Options{In: stdin, Out: a.stdout, MaxLine: cfg.ConsoleMaxLine, TestHooks: cfg.ConsoleTestHooks})
	} else if len(cfg.AllowedUsers) == 0 {
		log.Warn("CLAUDEOPS_ALLOWED_USERS is empty: nobody may use the bot")
	}
	a.b = bot.New(bcfg, a.st)
	if a.con != nil {
		a.b.AddAdapter(a.con)
	}
	if a.sl != nil {
		a.b.AddAdapter(a.sl)
		// What was posted while the bot was away is read back on connect.
		a.sl.SetCatchUpState(slackState{a.st}, a.b.Allowed)
	}
	if useMatrix {
		if a.mx, err = newMatrix(cfg, a.st, a.b.Allowed, log); err != nil {
			log.Error("matrix configuration", "err", err)
			return exitConfig
		}
		a.mx.SetAPIObserver(a.met)
		a.b.AddAdapter(a.mx)
		// Logged in before Recover: it edits prompts a previous run left open.
		if err := a.mx.Connect(ctx); err != nil {
			log.Error("matrix", "err", err)
			return exitFailure
		}
	}
	if err := a.b.Recover(ctx); err != nil {
		log.Error("recover state", "err", err)
		return exitFailure
	}
	scfg := cfg.Scheduler
	scfg.Logger = log
	scfg.Observer = a.met
	if a.sch, err = scheduler.New(scfg, a.st, a.b); err != nil {
		log.Error("scheduler", "err", err)
		return exitFailure
	}
	a.b.SetScheduler(a.sch)
	if cfg.HTTPAddr != "" {
		a.health = a.newHealth(cfg, runner)
		a.health.SeedCLI(startCLI) // the image's CLI was just checked: no second probe
		if a.srv, a.ln, err = newHTTP(cfg.HTTPAddr, a.sl, a.health, a.met.Handler()); err != nil {
			log.Error("listen", "addr", cfg.HTTPAddr, "err", err)
			return exitFailure
		}
	}
	return exitOK
}

func botConfig(cfg config, runner claudeproc.Runner, log *slog.Logger) bot.Config {
	return bot.Config{
		Runner:          runner,
		ClaudeBin:       cfg.ClaudeBin,
		ClaudeEnv:       cfg.ClaudeEnv,
		Workdir:         cfg.Workdir,
		AllowedUsers:    cfg.AllowedUsers,
		Admins:          cfg.Admins,
		ProtectedPaths:  slices.Concat(ownFiles(cfg), lockFiles(cfg), workspaceOwnDirs(cfg)),
		MaxSessions:     cfg.MaxSessions,
		IdleTimeout:     cfg.IdleTimeout,
		ApprovalTimeout: cfg.ApprovalTimeout,
		MaxLineBytes:    cfg.MaxLineBytes,
		Logger:          log,
		// Per-user quotas.
		MaxThreadsPerUser:   perUserCap(cfg.MaxThreadsPerUser),
		MaxSchedulesPerUser: perUserCap(cfg.MaxSchedulesPerUser),
		Limits:              cfg.Limits.bot(),
		Workspace:           bot.WorkspaceConfig{Repos: repoBindings(cfg.Repos), TTL: cfg.WorktreeTTL},
	}
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
	if a.con != nil {
		intake.spawn(g, "console", func(ctx context.Context) error { return a.con.Run(ctx, a.b.Deliver) })
		fmt.Fprintf(a.stdout, "claudeops console: type a message for Claude; `help` lists commands, `/thread <name>` switches threads.\n")
		g.Go(func() error { return a.untilInputDone(gctx, sessions.ctx) })
	}
	if a.sl != nil {
		intake.spawn(g, "slack adapter", func(ctx context.Context) error { return a.sl.Run(ctx, a.b.Deliver) })
	}
	if a.mx != nil {
		intake.spawn(g, "matrix adapter", func(ctx context.Context) error { return a.mx.Run(ctx, a.b.Deliver) })
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
	if a.sl != nil {
		a.sl.Close() // last edits: final texts, expired prompts
	}
	if a.mx != nil {
		a.mx.Close()
	}
	a.log.Info("shutdown: closed adapters")
}

// untilInputDone ends the run when the console's input has ended and what
// was asked has finished (scripted use).
func (a *app) untilInputDone(ctx, sessions context.Context) error {
	select {
	case <-a.con.InputClosed():
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

// newMatrix configures the Matrix adapter: its login and sync position live
// in the bot's database, its crypto state in a file beside it.
func newMatrix(cfg config, st *store.Store, mayInvite func(string) bool, log *slog.Logger) (*matrixadapter.Adapter, error) {
	cryptoDB, recoveryKey := matrixFiles(cfg)
	return matrixadapter.New(matrixadapter.Config{
		Homeserver: cfg.MatrixHomeserver, UserID: cfg.MatrixUserID,
		AccessToken: cfg.MatrixAccessToken, DeviceID: cfg.MatrixDeviceID, Password: cfg.MatrixPassword,
		CryptoDB:        cryptoDB,
		PrivateDB:       store.MakePrivate,
		RecoveryKeyFile: recoveryKey,
		EditInterval:    cfg.MatrixEditInterval,
		MayInvite:       mayInvite,
		State:           matrixState{st},
		Logger:          log,
	})
}

// newHTTP makes the server for Slack's HTTP mode at /slack/events and the
// operational endpoints (/healthz, /readyz, /metrics), listening on addr.
func newHTTP(addr string, sl *slackadapter.Adapter, h *health.Health, metricsH http.Handler) (*http.Server, net.Listener, error) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsH)
	if sl != nil {
		mux.Handle("POST /slack/events", sl.HTTPHandler())
	}
	h.Register(mux)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if sl != nil {
		sl.ConfigureServer(srv) // slow or idle clients are cut off
	}
	return srv, ln, nil
}

// serveHTTP serves until ctx ends, then lets requests in flight finish
// (for at most 5 s).
func (a *app) serveHTTP(ctx context.Context) error {
	a.log.Info("http listening", "addr", a.ln.Addr().String())
	served := make(chan error, 1)
	go func() { served <- a.srv.Serve(a.ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = a.srv.Shutdown(sctx)
	return nil
}
