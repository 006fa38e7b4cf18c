package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/caarlos0/env/v11"
)

// The configuration is checked as a whole before anything starts: every
// setting's own check (settingChecks, a platform's checks), the settings
// that go together (secrets, the state's place, the runner: loadConfig),
// then, for a run, what the host must offer (startChecks: directories, the
// database, the CLI, what the runner needs) and the running platforms'
// settings together.
// Every problem is one line naming the variable, its value and what is
// expected, and all of them are reported at once (exit 78).
//
// To check a new setting, add one line to settingChecks with a helper
// below (above0, offOrAbove0, atLeast, timeZone, hostPort, …), or with a
// helper of its own returning a problem whose want is "" when the value is
// fine; what needs the host (a path, a program) goes in startChecks.

// problem is one thing wrong with the configuration.
type problem struct {
	name  string // the variable; "" when the line says it all
	value string // the value in effect when the environment does not hold it
	want  string // what is wrong or expected; "" when nothing is
	code  int    // the exit code it calls for: exitConfig when 0
}

// line renders p for the operator, with the variable's value as the
// environment has it (never a secret's).
func (p problem) line(raw map[string]string) string {
	if p.name == "" {
		return p.want
	}
	if slices.Contains(secretNames(), p.name) {
		return fmt.Sprintf("%s: %s", p.name, p.want)
	}
	if v, ok := raw[p.name]; ok {
		return fmt.Sprintf("%s=%s: %s", p.name, shown(v), p.want)
	}
	if p.value != "" {
		return fmt.Sprintf("%s (not set: %s): %s", p.name, shown(p.value), p.want)
	}
	return fmt.Sprintf("%s: %s", p.name, p.want)
}

// shown quotes a value only when it needs it (empty, spaces, control
// characters), so that what the operator typed reads as typed.
func shown(v string) string {
	if v == "" || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '"' }) {
		return strconv.Quote(v)
	}
	return v
}

// configError is every problem found, rendered one per line.
type configError struct {
	problems []problem
	raw      map[string]string
}

func (e *configError) Error() string { return strings.Join(e.lines(), "\n") }

func (e *configError) lines() []string {
	out := make([]string, len(e.problems))
	for i, p := range e.problems {
		out[i] = p.line(e.raw)
	}
	return out
}

// exitCode is exitNotFound when the one thing wrong is a missing CLI (the
// code docs/OPERATIONS.md promises for it), else exitConfig.
func (e *configError) exitCode() int {
	for _, p := range e.problems {
		if p.code != exitNotFound {
			return exitConfig
		}
	}
	return exitNotFound
}

// asProblems makes lines that already name their variable into problems.
func asProblems(lines []string) []problem {
	out := make([]problem, len(lines))
	for i, l := range lines {
		out[i] = problem{want: l}
	}
	return out
}

// settingChecks checks each setting on its own. Settings that may be 0 to
// mean "off" or "no cap" say so in their check; every other duration is a
// wait and must be above 0 (the parts would otherwise put a default in its
// place, or never wait).
func (c *config) settingChecks() []problem {
	b, s := c.Bot, c.Scheduler
	return []problem{
		above0("CLAUDEOPS_IDLE_TIMEOUT", b.IdleTimeout),
		above0("CLAUDEOPS_APPROVAL_TIMEOUT", b.ApprovalTimeout),
		above0("CLAUDEOPS_WORKTREE_TTL", c.Extensions.Workspaces.TTL),
		atLeast("CLAUDEOPS_MAX_SESSIONS", b.MaxSessions, 1, ""),
		atLeast("CLAUDEOPS_MAX_LINE_BYTES", b.MaxLineBytes, 64<<10, ""),
		atLeast("CLAUDEOPS_MAX_THREADS_PER_USER", b.MaxThreadsPerUser, 0, "0: no cap"),
		atLeast("CLAUDEOPS_MAX_SCHEDULES_PER_USER", c.Extensions.Schedules.MaxPerUser, 0, "0: no cap"),
		logLevel("CLAUDEOPS_LOG_LEVEL", c.LogLevel),
		logFormat("CLAUDEOPS_LOG_FORMAT", c.LogFormat),
		hostPort("CLAUDEOPS_HTTP_ADDR", c.HTTPAddr),
		envNames("CLAUDEOPS_CLAUDE_ENV", b.ClaudeEnv),
		userPatterns("CLAUDEOPS_ALLOWED_USERS", b.AllowedUsers),
		userPatterns("CLAUDEOPS_ADMINS", b.Admins),
		timeZone("CLAUDEOPS_SCHEDULE_TZ", s.TimeZone),
		above0("CLAUDEOPS_SCHEDULE_TIMEOUT", s.Timeout),
		above0("CLAUDEOPS_SCHEDULE_CATCH_UP", s.CatchUp),
		above0("CLAUDEOPS_SCHEDULE_STOP_GRACE", s.StopGrace),
		offOrAbove0("CLAUDEOPS_SCHEDULE_MIN_INTERVAL", s.MinInterval, "no minimum"),
		atLeast("CLAUDEOPS_SCHEDULE_KEEP_RUNS", s.KeepRuns, 1, ""),
		atLeast("CLAUDEOPS_SCHEDULE_MAX_QUEUED", s.MaxQueued, 1, ""),
	}
}

