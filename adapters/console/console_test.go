package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/testkit"
)

var (
	mainT  = Thread("main")
	otherT = Thread("other")
	ctx    = context.Background()
)

// typist runs a console over a pipe and collects what it delivers.
type typist struct {
	t      *testing.T
	a      *Adapter
	in     *io.PipeWriter
	out    *testkit.Output
	events chan adapters.Event
	fail   error // what deliver returns
	done   chan error
	cancel context.CancelFunc
}

func startTypist(t *testing.T, o Options) *typist { return startTypistFailing(t, o, nil) }

// startTypistFailing's deliver returns fail.
func startTypistFailing(t *testing.T, o Options, fail error) *typist {
	t.Helper()
	pr, pw := io.Pipe()
	out := testkit.NewOutput()
	o.In, o.Out = pr, out
	ty := &typist{t: t, a: New(o), in: pw, out: out, events: make(chan adapters.Event, 100), done: make(chan error, 1), fail: fail}
	runCtx, cancel := context.WithCancel(context.Background())
	ty.cancel = cancel
	go func() {
		ty.done <- ty.a.Run(runCtx, func(_ context.Context, ev adapters.Event) error {
			ty.events <- ev
			return ty.fail
		})
	}()
	t.Cleanup(func() {
		cancel()
		pw.Close()
	})
	return ty
}

func (ty *typist) say(lines ...string) {
	ty.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(ty.in, l+"\n"); err != nil {
			ty.t.Fatal(err)
		}
	}
}

func (ty *typist) next() adapters.Event {
	ty.t.Helper()
	select {
	case ev := <-ty.events:
		return ev
	case <-time.After(5 * time.Second):
		ty.t.Fatalf("no event; output so far:\n%s", ty.out.String())
		return adapters.Event{}
	}
}

// none checks that nothing was delivered for what was typed so far: a
// marker line typed after it is the next event.
func (ty *typist) none() {
	ty.t.Helper()
	ty.say("marker")
	if ev := ty.next(); ev.Message.Text != "marker" {
		ty.t.Errorf("delivered %+v, want nothing", ev)
	}
}

// close ends the input and waits for Run.
func (ty *typist) close() error {
	ty.t.Helper()
	ty.in.Close()
	select {
	case err := <-ty.done:
		return err
	case <-time.After(5 * time.Second):
		ty.t.Fatal("Run did not return after EOF")
		return nil
	}
}

func TestInputLinesAreMessages(t *testing.T) {
	ty := startTypist(t, Options{UserName: "Ana"})
	ty.say("hello there", "  second, with spaces around  ")
	a, b := ty.next(), ty.next()
	for i, tc := range []struct {
		got  adapters.Event
		text string
	}{{a, "hello there"}, {b, "second, with spaces around"}} {
		m := tc.got.Message
		if m == nil || tc.got.Click != nil {
			t.Fatalf("event %d is not a message: %+v", i, tc.got)
		}
		if tc.got.Thread != mainT || tc.got.User != (adapters.User{ID: OperatorID, Name: "Ana"}) || m.Text != tc.text || !m.Mentioned || len(m.Files) != 0 {
			t.Errorf("event %d:\n got %+v %+v\nwant thread %v, user %s, text %q, mentioned", i, tc.got, *m, mainT, OperatorID, tc.text)
		}
		if m.ID == "" {
			t.Errorf("event %d has no id: %+v", i, *m)
		}
	}
	if a.Message.ID == b.Message.ID {
		t.Errorf("two lines share the message id %q", a.Message.ID)
	}
	if err := ty.close(); err != nil {
		t.Errorf("Run after EOF: %v", err)
	}
}

