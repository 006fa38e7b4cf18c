// Command claudeops connects the Claude Code CLI to Slack and Matrix: a
// mention starts a thread-bound Claude Code session, streamed into the
// thread, with approvals and questions as buttons.
//
//	claudeops            run every adapter whose credentials are set (the console when none is)
//	claudeops console    run the console adapter
//	claudeops version    print the bot's version and the detected CLI's compatibility
//	claudeops healthcheck  exit 0 if the running bot's /healthz answers 200 (the image's HEALTHCHECK)
//	claudeops backup F   copy the bot's database to the new file F (online: the bot may run)
//	claudeops restore F  put a copy of the backup F in place of the bot's database (the bot stopped; the old file kept aside)
//
// It is the composition root: it reads the configuration, checks it as a
// whole before anything starts (every problem listed at once), takes the
// database's lock (one bot per database), builds the parts and hands each
// what it needs, runs until a signal, shuts down in order and exits with
// the codes in exit.go.
//
// # Files
//
// Configuration and checks:
//
//   - config.go: the one struct caarlos0/env reads; its parts carry their
//     tags where they are used (scheduler.Config, the adapters' Config,
//     each runner's settings type), so that nothing is copied field by
//     field (bot.Config is filled from its own fields); limits.go: the
//     limits' settings.
//   - check.go: each setting checked, every problem at once;
//     checkstart.go: what a run needs of the host (directories, the
//     database writable, the CLI).
//   - secrets.go: the process re-executes itself without the secrets in
//     its environment, handing them over in a memfd; every secret has a
//     <NAME>_FILE twin.
//   - dbcheck.go: the database checked before the bot opens it (SQLite's
//     quick_check, the full integrity_check after an unclean stop;
//     damaged, or missing or empty where its mark says one was: refused,
//     78, never replaced: `claudeops restore` puts a checked backup in
//     place), and
//     its mark (open while the bot runs, closed at a clean shutdown).
//   - state.go: the bot's state placed apart from the sessions' work (a
//     working directory that holds or lies inside it is refused);
//     ownfiles.go: the bot's own files, which no rule may allow.
//   - logging.go: the log, as text or JSON lines (CLAUDEOPS_LOG_FORMAT), to
//     stderr or, when the console shares one terminal with it, to a file.
//
// The parts, as lists:
//
//   - runner.go: the runners as a list, a field per runner's settings type
//     (claudeproc.LocalSettings, claudeproc.SandboxSettings,
//     docker.Settings, kubernetes.Settings: its env tags, Check at load,
//     HostCheck at start, Build, OwnDirs, ImageCLI, told of the bot through
//     a claudeproc.Host); CLAUDEOPS_RUNNER picks one by its Name. Unset,
//     each start chooses (runnerConfig.choose): the sandbox where
//     bubblewrap can make its namespaces, else local with a warning; the
//     log and /readyz say which and why. Adding a runner is its type and
//     one field of runnerConfig. runner_docker.go and
//     runner_kubernetes.go name the two runners with a client of their
//     own; a build with -tags nodocker or nokubernetes has a stand-in
//     instead (runner_nodocker.go, runner_nokubernetes.go, both
//     runner_leftout.go's leftOut): the client is not linked, which saves
//     the memory docs/PERFORMANCE.md measures, and the runner, still
//     named, is refused at load with the tag that left it out.
//   - platform.go: the chat platforms as a list: a platform's settings are
//     its adapter's Config, tagged in its package; platform_console.go,
//     platform_slack.go, platform_matrix.go say whether each is set up,
//     check its settings and make its adapter. The app makes the running
//     ones' adapters and does everything else (the bot, the metrics,
//     /readyz, the HTTP deliveries, the run, the shutdown) over that list,
//     by the optional interfaces they implement. Adding a platform is its
//     adapter's package, that file, one field of platformsConfig, and a
//     <NAME>_FILE twin in secrets.go for each secret it reads
//     (TestEverySecretHasAFileTwin says which is missing).
//   - extensions.go: the bot's extensions (bot/limits, bot/workspaces,
//     bot/scheduled, bot/mcpservers, bot/runnerimage, bot/scopes,
//     bot/memory, bot/reviews), in the order their hooks
//     run, handed to the bot in bot.Config.Extensions; workspaces.go: the workspaces'
//     manager and the channels' bindings; forges.go: the repositories'
//     forges (CLAUDEOPS_FORGES, CLAUDEOPS_FORGE_TOKEN_FILE) read at start,
//     handed to bot/workspaces for `pr` (workspaces.Config.Forges); mcpservers.go: the operator's MCP
//     servers file and plugin directories checked (where their programs
//     lie, an http one on the host's loopback a container cannot reach).
//   - run.go: the parts wired (the scheduler to the bot, which hands each
//     run to the schedules extension), run and shut down in stages;
//     matrixstate.go and slackstate.go: what the Matrix adapter (login,
//     sync position) and the Slack adapter (catch-up) keep between runs,
//     kept in the store.
//   - scopes.go: the settings by scope (package settings) the bot and its
//     extensions ask (bot.Config.Scopes): the environment's values at the
//     bot's scope (CLAUDEOPS_REPOS' at their channels'), the settings file
//     (CLAUDEOPS_SETTINGS_FILE) read at start, its problems configuration
//     problems, and the values stored from chat; settingsfile.go: the file
//     watched while running (a change, SIGHUP), a bad one refused whole
//     and said (the log, /readyz, the console's terminal).
//   - healthwire.go: /healthz and /readyz (package health), handed the
//     built parts; metrics.go: /metrics, the metrics handed to the parts'
//     observers; httpserve.go: the HTTP listener's mux and serving.
//   - triggers.go: the triggers file (CLAUDEOPS_TRIGGERS_FILE, package
//     triggers) checked, its endpoint on the HTTP listener, its runs handed
//     to the schedules extension (RunTriggered) and stopped with the
//     scheduler's stage; what `triggers` shows.
//
// Subcommands: backup.go (`claudeops backup`, SQLite's online backup),
// restore.go (`claudeops restore`, a checked backup put in place, the old
// file kept aside),
// healthcheck.go (`claudeops healthcheck`, the image's HEALTHCHECK).
// exit.go: the exit codes; force.go: the shutdown signals (SIGHUP is not
// one: settingsfile.go takes it), the first for
// the graceful shutdown, a second within seconds for the forced exit
// (every session killed through bot.Bot.Kill), the same for every
// platform.
//
// # Measures
//
// testdata/places measures the composition root: its production lines,
// and the top-level declarations outside a part's own files that name it
// (go run ./cmd/claudeops/testdata/places cmd/claudeops; before: on a
// worktree of 3cc8013). docs/DESIGN.md, "Composition root", gives two of
// the figures; all of them, before (3cc8013) and after (0ce52b8):
//
//   - lines of cmd/claudeops (production): 3510 → 2957 (2985 at 5ac6c85,
//     with extensions.go);
//   - a runner named as a string (local, sandbox, docker, kubernetes): 2,
//     3, 4, 5 → 0, 0, 0, 0;
//   - a runner named in an identifier: 3, 8, 6, 5 → 1, 1, 1, 1 (the field
//     of runnerConfig);
//   - a platform named in an identifier (console, slack, matrix): 10, 13,
//     16 → 8, 2, 2.
//
// Left: platformsConfig's fields, the _FILE twins, the console flag.
// After: no function in these packages over 100 lines, no file over 500,
// and dupl -t 50 finds as many clones in production code as before (33).
// Since, settings are tagged in the types that use them (bot, limits,
// workspaces, scheduled: Config) and parsed into: 17 settings once
// declared twice and copied field by field are declared once; production
// lines 3061 → 3006 (wc -l); each documented variable is still named by
// its tag and its checks (grep -w).
package main
