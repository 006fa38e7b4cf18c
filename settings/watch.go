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
	data, err := readFile(path)
	if err != nil {
		return Layer{}, [32]byte{}, err
	}
	l, err := Parse(data)
	if err != nil {
		return Layer{}, [32]byte{}, fmt.Errorf("settings file %s: %w", path, err)
	}
	return l, sha256.Sum256(data), nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the settings file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read the settings file: %w", err)
	}
	if !st.Mode().IsRegular() || st.Size() > MaxFileSize {
		return nil, fmt.Errorf("read the settings file %s: a regular file of at most %d bytes", path, MaxFileSize)
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil && st.Size() > 0 {
		return nil, fmt.Errorf("read the settings file: %w", err)
	}
	return data, nil
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
}

// Run watches until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	t := time.NewTicker(w.Interval)
	defer t.Stop()
	var refused [32]byte
	for {
		forced := false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.Reload:
			forced = true
		}
		data, err := readFile(w.Path)
		sum := sha256.Sum256(data)
		if err == nil && sum == w.Last && !forced && w.Resolver.FileProblem() == nil {
			continue
		}
		if err == nil && sum == refused && !forced {
			continue
		}
		var l Layer
		if err == nil {
			if l, err = Parse(data); err != nil {
				err = fmt.Errorf("settings file %s: %w", w.Path, err)
			}
		}
		if err != nil {
			refused = sum
			w.Resolver.FileRefused(err)
			w.Log.Error("settings file refused; the last good settings stay", "err", err)
			if w.Refused != nil {
				w.Refused(err)
			}
			continue
		}
		w.Resolver.SetFile(l)
		changed := sum != w.Last
		w.Last = sum
		w.Log.Info("settings file read", "path", w.Path, "changed", changed)
		if w.Applied != nil {
			w.Applied()
		}
	}
}
