package scopes

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread/threadtest"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// The people of the hostile tests: a bot admin, channel A's admin, channel
// B's admin, and someone who may only use the bot.
const (
	botAdmin = "U0BOTADMIN"
	alice    = "U0ALICE"
	bob      = "U0BOB"
	mallory  = "U0MALLORY"
	chanA    = "C0CHANNELA"
	chanB    = "C0CHANNELB"
)

// file is the settings file of the hostile tests: the bot has a thread
// budget and a quota; A's effort and B's admins, model and instructions
// are the file's. A's admin was set in chat (newHostile).
const file = `bot:
  budget: {thread: 5}
  quota: 3
channels:
  slack/C0CHANNELA:
    effort: high
  slack/C0CHANNELB:
    label: "#b"
    admins: [U0BOB]
    model: haiku
    instructions: SECRET-B
`

// memStore is the store's edge for these tests: the rows by scope and
// name, and an error to refuse every write with.
type memStore struct {
	rows map[string]store.ScopeSetting
	err  error
}

func rowKey(level int, scope, name string) string { return fmt.Sprintf("%d %s %s", level, scope, name) }

func (m *memStore) SaveScopeSetting(_ context.Context, v store.ScopeSetting) error {
	if m.err != nil {
		return m.err
	}
	m.rows[rowKey(v.Level, v.ScopeKey, v.Name)] = v
	return nil
}

func (m *memStore) DeleteScopeSetting(_ context.Context, level int, scope, name string) error {
	if m.err != nil {
		return m.err
	}
	delete(m.rows, rowKey(level, scope, name))
	return nil
}

// stored lists the rows as "level scope name=value", sorted.
func (m *memStore) stored() []string {
	var out []string
	for k, v := range m.rows {
		out = append(out, k+"="+v.Value)
	}
	slices.Sort(out)
	return out
}

// hostile is one thread of the hostile tests, over a resolver with the
// file above and everyone allowed by the bot's configuration.
type hostile struct {
	r  *settings.Resolver
	st *memStore
	ft *threadtest.Thread
	p  *part
}

func newHostile(t testing.TB, platform, channel string) *hostile {
	t.Helper()
	var config settings.Layer
	config.Put(settings.Users, settings.Value{Text: strings.Join([]string{alice, bob, mallory}, ","),
		Source: settings.Source{Scope: settings.Bot, Origin: settings.FromConfig, Var: "CLAUDEOPS_ALLOWED_USERS"}})
	r := settings.New(config, []string{botAdmin})
	l, err := settings.Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	r.SetFile(l)
	chat, err := ChatLayer([]store.ScopeSetting{{Level: 3, ScopeKey: "slack/" + chanA, Name: "admins", Value: alice, SetBy: botAdmin}})
	if err != nil {
		t.Fatal(err)
	}
	r.LoadChat(chat)
	h := &hostile{r: r, st: &memStore{rows: map[string]store.ScopeSetting{}}}
	h.ft = threadtest.New("1.0", alice)
	h.ft.Key = adapters.ThreadRef{Platform: platform, Channel: channel, Thread: "1.0"}
	h.ft.Resolver = r
	ext := New(h.st)
	ext.Init(h.ft)
	h.p = ext.Attach(h.ft).(*part)
	return h
}

// run runs a command line ("set …", "unset …", "settings") as user.
func (h *hostile) run(user, line string) {
	ev := adapters.Event{User: adapters.User{ID: user}}
	word, rest := cutWord(line)
	switch word {
	case "set":
		h.p.cmdSet(context.Background(), ev, []string{rest})
	case "unset":
		h.p.cmdUnset(context.Background(), ev, []string{rest})
	case "settings":
		h.p.cmdSettings(context.Background(), ev, nil)
	}
}

var (
	whereA = settings.Where{Platform: "slack", Channel: chanA, Thread: "1.0"}
	whereB = settings.Where{Platform: "slack", Channel: chanB, Thread: "2.0"}
)

