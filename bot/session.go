package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/mcptools"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/claudeproc"
)

// starter starts a claude process; tests replace it for faults the real CLI
// cannot be made to produce.
type starter func(ctx context.Context, o claudeproc.Options) (process, error)

// process is what a thread's session uses of a claude process: the methods
// of *claudeproc.Process as they are (tests put fakes in its place).
type process interface {
	Events() <-chan claudeproc.Event
	Send(m claudeproc.UserMessage) error
	Allow(requestID string, updatedInput json.RawMessage, updatedPermissions []claudeproc.PermissionUpdate) error
	Deny(requestID, message string, interrupt bool) error
	Interrupt(ctx context.Context, cancelQueued bool) (claudeproc.InterruptResult, error)
	SetPermissionMode(ctx context.Context, mode string) (string, error)
	SetModel(ctx context.Context, model string) (string, error)
	Close(ctx context.Context) claudeproc.ExitInfo
	RespondMCP(requestID string, response json.RawMessage) error
}

var _ process = (*claudeproc.Process)(nil)

func startReal(ctx context.Context, o claudeproc.Options) (process, error) {
	p, err := claudeproc.Start(ctx, o)
	if err != nil {
		return nil, err
	}
	return p, nil
}

var errNoProcess = errors.New("no live session")

// queuedPrompt is a message sent to claude: the first of a turn, or one
// sent while a turn ran (the CLI queues it; its notice shows where it is).
type queuedPrompt struct {
	msg    claudeproc.UserMessage
	text   string
	user   adapters.User
	notice adapters.MessageRef
	shown  bool
	// key is the message it came from: settled once claude takes it up or
	// drops it (settle.go).
	key msgKey
	// at is when a person's message reached the bot (zero for a
	// scheduled run's): its first text is timed from it.
	at time.Time
}

// session is the thread's claude process: started (or resumed) in a slot,
// written to, stopped. It remembers the first prompt of a resumed process
// until the process prints system/init, so that the prompt can be sent
// again in a fresh session when the resume fails.
type session struct {
	deps
	start starter
	// evict asks the worker to give the slot back (on its goroutine).
	evict func()
	// launch runs the thread's Launcher hooks on a process about to start.
	launch func(*thread.Launch)

	proc   process
	events <-chan claudeproc.Event
	// mcp answers the process's MCP messages (mcp.go): one per process, so
	// that a cancellation reaches the call it names.
	mcp     *mcptools.Server
	started bool          // this process printed system/init at least once
	initial *queuedPrompt // first prompt of a resumed process, resent if the resume fails
	// closing is set while close drains the process's last events: what
	// they trigger must not close it again.
	closing bool
	// cmds are the slash commands of process cmdsOf (slash.go).
	cmds   []claudeproc.SlashCommand
	cmdsOf process
	// instructions are the Instructors' text it was launched with.
	instructions string
}

func (s *session) live() bool { return s.proc != nil }

// open takes a slot (waiting for one until life ends; people are told
// their place, and with person also that their other threads are not
// announced again) and starts claude with the options opts makes once the
// slot is taken: a fresh session when id is "", else resuming id. It
// returns the session id the start was tried with, also when it failed.
func (s *session) open(ctx, life context.Context, opts func() claudeproc.Options, id string, person bool) (string, error) {
	var queuedNotice *adapters.MessageRef
	err := s.slots.acquire(life, string(s.key), s.evict, func(pos int) {
		text := fmt.Sprintf("All %d Claude sessions are busy; this thread is waiting (position %d in the queue).", s.cfg.MaxSessions, pos)
		if person {
			// Scheduled runs are announced each; a person once.
			text += " Other threads of yours that wait meanwhile are not announced again."
		}
		ref, err := s.ad.Post(ctx, s.ref, adapters.Message{Kind: adapters.KindNotice, Text: text})
		if err == nil {
			queuedNotice = &ref
		}
	})
	if err != nil {
		return "", err
	}
	if queuedNotice != nil {
		_ = s.ad.Edit(ctx, *queuedNotice, adapters.Message{Kind: adapters.KindNotice, Text: "A Claude session is free; going on."})
	}
	s.slots.setBusy(string(s.key), true)
	o := opts()
	// A directory stored before the bot checked `cwd`, or one a link now
	// moves, is checked again at every start.
	if why := unfitWorkdir(s.cfg.ProtectedPaths, resolveExisting(o.Dir)); why != "" {
		s.slots.release(string(s.key))
		return "", fmt.Errorf("the working directory %s %s; an admin can choose another with `cwd`", o.Dir, why)
	}
	if id == "" {
		id = newUUID()
		o.SessionID = id
	} else {
		o.Resume = id
	}
	// The hooks see it once the slot is taken: a budget cap is what is
	// left now.
	if s.launch != nil {
		l := thread.Launch{Dir: o.Dir, Resume: o.Resume != ""}
		s.launch(&l)
		o.ExtraArgs = append(o.ExtraArgs, l.ExtraArgs...)
		o.MCPServers, o.PluginDirs = l.MCPServers, append(o.PluginDirs, l.PluginDirs...)
		o.Mounts = append(o.Mounts, l.Mounts...)
		o.Env = addEnv(o.Env, l.Env)
		o.Image = l.Image
	}
	p, err := s.start(life, o)
	if err != nil {
		s.slots.release(string(s.key))
		if life.Err() == nil { // not the bot shutting down
			s.cfg.Observer.ProcessStartFailed()
		}
		return id, err
	}
	s.cfg.Observer.ProcessStarted(o.Resume != "")
	s.proc, s.events, s.started = p, p.Events(), false
	s.log.Info("claude started", "session", id, "resume", o.Resume != "", "cwd", o.Dir)
	return id, nil
}

