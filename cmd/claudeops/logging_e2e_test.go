package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testkit"
)

// pty is a pseudo-terminal: what the program writes to its side (the
// slave) the test reads from the master, as a terminal would show it.
type pty struct {
	master, slave *os.File
	out           *testkit.Output
	done          chan struct{}
}

// openPTY opens a pseudo-terminal through /dev/ptmx (posix_openpt,
// unlockpt, ptsname) and starts reading what is written to it.
func openPTY(t *testing.T) *pty {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &pty{master: m, slave: s, out: testkit.NewOutput(), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		// Ends with EIO once no process holds the slave open.
		_, _ = io.Copy(p.out, m)
	}()
	t.Cleanup(func() {
		s.Close()
		m.Close()
		<-p.done
	})
	return p
}

// text is what the terminal got, with the terminal's own CRLF (ONLCR)
// back to LF.
func (p *pty) text() string { return strings.ReplaceAll(string(p.out.Bytes()), "\r\n", "\n") }

// logLine matches a line of the bot's log (slog's text format).
var logLine = regexp.MustCompile(`(?m)^time=\S+ level=[A-Z]+ msg=`)

// outputs are where a test bot's stdout and stderr go, and what the test
// reads of them; tty, when set, is the terminal they share.
type outputs struct {
	stdout, stderr *os.File
	conv, logs     func() string
	tty            *pty
}

// TestConsoleLogsNeverInConversation runs the console as an operator
// would: with stdout and stderr as pipes, as two terminals, as one
// terminal, and with stdin on that terminal too (a shell: what is typed
// is echoed by the terminal). The conversation on stdout never holds a log
// line; the log is on stderr, or, when stderr is the conversation's
// terminal, in a file (0600) that one line on stderr names at start. The
// oracles are what the pipes and the terminals received (read from the
// pty masters) and the file on disk.
func TestConsoleLogsNeverInConversation(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T) outputs
		typed    bool // stdin is the terminal too, typed at
		explicit bool // CLAUDEOPS_LOG_FILE set
		toFile   bool
	}{
		{"pipes", pipes, false, false, false},
		{"two terminals", twoTerminals, false, false, false},
		{"one terminal, default file", oneTerminal, false, false, true},
		{"one terminal, CLAUDEOPS_LOG_FILE", oneTerminal, false, true, true},
		{"one terminal for all three, typed", oneTerminal, true, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := fakeanthropic.Start(t, echoScript)
			env, state := consoleEnv(t, api)
			env = append(env, "CLAUDEOPS_LOG_LEVEL=debug")
			file := filepath.Join(state, "claudeops.log")
			if tt.explicit {
				file = filepath.Join(t.TempDir(), "bot.log")
				env = append(env, "CLAUDEOPS_LOG_FILE="+file)
			}
			o := tt.setup(t)
			var tty *pty
			if tt.typed {
				tty = o.tty
			}
			p := startConsoleTyped(t, env, tty, o.stdout, o.stderr)
			// The child holds its own copies: the masters see EOF (EIO)
			// once it has exited.
			o.stdout.Close()
			o.stderr.Close()
			p.say(t, "hello")
			waitOutput(t, o.conv, "claude: ok: hello")
			p.say(t, "how are you")
			waitOutput(t, o.conv, "claude: ok: how are you")
			p.finish(t)
			checkLogPlace(t, o, file, tt.toFile)
		})
	}
}

// checkLogPlace: no log line in the conversation; the log on stderr, or in
// file and named once on the terminal.
func checkLogPlace(t *testing.T, o outputs, file string, toFile bool) {
	t.Helper()
	if l := logLine.FindString(o.conv()); l != "" {
		t.Errorf("a log line inside the conversation: %q\n%s", l, o.conv())
	}
	log, err := os.ReadFile(file)
	if !toFile {
		if !logLine.MatchString(o.logs()) || !strings.Contains(o.logs(), `msg="claude started"`) {
			t.Errorf("stderr lacks the log:\n%s", o.logs())
		}
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a log file was written (%v)", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), `msg="claude started"`) || !strings.Contains(string(log), "level=DEBUG") {
		t.Errorf("the log file lacks the log:\n%s", log)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("log file mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	want := "claudeops: stdout and stderr are one terminal: the log goes to " + file + "\n"
	if n := strings.Count(o.conv(), want); n != 1 {
		t.Errorf("the terminal shows %d times %q:\n%s", n, want, o.conv())
	}
}

func pipes(t *testing.T) outputs {
	t.Helper()
	read := func() (*os.File, func() string) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		s := testkit.NewOutput()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = io.Copy(s, r) }()
		t.Cleanup(func() { r.Close(); wg.Wait() })
		return w, func() string { return s.String() }
	}
	var o outputs
	o.stdout, o.conv = read()
	o.stderr, o.logs = read()
	return o
}

func twoTerminals(t *testing.T) outputs {
	a, b := openPTY(t), openPTY(t)
	return outputs{stdout: a.slave, stderr: b.slave, conv: a.text, logs: b.text}
}

func oneTerminal(t *testing.T) outputs {
	p := openPTY(t)
	// Two files open on one terminal, as a shell's 1 and 2 are.
	again, err := os.OpenFile(p.slave.Name(), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return outputs{stdout: p.slave, stderr: again, conv: p.text, logs: p.text, tty: p}
}

// waitOutput waits for what an output received to hold s (a pty's master
// may hand over its last bytes after the process exited).
func waitOutput(t *testing.T, got func() string, s string) {
	t.Helper()
	testkit.WaitForf(t, testkit.Long, func() bool { return strings.Contains(got(), s) }, func() string {
		return fmt.Sprintf("the output lacks %q:\n%s", s, got())
	})
}

// TestSameTerminal: which outputs count as one terminal.
func TestSameTerminal(t *testing.T) {
	a, b := openPTY(t), openPTY(t)
	again, err := os.OpenFile(a.slave.Name(), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var buf bytes.Buffer
	tests := []struct {
		name string
		x, y io.Writer
		want bool
	}{
		{"one file", a.slave, a.slave, true},
		{"one terminal opened twice", a.slave, again, true},
		{"two terminals", a.slave, b.slave, false},
		{"a terminal and a pipe", a.slave, w, false},
		{"one pipe", w, w, false},
		{"not files", &buf, &buf, false},
	}
	for _, tt := range tests {
		if got := sameTerminal(tt.x, tt.y); got != tt.want {
			t.Errorf("%s: sameTerminal = %v, want %v", tt.name, got, tt.want)
		}
	}
}
