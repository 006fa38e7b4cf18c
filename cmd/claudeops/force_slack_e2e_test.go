package main

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testkit"
)

// TestSlackTypoAndForcedExit: on Slack as at the console, a typo of a
// command is asked about and spends no turn (the fake model API's log),
// and two SIGINTs during a turn force the exit (130), leaving no session
// process (/proc): the signals are cmd's, whatever the platform.
func TestSlackTypoAndForcedExit(t *testing.T) {
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	r := startSlackTools(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if strings.HasSuffix(req.LastUserText(), "take your time") {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("thinking it over")}, Hold: hold}
		}
		return fakeanthropic.TextReply("ok: " + req.LastUserText())
	})
	const general, alice = "C0GENERAL1", "U0ALICE001"
	typo := r.fs.Post(alice, general, "<@U0FAKEBOT1> stauts")
	if !r.fs.WaitFor(testkit.Long, func() bool {
		return slices.ContainsFunc(r.fs.Thread(general, typo), func(m fakeslack.Message) bool {
			return strings.Contains(m.VisibleText(), "Did you mean `status`? Nothing was sent to Claude.")
		})
	}) {
		t.Fatalf("no did-you-mean in the thread: %+v; the bot's log:\n%s", r.fs.Thread(general, typo), r.bot.stderr.String())
	}
	if n := len(r.api.Requests()); n != 0 {
		t.Errorf("the typo reached the model API: %d requests", n)
	}
	r.fs.Post(alice, general, "<@U0FAKEBOT1> take your time")
	if _, ok := r.api.TryWaitRequests(1, testkit.Long); !ok {
		t.Fatalf("the turn did not start; the bot's log:\n%s", r.bot.stderr.String())
	}
	for _, logged := range []string{"press Ctrl-C again within 5s", "forced exit: a second interrupt within 5s"} {
		if err := r.bot.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		testkit.WaitForf(t, testkit.Long, func() bool { return strings.Contains(r.bot.stderr.String(), logged) }, func() string {
			return "the log lacks " + logged + ":\n" + r.bot.stderr.String()
		})
	}
	select {
	case err := <-r.bot.done:
		r.bot.done <- err // for the cleanup
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitForced {
			t.Errorf("exit: %v, want code %d", err, exitForced)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the bot did not exit after the second SIGINT; its log:\n%s", r.bot.stderr.String())
	}
	if left := claudes(r.home); len(left) > 0 {
		t.Errorf("session processes left after the forced exit: %v", left)
	}
	if !strings.Contains(r.bot.stderr.String(), `msg="forced exit: sessions killed" killed=1`) {
		t.Errorf("the log does not say one session was killed:\n%s", r.bot.stderr.String())
	}
}
