package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/claudeops/claudeops/health"
	"github.com/claudeops/claudeops/settings"
)

// settingsPoll is how often the settings file is looked at for a change;
// a changed one is read once it has stayed the same for settingsSettle (a
// file written in place is not taken half-written, nor empty).
const (
	settingsPoll   = 2 * time.Second
	settingsSettle = 500 * time.Millisecond
)

// settingsTies is what the settings file's watch takes from the process:
// SIGHUP, taken from the start of a run (startBot), and where to tell the
// operator of a refused file: the console's terminal when the log goes to
// a file, else nil (the log is the operator's).
type settingsTies struct {
	hup    chan os.Signal
	notice io.Writer
}

// settingsFile keeps the running bot's settings those of the settings
// file (CLAUDEOPS_SETTINGS_FILE): read again when it changes or on
// SIGHUP, put in place whole or not at all. A refused file keeps the last
// good one, and is said in the log, on /readyz (not a readiness reason:
// the bot works on the last good settings), by Resolver.FileProblem (the
// settings command shows it) and, once per content, to the operator at
// the console's terminal.
type settingsFile struct {
	path string
	res  *settings.Resolver
	log  *slog.Logger
	ties settingsTies
	sum  [32]byte // the content read at start

	mu    sync.Mutex
	state health.SettingsFile
}

// newSettingsFile is the file at cfg's path, read at start into res.
func newSettingsFile(cfg config, res *settings.Resolver, log *slog.Logger, ties settingsTies) *settingsFile {
	f := &settingsFile{path: cfg.SettingsFile, res: res, log: log, ties: ties, sum: cfg.settingsSum}
	f.state = health.SettingsFile{InUse: hex.EncodeToString(cfg.settingsSum[:]), Since: time.Now()}
	if f.path != "" {
		log.Info("settings file read", "path", f.path, "sha256", f.state.InUse)
	}
	return f
}

// run watches the file until ctx ends, and reads it again at each SIGHUP
// (without a file, a SIGHUP is said and ignored).
func (f *settingsFile) run(ctx context.Context) error {
	reload := make(chan struct{}, 1)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-f.ties.hup:
				if f.path == "" {
					f.log.Info("SIGHUP: no settings file (CLAUDEOPS_SETTINGS_FILE) to read again")
					continue
				}
				f.log.Info("SIGHUP: reading the settings file again", "path", f.path)
				select {
				case reload <- struct{}{}:
				default: // one read pending is enough
				}
			}
		}
	}()
	if f.path == "" {
		<-ctx.Done()
		return nil
	}
	w := &settings.Watcher{Resolver: f.res, Path: f.path, Interval: settingsPoll, Log: f.log, Reload: reload,
		Last: f.sum, Settle: settingsSettle}
	w.Refused = f.refused
	w.Applied = func() { f.applied(w.Last) }
	w.Run(ctx)
	return nil
}

// refused is told of each bad content once (Watcher.Refused).
func (f *settingsFile) refused(err error) {
	f.mu.Lock()
	f.state.Refused, f.state.RefusedAt = err.Error(), time.Now()
	f.mu.Unlock()
	if f.ties.notice != nil {
		fmt.Fprintf(f.ties.notice, "claudeops: the settings file was refused; the last good settings stay: %s\n", oneLine(err.Error()))
	}
}

// applied: a good file was read (Watcher.Applied); sum is its content's.
func (f *settingsFile) applied(sum [32]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if in := hex.EncodeToString(sum[:]); in != f.state.InUse {
		f.state.InUse, f.state.Since = in, time.Now()
	}
	f.state.Refused, f.state.RefusedAt = "", time.Time{}
}

// report is what /readyz shows (health.Config.SettingsFile).
func (f *settingsFile) report() health.SettingsFile {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state
}