// keepUnfailed are the problems of ps but those of variables whose value
// did not even parse (failed): their parse error says it already.
func keepUnfailed(ps []problem, failed map[string]bool) []problem {
	var out []problem
	for _, p := range ps {
		if p.want != "" && !failed[p.name] {
			out = append(out, p)
		}
	}
	return out
}

const wantDuration = "a duration such as 90s, 15m or 2h"

func above0(name string, d time.Duration) problem {
	p := problem{name: name, value: d.String()}
	if d <= 0 {
		p.want = "want a duration above 0, such as 90s, 15m or 2h"
	}
	return p
}

// offOrAbove0 is a duration for which 0 means off (what off means).
func offOrAbove0(name string, d time.Duration, off string) problem {
	p := problem{name: name, value: d.String()}
	if d < 0 {
		p.want = fmt.Sprintf("want 0 (%s) or %s", off, wantDuration)
	}
	return p
}

// atLeast is a count of at least lowest; note says what lowest means.
func atLeast(name string, n, lowest int, note string) problem {
	p := problem{name: name, value: strconv.Itoa(n)}
	if n < lowest {
		p.want = fmt.Sprintf("want a whole number, at least %d", lowest)
		if note != "" {
			p.want += " (" + note + ")"
		}
	}
	return p
}

// logLevel accepts what the logger does: slog's level names, any case.
func logLevel(name, v string) problem {
	var l slog.Level
	p := problem{name: name, value: v}
	if l.UnmarshalText([]byte(v)) != nil {
		p.want = "want debug, info, warn or error"
	}
	return p
}

// logFormat accepts the two handlers newLogger makes.
func logFormat(name, v string) problem {
	p := problem{name: name, value: v}
	if v != "text" && v != "json" {
		p.want = "want text or json"
	}
	return p
}

func timeZone(name, v string) problem {
	p := problem{name: name, value: v}
	if _, err := time.LoadLocation(v); err != nil || v == "" {
		p.want = "want an IANA time zone such as UTC or Europe/Berlin (unknown here)"
	}
	return p
}

// hostLabel is one label of a host name (RFC 1123).
var hostLabel = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// hostPort is an optional listening address: host:port, the host empty (all
// interfaces), an IP or a host name, the port a number (0: any free port).
func hostPort(name, v string) problem {
	p := problem{name: name, value: v}
	if v == "" {
		return p
	}
	const want = "want host:port, such as :8080, 127.0.0.1:8080 or [::1]:8080"
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		p.want = want
		return p
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (port != "0" && n == 0) {
		p.want = want + " (the port a number up to 65535)"
		return p
	}
	if host != "" && net.ParseIP(host) == nil && !validHostName(host) {
		p.want = want + " (the host an IP address or a host name)"
	}
	return p
}

func validHostName(h string) bool {
	if len(h) > 253 {
		return false
	}
	for l := range strings.SplitSeq(strings.TrimSuffix(h, "."), ".") {
		if !hostLabel.MatchString(l) {
			return false
		}
	}
	return true
}

// httpURL is an optional base URL: http or https, with a host.
func httpURL(name, v string) problem {
	p := problem{name: name, value: v}
	if v == "" {
		return p
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.want = "want an http:// or https:// URL with a host"
	}
	return p
}

// envName is a variable name, or a prefix ending in '*'.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\*?$`)