// Message ids are the bot's dedupe key: they must differ across restarts
// of the console (a new adapter), not only within one.
func TestInputMessageIDsUniqueAcrossAdapters(t *testing.T) {
	seen := map[string]bool{}
	for range 2 {
		ty := startTypist(t, Options{}) // the real clock: a restart is later
		for i := range 50 {
			ty.say(fmt.Sprintf("line %d", i))
			id := ty.next().Message.ID
			if seen[id] {
				t.Fatalf("message id %q reused", id)
			}
			seen[id] = true
		}
		if err := ty.close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestInputThreadCommand(t *testing.T) {
	ty := startTypist(t, Options{})
	ty.say("/thread")
	ty.say("/thread deploys")
	ty.say("in deploys")
	if ev := ty.next(); ev.Thread != Thread("deploys") || ev.Message.Text != "in deploys" {
		t.Errorf("after /thread deploys: %+v", ev)
	}
	ty.say("/thread", "/thread two words", "/thread a/b", "/threads are not a command")
	if ev := ty.next(); ev.Message.Text != "/threads are not a command" || ev.Thread != Thread("deploys") {
		t.Errorf("got %+v", ev)
	}
	ty.say("/thread main", "back")
	if ev := ty.next(); ev.Thread != mainT || ev.Message.Text != "back" {
		t.Errorf("after /thread main: %+v", ev)
	}
	if err := ty.close(); err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, filepath.Join("testdata", "thread-command.golden"), ty.out.String())
}

func TestInputBlankLinesIgnored(t *testing.T) {
	ty := startTypist(t, Options{})
	ty.say("", "   ", "\t")
	ty.none()
	if out := ty.out.String(); out != "" {
		t.Errorf("blank lines printed %q", out)
	}
}

func TestInputAsUser(t *testing.T) {
	t.Run("with test hooks", func(t *testing.T) {
		ty := startTypist(t, Options{TestHooks: true})
		ty.say("/as bob   allow thread  ")
		ev := ty.next()
		if ev.User != (adapters.User{ID: "bob", Name: "bob"}) || ev.Message.Text != "allow thread" || ev.Thread != mainT {
			t.Errorf("got %+v", ev)
		}
		ty.say("/as bob", "/as bob   ")
		ty.none()
	})
	t.Run("without", func(t *testing.T) {
		ty := startTypist(t, Options{})
		ty.say("/as bob allow")
		ev := ty.next()
		if ev.User.ID != OperatorID || ev.Message.Text != "/as bob allow" {
			t.Errorf("/as without test hooks: %+v", ev)
		}
	})
}

func TestInputEOF(t *testing.T) {
	ty := startTypist(t, Options{})
	select {
	case <-ty.a.InputClosed():
		t.Fatal("InputClosed before EOF")
	default:
	}
	ty.say("last words")
	ty.next()
	if err := ty.close(); err != nil {
		t.Errorf("Run returned %v at EOF, want nil", err)
	}
	select {
	case <-ty.a.InputClosed():
	default:
		t.Error("InputClosed not closed at EOF")
	}
}

func TestInputContextEnds(t *testing.T) {
	ty := startTypist(t, Options{})
	ty.cancel()
	select {
	case err := <-ty.done:
		if err != nil {
			t.Errorf("Run returned %v when ctx ended", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return when ctx ended")
	}
}

func TestInputDeliverFails(t *testing.T) {
	ty := startTypistFailing(t, Options{}, errors.New("bot is shutting down"))
	ty.say("hello")
	ty.next()
	if err := ty.close(); err != nil {
		t.Fatal(err)
	}
	if got, want := ty.out.String(), "[main] * not delivered: bot is shutting down\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

// A line over the limit is refused and said so, not an input error: Run
// goes on to EOF (input_limit_test.go has the lines after it).
func TestInputLineTooLong(t *testing.T) {
	pr, pw := io.Pipe()
	out := testkit.NewOutput()
	a := New(Options{In: pr, Out: out})
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, func(context.Context, adapters.Event) error { return nil }) }()
	go func() {
		_, _ = pw.Write(bytes.Repeat([]byte("x"), 2<<20))
		pw.Close()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v, want nil at EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
	if !strings.Contains(out.String(), "line of 2097152 bytes refused: the limit is 1048576 bytes") {
		t.Errorf("no refusal in %q", out.String())
	}
	pr.Close()
}

// TestOwnCommandsListed: what the console takes itself, help lists (the
// test hooks aside), each with what it does.
func TestOwnCommandsListed(t *testing.T) {
	got := New(Options{}).Commands()
	var want []string
	for _, c := range ownCommands {
		if !c.testHook {
			want = append(want, c.Usage)
		}
	}
	var usages []string
	for _, c := range got {
		usages = append(usages, c.Usage)
		if c.Help == "" || !strings.HasPrefix(c.Usage, "/") {
			t.Errorf("%+v: a line the console takes, with what it does", c)
		}
	}
	if !slices.Equal(usages, want) || !slices.Contains(usages, "/thread [<name>]") {
		t.Errorf("Commands = %q, want %q, /thread among them", usages, want)
	}
}
