// Package health answers the operational endpoints a process manager or
// an orchestrator asks, served on CLAUDEOPS_HTTP_ADDR:
//
//   - GET /healthz (liveness): 200 {"status":"alive",…} while the process
//     serves, 503 {"status":"shutting down",…} once shutdown has begun.
//     It checks nothing else: a liveness probe must not restart a bot
//     whose platform is down.
//   - GET /readyz (readiness): 200 with "ready": true when every adapter
//     is connected, the database takes a write and its pages are sound
//     (SQLite's quick_check, Config.Integrity: every 10 minutes, at once
//     after a storage fault, RecheckIntegrity), and the claude CLI is found
//     and not incompatible; else 503 with every reason in "reasons". It
//     also shows the live and queued sessions, and the runner sessions run
//     in and why it was chosen (Config.Runner), and the settings file in
//     use and why the one on disk was refused (Config.SettingsFile), which
//     decide nothing: the bot works on the last good settings file.
//
// Every check is bounded (readyBudget) and runs at most once at a time, so
// a stuck database cannot hang the endpoint nor pile up probes. The bodies
// hold no secret: no token, no database path; errors pass through redact.
//
// It sees the bot only through the small interfaces below; cmd/claudeops
// hands it the built parts.
//
// # Files
//
// health.go: the interfaces it sees the bot through (Conn, Sessions,
// WriteProber, a CLI check), Config, /healthz; ready.go: /readyz, every
// reason at once; probe.go: a check bounded and run at most once at a
// time.
//
// It is a top-level package beside metrics, the other thing the HTTP
// listener serves, because internal/ holds the tests' helpers.
package health
