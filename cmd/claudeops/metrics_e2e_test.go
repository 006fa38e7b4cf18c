package main

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
)

// End-to-end tests of /metrics: the built bot (the test binary re-run as
// main) with the real CLI on the fake model API; the exposition is read
// over HTTP and parsed by Prometheus' own text parser, and checked with
// its linter.

var listeningRE = regexp.MustCompile(`msg="http listening" addr=(\S+)`)

// httpAddr waits until log (the bot's stderr so far) says where the HTTP
// server listens.
func httpAddr(t *testing.T, log func() string) string {
	t.Helper()
	var addr string
	testkit.WaitForf(t, 60*time.Second, func() bool {
		if m := listeningRE.FindStringSubmatch(log()); m != nil {
			addr = m[1]
		}
		return addr != ""
	}, func() string { return "the bot did not say where it listens; log:\n" + log() })
	return addr
}

// scrape reads addr's /metrics as Prometheus would (text format).
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// sample is one series' value (a histogram's count), 0 when absent.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	f := fams[name]
	if f == nil {
		return 0
	}
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		for _, l := range m.GetLabel() {
			if want[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}

// metric names a series: its name and label pairs.
type metric struct {
	name   string
	labels []string
}

func (m metric) String() string { return fmt.Sprintf("%s%q", m.name, m.labels) }

// waitMetric scrapes until ok holds of m's value (within a minute: what
// moves it is the end of a turn, or a platform's answer), and returns
// the last scrape.
func waitMetric(t *testing.T, addr string, m metric, ok func(float64) bool) map[string]*dto.MetricFamily {
	t.Helper()
	var fams map[string]*dto.MetricFamily
	testkit.WaitForf(t, 60*time.Second, func() bool {
		fams = scrape(t, addr)
		return ok(sample(fams, m.name, m.labels...))
	}, func() string { return fmt.Sprintf("%s = %v", m, sample(fams, m.name, m.labels...)) })
	return fams
}

func is(n float64) func(float64) bool { return func(v float64) bool { return v == n } }

// checkMetrics checks each series' value against want.
func checkMetrics(t *testing.T, fams map[string]*dto.MetricFamily, want map[*metric]func(float64) bool) {
	t.Helper()
	for m, ok := range want {
		if v := sample(fams, m.name, m.labels...); !ok(v) {
			t.Errorf("%s = %v", m, v)
		}
	}
}

// lint runs Prometheus' linter on what the bot exposes of its own.
func lint(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	var ours []*dto.MetricFamily
	for name, f := range fams {
		if strings.HasPrefix(name, "claudeops_") {
			ours = append(ours, f)
		}
	}
	problems, err := promlint.NewWithMetricFamilies(ours).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func positive(v float64) bool { return v > 0 }

// TestMetricsConsole: on the console, a turn, an approval allowed, a
// scheduled run, a claude killed and a resume each move what they must.
func TestMetricsConsole(t *testing.T) {
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return fakeanthropic.TextReply("tool said: done")
		}
		if strings.HasSuffix(req.LastUserText(), "run touch metrics.txt") {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": "touch metrics.txt"})}}
		}
		return fakeanthropic.TextReply("ok: " + req.LastUserText())
	})
	env, _ := consoleEnv(t, api)
	b := startBotProc(t, append(env, "CLAUDEOPS_HTTP_ADDR=127.0.0.1:0"))
	addr := httpAddr(t, func() string { return strings.Join(b.logLines(), "\n") })
	fams := scrape(t, addr)
	checkMetrics(t, fams, map[*metric]func(float64) bool{
		{name: "claudeops_sessions_live"}:                                      is(0),
		{name: "claudeops_sessions_queued"}:                                    is(0),
		{name: "claudeops_turns_total", labels: []string{"result", "success"}}: is(0),
	})

	b.say("hello")
	b.expect(`^\[main\] claude: ok: .*hello$`)
	turns := metric{"claudeops_turns_total", []string{"result", "success"}}
	fams = waitMetric(t, addr, turns, is(1))
	console := []string{"platform", "console", "channel", "console"}
	checkMetrics(t, fams, map[*metric]func(float64) bool{
		{name: "claudeops_sessions_live"}:                                                           is(1),
		{name: "claudeops_process_starts_total", labels: []string{"kind", "new"}}:                   is(1),
		{name: "claudeops_turn_duration_seconds"}:                                                   is(1),
		{name: "claudeops_first_text_latency_seconds"}:                                              is(1),
		{name: "claudeops_tokens_total", labels: append(console, "kind", "input")}:                  positive,
		{name: "claudeops_tokens_total", labels: append(console, "kind", "output")}:                 positive,
		{name: "claudeops_cost_usd_total", labels: console}:                                         positive,
		{name: "claudeops_process_crashes_total"}:                                                   is(0),
		{name: "claudeops_approvals_total", labels: []string{"kind", "tool", "outcome", "allowed"}}: is(0),
	})

	b.say("run touch metrics.txt")
	b.expect(`^\[main\] \? approval \w+: Bash`)
	b.say("allow")
	b.expect(`^\[main\] claude: tool said: done$`)
	waitMetric(t, addr, metric{"claudeops_approvals_total", []string{"kind", "tool", "outcome", "allowed"}}, is(1))
	waitMetric(t, addr, turns, is(2))

	b.say(`schedule add "0 3 * * *" scheduled hello`)
	id := b.expect(`\* Schedule (\d+): `)[1]
	b.say("schedule run " + id)
	waitMetric(t, addr, metric{"claudeops_schedule_runs_total", []string{"status", "succeeded"}}, is(1))
	waitMetric(t, addr, turns, is(3))

	// The main thread's claude is killed: not by the bot, so a crash.
	var sessions []proc
	testkit.WaitForf(t, 60*time.Second, func() bool {
		sessions, _ = childrenOf(b.cmd.Process.Pid)
		return len(sessions) == 1 // the scheduled run's has been stopped
	}, func() string { return fmt.Sprintf("session processes: %v", sessions) })
	if err := syscall.Kill(sessions[0].pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, addr, metric{name: "claudeops_process_crashes_total"}, is(1))
	waitMetric(t, addr, metric{name: "claudeops_sessions_live"}, is(0))

	b.say("are you back?")
	b.expect(`^\[main\] claude: ok: .*are you back\?$`)
	fams = waitMetric(t, addr, turns, is(4))
	checkMetrics(t, fams, map[*metric]func(float64) bool{
		{name: "claudeops_process_starts_total", labels: []string{"kind", "resume"}}: is(1),
		{name: "claudeops_process_starts_total", labels: []string{"kind", "new"}}:    is(2),
		{name: "claudeops_first_text_latency_seconds"}:                               is(3), // not the scheduled run's
		{name: "claudeops_turns_total", labels: []string{"result", "aborted"}}:       is(0),
	})
	lint(t, fams)
	if err := b.endInput(90 * time.Second); err != nil {
		t.Errorf("bot exit: %v", err)
	}
}

