package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Where the log goes. It is written to stderr, never to stdout, where the
// console holds the conversation. But when the console runs and stdout and
// stderr are one terminal (the usual `claudeops` in a shell), stderr's lines
// would still land in the middle of the conversation: the log then goes to
// a file (CLAUDEOPS_LOG_FILE, by default claudeops.log in the state
// directory), and one line on stderr says where, before the conversation
// starts. When they are not one terminal (a pipe, a file, another terminal,
// or both redirected into one file on purpose) stderr is where the operator
// sent it.

// newLogger is the run's logger on w: slog's text handler, or with format
// "json" its JSON handler, one object per line for a log pipeline. (The
// bot adds the thread and its running turn to the lines that have one.)
// A level or format the checks refuse falls back to info and text, so the
// refusal itself can be logged.
func newLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// logPath is the log file: CLAUDEOPS_LOG_FILE, else claudeops.log in the
// state directory, else beside the database (like the Matrix files).
func logPath(c config) string {
	switch {
	case c.LogFile != "":
		return absPath(c.LogFile)
	case c.StateDir != "":
		return filepath.Join(c.StateDir, "claudeops.log")
	}
	db := absPath(c.DB)
	if p := strings.TrimSuffix(db, filepath.Ext(db)) + ".log"; p != db {
		return p
	}
	return db + ".log"
}

// consoleLogger is the run's logger: log as it is, unless the console runs
// and stdout and stderr are one terminal; then a logger on the log file
// (made 0600: the log names users and threads), which the caller closes.
func consoleLogger(c config, consoleOnly bool, log *slog.Logger, stdout, stderr io.Writer) (*slog.Logger, io.Closer, error) {
	if !usesConsole(c, consoleOnly) || !sameTerminal(stdout, stderr) {
		return log, noClose{}, nil
	}
	path := logPath(c)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return log, nil, fmt.Errorf("open the log file: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return log, nil, fmt.Errorf("make the log file private: %w", err)
	}
	fmt.Fprintf(stderr, "claudeops: stdout and stderr are one terminal: the log goes to %s\n", path)
	return newLogger(f, c.LogLevel, c.LogFormat), f, nil
}

type noClose struct{}

func (noClose) Close() error { return nil }

// usesConsole: the run has the console (`claudeops console`, or no
// platform configured).
func usesConsole(c config, consoleOnly bool) bool {
	return consoleOnly || !c.Platforms.anyConfigured()
}

// sameTerminal: a and b are files open on one terminal: both are
// terminals (they answer TCGETS) and name the same device.
func sameTerminal(a, b io.Writer) bool {
	fa, ok1 := a.(*os.File)
	fb, ok2 := b.(*os.File)
	if !ok1 || !ok2 {
		return false
	}
	var sa, sb unix.Stat_t
	if unix.Fstat(int(fa.Fd()), &sa) != nil || unix.Fstat(int(fb.Fd()), &sb) != nil {
		return false
	}
	if !isTerminal(fa) || !isTerminal(fb) {
		return false
	}
	return sa.Rdev == sb.Rdev || (sa.Dev == sb.Dev && sa.Ino == sb.Ino)
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// logFileCheck: an explicit CLAUDEOPS_LOG_FILE is a file the bot can
// append to, or create in an existing directory it can write in. (The
// default lies in the state directory, which stateChecks covers.)
func logFileCheck(c config) problem {
	p := problem{name: "CLAUDEOPS_LOG_FILE"}
	if c.LogFile == "" {
		return p
	}
	path := absPath(c.LogFile)
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.Mode().IsRegular():
		p.want = "is not a regular file: want a file the log is appended to"
	case err == nil:
		if err := unix.Access(path, unix.W_OK); err != nil {
			p.want = fmt.Sprintf("the bot's user (uid %d) may not write it: %v", os.Geteuid(), err)
		}
	case !os.IsNotExist(err):
		p.want = fmt.Sprintf("cannot be reached: %v", unwrapPath(err))
	default:
		dir := filepath.Dir(path)
		if d := dirCheck("CLAUDEOPS_LOG_FILE", dir, unix.W_OK|unix.X_OK); d.want != "" {
			p.want = fmt.Sprintf("its directory %s %s", dir, d.want)
		}
	}
	return p
}
