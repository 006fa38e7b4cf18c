package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestSettingChecks: each setting's check at its edges, through
// loadConfig. want lists the problem lines expected, one substring each, in
// order; no other line may appear.
func TestSettingChecks(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{"defaults", nil, nil},
		{"durations above 0 pass", []string{"CLAUDEOPS_IDLE_TIMEOUT=1s", "CLAUDEOPS_APPROVAL_TIMEOUT=90s", "CLAUDEOPS_SCHEDULE_STOP_GRACE=1ms"}, nil},
		{"a wait of 0 or less", []string{"CLAUDEOPS_IDLE_TIMEOUT=0", "CLAUDEOPS_APPROVAL_TIMEOUT=-5m", "CLAUDEOPS_MATRIX_EDIT_INTERVAL=0s",
			"CLAUDEOPS_SCHEDULE_TIMEOUT=-1s", "CLAUDEOPS_SCHEDULE_CATCH_UP=0", "CLAUDEOPS_SCHEDULE_STOP_GRACE=-1ns"}, []string{
			"CLAUDEOPS_IDLE_TIMEOUT=0: want a duration above 0",
			"CLAUDEOPS_APPROVAL_TIMEOUT=-5m: want a duration above 0",
			"CLAUDEOPS_SCHEDULE_TIMEOUT=-1s: want a duration above 0",
			"CLAUDEOPS_SCHEDULE_CATCH_UP=0: want a duration above 0",
			"CLAUDEOPS_SCHEDULE_STOP_GRACE=-1ns: want a duration above 0",
			"CLAUDEOPS_MATRIX_EDIT_INTERVAL=0s: want a duration above 0", // the platforms' own checks come after
		}},
		{"0 means off where documented", []string{"CLAUDEOPS_SCHEDULE_MIN_INTERVAL=0", "CLAUDEOPS_MAX_THREADS_PER_USER=0", "CLAUDEOPS_MAX_SCHEDULES_PER_USER=0"}, nil},
		{"below off", []string{"CLAUDEOPS_SCHEDULE_MIN_INTERVAL=-1s", "CLAUDEOPS_MAX_THREADS_PER_USER=-1"}, []string{
			"CLAUDEOPS_MAX_THREADS_PER_USER=-1: want a whole number, at least 0 (0: no cap)",
			"CLAUDEOPS_SCHEDULE_MIN_INTERVAL=-1s: want 0 (no minimum) or a duration",
		}},
		{"counts", []string{"CLAUDEOPS_SCHEDULE_KEEP_RUNS=-3", "CLAUDEOPS_SCHEDULE_MAX_QUEUED=0", "CLAUDEOPS_MAX_SESSIONS=0", "CLAUDEOPS_MAX_LINE_BYTES=100"}, []string{
			"CLAUDEOPS_MAX_SESSIONS=0: want a whole number, at least 1",
			"CLAUDEOPS_MAX_LINE_BYTES=100: want a whole number, at least 65536",
			"CLAUDEOPS_SCHEDULE_KEEP_RUNS=-3: want a whole number, at least 1",
			"CLAUDEOPS_SCHEDULE_MAX_QUEUED=0: want a whole number, at least 1",
		}},
		{"counts at their least", []string{"CLAUDEOPS_SCHEDULE_KEEP_RUNS=1", "CLAUDEOPS_MAX_SESSIONS=1", "CLAUDEOPS_MAX_LINE_BYTES=65536"}, nil},
		{"log levels slog knows", []string{"CLAUDEOPS_LOG_LEVEL=DEBUG"}, nil},
		{"empty is the default", []string{"CLAUDEOPS_LOG_LEVEL=", "CLAUDEOPS_CLAUDE_BIN="}, nil},
		{"an unknown log level", []string{"CLAUDEOPS_LOG_LEVEL=loud"}, []string{"CLAUDEOPS_LOG_LEVEL=loud: want debug, info, warn or error"}},
		{"a JSON log", []string{"CLAUDEOPS_LOG_FORMAT=json"}, nil},
		{"an empty log format is text", []string{"CLAUDEOPS_LOG_FORMAT="}, nil},
		{"an unknown log format", []string{"CLAUDEOPS_LOG_FORMAT=xml"}, []string{"CLAUDEOPS_LOG_FORMAT=xml: want text or json"}},
		{"an unknown zone", []string{"CLAUDEOPS_SCHEDULE_TZ=Mars/Base"}, []string{"CLAUDEOPS_SCHEDULE_TZ=Mars/Base: want an IANA time zone"}},
		{"a known zone", []string{"CLAUDEOPS_SCHEDULE_TZ=Europe/Berlin"}, nil},
		{"addresses that listen", []string{"CLAUDEOPS_HTTP_ADDR=:8080"}, nil},
		{"loopback, any port", []string{"CLAUDEOPS_HTTP_ADDR=127.0.0.1:0"}, nil},
		{"IPv6", []string{"CLAUDEOPS_HTTP_ADDR=[::1]:8080"}, nil},
		{"a host name", []string{"CLAUDEOPS_HTTP_ADDR=bot.internal:8080"}, nil},
		{"no port", []string{"CLAUDEOPS_HTTP_ADDR=not-an-addr"}, []string{"CLAUDEOPS_HTTP_ADDR=not-an-addr: want host:port"}},
		{"a port too high", []string{"CLAUDEOPS_HTTP_ADDR=:70000"}, []string{"CLAUDEOPS_HTTP_ADDR=:70000: want host:port"}},
		{"a service name", []string{"CLAUDEOPS_HTTP_ADDR=:http"}, []string{"the port a number"}},
		{"a host with a space", []string{"CLAUDEOPS_HTTP_ADDR=a b:80"}, []string{`CLAUDEOPS_HTTP_ADDR="a b:80": want host:port`}},
		{"URLs", []string{"SLACK_API_URL=ftp://slack.example/api/", "MATRIX_HOMESERVER=matrix.example.org"}, []string{
			"SLACK_API_URL=ftp://slack.example/api/: want an http:// or https:// URL",
			"MATRIX_HOMESERVER=matrix.example.org: want an http:// or https:// URL",
		}},
		{"claude's extra variables", []string{"CLAUDEOPS_CLAUDE_ENV=AWS_*,MY_VAR,GOFLAGS"}, nil},
		{"variables that are not names", []string{"CLAUDEOPS_CLAUDE_ENV=AWS_*,*,A-B"}, []string{`CLAUDEOPS_CLAUDE_ENV=AWS_*,*,A-B: *, A-B: want variable names`}},
		{"the bot's own variables for claude", []string{"CLAUDEOPS_CLAUDE_ENV=SLACK_BOT_TOKEN,CLAUDEOPS_*"}, []string{"SLACK_BOT_TOKEN, CLAUDEOPS_*: SLACK_*, MATRIX_* and CLAUDEOPS_* variables are never passed"}},
		{"user ids and globs", []string{"CLAUDEOPS_ALLOWED_USERS=U0ABC, @*:example.org ,@ana:example.org", "CLAUDEOPS_ADMINS=W0ADMIN"}, nil},
		{"a malformed glob matches nobody", []string{"CLAUDEOPS_ADMINS=@[a-:example.org"}, []string{"CLAUDEOPS_ADMINS=@[a-:example.org: @[a-:example.org: want user ids or globs"}},
		{"ids separated by spaces", []string{"CLAUDEOPS_ALLOWED_USERS=U0ABC U0DEF"}, []string{`"U0ABC U0DEF": want user ids or globs`}},
		{"docker's zeros that would mean its defaults", []string{"CLAUDEOPS_RUNNER=docker", "CLAUDEOPS_RUNNER_IMAGE=img",
			"CLAUDEOPS_RUNNER_CPUS=0", "CLAUDEOPS_RUNNER_PIDS=0", "CLAUDEOPS_RUNNER_MEMORY=0"}, []string{
			"CLAUDEOPS_RUNNER_CPUS=0: want a number of CPUs above 0",
			"CLAUDEOPS_RUNNER_PIDS=0: want a whole number, at least 32",
			"CLAUDEOPS_RUNNER_MEMORY=0: want a size of at least 64m",
		}},
		{"docker's zeros, another runner", []string{"CLAUDEOPS_RUNNER_CPUS=0", "CLAUDEOPS_RUNNER_PIDS=0"}, nil},
		{"an unknown runner", []string{"CLAUDEOPS_RUNNER=kubernets"}, []string{`CLAUDEOPS_RUNNER must be local, sandbox, docker or kubernetes, got "kubernets"`}},
		{"a setting two runners read that does not parse, once", []string{"CLAUDEOPS_RUNNER_CPUS=lots"}, []string{
			"CLAUDEOPS_RUNNER_CPUS=lots: want a number such as 2 or 1.5",
		}},
		// Slack's CLAUDEOPS_CATCH_UP and the scheduler's CLAUDEOPS_SCHEDULE_CATCH_UP
		// are fields of one name: each is said for its own value.
		{"fields of one name, each its own variable", []string{"CLAUDEOPS_CATCH_UP=soon", "CLAUDEOPS_SCHEDULE_CATCH_UP=1h"}, []string{
			"CLAUDEOPS_CATCH_UP=soon: want a duration",
		}},
		{"fields of one name, the other's variable", []string{"CLAUDEOPS_CATCH_UP=1h", "CLAUDEOPS_SCHEDULE_CATCH_UP=soon"}, []string{
			"CLAUDEOPS_SCHEDULE_CATCH_UP=soon: want a duration",
		}},
		{"values that do not parse, once each", []string{"CLAUDEOPS_MAX_SESSIONS=zero", "CLAUDEOPS_IDLE_TIMEOUT=soon", "CLAUDEOPS_SLACK_STREAMING=maybe"}, []string{
			"CLAUDEOPS_SLACK_STREAMING=maybe: want true or false",
			"CLAUDEOPS_MAX_SESSIONS=zero: want a whole number",
			"CLAUDEOPS_IDLE_TIMEOUT=soon: want a duration",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{"HOME=" + t.TempDir(), "CLAUDEOPS_WORKDIR=" + t.TempDir()}, tt.env...)
			_, err := loadConfig(env)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected problems:\n%v", err)
				}
				return
			}
			var ce *configError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v; want a *configError", err)
			}
			lines := ce.lines()
			if len(lines) != len(tt.want) {
				t.Errorf("%d problems, want %d:\n%s", len(lines), len(tt.want), err)
			}
			for i, w := range tt.want {
				if i < len(lines) && !strings.Contains(lines[i], w) {
					t.Errorf("line %d %q lacks %q", i+1, lines[i], w)
				}
			}
		})
	}
}

