package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// The shutdown signals, SIGINT and SIGTERM, are the same for every
// platform: the first cancels the run's context, and the app shuts down
// in order (run.go); another within forceWindow of the one before forces
// the exit: every session killed (sessionKiller), nothing drained, exit
// code exitForced. One after forceWindow starts the window again. A
// signal while the forced exit kills the sessions exits at once.

// forceWindow is how soon after a shutdown signal another forces the exit.
const forceWindow = 5 * time.Second

// forceKillTimeout bounds the wait for the killed sessions' ends (a
// container's removal, a Pod's deletion) on a forced exit.
const forceKillTimeout = 10 * time.Second

// sessionKiller ends every session at once for a forced exit, and returns
// once each one's runner has seen it end (or ctx ends): how many it
// killed, and an error naming those left (*bot.Bot).
type sessionKiller interface {
	Kill(ctx context.Context) (int, error)
}

// stopper turns the shutdown signals into the run's two ends.
type stopper struct {
	sigs   chan os.Signal
	cancel context.CancelFunc
	exit   func(code int)
	stderr io.Writer

	done chan struct{}

	mu     sync.Mutex
	log    *slog.Logger
	say    bool // also on stderr: the log is in a file, stderr the terminal
	killer sessionKiller
}

// notifyShutdown starts watching the shutdown signals: the context it
// returns ends at the first. stop stops watching.
func notifyShutdown(parent context.Context, log *slog.Logger, stderr io.Writer, exit func(int)) (ctx context.Context, s *stopper, stop func()) {
	ctx, s, end := newStopper(parent, log, stderr, exit)
	signal.Notify(s.sigs, os.Interrupt, syscall.SIGTERM)
	return ctx, s, func() {
		signal.Stop(s.sigs)
		end()
	}
}

// newStopper is a stopper watching its channel sigs, which nothing
// signals yet.
func newStopper(parent context.Context, log *slog.Logger, stderr io.Writer, exit func(int)) (context.Context, *stopper, func()) {
	ctx, cancel := context.WithCancel(parent)
	s := &stopper{sigs: make(chan os.Signal, 4), cancel: cancel, exit: exit, stderr: stderr, log: log, done: make(chan struct{})}
	go s.watch()
	return ctx, s, func() {
		close(s.done)
		cancel()
	}
}

// running: log is the run's logger (toFile: in a file, so stderr is told
// too), and k ends its sessions on a forced exit.
func (s *stopper) running(log *slog.Logger, toFile bool, k sessionKiller) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log, s.say, s.killer = log, toFile, k
}

func (s *stopper) watch() {
	var (
		last    time.Time
		forcing bool
	)
	for {
		var sig os.Signal
		select {
		case sig = <-s.sigs:
		case <-s.done:
			return
		}
		now := time.Now()
		switch {
		case forcing:
			s.tell(slog.LevelError, "forced exit: another "+sig.String()+" while the sessions are killed; exiting at once", "code", exitForced)
			s.exit(exitForced)
		case !last.IsZero() && now.Sub(last) <= forceWindow:
			forcing = true
			go s.force(sig)
		default:
			s.tell(slog.LevelWarn, fmt.Sprintf("%s: shutting down; press Ctrl-C again within %s to force the exit (sessions killed, nothing drained)", sig, forceWindow),
				"signal", sig.String())
			s.cancel()
		}
		last = now
	}
}

// force kills every session, says how that went, and exits exitForced.
func (s *stopper) force(sig os.Signal) {
	s.tell(slog.LevelError, fmt.Sprintf("forced exit: a second %s within %s; killing every session, nothing is drained", sig, forceWindow),
		"signal", sig.String(), "code", exitForced)
	s.mu.Lock()
	k := s.killer
	s.mu.Unlock()
	if k != nil {
		ctx, cancel := context.WithTimeout(context.Background(), forceKillTimeout)
		n, err := k.Kill(ctx)
		cancel()
		if err != nil {
			s.tell(slog.LevelError, "forced exit: sessions killed, some not seen ending", "killed", n, "err", err)
		} else {
			s.tell(slog.LevelWarn, "forced exit: sessions killed", "killed", n)
		}
	}
	s.exit(exitForced)
}

// tell logs msg, and says it on stderr when the log is not there.
func (s *stopper) tell(level slog.Level, msg string, args ...any) {
	s.mu.Lock()
	log, say := s.log, s.say
	s.mu.Unlock()
	log.Log(context.Background(), level, msg, args...)
	if say {
		fmt.Fprintf(s.stderr, "claudeops: %s\n", msg)
	}
}
