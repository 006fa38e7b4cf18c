package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
)

// The console as an operator meets it: the built program (the test binary
// re-executed as main) with the real CLI against the fake model API, its
// stdout and stderr read as raw bytes.

// consoleProc is `claudeops console` with its outputs as given (nil:
// captured as streams).
type consoleProc struct {
	cmd            *exec.Cmd
	stdin          io.Writer
	eof            func() // ends the input
	stdout, stderr *testkit.Output
	done           chan error
}

func startConsole(t *testing.T, env []string, stdout, stderr *os.File) *consoleProc {
	t.Helper()
	return startConsoleTyped(t, env, nil, stdout, stderr)
}

// startConsoleTyped is startConsole with input typed at a terminal: tty's
// slave is stdin, its master is where the test types.
func startConsoleTyped(t *testing.T, env []string, tty *pty, stdout, stderr *os.File) *consoleProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "console")
	cmd.Env = append(testrunner.Explicit(env), "CLAUDEOPS_TEST_RUN_MAIN=1")
	p := &consoleProc{cmd: cmd, done: make(chan error, 1)}
	if tty != nil {
		cmd.Stdin = tty.slave
		// ^D at the start of a line: the terminal's end of input.
		p.stdin, p.eof = tty.master, func() { _, _ = tty.master.Write([]byte{4}) }
	} else {
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		p.stdin, p.eof = in, func() { in.Close() }
	}
	if stdout != nil {
		cmd.Stdout = stdout
	} else {
		p.stdout = testkit.NewOutput()
		cmd.Stdout = p.stdout
	}
	if stderr != nil {
		cmd.Stderr = stderr
	} else {
		p.stderr = testkit.NewOutput()
		cmd.Stderr = p.stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *consoleProc) say(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// finish ends the input and waits for the bot to exit by itself, cleanly.
func (p *consoleProc) finish(t *testing.T) {
	t.Helper()
	p.eof()
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		if err != nil {
			t.Errorf("bot exit: %v", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("the bot did not exit after its input ended")
	}
}

// consoleEnv is a console bot's environment: the real CLI, the fake API,
// its own home, working and state directories.
func consoleEnv(t *testing.T, api *fakeanthropic.Server) (env []string, state string) {
	home, work := t.TempDir(), t.TempDir()
	state = filepath.Join(t.TempDir(), "state")
	env = testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_STATE_DIR="+state, "CLAUDEOPS_CLAUDE_BIN="+testcli.Bin(t), "CLAUDEOPS_WORKDIR="+work,
	)
	return append(env, testrunner.Env(t, home)...), state
}

// echoScript answers "ok: <text>", and after a tool "tool said: <output>".
func echoScript(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
	if trs := req.ToolResults(); len(trs) > 0 {
		return fakeanthropic.TextReply("tool said: " + trs[0].Content)
	}
	return fakeanthropic.TextReply("ok: " + req.LastUserText())
}

// TestConsoleStreamsAsItComes: a slow answer shows its first words while
// the model is still writing it. The fake model sends the first words,
// then holds the rest until the test has seen them on stdout (no timing
// involved: without streaming, nothing shows until it is released).
func TestConsoleStreamsAsItComes(t *testing.T) {
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	const first, rest = "Let me think about", " this slowly, one word after another, as a model does."
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.HasSuffix(req.LastUserText(), "take your time") {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text(first + rest)}, ChunkSize: len(first), Hold: hold}
		}
		return echoScript(ctx, req)
	})
	env, _ := consoleEnv(t, api)
	p := startConsole(t, env, nil, nil)
	p.say(t, "take your time")
	// The first words, on a line not ended yet: the rest is held.
	p.stdout.WaitMatch(t, testkit.Long, `\[main\] claude: `+first+`$`)
	release()
	p.stdout.WaitMatch(t, testkit.Long, `\[main\] claude: `+first+regexp.QuoteMeta(rest)+"\n")
	p.finish(t)
}

