//go:build tools

// Package deps pins the project's chosen dependencies in go.mod before the
// packages that use them land (the Slack and Matrix adapters, the store and
// the scheduler). It is never built: the tools tag keeps it out of builds,
// while `go mod tidy` still sees the imports.
package deps

import (
	_ "github.com/caarlos0/env/v11"
	_ "github.com/mattn/go-sqlite3"
	_ "github.com/robfig/cron/v3"
	_ "github.com/slack-go/slack"
	_ "maunium.net/go/mautrix"
)
