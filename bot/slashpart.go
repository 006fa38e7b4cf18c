package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/claudeproc"
)

// slashes is the thread's part for slash commands (slash.go has the
// rules): it decides each, tells and audits refusals, and keeps the one
// that waits for the running turn to end. The worker asks it where a
// message is parsed and where the prompt is built, and runs what it
// decides (a bot command, a refusal that names the starter).
type slashes struct {
	deps
	// held waits for the running turn to end; not settled meanwhile, so
	// that a restart tells the thread it was not taken up.
	held *adapters.Event
}

// slashStep is what the worker does next with a slash command.
type slashStep int

const (
	slashSend        slashStep = iota // on to Claude Code
	slashDone                         // told, refused or dropped: nothing more
	slashHeld                         // waits for the turn to end (held)
	slashBotCommand                   // the bot's own command: run it
	slashStarterOnly                  // refuse: for the starter and admins
)

// before decides what needs no process: the bot's own commands (cmd is
// the command's text), the refused, the held (busy: a turn runs or
// messages are queued; the CLI would merge a command into them).
func (s *slashes) before(ctx context.Context, ev adapters.Event, name, args string, busy bool) (step slashStep, cmd string) {
	lname := strings.ToLower(name)
	if c, ok := slashBot[lname]; ok {
		return slashBotCommand, strings.TrimSpace(c + " " + args)
	}
	if why := slashRefused[lname]; why != "" {
		s.refuse(ctx, ev.User, name, why)
		return slashDone, ""
	}
	if strings.Contains(args, "[from ") {
		// It goes without the bot's sender line: none may ride in it.
		s.refuse(ctx, ev.User, name, "its text holds a line like the bot's sender line (`[from …]`)")
		return slashDone, ""
	}
	if !busy {
		return slashSend, ""
	}
	if s.held != nil {
		s.reply(ctx, fmt.Sprintf("`/%s` was not taken: another slash command already waits for this turn to end.", name))
		return slashDone, ""
	}
	s.held = &ev
	s.reply(ctx, fmt.Sprintf("`/%s` runs once Claude has finished this turn (`stop` drops it).", name))
	return slashHeld, ""
}

// take hands back the held command once the thread may run it (ready).
func (s *slashes) take(ready bool) *adapters.Event {
	ev := s.held
	if ev == nil || !ready {
		return nil
	}
	s.held = nil
	return ev
}

// drop drops the held command (stop, the session's end), telling the
// thread; the message is settled through settle (the worker's records,
// owed like any other settlement when the storage refuses it).
func (s *slashes) drop(ctx context.Context, settle func(context.Context, msgKey)) {
	if s.held == nil {
		return
	}
	name, _, _ := parseSlash(strings.TrimSpace(s.held.Message.Text))
	s.reply(ctx, fmt.Sprintf("`/%s` was dropped: the turn it waited for was stopped or its session ended.", name))
	settle(ctx, keyOf(*s.held))
	s.held = nil
}

// allowed decides text, from u, on the CLI's commands (cmds, or why they
// are not known) and the repository's in dir: an unknown one is said, a
// refused one refused; starter may send them all. A repository's command
// comes back as the message's content (repo); nil for one the CLI runs.
func (s *slashes) allowed(ctx context.Context, text string, u adapters.User, cmds []claudeproc.SlashCommand, cmdsErr error, starter, dir string) ([]claudeproc.ContentBlock, slashStep) {
	name, args, _ := parseSlash(text)
	if cmdsErr != nil {
		s.log.Warn("slash commands", "err", cmdsErr)
		s.notice(ctx, fmt.Sprintf("`/%s` was not sent: %v.", name, cmdsErr), true)
		return nil, slashDone
	}
	v := judgeSlash(cmds, name)
	if !v.known || v.alias {
		if blocks, handled := s.repo(ctx, u, name, args, dir); handled {
			if blocks == nil {
				return nil, slashDone
			}
			return blocks, slashSend
		}
	}
	switch {
	case !v.known:
		s.audit(ctx, u.ID, "refused", "/"+name, "not a command of this Claude Code session", false)
		s.reply(ctx, fmt.Sprintf("`/%s` is not a command of Claude Code here; nothing was sent. (To send the text to Claude as it is, begin with another word.)", name))
		return nil, slashDone
	case v.rule == 0:
		s.refuse(ctx, u, name, "it is not offered from chat")
		return nil, slashDone
	case v.rule == slashStarter && !s.reg.MayDecide(s.ref.ChannelKey(), u.ID, starter):
		return nil, slashStarterOnly
	}
	s.audit(ctx, u.ID, "slash", "/"+v.canonical, args, true)
	return nil, slashSend
}

// repo expands the repository's custom command name (.claude/commands in
// dir), which a guarded CLI does not load, into the message the CLI would
// make of it (claudeproc.RepoCommand). handled is false when the
// repository has no such command; blocks is nil when it has one that
// could not be read (the thread was told).
func (s *slashes) repo(ctx context.Context, u adapters.User, name, args, dir string) (blocks []claudeproc.ContentBlock, handled bool) {
	blocks, err := claudeproc.RepoCommand(dir, name, args)
	switch {
	case errors.Is(err, claudeproc.ErrNoCommand):
		return nil, false
	case err != nil:
		s.log.Warn("repository command", "name", name, "err", err)
		s.audit(ctx, u.ID, "refused", "/"+name, err.Error(), false)
		s.reply(ctx, fmt.Sprintf("`/%s` of the repository could not be read (%v); nothing was sent.", name, err))
		return nil, true
	}
	s.audit(ctx, u.ID, "slash", "/"+name, args, true)
	return blocks, true
}

// refuse tells that a slash command is refused, and audits it.
func (s *slashes) refuse(ctx context.Context, u adapters.User, name, why string) {
	s.audit(ctx, u.ID, "refused", "/"+name, why, false)
	s.reply(ctx, fmt.Sprintf("`/%s` is not available from chat: %s. Nothing was sent to Claude.", name, why))
}