// TestMetricsSlack: on the fake Slack, a post answered 429 with
// Retry-After moves the API calls by result, the 429s and the time waited;
// an approval clicked moves approvals; the turn's tokens and cost are the
// channel's.
func TestMetricsSlack(t *testing.T) {
	bin := testcli.Bin(t)
	fs := fakeslack.Start(t, fakeslack.Options{Strict: true})
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if len(req.ToolResults()) > 0 {
			return fakeanthropic.TextReply("tool ran")
		}
		if strings.HasSuffix(req.LastUserText(), "touch it") {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": "touch it.txt"})}}
		}
		return fakeanthropic.TextReply("ok: " + req.LastUserText())
	})
	home, work, state := t.TempDir(), t.TempDir(), t.TempDir()
	env := testkit.CLIEnv(home, api.URL,
		"CLAUDEOPS_STATE_DIR="+state, "CLAUDEOPS_CLAUDE_BIN="+bin, "CLAUDEOPS_WORKDIR="+work,
		"SLACK_API_URL="+fs.URL+"/api/", "SLACK_BOT_TOKEN="+fs.Opts.BotToken, "SLACK_APP_TOKEN="+fs.Opts.AppToken,
		"CLAUDEOPS_ALLOWED_USERS=U0ALICE001", "CLAUDEOPS_HTTP_ADDR=127.0.0.1:0",
	)
	env = append(env, testrunner.Env(t, home)...)
	const general, alice, mention = "C0GENERAL1", "U0ALICE001", "<@U0FAKEBOT1> "
	b := startSlackBot(t, env)
	addr := httpAddr(t, b.stderr.String)
	if !fs.WaitConnections(1, 90*time.Second) {
		t.Fatalf("the bot did not connect; its log:\n%s", b.stderr.String())
	}

	fs.Fail("chat.postMessage", fakeslack.Fault{RetryAfter: 1})
	root := fs.Post(alice, general, mention+"hello there")
	post := []string{"platform", "slack", "method", "chat.postMessage"}
	waitMetric(t, addr, metric{"claudeops_turns_total", []string{"result", "success"}}, is(1))
	// The turn is over; its messages may still be on their way (the
	// adapter's mailroom and pacing): the reply's first text is timed to
	// when Slack took it.
	fams := waitMetric(t, addr, metric{name: "claudeops_first_text_latency_seconds"}, is(1))
	checkMetrics(t, fams, map[*metric]func(float64) bool{
		{name: "claudeops_platform_api_calls_total", labels: append(post, "result", "rate_limited")}: is(1),
		{name: "claudeops_platform_api_calls_total", labels: append(post, "result", "ok")}:           positive,
		{name: "claudeops_platform_rate_limited_total", labels: post}:                                is(1),
		// The fake promises the window (a call inside it is a violation);
		// the bot waits it out: at least the Retry-After's second.
		{name: "claudeops_platform_rate_limit_wait_seconds_total", labels: post}:                                                   func(v float64) bool { return v >= 0.9 },
		{name: "claudeops_platform_api_calls_total", labels: []string{"platform", "slack", "method", "auth.test", "result", "ok"}}: is(1),
		{name: "claudeops_cost_usd_total", labels: []string{"platform", "slack", "channel", general}}:                              positive,
		{name: "claudeops_tokens_total", labels: []string{"platform", "slack", "channel", general, "kind", "output"}}:              positive,
	})
	// The reply's first post waited out the Retry-After: its time to
	// first text is the time until Slack had it, not until it was handed
	// over.
	if s := fams["claudeops_first_text_latency_seconds"].GetMetric()[0].GetHistogram().GetSampleSum(); s < 0.9 {
		t.Errorf("first text after %.3f s: less than the Retry-After of 1 s its post waited out", s)
	}
	// Every post the fake answered is counted, by how it was answered
	// (equal once the thread's last messages have gone out).
	var counted float64
	testkit.WaitForf(t, 60*time.Second, func() bool {
		fams = scrape(t, addr)
		counted = sample(fams, "claudeops_platform_api_calls_total", append(post, "result", "ok")...) +
			sample(fams, "claudeops_platform_api_calls_total", append(post, "result", "rate_limited")...)
		return counted == float64(len(fs.Calls("chat.postMessage")))
	}, func() string {
		return fmt.Sprintf("the fake answered %d posts; the bot counted %v", len(fs.Calls("chat.postMessage")), counted)
	})

	fs.Reply(alice, general, root, "touch it")
	var prompt string
	if !fs.WaitFor(90*time.Second, func() bool {
		for _, m := range fs.Thread(general, root) {
			if slices.Contains(m.ActionIDs(), "claudeops_approval_allow") {
				prompt = m.TS
			}
		}
		return prompt != ""
	}) {
		t.Fatalf("no approval prompt; the bot's log:\n%s", b.stderr.String())
	}
	if err := fs.Click(alice, general, prompt, "claudeops_approval_allow"); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, addr, metric{"claudeops_approvals_total", []string{"kind", "tool", "outcome", "allowed"}}, is(1))
	fams = waitMetric(t, addr, metric{"claudeops_turns_total", []string{"result", "success"}}, is(2))
	lint(t, fams)
	b.stop(t)
	for _, v := range fs.Violations() {
		t.Errorf("Slack violation: %s", v)
	}
}

