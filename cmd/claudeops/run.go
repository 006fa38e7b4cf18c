package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
)

// runBot starts the adapters and the bot core. The core (sessions, store,
// approvals, console adapter) is issue 3; until it lands the command says so
// plainly instead of pretending to run.
func runBot(ctx context.Context, cfg config, console bool, log *slog.Logger, stderr io.Writer) int {
	_ = ctx
	_ = console
	log.Error("the bot core is not built yet: only `claudeops version` works in this build", "db", cfg.DB)
	fmt.Fprintln(stderr, "claudeops: nothing to run yet (the bot core and console adapter land with issue 3)")
	return 1
}
