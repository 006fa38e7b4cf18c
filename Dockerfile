# syntax=docker/dockerfile:1
# claudeops: the Go bot (cgo, for SQLite) plus Node and the pinned Claude Code CLI.
# No Docker engine runs where this project is developed: this file is kept
# correct by reading (see README, "Docker").

ARG GO_VERSION=1.26
# Keep in step with claudeproc.TestedVersion and scripts/test.
ARG CLAUDE_CLI_VERSION=2.1.330

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# mattn/go-sqlite3 needs cgo; the runtime stage is the same Debian release,
# so the glibc the binary links against is there. goolm: pure-Go Olm for
# encrypted Matrix rooms (no libolm).
RUN CGO_ENABLED=1 go build -tags goolm -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/claudeops ./cmd/claudeops

FROM node:20-bookworm-slim AS runtime
ARG CLAUDE_CLI_VERSION
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git tini \
 && rm -rf /var/lib/apt/lists/*
RUN npm install -g --no-audit --no-fund "@anthropic-ai/claude-code@${CLAUDE_CLI_VERSION}" \
 && npm cache clean --force \
 && claude --version
RUN useradd --create-home --uid 10001 --shell /bin/bash claudeops \
 && mkdir -p /data /work \
 && chown claudeops:claudeops /data /work \
 && chmod 0700 /data
COPY --from=build /out/claudeops /usr/local/bin/claudeops

USER claudeops
ENV HOME=/home/claudeops \
    CLAUDEOPS_STATE_DIR=/data \
    CLAUDEOPS_WORKDIR=/work \
    CLAUDEOPS_CLAUDE_BIN=claude \
    DISABLE_AUTOUPDATER=1
# The bot's state (database, Matrix crypto store and recovery key) lives
# here, apart from /work where the sessions work: the bot refuses to start
# if the two overlap.
VOLUME ["/data"]
WORKDIR /work
# tini reaps the CLI's children and forwards SIGTERM for an orderly shutdown.
ENTRYPOINT ["tini", "--", "claudeops"]
