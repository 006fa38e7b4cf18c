package settings

import (
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, src string) Layer {
	t.Helper()
	l, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return l
}

func TestExampleFileLoads(t *testing.T) {
	l, _, err := Load("../docs/settings.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := New(Layer{}, nil)
	r.SetFile(l)
	pay := Where{Platform: "slack", Channel: "C0PAYMENTS1"}
	if v := r.Get(pay, Model); v.Text != "opus" || v.Source.Line == 0 || v.Source.Label != "#payments" {
		t.Errorf("model in #payments = %+v", v)
	}
	if v := r.Get(pay, BudgetThread); v.Float() != 2 {
		t.Errorf("budget.thread = %+v", v)
	}
	if v := r.Get(Where{Platform: "slack", Channel: "C0OTHER001"}, Model); v.Text != "sonnet" || v.Source.Scope != Bot {
		t.Errorf("model elsewhere = %+v", v)
	}
	if !strings.Contains(r.Get(Where{Platform: "matrix", Channel: "!ops:example.org"}, Instructions).Text, "bullet") {
		t.Error("the Matrix room's instructions are missing")
	}
}

// TestBadFiles: every problem of a file is listed, with its line, and a bad
// file gives no values at all.
func TestBadFiles(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // each a substring of one problem, in order
	}{
		{"unknown key", "bots:\n  model: x\n", []string{"line 1: unknown key \"bots\""}},
		{"unknown setting", "channels:\n  slack/C0123ABC:\n    modle: opus\n", []string{"line 3: unknown setting \"modle\""}},
		{"unknown scope", "channels:\n  general:\n    model: opus\n", []string{"line 2: channel \"general\""}},
		{"unknown platform", "platforms:\n  irc: {}\n", []string{"unknown platform \"irc\""}},
		{"bad workspace", "workspaces:\n  slack/C0123: {}\n", []string{"workspace \"slack/C0123\""}},
		{"bad value", "bot:\n  mode: bypassPermissions\n", []string{"line 2: mode: one of default, acceptEdits, plan"}},
		{"bad amount", "bot:\n  budget: {thread: -1}\n", []string{"line 2: budget.thread"}},
		{"unknown budget", "bot:\n  budget: {week: 3}\n", []string{"unknown budget \"week\""}},
		{"duplicate channel", "channels:\n  slack/C0123ABC: {model: a}\n  slack/C0123ABC: {model: b}\n", []string{"line 3: channels: \"slack/C0123ABC\" given twice (first at line 2)"}},
		{"duplicate setting", "bot:\n  model: a\n  model: b\n", []string{"given twice"}},
		{"list with a comma inside", "bot:\n  users: [\"U1, U2\"]\n", []string{"each entry one id"}},
		{"mapping for a word", "bot:\n  model: {a: b}\n", []string{"model: a value"}},
		{"syntax", "bot:\n  model: [\n", []string{"yaml"}},
		{"all at once", "bot:\n  mode: nope\n  x: 1\nchannels:\n  bad: {}\n", []string{"line 2: mode", "line 3: unknown setting \"x\"", "line 5: channel \"bad\""}},
		{"too long instructions", "bot:\n  instructions: " + strings.Repeat("x", MaxInstructions+1) + "\n", []string{"characters, at most"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := Parse([]byte(c.src))
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Parse: %v, want Problems", err)
			}
			if len(l.values) != 0 {
				t.Errorf("a bad file gave values: %v", l.values)
			}
			if len(ps) != len(c.want) {
				t.Fatalf("problems %q, want %d", ps.Error(), len(c.want))
			}
			for i, w := range c.want {
				if !strings.Contains(ps[i].Error(), w) {
					t.Errorf("problem %d %q, want %q", i, ps[i].Error(), w)
				}
			}
		})
	}
}

