// Package docker is the `docker` runner: each session's Claude Code CLI runs
// in a container of its own, started through the Docker Engine API.
//
// What a container gets: the operator's image (the CLI and the tools the
// repository needs, git among them; a channel's own where its settings name
// one, Spec.Image, checked at its first session as the runner's own is at
// start: on the engine, never pulled, and its CLI recent enough), the session's working directory
// bind-mounted at the same path, the Spec's Mounts at theirs (a worktree's
// git directory: binds, read-only where asked, a tmpfs for an empty one), the CLI's state (~/.claude) on a volume per thread so that
// sessions resume across containers (and no thread reaches another's shell
// snapshot or transcripts), a home directory on tmpfs, memory, CPU
// and pids limits, no capabilities, no new privileges. What it does not get:
// the bot's environment beyond Spec.Env (no chat secrets, no DOCKER_HOST),
// any other file of the bot's, the Docker socket, the bot's processes. The
// container is removed when the CLI ends, and its output is not logged by
// the engine (it is the conversation). stdio is attached through the API.
// A session with the operator's MCP servers runs claudeproc.ImageLauncher
// (/bin/sh -c) in front of the CLI, and their configuration (secrets
// included) goes as the first line of its stdin, never into the
// container's record (`docker inspect`): the launcher hands it to the CLI
// as descriptor 3 through a pipe. Without servers the CLI is the
// entrypoint itself.
//
// The engine must run on the bot's host: the working directory is mounted
// by its host path. A build with -tags nodocker leaves this package (and
// the engine's client) out of the binary; cmd then refuses the runner.
//
// # Files
//
// docker.go: Config, Runner, Prepare (an earlier version's per-channel
// volumes removed at start), Start; handle.go: a running container, its
// stdio and exit; volume.go: the volume per thread for ~/.claude (removed
// by RemoveHome), the CLI's version in the image; image.go: a channel's
// image, checked; settings.go: Settings,
// its env tags, its checks, the runner built.
package docker
