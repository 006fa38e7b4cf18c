package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/claudeops/claudeops/adapters/console"
	matrixadapter "github.com/claudeops/claudeops/adapters/matrix"
	slackadapter "github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/scheduler"
	"github.com/claudeops/claudeops/store"
)

// runBot opens the store, starts the bot and its adapters, and runs until
// ctx ends (a signal) or, for the console, until its input ends and the
// running turns are done. Shutdown is ordered: intake stops, sessions are
// stopped, the store closes last.
func runBot(ctx context.Context, cfg config, consoleOnly bool, log *slog.Logger, stdin io.Reader, stdout io.Writer) int {
	slackSet := cfg.SlackBotToken != "" || cfg.SlackAppToken != "" || cfg.SlackSigningSecret != ""
	matrixSet := cfg.MatrixHomeserver != "" || cfg.MatrixAccessToken != "" || cfg.MatrixPassword != ""
	useConsole := consoleOnly || (!slackSet && !matrixSet)
	var sl *slackadapter.Adapter
	if slackSet && !consoleOnly {
		var err error
		sl, err = slackadapter.New(slackadapter.Config{
			BotToken: cfg.SlackBotToken, AppToken: cfg.SlackAppToken, SigningSecret: cfg.SlackSigningSecret,
			APIURL: cfg.SlackAPIURL, AllowBots: cfg.SlackAllowBots, Streaming: cfg.SlackStreaming, Logger: log,
		})
		if err != nil {
			log.Error("slack configuration", "err", err)
			return 78
		}
		if cfg.SlackSigningSecret != "" && cfg.HTTPAddr == "" {
			log.Error("SLACK_SIGNING_SECRET is set but CLAUDEOPS_HTTP_ADDR is not: nowhere to receive Slack's HTTP deliveries")
			return 78
		}
	}

	if err := prepareStateDir(cfg.StateDir); err != nil {
		log.Error("state directory", "path", cfg.StateDir, "err", err)
		return 1
	}
	if old := leftBehind(cfg); old != "" {
		log.Warn("a database at the old default place is not used: the bot's state now lives in its state directory; "+
			"move the file (with its -wal, -shm and .matrix-* files) there, or set CLAUDEOPS_DB outside the working directory",
			"old", old, "db", cfg.DB)
	}
	st, err := store.Open(ctx, cfg.DB)
	if err != nil {
		log.Error("open database", "path", cfg.DB, "err", err)
		return 1
	}
	defer func() {
		if err := st.Close(); err != nil {
			log.Error("close database", "err", err)
		}
	}()

	runner, err := buildRunner(ctx, cfg, log)
	if err != nil {
		log.Error("set up the session runner", "err", err)
		return 1
	}
	bcfg := bot.Config{
		Runner:          runner,
		ClaudeBin:       cfg.ClaudeBin,
		ClaudeEnv:       cfg.ClaudeEnv,
		Workdir:         cfg.Workdir,
		AllowedUsers:    cfg.AllowedUsers,
		Admins:          cfg.Admins,
		ProtectedPaths:  ownFiles(cfg),
		MaxSessions:     cfg.MaxSessions,
		IdleTimeout:     cfg.IdleTimeout,
		ApprovalTimeout: cfg.ApprovalTimeout,
		MaxLineBytes:    cfg.MaxLineBytes,
		Logger:          log,
		// Per-user quotas.
		MaxThreadsPerUser:   perUserCap(cfg.MaxThreadsPerUser),
		MaxSchedulesPerUser: perUserCap(cfg.MaxSchedulesPerUser),
	}
	var con *console.Adapter
	if useConsole {
		// The person at the console is the operator: allowed, and an admin.
		bcfg.AllowedUsers = append(bcfg.AllowedUsers, console.OperatorID)
		bcfg.Admins = append(bcfg.Admins, console.OperatorID)
		con = console.New(console.Options{In: stdin, Out: stdout, TestHooks: cfg.ConsoleTestHooks})
	} else if len(cfg.AllowedUsers) == 0 {
		log.Warn("CLAUDEOPS_ALLOWED_USERS is empty: nobody may use the bot")
	}
	b := bot.New(bcfg, st)
	if con != nil {
		b.AddAdapter(con)
	}
	if sl != nil {
		b.AddAdapter(sl)
	}
	var mx *matrixadapter.Adapter
	if matrixSet && !consoleOnly {
		if mx, err = newMatrix(cfg, st, b.Allowed, log); err != nil {
			log.Error("matrix configuration", "err", err)
			return 78
		}
		b.AddAdapter(mx)
		// Logged in before Recover: it edits prompts a previous run left open.
		if err := mx.Connect(ctx); err != nil {
			log.Error("matrix", "err", err)
			return 1
		}
	}
	if err := b.Recover(ctx); err != nil {
		log.Error("recover state", "err", err)
		return 1
	}

	scfg := cfg.Scheduler
	scfg.Logger = log
	sch, err := scheduler.New(scfg, st, botRunner{b})
	if err != nil {
		log.Error("scheduler", "err", err)
		return 1
	}
	b.SetScheduler(schedulerCommands{sch})

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	botDone := make(chan struct{})
	go func() {
		defer close(botDone)
		_ = b.Run(runCtx)
	}()
	intakeCtx, stopIntake := context.WithCancel(runCtx)
	defer stopIntake()
	// The scheduler stops with intake, before the sessions: a run it cuts
	// off is recorded as interrupted while the store is still open.
	schedDone := make(chan struct{})
	go func() {
		defer close(schedDone)
		if err := sch.Run(intakeCtx); err != nil {
			log.Error("scheduler stopped", "err", err)
		}
	}()
	if con != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := con.Run(intakeCtx, b.Deliver); err != nil {
				log.Error("console", "err", err)
			}
		}()
		fmt.Fprintf(stdout, "claudeops console: type a message for Claude; `help` lists commands, `/thread <name>` switches threads.\n")
		go func() {
			select {
			case <-con.InputClosed():
				// Scripted use: let what was asked finish, then exit.
				b.WaitIdle(runCtx)
				log.Info("console input ended and nothing is running; exiting")
				cancel()
			case <-runCtx.Done():
			}
		}()
	}
	if sl != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := sl.Run(intakeCtx, b.Deliver); err != nil {
				log.Error("slack adapter stopped", "err", err)
				cancel()
			}
		}()
	}
	if mx != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := mx.Run(intakeCtx, b.Deliver); err != nil {
				log.Error("matrix adapter stopped", "err", err)
				cancel()
			}
		}()
	}
	if cfg.HTTPAddr != "" {
		srv, err := serveHTTP(intakeCtx, cfg.HTTPAddr, sl, b, log)
		if err != nil {
			log.Error("listen", "addr", cfg.HTTPAddr, "err", err)
			cancel()
		} else {
			defer srv.Close()
		}
	}
	<-runCtx.Done()
	log.Info("shutting down")
	stopIntake()
	wg.Wait()
	<-schedDone
	select {
	case <-botDone:
	case <-time.After(time.Minute):
		log.Error("sessions did not stop within a minute")
		return 1
	}
	if sl != nil {
		sl.Close() // last edits: final texts, expired prompts
	}
	if mx != nil {
		mx.Close()
	}
	return 0
}

