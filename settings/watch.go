package settings

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"time"
)

// MaxFileSize caps the settings file.
const MaxFileSize = 1 << 20

// Load reads and parses the settings file at path.
func Load(path string) (Layer, [32]byte, error) {
	data, _, err := readFile(path)
	if err != nil {
		return Layer{}, [32]byte{}, err
	}
	l, err := Parse(data)
	if err != nil {
		return Layer{}, [32]byte{}, fmt.Errorf("settings file %s: %w", path, err)
	}
	return l, sha256.Sum256(data), nil
}

// readFile reads the file, and when it was last written.
func readFile(path string) ([]byte, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read the settings file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read the settings file: %w", err)
	}
	if !st.Mode().IsRegular() || st.Size() > MaxFileSize {
		return nil, time.Time{}, fmt.Errorf("read the settings file %s: a regular file of at most %d bytes", path, MaxFileSize)
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil && st.Size() > 0 {
		return nil, time.Time{}, fmt.Errorf("read the settings file: %w", err)
	}
	return data, st.ModTime(), nil
}

// Watcher keeps a Resolver's file values those of the file on disk: it
// reads the file again when its content changes (looked at every
// Interval) or when Reload is sent to, and puts it in place only when the
// whole file is good. A bad file leaves the last good values and is said
// in the log, by Resolver.FileProblem and to Refused.
type Watcher struct {
	Resolver *Resolver
	Path     string
	Interval time.Duration
	Log      *slog.Logger
	// Reload asks for a read now (SIGHUP).
	Reload <-chan struct{}
	// Refused, when set, is told of each bad file (once per content) and
	// Applied of each good one read after start.
	Refused func(err error)
	Applied func()
	// Last is the digest of the content in use (Load's).
	Last [32]byte
	// Settle, when above 0, is how long a changed content must stay the
	// same before it is read as the file: a file written in place is
	// read empty or half-written while its writer is at it. A look that
	// finds a file giving no settings where the one in use gives some
	// refuses it (a truncation would drop every restriction); a Reload
	// reads at once and applies even that: whoever sends it says the file
	// is written.
	Settle time.Duration
}

// Run watches until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	t := time.NewTicker(w.Interval)
	defer t.Stop()
	var refused string // the last refused read's key: said once
	for {
		forced := false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.Reload:
			forced = true
		}
		data, mod, err := readFile(w.Path)
		sum := sha256.Sum256(data)
		key := readKey(sum, err)
		if err == nil && sum == w.Last && !forced && w.Resolver.FileProblem() == nil {
			continue
		}
		if key == refused && !forced {
			continue
		}
		if !forced && w.Settle > 0 && !w.settled(ctx, key+mod.String()) {
			continue // changing still: the next look reads it again
		}
		var l Layer
		if err == nil {
			if l, err = Parse(data); err != nil {
				err = fmt.Errorf("settings file %s: %w", w.Path, err)
			} else if ps := w.Resolver.CheckFile(l); len(ps) > 0 {
				err = fmt.Errorf("settings file %s: %w", w.Path, ps)
			} else if !forced && len(l.values) == 0 && w.Resolver.fileGives() {
				// A file truncated or half-written would drop every
				// restriction it gives (a channel's users, its budgets):
				// taking them all away is said with SIGHUP.
				err = fmt.Errorf("settings file %s gives no settings now (emptied, or still being written): the last good settings stay; send SIGHUP to apply it as it is", w.Path)
			}
		}
		if err != nil {
			refused = key
			w.Resolver.FileRefused(err)
			w.Log.Error("settings file refused; the last good settings stay", "err", err)
			if w.Refused != nil {
				w.Refused(err)
			}
			continue
		}
		refused = ""
		w.Resolver.SetFile(l)
		changed := sum != w.Last
		w.Last = sum
		w.Log.Info("settings file read", "path", w.Path, "changed", changed)
		if w.Applied != nil {
			w.Applied()
		}
	}
}

// readKey tells one read's outcome from another's: the content's digest,
// or why it could not be read (a file gone stays gone: said once).
func readKey(sum [32]byte, readErr error) string {
	if readErr != nil {
		return "unread: " + readErr.Error()
	}
	return string(sum[:])
}

// settled reports whether the file reads as key (its readKey and when
// it was written: a writer may put back what it had) still after Settle.
func (w *Watcher) settled(ctx context.Context, key string) bool {
	t := time.NewTimer(w.Settle)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	}
	data, mod, err := readFile(w.Path)
	return readKey(sha256.Sum256(data), err)+mod.String() == key
}