// TestConsolePasteOverLimit: a pasted line over the limit is refused with
// its size and the limit said; the lines typed after it are all taken,
// and nothing of the long line reaches Claude.
func TestConsolePasteOverLimit(t *testing.T) {
	tests := []struct {
		name  string
		limit string // CLAUDEOPS_CONSOLE_MAX_LINE; "" for the default
		size  int
		want  string
	}{
		{"default limit, 3 MiB pasted", "", 3 << 20, `line of 3145728 bytes refused: the limit is 1048576 bytes`},
		{"a limit of 4 KiB", "4096", 4097, `line of 4097 bytes refused: the limit is 4096 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := fakeanthropic.Start(t, echoScript)
			env, _ := consoleEnv(t, api)
			if tt.limit != "" {
				env = append(env, "CLAUDEOPS_CONSOLE_MAX_LINE="+tt.limit)
			}
			p := startConsole(t, env, nil, nil)
			p.say(t, "before")
			p.stdout.WaitMatch(t, testkit.Long, `(?m)^\[main\] claude: ok: before$`)
			p.say(t, strings.Repeat("p", tt.size))
			for _, l := range []string{"after one", "after two", "after three"} {
				p.say(t, l)
			}
			p.stdout.WaitMatch(t, testkit.Long, `(?m)^\[main\] \* `+tt.want+`.*$`)
			// Typed while a turn runs, they may be taken up together.
			p.stdout.WaitMatch(t, testkit.Long, `(?m)^\[main\] claude: (ok: )?after three\n\[main\] — ✓`)
			p.finish(t)
			var all strings.Builder
			for _, r := range api.Requests() {
				all.WriteString(r.Transcript())
			}
			for _, l := range []string{"after one", "after two", "after three"} {
				if !strings.Contains(all.String(), l) {
					t.Errorf("%q never reached Claude", l)
				}
			}
			if strings.Contains(all.String(), strings.Repeat("p", 1000)) {
				t.Error("the refused line reached Claude")
			}
		})
	}
}

// TestConsoleHostileOutput: control characters from the model's text, a
// command's input and its output reach stdout as escapes, never raw. The
// oracle is every byte the program wrote to stdout.
func TestConsoleHostileOutput(t *testing.T) {
	const text = "nul\x00 bel\x07 clear\x1b[2J up\x1b[1A link\x1b]8;;https://evil.example/\x1b\\here\x1b]8;;\x1b\\ " +
		"cr safe\rEVIL bs abc\b\b\b del\x7f c1\u009b31m nel\u0085 bidi\u202eevil\u202c zw\u200b tag\U000E0041"
	// printf writes raw ESC, BEL, CR, BS, a raw 0x9b byte and U+202E (the
	// CLI refuses a command that holds them itself); tee makes it ask. The
	// description, shown in the prompt's title, holds a raw ESC.
	const command = `printf 'out\033[2J\a\r\b\233\342\200\256done\n' | tee hostile.txt`
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		switch {
		case len(req.ToolResults()) > 0:
			return fakeanthropic.TextReply("tool said: " + req.ToolResults()[0].Content)
		case strings.HasSuffix(req.LastUserText(), "hostile text"):
			return fakeanthropic.TextReply(text)
		case strings.HasSuffix(req.LastUserText(), "hostile tool"):
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": command, "description": "print \x1b[2Jescapes"})}}
		}
		return echoScript(ctx, req)
	})
	env, _ := consoleEnv(t, api)
	p := startConsole(t, env, nil, nil)
	p.say(t, "hostile text")
	p.stdout.WaitMatch(t, testkit.Long, `(?m)^\[main\] — ✓`)
	p.say(t, "hostile tool")
	p.stdout.WaitMatch(t, testkit.Long, `(?m)^\[main\]   reply: allow`)
	p.say(t, "allow")
	p.stdout.WaitMatch(t, testkit.Long, `(?m)^\[main\] claude: tool said: .*$`)
	p.stdout.WaitMatch(t, testkit.Long, `(?s)tool said: .*\n\[main\] — ✓`)
	p.finish(t)
	out := p.stdout.Bytes()
	checkTerminalBytes(t, out)
	for _, want := range []string{`nul\x00`, `clear\x1b[2J`, `link\x1b]8;;https://evil.example/\x1b\here`, `safe\x0dEVIL`, `\x08`, `\x7f`, `\u009b31m`, `\u202eevil`, `\ue0041`, `print \x1b[2Jescapes`, `out\x1b[2J\x07`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("stdout lacks %s", want)
		}
	}
}

// checkTerminalBytes: no byte a terminal obeys but the newline, valid
// UTF-8, no C1 control, format character or line separator.
func checkTerminalBytes(t *testing.T, out []byte) {
	t.Helper()
	for i, c := range out {
		if (c < 0x20 && c != '\n') || c == 0x7f {
			t.Fatalf("byte %#02x at %d reaches the terminal: %q", c, i, out[max(0, i-80):min(len(out), i+80)])
		}
	}
	if !utf8.Valid(out) {
		t.Fatalf("invalid UTF-8 reaches the terminal:\n%q", out)
	}
	for _, r := range string(out) {
		if (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 {
			t.Fatalf("%U reaches the terminal", r)
		}
	}
}
