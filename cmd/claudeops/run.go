package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/claudeops/claudeops/adapters/console"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/store"
)

// runBot opens the store, starts the bot and its adapters, and runs until
// ctx ends (a signal) or, for the console, until its input ends and the
// running turns are done. Shutdown is ordered: intake stops, sessions are
// stopped, the store closes last.
func runBot(ctx context.Context, cfg config, consoleOnly bool, log *slog.Logger, stdin io.Reader, stdout io.Writer) int {
	slackSet := cfg.SlackBotToken != "" || cfg.SlackAppToken != "" || cfg.SlackSigningSecret != ""
	matrixSet := cfg.MatrixHomeserver != "" || cfg.MatrixAccessToken != ""
	useConsole := consoleOnly || (!slackSet && !matrixSet)
	if !consoleOnly && (slackSet || matrixSet) {
		// The Slack and Matrix adapters are not part of this build yet.
		log.Error("Slack/Matrix credentials are set, but this build has only the console adapter; run `claudeops console` or unset them")
		return 78
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

	bcfg := bot.Config{
		ClaudeBin:       cfg.ClaudeBin,
		ClaudeEnv:       cfg.ClaudeEnv,
		Workdir:         cfg.Workdir,
		AllowedUsers:    cfg.AllowedUsers,
		Admins:          cfg.Admins,
		MaxSessions:     cfg.MaxSessions,
		IdleTimeout:     cfg.IdleTimeout,
		ApprovalTimeout: cfg.ApprovalTimeout,
		MaxLineBytes:    cfg.MaxLineBytes,
		Logger:          log,
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
	if err := b.Recover(ctx); err != nil {
		log.Error("recover state", "err", err)
		return 1
	}

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
	<-runCtx.Done()
	log.Info("shutting down")
	stopIntake()
	wg.Wait()
	select {
	case <-botDone:
	case <-time.After(time.Minute):
		log.Error("sessions did not stop within a minute")
		return 1
	}
	return 0
}