// TestNarrowestWins: the channel over its workspace over its platform over
// the bot; at one scope the file over chat over the configuration.
func TestNarrowestWins(t *testing.T) {
	var cfg Layer
	cfg.Put(Model, Value{Text: "from-env", Source: Source{Scope: Bot, Origin: FromConfig, Var: "X"}})
	cfg.Put(Effort, Value{Text: "low", Source: Source{Scope: Bot, Origin: FromConfig, Var: "X"}})
	r := New(cfg, []string{"UBOSS"})
	r.SetFile(mustParse(t, "bot:\n  model: bot-file\nplatforms:\n  matrix: {model: matrix-file}\nworkspaces:\n  matrix/example.org: {model: server-file}\nchannels:\n  matrix/!a:example.org: {model: room-file}\n"))
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	r.SetChat(Where{Platform: "matrix", Channel: "!b:example.org"}, Scope{LevelChannel, "matrix/!b:example.org"}, Model, "room-chat", "UBOSS", at)
	r.SetChat(Where{Platform: "slack", Channel: "C1"}, Bot, Effort, "high", "UBOSS", at)
	cases := []struct {
		w    Where
		n    Name
		want string
		src  string
	}{
		{Where{"matrix", "!a:example.org", ""}, Model, "room-file", "channel matrix/!a:example.org, from the settings file, line 8"},
		{Where{"matrix", "!b:example.org", ""}, Model, "room-chat", "channel matrix/!b:example.org, set in chat by UBOSS on 2026-11-29 12:00 UTC"},
		{Where{"matrix", "!c:example.org", ""}, Model, "server-file", "workspace matrix/example.org, from the settings file, line 6"},
		{Where{"matrix", "!c:other.org", ""}, Model, "matrix-file", "platform matrix, from the settings file, line 4"},
		{Where{"slack", "C1", ""}, Model, "bot-file", "bot, from the settings file, line 2"},
		{Where{"slack", "C1", ""}, Effort, "high", "bot, set in chat by UBOSS on 2026-11-29 12:00 UTC"},
		{Where{"slack", "C1", ""}, Reply, "thread", "the default"},
	}
	for _, c := range cases {
		v := r.Get(c.w, c.n)
		if v.Text != c.want || v.Source.String() != c.src {
			t.Errorf("%v %s = %q from %q, want %q from %q", c.w, c.n, v.Text, v.Source, c.want, c.src)
		}
	}
}

// TestCheckChat: who may set what from chat. The hostile cases: a channel
// admin of A reaching B, widening who may use the bot, loosening a budget,
// and anyone changing what the file manages.
func TestCheckChat(t *testing.T) {
	r := New(Layer{}, []string{"UBOSS"})
	r.SetFile(mustParse(t, `
bot:
  budget: {thread: 5}
channels:
  slack/C0AAAAAAA:
    admins: [UALICE]
    budget: {channel_day: 10}
  slack/C0BBBBBBB:
    admins: [UBOB]
    model: opus
`))
	a := Where{Platform: "slack", Channel: "C0AAAAAAA"}
	chA := Scope{LevelChannel, "slack/C0AAAAAAA"}
	chB := Scope{LevelChannel, "slack/C0BBBBBBB"}
	cases := []struct {
		name  string
		scope Scope
		n     Name
		value string
		user  string
		want  string // "" allowed, else a substring of the refusal
	}{
		{"channel admin sets instructions", chA, Instructions, "be brief", "UALICE", ""},
		{"channel admin sets model", chA, Model, "haiku", "UALICE", ""},
		{"channel admin reaches another channel", chB, Instructions, "x", "UALICE", "only bot admins"},
		{"channel admin widens users", chA, Users, "*", "UALICE", "only bot admins set users"},
		{"channel admin adds an admin where the file names them", chA, Admins, "UMALLORY", "UALICE", "managed by the settings file, line 6"},
		{"channel admin sets the channel's image", chA, Image, "evil:latest", "UALICE", "only bot admins set image"},
		{"channel admin binds a repository", chA, Repo, "/srv/git/secret.git", "UALICE", "only bot admins"},
		{"channel admin sets the bot scope", Bot, Model, "x", "UALICE", "only bot admins"},
		{"non-admin sets instructions", chA, Instructions, "x", "UMALLORY", "only the channel's admins"},
		{"tighten a budget", chA, BudgetThread, "1", "UALICE", ""},
		{"loosen a budget", chA, BudgetThread, "50", "UALICE", "may only tighten"},
		{"lift a budget with 0", chA, BudgetThread, "0", "UALICE", "may only tighten"},
		{"limit what had no limit", chA, Quota, "2", "UALICE", ""},
		{"managed by the file", chA, BudgetChannelDay, "5", "UBOSS", "managed by the settings file, line 7"},
		{"managed, for bot admins too", chB, Model, "haiku", "UBOSS", "managed by the settings file"},
		{"bot admin widens users", chA, Users, "*", "UBOSS", ""},
		{"no such setting", chA, "colour", "red", "UBOSS", "no setting"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := r.CheckChat(a, c.scope, c.n, c.value, c.user)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want a refusal with %q", err, c.want)
			}
		})
	}
	if r.IsAdmin(Where{Platform: "slack", Channel: "C0BBBBBBB"}, "UALICE") {
		t.Error("Alice administers B")
	}
	if !r.IsAdmin(a, "UALICE") || !r.IsAdmin(a, "UBOSS") {
		t.Error("A's admins")
	}
}

