package slack_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// Hostile tests of the settings the kernel applies per channel (issue 29):
// two channels, #general (A) and #infra (B); the oracles are what the fake
// Slack received, the database, and the fake model API's requests.

const (
	infra = "C0INFRA001"
	// carol (trust_test.go) is here #general's admin, a user everywhere.
	dave = "U0DAVE0001" // a user of #general only
)

// channelSetting is a value given at channel's scope, as chat gives one.
type channelSetting struct {
	channel string
	name    settings.Name
	value   string
}

// newScopesHarness is a harness with #infra beside #general, carol and
// dave, and the settings given (from chat, by a bot admin).
func newScopesHarness(t *testing.T, script fakeanthropic.Script, given ...channelSetting) *harness {
	t.Helper()
	h, _ := newScopesHarnessR(t, script, given...)
	return h
}

// newScopesHarnessR is newScopesHarness, with the bot's resolver.
func newScopesHarnessR(t *testing.T, script fakeanthropic.Script, given ...channelSetting) (*harness, *settings.Resolver) {
	t.Helper()
	var r *settings.Resolver
	h := newHarness(t, script, fakeslack.Options{}, func(bc *bot.Config, _ *slack.Config) {
		bc.AllowedUsers = append(bc.AllowedUsers, carol)
		bc.Admins = []string{"U0ROOT0001"}
		l := bot.ConfigLayer(*bc)
		for _, g := range given {
			l.Put(g.name, settings.Value{Text: g.value, Source: settings.Source{
				Scope: settings.Scope{Level: settings.LevelChannel, Key: "slack/" + g.channel}, Origin: settings.FromChat,
				By: "U0ROOT0001", At: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}})
		}
		r = settings.New(l, bc.Admins)
		bc.Scopes = r
	})
	for _, u := range []string{carol, dave} {
		h.fs.AddUser(fakeslack.User{ID: u, Name: strings.ToLower(u[3:8])})
	}
	h.fs.AddChannel(fakeslack.Channel{ID: general, Name: "general", Members: []string{alice, bob, carol, dave}})
	h.fs.AddChannel(fakeslack.Channel{ID: infra, Name: "infra", Members: []string{alice, bob, carol, dave}})
	return h, r
}

// waitIn is waitThread in channel.
func (h *harness) waitIn(channel, threadTS, pattern string) fakeslack.Message {
	h.t.Helper()
	re := regexp.MustCompile(pattern)
	var found fakeslack.Message
	if !h.fs.WaitFor(wait, func() bool {
		for _, m := range h.fs.Thread(channel, threadTS) {
			if m.BotID != "" && re.MatchString(m.VisibleText()) {
				found = m
				return true
			}
		}
		return false
	}) {
		h.t.Fatalf("no bot message matching %q in %s thread %s", pattern, channel, threadTS)
	}
	return found
}

// ephemeralIn waits for an ephemeral to user in channel matching pattern.
func (h *harness) ephemeralIn(channel, user, pattern string) {
	h.t.Helper()
	re := regexp.MustCompile(pattern)
	if !h.fs.WaitFor(wait, func() bool {
		for _, m := range h.fs.Ephemerals(channel, user) {
			if re.MatchString(m.VisibleText()) {
				return true
			}
		}
		return false
	}) {
		h.t.Fatalf("no ephemeral to %s in %s matching %q", user, channel, pattern)
	}
}

// promptIn waits for an open approval prompt in channel's thread.
func (h *harness) promptIn(channel, threadTS string) fakeslack.Message {
	h.t.Helper()
	var found fakeslack.Message
	if !h.fs.WaitFor(wait, func() bool {
		for _, m := range h.fs.Thread(channel, threadTS) {
			if m.BotID != "" && strings.Contains(strings.Join(m.ActionIDs(), ","), "claudeops_approval_allow") {
				found = m
				return true
			}
		}
		return false
	}) {
		h.t.Fatalf("no open approval prompt in %s thread %s", channel, threadTS)
	}
	return found
}

// auditedAnywhere reports whether the audit log holds an entry of user with the
// action and allowed, its target containing target.
func (h *harness) auditedAnywhere(user, action, target string, allowed bool) bool {
	h.t.Helper()
	es, err := h.st.AuditLog(context.Background(), "", 0)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, e := range es {
		if e.UserID == user && e.Action == action && e.Allowed == allowed && strings.Contains(e.Target, target) {
			return true
		}
	}
	return false
}