// newMatrix configures the Matrix adapter: its login and sync position live
// in the bot's database, its crypto state in a file beside it.
func newMatrix(cfg config, st *store.Store, mayInvite func(string) bool, log *slog.Logger) (*matrixadapter.Adapter, error) {
	cryptoDB, recoveryKey := matrixFiles(cfg)
	return matrixadapter.New(matrixadapter.Config{
		Homeserver: cfg.MatrixHomeserver, UserID: cfg.MatrixUserID,
		AccessToken: cfg.MatrixAccessToken, DeviceID: cfg.MatrixDeviceID, Password: cfg.MatrixPassword,
		CryptoDB:        cryptoDB,
		RecoveryKeyFile: recoveryKey,
		EditInterval:    cfg.MatrixEditInterval,
		MayInvite:       mayInvite,
		State:           st,
		Logger:          log,
	})
}

// serveHTTP serves Slack's HTTP mode at /slack/events and the operational
// endpoints (/healthz) on addr until ctx ends.
func serveHTTP(ctx context.Context, addr string, sl *slackadapter.Adapter, b *bot.Bot, log *slog.Logger) (*http.Server, error) {
	mux := http.NewServeMux()
	if sl != nil {
		mux.Handle("POST /slack/events", sl.HTTPHandler())
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "ok\nlive_sessions %d\n", b.LiveSessions())
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if sl != nil {
		sl.ConfigureServer(srv) // slow or idle clients are cut off
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("http listening", "addr", ln.Addr().String())
	return srv, nil
}
