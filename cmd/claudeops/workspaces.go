package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/claudeops/claudeops/internal/fspath"
	"github.com/claudeops/claudeops/workspace"
)

// placeWorkspaces derives the workspaces directory and checks it and the
// repository bindings: CLAUDEOPS_WORKSPACES, else $XDG_DATA_HOME/claudeops/
// workspaces, else ~/.local/share/claudeops/workspaces. It must lie apart
// from the bot's state (a session works inside it) and apart from
// CLAUDEOPS_WORKDIR (a session of an unbound channel would otherwise reach
// every thread's worktree, and a bound one the default directory).
func (c *config) placeWorkspaces(m map[string]string) []problem {
	var bad []problem
	if c.Workspaces == "" {
		dir, ok := xdgDir(m, "XDG_DATA_HOME", ".local/share")
		if !ok {
			return []problem{{name: "CLAUDEOPS_WORKSPACES", want: "cannot place the workspaces: set CLAUDEOPS_WORKSPACES (or HOME)"}}
		}
		c.Workspaces = filepath.Join(dir, "workspaces")
	}
	c.Workspaces = absPath(c.Workspaces)
	ws, err := realPath(c.Workspaces)
	if err != nil {
		return []problem{{name: "CLAUDEOPS_WORKSPACES", value: c.Workspaces, want: err.Error()}}
	}
	for _, p := range statePaths(*c) {
		// Any state inside the workspaces, or the workspaces inside the
		// state directory (the other paths are files).
		if rp, err := realPath(p); err == nil && (fspath.Within(rp, ws) || (p == c.StateDir && fspath.Within(ws, rp))) {
			bad = append(bad, problem{name: "CLAUDEOPS_WORKSPACES", value: c.Workspaces,
				want: fmt.Sprintf("it and the bot's state (%s) overlap: a session works in its worktree; choose a directory apart from CLAUDEOPS_STATE_DIR", rp)})
			break
		}
	}
	if work, err := realPath(c.Bot.Workdir); err == nil && (fspath.Within(work, ws) || fspath.Within(ws, work)) {
		bad = append(bad, problem{name: "CLAUDEOPS_WORKSPACES", value: c.Workspaces,
			want: fmt.Sprintf("it and CLAUDEOPS_WORKDIR (%s) overlap: a session of one would reach the other; choose directories apart", work)})
	}
	for _, b := range c.Extensions.Workspaces.Repos {
		key, repo, ok := strings.Cut(b, "=")
		platform, channel, _ := strings.Cut(key, "/")
		if !ok || platform == "" || channel == "" || strings.TrimSpace(repo) == "" {
			// No name: the line would show the whole value, a clone URL's
			// credentials with it.
			bad = append(bad, problem{
				want: fmt.Sprintf("CLAUDEOPS_REPOS: want <platform>/<channel>=<repository path or clone URL>, comma-separated (e.g. slack/C0123ABCD=/srv/git/api.git), not %q", redactBinding(b))})
		}
	}
	return bad
}

// redactBinding hides a clone URL's credentials in an error line.
func redactBinding(b string) string {
	if i := strings.Index(b, "://"); i >= 0 {
		if at := strings.LastIndex(b, "@"); at > i {
			return b[:i+3] + "…" + b[at:]
		}
	}
	return b
}

// workspaceOwnDirs are the parts of the workspaces that are the bot's, not
// a session's: the clones (their config and hooks are what the bot's git
// reads) and git's home and scratch space. No rule, grant or mode lets a
// tool touch them; the worktrees beside them are the sessions'.
func workspaceOwnDirs(cfg config) []string {
	if cfg.Workspaces == "" {
		return nil
	}
	return []string{filepath.Join(cfg.Workspaces, "repos"), filepath.Join(cfg.Workspaces, "home"), filepath.Join(cfg.Workspaces, "tmp"), skillsBase(cfg)}
}

// skillsBase is where the sessions' repository skills are built
// (bot.Config.SkillsBase): in the workspaces, where every runner can show
// it (the Kubernetes work claim holds it), apart from every worktree.
func skillsBase(cfg config) string {
	if cfg.Workspaces == "" {
		return ""
	}
	return filepath.Join(cfg.Workspaces, "skills")
}

// clearSkills removes what a run that ended without removing its
// sessions' built skills left (kill -9): only this bot builds there.
func clearSkills(cfg config, log *slog.Logger) {
	if dir := skillsBase(cfg); dir != "" {
		if err := os.RemoveAll(dir); err != nil {
			log.Warn("remove the skills an earlier run built", "dir", dir, "err", err)
		}
	}
}

// newWorkspaces opens the workspaces directory.
func newWorkspaces(cfg config, log *slog.Logger) (*workspace.Manager, error) {
	m, err := workspace.New(workspace.Options{Dir: cfg.Workspaces, Logger: log.With("part", "workspaces"),
		Author: workspace.Person{Name: "claudeops", Email: "claudeops@claudeops.invalid"}})
	if err != nil {
		return nil, fmt.Errorf("workspaces %s: %w", cfg.Workspaces, err)
	}
	return m, nil
}