// envNames checks CLAUDEOPS_CLAUDE_ENV's entries: names or prefixes, none
// of the bot's own (claudeproc.BuildEnv never passes those on: naming one
// is a mistake worth saying).
func envNames(name string, list []string) problem {
	p := problem{name: name}
	var bad, own []string
	for _, e := range list {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
		case !envName.MatchString(e):
			bad = append(bad, shown(e))
		case hasAnyPrefix(e, "SLACK_", "MATRIX_", "CLAUDEOPS_"):
			own = append(own, e)
		}
	}
	switch {
	case len(bad) > 0:
		p.want = fmt.Sprintf("%s: want variable names or prefixes such as AWS_*", strings.Join(bad, ", "))
	case len(own) > 0:
		p.want = fmt.Sprintf("%s: SLACK_*, MATRIX_* and CLAUDEOPS_* variables are never passed to claude", strings.Join(own, ", "))
	}
	return p
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}

// userPatterns checks a list of user ids and globs: no spaces inside an
// entry (a list is separated by commas), globs that path.Match can read
// (a malformed one would silently match nobody).
func userPatterns(name string, list []string) problem {
	p := problem{name: name}
	var bad []string
	for _, e := range list {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if _, err := path.Match(e, ""); err != nil || strings.ContainsFunc(e, func(r rune) bool { return r <= ' ' }) {
			bad = append(bad, shown(e))
		}
	}
	if len(bad) > 0 {
		p.want = fmt.Sprintf("%s: want user ids or globs (such as U0123ABCD, @ana:example.org, @*:example.org), comma-separated", strings.Join(bad, ", "))
	}
	return p
}

// parseProblems turns env's parse errors into problems naming the
// variable, each once, and returns the variables that failed; m is the
// environment parsed.
func parseProblems(err error, m map[string]string) ([]problem, map[string]bool) {
	failed := map[string]bool{}
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return []problem{{want: err.Error()}}, failed
	}
	var out []problem
	for _, e := range agg.Errors {
		var pe env.ParseError
		var fe env.LoadFileContentError
		switch {
		case errors.As(e, &pe):
			for _, name := range failedVars(pe, m) {
				if !failed[name] {
					failed[name] = true
					out = append(out, problem{name: name, want: "want " + typeWant(pe.Type.String())})
				}
			}
		case errors.As(e, &fe):
			failed[fe.Key] = true
			out = append(out, problem{name: fe.Key, want: fmt.Sprintf("cannot read the file: %v", fe.Err)})
		default:
			out = append(out, problem{want: e.Error()})
		}
	}
	return out, failed
}

// failedVars are the variables whose value in m does not parse for pe's
// field. env's error names the field only, and fields of one name may read
// different variables (a package's Config beside another's) or one
// variable be read by several (the runners' shared settings).
func failedVars(pe env.ParseError, m map[string]string) []string {
	var out []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
			v, set := m[name]
			switch {
			case f.Type.Kind() == reflect.Struct && name == "":
				walk(f.Type)
			case f.Name == pe.Name && f.Type == pe.Type && set && !parsesAs(f.Type, v) && !slices.Contains(out, name):
				out = append(out, name)
			}
		}
	}
	walk(reflect.TypeFor[config]())
	if len(out) == 0 {
		return []string{pe.Name}
	}
	return out
}

// parsesAs reports whether env takes v for a field of type t.
func parsesAs(t reflect.Type, v string) bool {
	one := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "V", Type: t, Tag: `env:"V"`}}))
	return env.ParseWithOptions(one.Interface(), env.Options{Environment: map[string]string{"V": v}}) == nil
}

// typeWant says what a field's type takes, for an operator.
func typeWant(t string) string {
	switch t {
	case "time.Duration":
		return wantDuration
	case "int", "int64":
		return "a whole number"
	case "float64":
		return "a number such as 2 or 1.5"
	case "bool":
		return "true or false"
	}
	return "a value of type " + t
}

// reportConfig prints every problem of err, one line each, and returns
// the exit code they call for.
func reportConfig(w io.Writer, err error) int {
	var ce *configError
	if !errors.As(err, &ce) {
		fmt.Fprintf(w, "claudeops: configuration: %s\n", oneLine(err.Error()))
		return exitConfig
	}
	for _, l := range ce.lines() {
		fmt.Fprintf(w, "claudeops: configuration: %s\n", oneLine(l))
	}
	n := len(ce.problems)
	fmt.Fprintf(w, "claudeops: %d configuration %s; nothing was started\n", n, map[bool]string{true: "problem", false: "problems"}[n == 1])
	return ce.exitCode()
}

// oneLine escapes control characters (a path may hold a newline): one
// problem stays one line.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
