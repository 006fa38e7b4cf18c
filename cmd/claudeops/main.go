package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

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
	cmd := "run"
	if len(args) > 0 {
		cmd = args[0]
	}
	if cmd == "healthcheck" { // asks the running bot; needs none of the configuration
		return healthcheck(context.Background(), environ, healthTimeout, stdout, stderr)
	}
	cfg, err := loadConfig(environ)
	starting := cmd == "run" || cmd == "console"
	if err != nil && !starting {
		return reportConfig(stderr, err)
	}
	// A run reports loadConfig's problems with those of the host (startBot).
	log := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)

	ctx, sig, stop := notifyShutdown(context.Background(), log, stderr, os.Exit)
	defer stop()

	switch cmd {
	case "version", "--version", "-v":
		return printVersion(ctx, cfg, stdout)
	case "run", "console":
		return startBot(ctx, cfg, err, cmd == "console", log, sig, stdin, stdout, stderr)
	case "backup":
		return backupDB(ctx, cfg, args[1:], stdout, stderr)
	case "restore":
		return restoreDB(ctx, cfg, args[1:], stdout, stderr)
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
  claudeops healthcheck  exit 0 if the running bot's /healthz (at CLAUDEOPS_HTTP_ADDR) answers 200, else 1
  claudeops backup F   copy the bot's database to the new file F (online: the bot may run)
  claudeops restore F  put a copy of the backup F in place of the bot's database (the bot stopped; the old file kept aside)
`

func printVersion(ctx context.Context, cfg config, w io.Writer) int {
	fmt.Fprintf(w, "claudeops %s\n", botVersion())
	info, err := claudeproc.CheckVersion(ctx, cfg.Bot.ClaudeBin)
	if info.Raw != "" {
		fmt.Fprintf(w, "claude CLI: %s (%s)\n", info.Version, info.Bin)
	} else {
		fmt.Fprintf(w, "claude CLI: %s\n", cfg.Bot.ClaudeBin)
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
