package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// TestScopesFromConfiguration: the resolver cmd builds gives what the
// environment says at the bot's scope, naming the variable, the
// CLAUDEOPS_REPOS bindings at their channels, the settings file over
// them, and the values stored from chat; a stored value the schema no
// longer takes is left out, the others kept.
func TestScopesFromConfiguration(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "settings.yaml")
	if err := os.WriteFile(file, []byte("channels:\n  slack/C0FILE0001:\n    budget: { thread: 1.5 }\n    model: opus\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + dir, "CLAUDEOPS_WORKDIR=" + t.TempDir(), "CLAUDEOPS_STATE_DIR=" + t.TempDir(),
		"CLAUDEOPS_ALLOWED_USERS=U0ALICE001,@*:example.org", "CLAUDEOPS_ADMINS=U0ADMIN001",
		"CLAUDEOPS_BUDGET_THREAD_USD=2.50", "CLAUDEOPS_BUDGET_CHANNEL_DAY_USD=0", "CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD=5",
		"CLAUDEOPS_MAX_THREADS_PER_USER=0", "CLAUDEOPS_RUNNER_IMAGE=registry.example.com/runner:1",
		"CLAUDEOPS_REPOS=slack/C0FILE0001=/srv/git/a.git, matrix/!r:example.org = https://git.example.org/b.git",
		"CLAUDEOPS_SETTINGS_FILE=" + file}
	cfg, err := loadConfig(env)
	if err != nil {
		t.Fatalf("configuration: %v", err)
	}
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	for _, v := range []store.ScopeSetting{
		{Level: int(settings.LevelChannel), ScopeKey: "slack/C0FILE0001", Name: "model", Value: "haiku", SetBy: "U0ADMIN001", SetAt: at},
		{Level: int(settings.LevelChannel), ScopeKey: "slack/C0FILE0001", Name: "effort", Value: "high", SetBy: "U0ADMIN001", SetAt: at},
		{Level: int(settings.LevelChannel), ScopeKey: "slack/C0FILE0001", Name: "colour", Value: "red", SetBy: "U0ADMIN001", SetAt: at},
		{Level: int(settings.LevelChannel), ScopeKey: "slack/C0FILE0001", Name: "mode", Value: "yolo", SetBy: "U0ADMIN001", SetAt: at},
	} {
		if err := st.SaveScopeSetting(t.Context(), v); err != nil {
			t.Fatal(err)
		}
	}
	b := cfg.Bot
	r, err := newScopes(t.Context(), cfg, b, st, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	slack := settings.Where{Platform: "slack", Channel: "C0FILE0001"}
	other := settings.Where{Platform: "slack", Channel: "C0OTHER001"}
	matrix := settings.Where{Platform: "matrix", Channel: "!r:example.org"}
	for _, tc := range []struct {
		where      settings.Where
		name       settings.Name
		text, from string
	}{
		{other, settings.Users, "U0ALICE001,@*:example.org", "bot, from the configuration (CLAUDEOPS_ALLOWED_USERS)"},
		{other, settings.BudgetThread, "2.5", "bot, from the configuration (CLAUDEOPS_BUDGET_THREAD_USD)"},
		{other, settings.BudgetChannelDay, "", "the default"},
		{other, settings.BudgetScheduleRun, "5", "bot, from the configuration (CLAUDEOPS_BUDGET_SCHEDULE_RUN_USD)"},
		{other, settings.Quota, "0", "bot, from the configuration (CLAUDEOPS_MAX_THREADS_PER_USER)"},
		{other, settings.Image, "registry.example.com/runner:1", "bot, from the configuration (CLAUDEOPS_RUNNER_IMAGE)"},
		{other, settings.Repo, "", "the default"},
		{slack, settings.Repo, "/srv/git/a.git", "channel slack/C0FILE0001, from the configuration (CLAUDEOPS_REPOS)"},
		{matrix, settings.Repo, "https://git.example.org/b.git", "channel matrix/!r:example.org, from the configuration (CLAUDEOPS_REPOS)"},
		{slack, settings.BudgetThread, "1.5", "channel slack/C0FILE0001, from the settings file, line 3"},
		{slack, settings.Model, "opus", "channel slack/C0FILE0001, from the settings file, line 4"},
		{slack, settings.Effort, "high", "channel slack/C0FILE0001, set in chat by U0ADMIN001 on 2026-11-29 18:00 UTC"},
		{slack, settings.Mode, "default", "the default"},
	} {
		got := r.Get(tc.where, tc.name)
		if got.Text != tc.text || got.Source.String() != tc.from {
			t.Errorf("%s at %s: %q (%s), want %q (%s)", tc.name, tc.where.ChannelKey(), got.Text, got.Source, tc.text, tc.from)
		}
	}
	if !r.IsBotAdmin("U0ADMIN001") || r.IsBotAdmin("U0ALICE001") {
		t.Error("the bot's admins are CLAUDEOPS_ADMINS")
	}
	if r.FileProblem() != nil {
		t.Errorf("a good file at start: problem %v", r.FileProblem())
	}
}

// TestSettingsFilePlace: whoever writes the settings file is a bot admin,
// so it may not lie where sessions write (the working directory, the
// workspaces: refused at start), and it is one of the bot's own files (the
// sandbox hides it, no tool call may touch it).
func TestSettingsFilePlace(t *testing.T) {
	dir, work, ws := t.TempDir(), t.TempDir(), t.TempDir()
	base := []string{"HOME=" + dir, "CLAUDEOPS_WORKDIR=" + work, "CLAUDEOPS_STATE_DIR=" + t.TempDir(), "CLAUDEOPS_WORKSPACES=" + ws}
	for _, tc := range []struct {
		name, file, want string
	}{
		{"apart", filepath.Join(dir, "settings.yaml"), ""},
		{"in the working directory", filepath.Join(work, "settings.yaml"), "CLAUDEOPS_SETTINGS_FILE=" + filepath.Join(work, "settings.yaml") + ": it lies in " + work + ", where sessions write"},
		{"in the workspaces", filepath.Join(ws, "repos", "settings.yaml"), "CLAUDEOPS_SETTINGS_FILE=" + filepath.Join(ws, "repos", "settings.yaml") + ": it lies in " + ws + ", where sessions write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.MkdirAll(filepath.Dir(tc.file), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(tc.file, []byte("bot: {model: opus}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := loadConfig(append(base, "CLAUDEOPS_SETTINGS_FILE="+tc.file))
			if tc.want != "" {
				wantProblemLines(t, err, []string{tc.want})
				return
			}
			if err != nil {
				t.Fatalf("unexpected problems:\n%v", err)
			}
			if !slices.Contains(ownFiles(c), tc.file) {
				t.Errorf("%s is not among the bot's own files %v", tc.file, ownFiles(c))
			}
		})
	}
}