// TestWatcherKeepsLastGood: a bad file leaves the last good values and says
// why; the good file again clears the problem.
func TestWatcherKeepsLastGood(t *testing.T) {
	path := t.TempDir() + "/s.yaml"
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("bot: {model: one}\n")
	l, sum, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r := New(Layer{}, nil)
	r.SetFile(l)
	reload := make(chan struct{})
	refused := make(chan error, 4)
	applied := make(chan struct{}, 4)
	w := &Watcher{Resolver: r, Path: path, Interval: time.Hour, Log: discard(), Reload: reload, Last: sum,
		Refused: func(err error) { refused <- err }, Applied: func() { applied <- struct{}{} }}
	ctx := t.Context()
	go w.Run(ctx)
	where := Where{Platform: "console", Channel: "console"}

	write("bot: {model: two, colour: red}\n")
	reload <- struct{}{}
	if err := <-refused; !strings.Contains(err.Error(), "unknown setting \"colour\"") {
		t.Errorf("refused: %v", err)
	}
	if got := r.Get(where, Model).Text; got != "one" {
		t.Errorf("model after a bad file %q, want one", got)
	}
	if r.FileProblem() == nil {
		t.Error("no problem recorded")
	}
	write("bot: {model: one}\n")
	reload <- struct{}{}
	<-applied
	if r.FileProblem() != nil {
		t.Error("the problem outlived the good file")
	}
	write("bot: {model: three}\n")
	reload <- struct{}{}
	<-applied
	if got := r.Get(where, Model).Text; got != "three" {
		t.Errorf("model %q, want three", got)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestWider: what applies without the channel's own value.
func TestWider(t *testing.T) {
	var l Layer
	l.Put(BudgetThread, Value{Text: "5", Source: Source{Scope: Bot, Origin: FromConfig, Var: "X"}})
	r := New(l, []string{"root"})
	w := Where{Platform: "slack", Channel: "C1", Thread: "1.2"}
	r.SetChat(w, Scope{LevelChannel, "slack/C1"}, BudgetThread, "9", "root", time.Time{})
	if got := r.Get(w, BudgetThread).Text; got != "9" {
		t.Errorf("Get %q, want the channel's 9", got)
	}
	if got := r.Wider(w, BudgetThread); got.Text != "5" || got.Source.Var != "X" {
		t.Errorf("Wider %+v, want the configuration's 5", got)
	}
	if !Tighter("2", "5") || Tighter("9", "5") || Tighter("0", "5") || !Tighter("0", "0") {
		t.Error("Tighter")
	}
}

// TestCheck: a part's check refuses a chat value it refuses; an unset is
// never checked.
func TestCheck(t *testing.T) {
	r := New(Layer{}, []string{"root"})
	r.Check(MCP, func(v string) error {
		if v != "sentry" {
			return errors.New("no MCP server " + v)
		}
		return nil
	})
	w := Where{Platform: "slack", Channel: "C1"}
	ch := Scope{LevelChannel, "slack/C1"}
	if err := r.CheckChat(w, ch, MCP, "sentry", "root"); err != nil {
		t.Error(err)
	}
	if err := r.CheckChat(w, ch, MCP, "nosuch", "root"); err == nil || err.Error() != "no MCP server nosuch" {
		t.Errorf("an unknown server: %v", err)
	}
	if err := r.CheckChat(w, ch, MCP, "", "root"); err != nil {
		t.Errorf("unset: %v", err)
	}
}

// TestValues: Values answers as Get does, name by name.
func TestValues(t *testing.T) {
	var l Layer
	l.Put(BudgetThread, Value{Text: "5", Source: Source{Scope: Bot, Origin: FromConfig, Var: "X"}})
	r := New(l, nil)
	w := Where{Platform: "slack", Channel: "C1"}
	r.SetChat(w, Scope{LevelChannel, "slack/C1"}, Model, "opus", "root", time.Time{})
	names := []Name{BudgetThread, Model, Mode, Image}
	for i, v := range r.Values(w, names...) {
		if want := r.Get(w, names[i]); v != want {
			t.Errorf("%s: %+v, want %+v", names[i], v, want)
		}
	}
}