func (h *harness) rules() []store.Rule {
	h.t.Helper()
	rs, err := h.st.Rules(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return rs
}

// requestsWith are the model requests whose last user text holds marker.
func (h *harness) requestsWith(marker string) []*fakeanthropic.Request {
	var out []*fakeanthropic.Request
	for _, r := range h.api.Requests() {
		if strings.Contains(r.LastUserText(), marker) {
			out = append(out, r)
		}
	}
	return out
}

// TestChannelAdminStaysInTheirChannel: #general's admin decides nothing
// in #infra — not alice's request, and no "Always allow" even in her own
// thread there — and changes no rule there; in #general she does both; a
// rule of every channel stays the bot admins'.
func TestChannelAdminStaysInTheirChannel(t *testing.T) {
	h := newScopesHarness(t, script(nil), channelSetting{general, settings.Admins, carol})
	global, err := h.st.AddRule(context.Background(), store.Rule{Scope: "global", Effect: "deny", Tool: "WebFetch", CreatedBy: "U0ROOT0001", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}

	inB := h.fs.Post(alice, infra, mention+"run touch b.txt")
	prompt := h.promptIn(infra, inB)
	if err := h.fs.Click(carol, infra, prompt.TS, "claudeops_approval_allow"); err != nil {
		t.Fatal(err)
	}
	h.ephemeralIn(infra, carol, `Only `+alice+` \(who started this thread\) or an admin can decide this`)
	h.fs.Reply(carol, infra, inB, "rules add allow Bash(touch *)")
	h.ephemeralIn(infra, carol, `Only admins can change permission rules`)
	if still, _ := h.fs.Message(infra, prompt.TS); !strings.Contains(strings.Join(still.ActionIDs(), ","), "claudeops_approval_allow") {
		t.Errorf("#general's admin decided in #infra: the prompt's buttons are gone (%q)", still.VisibleText())
	}
	if !h.auditedAnywhere(carol, "refused", "rules", false) {
		t.Error("carol's rules add in #infra is not audited as refused")
	}
	ownB := h.fs.Post(carol, infra, mention+"run touch c.txt")
	if ids := strings.Join(h.promptIn(infra, ownB).ActionIDs(), ","); strings.Contains(ids, allowAlways) {
		t.Errorf("carol's own prompt in #infra offers Always allow: %s", ids)
	}

	inA := h.fs.Post(carol, general, mention+"run touch a.txt")
	promptA := h.promptIn(general, inA)
	if err := h.fs.Click(carol, general, promptA.TS, allowAlways); err != nil {
		t.Fatal(err)
	}
	h.waitIn(general, inA, `Allowed by `+carol+` always in this channel`)
	h.fs.Reply(carol, general, inA, "rules rm "+strconv.FormatInt(global, 10))
	h.ephemeralIn(general, carol, `applies in every channel: only bot admins can remove it`)

	var inGeneral, inInfra, kept int
	for _, r := range h.rules() {
		switch {
		case r.ID == global:
			kept++
		case r.ScopeKey == "slack/"+general && r.CreatedBy == carol:
			inGeneral++
		case strings.Contains(r.ScopeKey, infra):
			inInfra++
		}
	}
	if inGeneral != 1 || inInfra != 0 || kept != 1 {
		t.Errorf("rules: %d of carol's in #general (want 1), %d in #infra (want 0), global kept %d (want 1): %+v", inGeneral, inInfra, kept, h.rules())
	}
	// alice still decides her own thread in #infra.
	if err := h.fs.Click(alice, infra, prompt.TS, "claudeops_approval_allow"); err != nil {
		t.Fatal(err)
	}
	h.waitIn(infra, inB, `Allowed by `+alice)
	h.noViolations()
}

// TestChannelUsers: a user the settings name in #general only is refused
// in #infra (told, audited; the model never sees the message) and
// answered in #general.
func TestChannelUsers(t *testing.T) {
	h := newScopesHarness(t, script(nil), channelSetting{general, settings.Users, dave})
	h.fs.Post(dave, infra, mention+"dave-in-infra")
	h.ephemeralIn(infra, dave, `not allowed to use this bot here`)
	ts := h.fs.Post(dave, general, mention+"dave-in-general")
	h.waitIn(general, ts, `ok: .*dave-in-general`)
	if n := len(h.requestsWith("dave-in-infra")); n != 0 {
		t.Errorf("the model saw dave's message in #infra %d times", n)
	}
	if !h.auditedAnywhere(dave, "refused", "use", false) {
		t.Error("dave's refusal in #infra is not audited")
	}
	h.noViolations()
}

// TestChannelModel: #general's model and #infra's effort reach their own
// channel's sessions only (the model API sees the model, and the effort
// in output_config); a thread's own model wins; `status` says where each
// comes from.
func TestChannelModel(t *testing.T) {
	const channelModel, ownModel = "claude-sonnet-4-5", "claude-haiku-4-5"
	h := newScopesHarness(t, script(nil),
		channelSetting{general, settings.Model, channelModel},
		channelSetting{infra, settings.Effort, "high"})
	inA := h.fs.Post(alice, general, mention+"marker-general")
	h.waitIn(general, inA, `ok: .*marker-general`)
	inB := h.fs.Post(alice, infra, mention+"marker-infra")
	h.waitIn(infra, inB, `ok: .*marker-infra`)
	own := h.fs.Post(alice, general, mention+"model "+ownModel)
	h.waitIn(general, own, `Model: `+ownModel)
	h.fs.Reply(alice, general, own, "marker-own")
	h.waitIn(general, own, `ok: .*marker-own`)

	for marker, want := range map[string]string{"marker-general": channelModel, "marker-own": ownModel} {
		rs := h.requestsWith(marker)
		if len(rs) == 0 {
			t.Fatalf("no model request for %s", marker)
		}
		for _, r := range rs {
			if r.Model != want {
				t.Errorf("%s: model %q, want %q", marker, r.Model, want)
			}
			if e := effortOf(t, r); e == "high" {
				t.Errorf("%s: #infra's effort reached #general", marker)
			}
		}
	}
	rs := h.requestsWith("marker-infra")
	if len(rs) == 0 {
		t.Fatal("no model request for marker-infra")
	}
	for _, r := range rs {
		if r.Model == channelModel {
			t.Errorf("#general's model reached #infra: %q", r.Model)
		}
		if e := effortOf(t, r); e != "high" {
			t.Errorf("#infra's request: effort %q, want high", e)
		}
	}
	h.fs.Reply(alice, general, inA, "status")
	h.waitIn(general, inA, `Model: `+channelModel+` \(channel slack/`+general+`, set in chat by U0ROOT0001 .*\) · Mode: default\n`)
	h.fs.Reply(alice, infra, inB, "status")
	h.waitIn(infra, inB, `Model: default · Mode: default · Effort: high \(channel slack/`+infra+`, set in chat by U0ROOT0001 `)
	h.noViolations()
}

// TestReplyMention: in a channel whose threads answer mentions only, a
// reply without one reaches neither the model nor a turn; a mention
// does; another channel's threads answer every reply.
func TestReplyMention(t *testing.T) {
	h := newScopesHarness(t, script(nil), channelSetting{general, settings.Reply, "mention"})
	ts := h.fs.Post(alice, general, mention+"first-mention")
	h.waitIn(general, ts, `ok: .*first-mention`)
	h.fs.Reply(alice, general, ts, "chatter-among-people")
	h.fs.Reply(alice, general, ts, mention+"second-mention")
	h.waitIn(general, ts, `ok: .*second-mention`)
	if n := len(h.requestsWith("chatter-among-people")); n != 0 {
		t.Errorf("an unmentioned reply reached the model (%d requests)", n)
	}
	for _, m := range h.fs.Thread(general, ts) {
		if m.BotID != "" && strings.Contains(m.VisibleText(), "chatter-among-people") {
			t.Errorf("the bot answered the unmentioned reply: %q", m.VisibleText())
		}
	}
	other := h.fs.Post(alice, infra, mention+"infra-first")
	h.waitIn(infra, other, `ok: .*infra-first`)
	h.fs.Reply(alice, infra, other, "infra-reply")
	h.waitIn(infra, other, `ok: .*infra-reply`)
	h.noViolations()
}

// TestChannelQuota: #general's quota of one session per person refuses
// alice's second busy thread there; #infra's (the configuration's) takes
// it; the channel's admin is exempt.
func TestChannelQuota(t *testing.T) {
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	h := newScopesHarness(t, script(hold),
		channelSetting{general, settings.Quota, "1"},
		channelSetting{general, settings.Admins, carol})
	first := h.fs.Post(alice, general, mention+"slow one")
	h.waitIn(general, first, `slow answe`)
	h.fs.Post(alice, general, mention+"quota-refused")
	h.ephemeralIn(general, alice, `Not taken: you have 1 Claude sessions`)
	inB := h.fs.Post(alice, infra, mention+"quota-other-channel")
	h.waitIn(infra, inB, `ok: .*quota-other-channel`)
	for _, text := range []string{"slow carol", "quota-admin"} {
		ts := h.fs.Post(carol, general, mention+text)
		if text == "quota-admin" {
			h.waitIn(general, ts, `ok: .*quota-admin`)
		}
	}
	if n := len(h.requestsWith("quota-refused")); n != 0 {
		t.Errorf("the refused message reached the model (%d requests)", n)
	}
	if !h.auditedAnywhere(alice, "refused", "thread", false) {
		t.Error("the quota refusal is not audited")
	}
}

// effortOf is the request's output_config.effort ("" when none).
func effortOf(t *testing.T, r *fakeanthropic.Request) string {
	var body struct {
		OutputConfig struct {
			Effort string `json:"effort"`
		} `json:"output_config"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.OutputConfig.Effort
}

// TestChannelInstructions: #general's instructions reach the system
// prompt of its sessions only (the model API's system blocks), and a
// change reaches a running session at its next turn.
func TestChannelInstructions(t *testing.T) {
	h, r := newScopesHarnessR(t, script(nil), channelSetting{general, settings.Instructions, "Answer like a pirate (marker-old-instructions)."})
	inA := h.fs.Post(alice, general, mention+"instr-general")
	h.waitIn(general, inA, `ok: .*instr-general`)
	inB := h.fs.Post(alice, infra, mention+"instr-infra")
	h.waitIn(infra, inB, `ok: .*instr-infra`)
	systemHas := func(marker, in string) (n, with int) {
		for _, req := range h.requestsWith(marker) {
			n++
			if strings.Contains(strings.Join(req.System, "\n"), in) {
				with++
			}
		}
		return n, with
	}
	if n, with := systemHas("instr-general", "marker-old-instructions"); n == 0 || with != n {
		t.Errorf("#general: %d of %d requests carry its instructions", with, n)
	}
	if n, with := systemHas("instr-infra", "marker-old-instructions"); n == 0 || with != 0 {
		t.Errorf("#infra: %d of %d requests carry #general's instructions", with, n)
	}
	w := settings.Where{Platform: "slack", Channel: general}
	r.SetChat(w, settings.Scope{Level: settings.LevelChannel, Key: "slack/" + general}, settings.Instructions, "Answer briefly (marker-new-instructions).", "U0ROOT0001", time.Now())
	h.fs.Reply(alice, general, inA, "instr-after-change")
	h.waitIn(general, inA, `ok: .*instr-after-change`)
	if n, with := systemHas("instr-after-change", "marker-new-instructions"); n == 0 || with != n {
		t.Errorf("after the change: %d of %d requests carry the new instructions", with, n)
	}
	if _, with := systemHas("instr-after-change", "marker-old-instructions"); with != 0 {
		t.Errorf("after the change: %d requests still carry the old instructions", with)
	}
	h.noViolations()
}

// TestScheduledRunTakesItsChannelsSettings: a scheduled run takes its
// channel's model and instructions as they are when it runs (set after
// the bot started), and a schedule's own model wins.
func TestScheduledRunTakesItsChannelsSettings(t *testing.T) {
	h, r := newScopesHarnessR(t, script(nil))
	w, at := settings.Where{Platform: "slack", Channel: general}, settings.Scope{Level: settings.LevelChannel, Key: "slack/" + general}
	r.SetChat(w, at, settings.Model, "claude-sonnet-4-5", "U0ROOT0001", time.Now())
	r.SetChat(w, at, settings.Instructions, "Be terse (marker-run-instructions).", "U0ROOT0001", time.Now())
	for _, s := range []store.Schedule{
		{ID: 7, Prompt: "sched-channel-model"},
		{ID: 8, Prompt: "sched-own-model", Model: "claude-haiku-4-5"},
	} {
		s.Spec, s.Platform, s.Channel, s.CreatedBy, s.ApprovalPolicy = "0 2 * * *", "slack", general, alice, "deny"
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		res, err := h.b.RunScheduled(ctx, s, time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(res.Result, "ok: ") {
			t.Fatalf("run %d: %+v", s.ID, res)
		}
	}
	for marker, want := range map[string]string{"sched-channel-model": "claude-sonnet-4-5", "sched-own-model": "claude-haiku-4-5"} {
		rs := h.requestsWith(marker)
		if len(rs) == 0 {
			t.Fatalf("no model request for %s", marker)
		}
		for _, req := range rs {
			if req.Model != want {
				t.Errorf("%s: model %q, want %q", marker, req.Model, want)
			}
			if !strings.Contains(strings.Join(req.System, "\n"), "marker-run-instructions") {
				t.Errorf("%s: the channel's instructions are not in the system prompt", marker)
			}
		}
	}
}
