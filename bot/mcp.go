package bot

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/mcptools"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/claudeproc"
)

// The bot's own tools for Claude (send_file, read_thread) are an MCP server
// the session's CLI reaches over the control protocol (bot/mcptools,
// claudeproc/mcp.go). The CLI asks for them like any tool (can_use_tool);
// what reaches here has been allowed.

// mcpTimeout bounds one answer: an upload to a slow platform included.
const mcpTimeout = 5 * time.Minute

// onMCP answers one of the CLI's MCP messages with the process's server.
// The answer may wait on the platform (an upload), so it is made off the
// worker's goroutine: the bot's wait group owns it, and it ends with the
// bot (life), its timeout, or the CLI's notifications/cancelled (the
// server cancels the call it names); it answers the process the message
// came from (a newer process never gets a stale answer).
func (w *worker) onMCP(e *claudeproc.MCPMessage) {
	proc, srv := w.sess.proc, w.sess.mcp
	if proc == nil {
		return
	}
	if srv == nil {
		// Not made at start (a test's process): nothing waits on a platform here.
		srv = mcptools.New(w.mcpEnv(context.Background()))
		w.sess.mcp = srv
	}
	life := w.life
	w.b.wg.Add(1)
	go func() {
		defer w.b.wg.Done()
		ctx, cancel := context.WithTimeout(life, mcpTimeout)
		defer cancel()
		resp, err := srv.Handle(ctx, e.Message)
		if err != nil {
			w.log.Warn("mcp message", "err", err)
			resp = mcpError(e.Message, err)
		}
		if err := proc.RespondMCP(e.RequestID, resp); err != nil {
			w.log.Debug("answer mcp message", "err", err)
		}
	}()
}

// maxSendFile caps what send_file posts, whatever the platform allows:
// the file is held in memory while it is posted.
const maxSendFile = 100 << 20

// mcpEnv is what the tools may reach: the session's working directory
// (its worktree in a bound channel), this thread's posts and history. The
// platform's file limit is asked now, bounded: the CLI's MCP handshake
// must never wait on a platform.
func (w *worker) mcpEnv(ctx context.Context) mcptools.Env {
	env := mcptools.Env{Dir: w.cwd(ctx)}
	ref := w.ref
	if fp, ok := w.ad.(adapters.FilePoster); ok {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		env.MaxFile = min(fp.MaxFileBytes(lctx), maxSendFile)
		cancel()
		env.Post = func(ctx context.Context, f adapters.OutFile) error {
			_, err := fp.PostFile(ctx, ref, f)
			return err
		}
	}
	if tr, ok := w.ad.(adapters.ThreadReader); ok {
		env.Read = func(ctx context.Context, limit int) ([]adapters.Said, error) {
			return tr.ReadThread(ctx, ref, limit)
		}
	}
	env.Hidden = hiddenBy(w.cfg.Runner) // send_file sees what the session sees
	if w.parts.proposes() {
		// Called off the worker: the proposal waits in its queue.
		posted := w.posted
		env.Propose = func(_ context.Context, fact string) error {
			if !posted.put(thread.Proposal{Text: fact}) {
				return errThreadGone
			}
			return nil
		}
	}
	return env
}

// hiddenBy is what the runner r hides from its sessions (claudeproc.Viewer),
// nil when they see everything the bot does.
func hiddenBy(r claudeproc.Runner) func(string) bool {
	if v, ok := r.(claudeproc.Viewer); ok {
		return v.Hides
	}
	return nil
}

// errThreadGone: the thread's worker has gone; nothing more is shown in it.
var errThreadGone = errors.New("the thread is closing")

// mcpError is a JSON-RPC error answering msg, for when the server itself
// failed (its own errors are answers already).
func mcpError(msg json.RawMessage, err error) json.RawMessage {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(msg, &req)
	if len(req.ID) == 0 {
		return nil // a notification: acknowledged
	}
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": req.ID,
		"error": map[string]any{"code": -32603, "message": err.Error()},
	})
	return b
}
