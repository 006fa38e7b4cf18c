// Command claudeops connects the Claude Code CLI to Slack and Matrix: a
// mention starts a thread-bound Claude Code session, streamed into the
// thread, with approvals and questions as buttons.
//
//	claudeops            run every adapter whose credentials are set (the console when none is)
//	claudeops console    run the console adapter
//	claudeops version    print the bot's version and the detected CLI's compatibility
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/claudeops/claudeops/claudeproc"
)

func main() {
	os.Exit(start())
}

// start is the process's entry, main's and the tests' re-executed binary's:
// it keeps the secrets out of the process's environment (secrets.go), then
// runs.
func start() int {
	environ, err := takeSecrets()
	if err != nil {
		fmt.Fprintf(os.Stderr, "claudeops: %v\n", err)
		return exitFailure
	}
	return run(os.Args[1:], environ, os.Stdin, os.Stdout, os.Stderr)
}

// run is main without the process globals, so tests can call it.
func run(args []string, environ []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := loadConfig(environ)
	if err != nil {
		fmt.Fprintf(stderr, "claudeops: configuration: %v\n", err)
		return exitConfig
	}
	log := newLogger(stderr, cfg.LogLevel)

	cmd := "run"
	if len(args) > 0 {
		cmd = args[0]
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch cmd {
	case "version", "--version", "-v":
		return printVersion(ctx, cfg, stdout)
	case "run", "console":
		code, ok := checkCLI(ctx, cfg, log)
		if !ok {
			return code
		}
		return runBot(ctx, cfg, cmd == "console", log, stdin, stdout)
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "claudeops: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
}

const usage = `usage:
  claudeops            run the bot: Slack and/or Matrix when their credentials are set, else the console
  claudeops console    run the console adapter
  claudeops version    print the bot's version and the Claude Code CLI's compatibility
`

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// checkCLI applies the version policy at start: a missing CLI exits
// exitNotFound, one older than supported exitConfig, a newer one warns and
// continues.
func checkCLI(ctx context.Context, cfg config, log *slog.Logger) (int, bool) {
	if cfg.Runner.Kind == "docker" {
		return exitOK, true // the CLI is the image's: the docker runner checks it there
	}
	info, err := claudeproc.CheckVersion(ctx, cfg.ClaudeBin)
	switch {
	case errors.Is(err, claudeproc.ErrNotFound):
		log.Error(info.Message, "err", err)
		return exitNotFound, false
	case errors.Is(err, claudeproc.ErrIncompatible):
		log.Error(info.Message, "err", err)
		return exitConfig, false
	case err != nil:
		log.Error("claude CLI version check failed", "err", err)
		return exitConfig, false
	case info.Level != claudeproc.CompatFull:
		log.Warn(info.Message, "bin", info.Bin)
	default:
		log.Info(info.Message, "bin", info.Bin)
	}
	return exitOK, true
}

func printVersion(ctx context.Context, cfg config, w io.Writer) int {
	fmt.Fprintf(w, "claudeops %s\n", botVersion())
	info, err := claudeproc.CheckVersion(ctx, cfg.ClaudeBin)
	if info.Raw != "" {
		fmt.Fprintf(w, "claude CLI: %s (%s)\n", info.Version, info.Bin)
	} else {
		fmt.Fprintf(w, "claude CLI: %s\n", cfg.ClaudeBin)
	}
	fmt.Fprintf(w, "compatibility: %s — %s\n", info.Level, info.Message)
	fmt.Fprintf(w, "supported: >= %s, tested up to %s\n", claudeproc.MinVersion, claudeproc.TestedVersion)
	switch {
	case errors.Is(err, claudeproc.ErrNotFound):
		return exitNotFound
	case err != nil:
		return exitConfig
	}
	return exitOK
}
