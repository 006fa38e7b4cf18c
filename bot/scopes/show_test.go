package scopes

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/settings"
)

// TestSettingsShowsHereOnly: `settings` in A says A's values and where
// each comes from, and nothing of B, whose values are given at B's own
// scope (by the file and in chat); in B, the same the other way.
func TestSettingsShowsHereOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newHostile(t, "slack", chanA)
		a.run(alice, "set instructions Always run the linter.\nNever touch migrations.")
		a.r.SetChat(whereB, settings.Scope{Level: settings.LevelChannel, Key: "slack/" + chanB}, settings.Mode, "plan", bob, a.ft.Now())
		a.ft.Said = nil
		a.run(mallory, "settings")
		got := strings.Join(a.ft.Said, "\n")
		for _, want := range []string{
			"• instructions: `Always run the linter.` (2 lines, 46 characters) — channel slack/C0CHANNELA, set in chat by U0ALICE on 2000-01-01 00:00 UTC",
			"• model: none (default)",
			"• mode: `default` (default)",
			"• effort: `high` — channel slack/C0CHANNELA, from the settings file, line 6",
			"• users: `U0ALICE`, `U0BOB`, `U0MALLORY` — bot, from the configuration (CLAUDEOPS_ALLOWED_USERS)",
			"• admins: `U0ALICE` — channel slack/C0CHANNELA, set in chat by U0BOTADMIN",
			"• budget.thread: `5` — bot, from the settings file, line 2",
			"• budget.channel_day: none (default)",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("settings in A lack %q:\n%s", want, got)
			}
		}
		for _, leak := range []string{chanB, "SECRET", "haiku", "plan", "U0BOB`\n", "#b"} {
			if strings.Contains(got, leak) {
				t.Errorf("settings in A show %q of B:\n%s", leak, got)
			}
		}

		b := newHostile(t, "slack", chanB)
		b.r = a.r
		b.ft.Resolver = a.r
		b.run(mallory, "settings")
		got = strings.Join(b.ft.Said, "\n")
		for _, want := range []string{"• model: `haiku` — channel slack/C0CHANNELB (#b), from the settings file, line 10", "SECRET-B", "• mode: `plan` — channel slack/C0CHANNELB, set in chat by U0BOB"} {
			if !strings.Contains(got, want) {
				t.Errorf("settings in B lack %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "linter") || strings.Contains(got, chanA) {
			t.Errorf("settings in B show A's:\n%s", got)
		}
	})
}

// TestSettingsOfTheThread: the thread's own model and mode (its `model`
// and `mode`) are shown as the thread's; the file's problem is told to a
// bot admin alone, never in the thread; someone who may not use the bot
// here sees nothing.
func TestSettingsOfTheThread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHostile(t, "slack", chanA)
		h.ft.Rec.Model, h.ft.Rec.Mode = "opus", "plan"
		h.r.FileRefused(errors.New("line 3: unknown setting \"modle\""))
		h.run(mallory, "settings")
		got := strings.Join(h.ft.Said, "\n")
		for _, want := range []string{"• model: `opus` — this thread's own (`model`)", "• mode: `plan` — this thread's own (`mode`)"} {
			if !strings.Contains(got, want) {
				t.Errorf("settings lack %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "modle") {
			t.Errorf("a user is shown the file's problem:\n%s", got)
		}
		h.ft.Said = nil
		h.run(botAdmin, "settings")
		if got := h.ft.Said[len(h.ft.Said)-1]; got != "@U0BOTADMIN The settings file on disk is not in use (the last good one is): line 3: unknown setting \"modle\"" {
			t.Errorf("a bot admin is not shown the file's problem:\n%s", got)
		}
		h.ft.Said = nil
		h.run("U0STRANGER", "settings")
		if got := strings.Join(h.ft.Said, "\n"); got != "@U0STRANGER Only those who may use the bot here see its settings." || len(h.ft.Audits) != 1 {
			t.Errorf("a stranger: said %q, audited %q", got, h.ft.Audits)
		}
	})
}

// TestRefusedFileToldToBotAdmins: after the file is refused, the first
// prompt a bot admin sends tells them privately, once per problem; a user's
// prompt, a run's, and the same admin's next prompt are told nothing, and
// no prompt is refused for it.
func TestRefusedFileToldToBotAdmins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHostile(t, "slack", chanA)
		prompt := func(user, auto string) []string {
			h.ft.Said = nil
			if err := h.p.BeforePrompt(t.Context(), thread.Prompt{Text: "hi", User: adapters.User{ID: user}, Auto: auto}); err != nil {
				t.Fatalf("a prompt refused: %v", err)
			}
			return h.ft.Said
		}
		if said := prompt(botAdmin, ""); len(said) != 0 {
			t.Errorf("told with no problem: %q", said)
		}
		h.r.FileRefused(errors.New("line 3: unknown setting \"modle\""))
		if said := prompt(mallory, ""); len(said) != 0 {
			t.Errorf("a user was told the file's problem: %q", said)
		}
		if said := prompt(botAdmin, "scheduler"); len(said) != 0 {
			t.Errorf("a run was told: %q", said)
		}
		want := "@U0BOTADMIN The settings file on disk was refused, and the last good one is in use: line 3: unknown setting \"modle\""
		if said := prompt(botAdmin, ""); len(said) != 1 || said[0] != want {
			t.Errorf("the bot admin's first prompt: told %q, want %q", said, want)
		}
		if said := prompt(botAdmin, ""); len(said) != 0 {
			t.Errorf("told twice: %q", said)
		}
		h.r.FileRefused(errors.New("line 4: mode: one of default, acceptEdits, plan"))
		if said := prompt(botAdmin, ""); len(said) != 1 || !strings.Contains(said[0], "line 4") {
			t.Errorf("a new problem not told: %q", said)
		}
	})
}
