# claudeops: the Go bot (cgo, for SQLite) and the Claude Code CLI's native
# build (a single executable: no Node at run time), as a non-root user with
# everything that must outlive the container under the volume /data.
# cmd/claudeops/image_e2e_test.go builds this file and runs the image on a
# real engine (see docs/DEPLOYMENT.md, "Docker", and docs/TESTING.md, "The image").
#
# Stages come in the order of what changes least: the legacy builder builds
# every stage before a --target, so the test caches cli, deps, runtime and
# depsbuilt by building them as targets; imports (seconds), build and the
# last stage follow the source.

# The base images (a registry's, or local stand-ins: the test passes the
# ones scripts/docker-engine makes from Debian packages). The runtime
# stage needs glibc (the CLI and the cgo binary link against it) and apt.
ARG BUILD_IMAGE=golang:1.26-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# Keep in step with claudeproc.TestedVersion (TestVersionPinsAgree), and
# CLAUDE_CLI_INTEGRITY with it.
ARG CLAUDE_CLI_VERSION=2.1.332
# The CLI's npm package @anthropic-ai/claude-code only chooses, at install
# time, one of its per-platform packages; each holds the native executable
# alone. That package's tarball is fetched from the registry and checked
# against a pinned digest, npm's own integrity string for it: no npm nor
# Node (and no third base image to pin) is needed, and a changed tarball
# fails the build. To move the pin:
#   npm view @anthropic-ai/claude-code-linux-x64@<version> dist.integrity
ARG CLAUDE_CLI_PLATFORM=linux-x64
ARG CLAUDE_CLI_INTEGRITY=sha512-f4JWhzwYutJIHScC7/dYOPX6s28tt7ZADhsOi8zwOHq5fFPEuUeChh2NMfinSg0GrUckYxaeebC4h0DqiKzLcw==
ARG NPM_REGISTRY=https://registry.npmjs.org
# Build tags: goolm is pure-Go Olm for encrypted Matrix rooms (no libolm);
# see the build stage for the runners' tags.
ARG TAGS=goolm

FROM ${BUILD_IMAGE} AS cli
ARG CLAUDE_CLI_VERSION
ARG CLAUDE_CLI_PLATFORM
ARG CLAUDE_CLI_INTEGRITY
ARG NPM_REGISTRY
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN pkg="claude-code-${CLAUDE_CLI_PLATFORM}" \
 && case "$CLAUDE_CLI_INTEGRITY" in sha512-*) ;; *) echo "CLAUDE_CLI_INTEGRITY: want sha512-<base64>" >&2; exit 1;; esac \
 && curl -fsSL --retry 3 -o /tmp/cli.tgz "${NPM_REGISTRY}/@anthropic-ai/${pkg}/-/${pkg}-${CLAUDE_CLI_VERSION}.tgz" \
 && want=$(printf '%s' "${CLAUDE_CLI_INTEGRITY#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n') \
 && echo "${want}  /tmp/cli.tgz" | sha512sum -c - \
 && mkdir -p /out \
 && tar -xzf /tmp/cli.tgz -C /tmp package/claude \
 && install -m 0755 /tmp/package/claude /out/claude \
 && rm -rf /tmp/cli.tgz /tmp/package \
 && v=$(/out/claude --version) && [ "${v%% *}" = "$CLAUDE_CLI_VERSION" ]

# The modules depend only on go.mod and go.sum: a layer of their own,
# cached across source changes.
FROM ${BUILD_IMAGE} AS deps
WORKDIR /src
COPY go.mod go.sum ./
ARG GOPROXY
RUN go mod download

FROM ${RUNTIME_IMAGE} AS runtime
# tini is PID 1: it forwards SIGTERM to the bot (which then ends its
# sessions in order) and reaps what the sessions leave behind. git and the
# certificates are for the sessions' work. bubblewrap is the sandbox
# runner's: it works where the engine lets the container make user
# namespaces (docs/DEPLOYMENT.md, "Docker"); elsewhere the bot starts with
# local and says so.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends bubblewrap ca-certificates git tini \
 && rm -rf /var/lib/apt/lists/*
# /data holds all that must outlive the container: the bot's state
# (database, Matrix keys, each thread's CLI home with the sessions that
# --resume reads), HOME (the tools' git and ssh configuration) and the
# default working directory. State and work are apart: the bot refuses to
# start if they overlap.
RUN useradd --home-dir /data/home --no-create-home --uid 10001 --user-group --shell /bin/bash claudeops \
 && mkdir -p /data/state /data/home /data/work \
 && chown -R claudeops:claudeops /data \
 && chmod 0700 /data /data/state /data/home
COPY --from=cli /out/claude /usr/local/bin/claude

# Which of the modules' packages the bot imports (go list reads the
# source: seconds). The next stage copies only that list, so compiling
# them — minutes of CPU: go-sqlite3's C, client-go, mautrix — is a layer
# cached until the list changes, not redone at every source change.
FROM deps AS imports
ARG TAGS
COPY . .
RUN go list -tags "${TAGS}" -deps \
      -f '{{if not .Standard}}{{if .Module}}{{if not .Module.Main}}{{.ImportPath}}{{end}}{{end}}{{end}}' \
      ./cmd/claudeops >/imports

FROM deps AS depsbuilt
ARG TAGS
COPY --from=imports /imports /imports
RUN xargs env CGO_ENABLED=1 go build -tags "${TAGS}" -trimpath </imports

FROM depsbuilt AS build
COPY . .
ARG VERSION=dev
# cgo for mattn/go-sqlite3; the runtime is the same Debian release, so the
# glibc the binary links against is there. goolm: pure-Go Olm for
# encrypted Matrix rooms (no libolm). Every runner is in by default;
# --build-arg TAGS=goolm,nokubernetes,nodocker makes an image without
# those runners' clients, which holds about half the memory idle.
ARG TAGS
RUN CGO_ENABLED=1 go build -tags "${TAGS}" -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/claudeops ./cmd/claudeops

FROM runtime
COPY --from=build /out/claudeops /usr/local/bin/claudeops
USER claudeops
ENV HOME=/data/home \
    CLAUDEOPS_STATE_DIR=/data/state \
    CLAUDEOPS_WORKDIR=/data/work \
    CLAUDEOPS_CLAUDE_BIN=claude \
    CLAUDEOPS_HTTP_ADDR=:8080 \
    DISABLE_AUTOUPDATER=1 \
    LANG=C.UTF-8
VOLUME ["/data"]
WORKDIR /data
EXPOSE 8080
# No curl in a slim image: the bot checks its own /healthz.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["claudeops", "healthcheck"]
ENTRYPOINT ["tini", "--", "claudeops"]