// sent notes the first prompt of a turn: until the process has printed
// system/init, it is the one a failed resume sends again.
func (s *session) sent(qp *queuedPrompt) {
	if !s.started {
		s.initial = qp
	}
}

// initialized: the process printed system/init; its resume worked.
func (s *session) initialized() {
	s.started = true
	s.initial = nil
}

// resumeLost reports whether r says the resumed session is gone (its
// files were removed, or it never got written) before the process ever
// started: the initial prompt is then to be sent again in a fresh session.
func (s *session) resumeLost(r *claudeproc.Result) bool {
	if s.initial == nil || !r.IsError || s.started {
		return false
	}
	for _, e := range r.Errors {
		if strings.Contains(e, "No conversation found") {
			return true
		}
	}
	return false
}

func (s *session) allow(requestID string, in json.RawMessage) error {
	if s.proc == nil {
		return errNoProcess
	}
	return s.proc.Allow(requestID, in, nil)
}

func (s *session) deny(requestID, msg string) error {
	if s.proc == nil {
		return errNoProcess
	}
	return s.proc.Deny(requestID, msg, false)
}

// close ends the process, waiting at most 4×StopGrace, and hands drain
// every event it printed before it ended (but its exit). The process is
// still the session's while drain runs; ended forgets it.
func (s *session) close(drain func(claudeproc.Event)) claudeproc.ExitInfo {
	s.closing = true
	defer func() { s.closing = false }()
	cctx, cancel := context.WithTimeout(context.Background(), 4*s.cfg.StopGrace)
	info := s.proc.Close(cctx)
	cancel()
	if s.events != nil {
		for ev := range s.events {
			if _, ok := ev.(*claudeproc.Exited); ok {
				continue
			}
			drain(ev)
		}
	}
	return info
}

// ended forgets the process and gives its slot back.
func (s *session) ended() {
	s.proc, s.events, s.mcp = nil, nil, nil
	s.slots.release(string(s.key))
}

// addEnv adds to env each NAME=value of more whose name env lacks: the
// operator's own value wins.
func addEnv(env, more []string) []string {
	have := make(map[string]bool, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		have[name] = true
	}
	for _, kv := range more {
		if name, _, _ := strings.Cut(kv, "="); !have[name] {
			env, have[name] = append(env, kv), true
		}
	}
	return env
}

// commandLister is a process that says which slash commands its session
// has (*claudeproc.Process: the initialize request, which changes nothing
// when sent without a system prompt).
type commandLister interface {
	Initialize(ctx context.Context, req claudeproc.InitializeRequest) (*claudeproc.InitializeResponse, error)
}

// commands are the live process's slash commands, asked once per process.
func (s *session) commands(ctx context.Context) ([]claudeproc.SlashCommand, error) {
	if s.cmdsOf == s.proc && s.proc != nil {
		return s.cmds, nil
	}
	cl, ok := s.proc.(commandLister)
	if !ok {
		return nil, fmt.Errorf("this Claude Code process does not list its commands")
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := cl.Initialize(cctx, claudeproc.InitializeRequest{})
	if err != nil {
		return nil, fmt.Errorf("ask Claude Code for its commands: %w", err)
	}
	s.cmds, s.cmdsOf = r.Commands, s.proc
	return s.cmds, nil
}