// TestMetricsAfterKill9: the bot is killed with SIGKILL mid-turn, an
// approval pending. The next start counts the turn once, as interrupted,
// and the approval as expired; the start after that counts neither again.
func TestMetricsAfterKill9(t *testing.T) {
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if len(req.ToolResults()) > 0 {
			return fakeanthropic.TextReply("tool ran")
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": "touch never.txt"})}}
	})
	env, _ := consoleEnv(t, api)
	env = append(env, "CLAUDEOPS_HTTP_ADDR=127.0.0.1:0")
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	b := startBotProc(t, env)
	b.say("run touch never.txt")
	b.expect(`^\[main\] \? approval \w+: Bash`)
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-b.done
	_ = b.cmd.Wait()
	// Its claude is ended by the session's keeper once the bot is gone.
	testkit.WaitForf(t, 60*time.Second, func() bool { return len(processesWithEnv("HOME="+home)) == 0 },
		func() string { return "the orphaned claude did not exit: " + procList(processesWithEnv("HOME="+home)) })

	interrupted := metric{"claudeops_turns_total", []string{"result", "interrupted"}}
	expired := metric{"claudeops_approvals_total", []string{"kind", "tool", "outcome", "expired"}}
	for i, want := range []float64{1, 0} {
		b := startBotProc(t, env)
		addr := httpAddr(t, func() string { return strings.Join(b.logLines(), "\n") })
		fams := scrape(t, addr) // Recover ran before the server started
		checkMetrics(t, fams, map[*metric]func(float64) bool{
			&interrupted: is(want),
			&expired:     is(want),
			{name: "claudeops_turns_total", labels: []string{"result", "aborted"}}: is(0),
		})
		if t.Failed() {
			t.Fatalf("start %d after the kill", i+1)
		}
		if err := b.endInput(60 * time.Second); err != nil {
			t.Errorf("bot exit: %v", err)
		}
	}
}
