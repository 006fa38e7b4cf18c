// Package metrics is what /metrics shows: the bot's collectors, on a
// registry of their own (never Prometheus' global one), served in the
// Prometheus text format by Handler.
//
// Its methods are what the other packages' observers are told
// (bot.Observer through cmd/claudeops, scheduler.Observer,
// adapters.APIObserver): each returns at once and is safe from any
// goroutine. No label takes an unbounded set of values: every label value
// passes through a cap (labels.go), channels included, so a caller that
// passed ids by mistake could not grow the series without end.
//
// # Files
//
// metrics.go: the collectors on a registry of their own and the handler;
// observe.go: the methods the observers are told through (bot.Observer by
// way of cmd/claudeops/metrics.go, scheduler.Observer,
// adapters.APIObserver; each package defines its observer where it calls
// it, a no-op by default); labels.go: every label value made valid UTF-8
// and at most 128 bytes, the first 100 (platform, channel) pairs keeping
// their channel id and the rest reading "other", any other label at most
// 16 values (API methods 64). It imports nothing of this repository.
package metrics