// TestProblemLines: values are shown as the operator wrote them, a
// default as what is in effect, a secret's never; the exit code is 72 only
// when the one problem is a missing CLI; each problem is one line.
func TestProblemLines(t *testing.T) {
	raw := map[string]string{"CLAUDEOPS_WORKDIR": "/srv/a\nb", "SLACK_BOT_TOKEN": "xoxb-very-secret", "CLAUDEOPS_IDLE_TIMEOUT": "-1s"}
	tests := []struct {
		p    problem
		want string
	}{
		{problem{name: "CLAUDEOPS_IDLE_TIMEOUT", value: "-1s", want: "want more"}, "CLAUDEOPS_IDLE_TIMEOUT=-1s: want more"},
		{problem{name: "CLAUDEOPS_DB", value: "/state/claudeops.db", want: "is read-only"}, "CLAUDEOPS_DB (not set: /state/claudeops.db): is read-only"},
		{problem{name: "SLACK_BOT_TOKEN", value: "xoxb-very-secret", want: "is wrong"}, "SLACK_BOT_TOKEN: is wrong"},
		{problem{want: "a whole line"}, "a whole line"},
	}
	for _, tt := range tests {
		if got := tt.p.line(raw); got != tt.want {
			t.Errorf("line() = %q, want %q", got, tt.want)
		}
	}

	var out bytes.Buffer
	code := reportConfig(&out, &configError{raw: raw, problems: []problem{
		{name: "CLAUDEOPS_WORKDIR", want: "does not exist"},
		{name: "SLACK_BOT_TOKEN", want: "is wrong"},
		{name: "CLAUDEOPS_CLAUDE_BIN", want: "not found", code: exitNotFound},
	}})
	if code != exitConfig {
		t.Errorf("exit code %d with a missing CLI among other problems; want %d", code, exitConfig)
	}
	got := out.String()
	if strings.Contains(got, "very-secret") {
		t.Errorf("a secret was printed:\n%s", got)
	}
	if lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n"); len(lines) != 4 || !strings.Contains(lines[0], `/srv/a\nb`) ||
		lines[3] != "claudeops: 3 configuration problems; nothing was started" {
		t.Errorf("report: %q", lines)
	}
	out.Reset()
	if code := reportConfig(&out, &configError{problems: []problem{{name: "CLAUDEOPS_CLAUDE_BIN", want: "not found", code: exitNotFound}}}); code != exitNotFound {
		t.Errorf("exit code %d for a missing CLI alone; want %d", code, exitNotFound)
	}
}