// TestHostileChanges: who may change what, from where. A refusal says
// why, is audited as refused and changes nothing (no row, the same values
// in A and B); what is allowed is stored and applies, at its scope only.
// The oracle is the store's rows and the resolver's answers.
func TestHostileChanges(t *testing.T) {
	cases := []struct {
		name, user, line string
		said             string   // a substring of what was said
		refused          string   // the refusal audited ("" when allowed)
		rows             []string // the stored rows after
		getA             string   // "name=value" in channel A after, when set
	}{
		// A plain user of the bot changes nothing.
		{"user sets the model", mallory, "set model opus", "only the channel's admins set its model", "refused set model at channel slack/C0CHANNELA", nil, "model="},
		{"user sets instructions", mallory, "set instructions be nice", "only the channel's admins", "refused set instructions", nil, "instructions="},
		{"user unsets", mallory, "unset quota", "only the channel's admins", "refused unset quota", nil, "quota=3"},
		// Another channel's admin is nobody here.
		{"B's admin in A", bob, "set model opus", "only the channel's admins set its model", "refused set model at channel slack/C0CHANNELA", nil, "model="},
		// A channel admin: only what shapes the channel's own sessions.
		{"admin sets the model", alice, "set model opus", "model is `opus` at channel slack/C0CHANNELA", "", []string{"3 slack/C0CHANNELA model=opus"}, "model=opus"},
		{"admin sets users", alice, "set users U0EVE", "only bot admins set users", "refused set users", nil, "users=U0ALICE,U0BOB,U0MALLORY"},
		{"admin sets admins", alice, "set admins U0ALICE U0EVE", "only bot admins set admins", "refused set admins", nil, "admins=U0ALICE"},
		{"admin sets repo", alice, "set repo https://evil.example/x.git", "only bot admins set repo", "refused set repo", nil, "repo="},
		{"admin sets image", alice, "set image evil:latest", "only bot admins set image", "refused set image", nil, "image="},
		{"admin sets mcp", alice, "set mcp sentry", "only bot admins set mcp", "refused set mcp", nil, "mcp="},
		{"admin loosens a budget", alice, "set budget.thread 10", "may only tighten budget.thread (at most 5 here", "refused set budget.thread", nil, "budget.thread=5"},
		{"admin lifts a budget", alice, "set budget.thread 0", "may only tighten", "refused set budget.thread", nil, "budget.thread=5"},
		{"admin loosens the quota", alice, "set quota 4", "may only tighten quota", "refused set quota", nil, "quota=3"},
		{"admin tightens a budget", alice, "set budget.thread 2.50", "budget.thread is `2.5` at channel slack/C0CHANNELA", "", []string{"3 slack/C0CHANNELA budget.thread=2.5"}, "budget.thread=2.5"},
		{"admin tightens the quota", alice, "set quota 1", "quota is `1`", "", []string{"3 slack/C0CHANNELA quota=1"}, "quota=1"},
		{"admin changes a file-managed setting", alice, "set effort low", "managed by the settings file, line 6: change it there", "refused set effort", nil, "effort=high"},
		{"admin sets the platform's", alice, "set --platform model opus", "only bot admins set model at platform slack", "refused set model at platform slack", nil, "model="},
		{"admin sets the bot's", alice, "set --bot model opus", "only bot admins set model at bot", "refused set model at bot", nil, "model="},
		// No syntax names another channel.
		{"a channel flag", alice, "set --channel slack/C0CHANNELB model opus", "`--channel` is not an option", "", nil, "model="},
		{"a channel key as the setting", alice, "set slack/C0CHANNELB model opus", "there is no setting `slack/C0CHANNELB`", "", nil, "model="},
		{"a channel key after a flag", botAdmin, "set --platform slack/C0CHANNELB model opus", "there is no setting", "", nil, "model="},
		// Values are checked before anything.
		{"a mode that is none", alice, "set mode bypassPermissions", "mode: one of default, acceptEdits, plan", "", nil, "mode=default"},
		{"no value", alice, "set model", "give model a value", "", nil, "model="},
		{"unset with a value", alice, "unset model opus", "Usage: `unset", "", nil, "model="},
		{"nothing", alice, "set", "Usage: `set", "", nil, "model="},
		// A bot admin sets any scope, but not over the file.
		{"bot admin, the bot", botAdmin, "set --bot model opus", "model is `opus` at bot", "", []string{"0  model=opus"}, "model=opus"},
		{"bot admin, the platform", botAdmin, "set --platform users U0EVE, U0ALICE", "users is `U0EVE`, `U0ALICE` at platform slack", "", []string{"1 slack users=U0EVE,U0ALICE"}, "users=U0EVE,U0ALICE"},
		{"bot admin, a channel's admins", botAdmin, "set admins U0CAROL", "admins is `U0CAROL` at channel slack/C0CHANNELA", "", []string{"3 slack/C0CHANNELA admins=U0CAROL"}, "admins=U0CAROL"},
		{"bot admin, a channel's users", botAdmin, "set users U0CAROL", "users is `U0CAROL` at channel slack/C0CHANNELA", "", []string{"3 slack/C0CHANNELA users=U0CAROL"}, "users=U0CAROL"},
		{"bot admin loosens", botAdmin, "set budget.thread 50", "budget.thread is `50`", "", []string{"3 slack/C0CHANNELA budget.thread=50"}, "budget.thread=50"},
		{"bot admin over the file", botAdmin, "set effort low", "managed by the settings file, line 6", "refused set effort", nil, "effort=high"},
		{"bot admin, no workspace", botAdmin, "set --workspace model opus", "belongs to no workspace", "", nil, "model="},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHostile(t, "slack", chanA)
				bBefore := h.r.All(whereB)
				h.run(c.user, c.line)
				said := strings.Join(h.ft.Said, "\n")
				if !strings.Contains(said, c.said) {
					t.Errorf("said %q, want %q", said, c.said)
				}
				audits := strings.Join(h.ft.Audits, "\n")
				switch {
				case c.refused != "" && (len(h.ft.Audits) != 1 || !strings.HasPrefix(audits, c.user+" "+c.refused) || !strings.HasSuffix(audits, " false")):
					t.Errorf("audited %q, want one refusal %q", audits, c.user+" "+c.refused)
				case c.refused == "" && c.rows == nil && audits != "":
					t.Errorf("audited %q for a command that was no change", audits)
				case c.rows != nil && (len(h.ft.Audits) != 1 || !strings.HasSuffix(audits, " true")):
					t.Errorf("audited %q, want the change", audits)
				}
				if got := h.st.stored(); !slices.Equal(got, c.rows) {
					t.Errorf("stored %q, want %q", got, c.rows)
				}
				name, want, _ := strings.Cut(c.getA, "=")
				if got := h.r.Get(whereA, settings.Name(name)).Text; got != want {
					t.Errorf("%s in A = %q, want %q", name, got, want)
				}
				if c.line != "set --bot model opus" && c.line != "set --platform users U0EVE, U0ALICE" {
					if after := h.r.All(whereB); !slices.Equal(after, bBefore) {
						t.Errorf("B's settings changed:\n%v\n%v", bBefore, after)
					}
				}
			})
		})
	}
}
