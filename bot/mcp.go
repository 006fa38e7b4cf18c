package bot

import (
	"context"
	"encoding/json"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/mcptools"
	"github.com/claudeops/claudeops/claudeproc"
)

// The bot's own tools for Claude (send_file, read_thread) are an MCP server
// the session's CLI reaches over the control protocol (bot/mcptools,
// claudeproc/mcp.go). The CLI asks for them like any tool (can_use_tool);
// what reaches here has been allowed.

// mcpTimeout bounds one answer: an upload to a slow platform included.
const mcpTimeout = 5 * time.Minute

// onMCP answers one of the CLI's MCP messages. The answer may wait on the
// platform (an upload), so it is made off the worker's goroutine: the
// bot's wait group owns it, and it ends with the bot (life) or its timeout;
// it answers the process the message came from (a newer process never
// gets a stale answer).
func (w *worker) onMCP(e *claudeproc.MCPMessage) {
	proc := w.sess.proc
	if proc == nil {
		return
	}
	env, maxFile := w.mcpEnv()
	life := w.life
	w.b.wg.Add(1)
	go func() {
		defer w.b.wg.Done()
		ctx, cancel := context.WithTimeout(life, mcpTimeout)
		defer cancel()
		if maxFile != nil {
			// Asked here: a platform may have to be asked (Matrix's media config).
			env.MaxFile = maxFile(ctx)
		}
		resp, err := mcptools.New(env).Handle(ctx, e.Message)
		if err != nil {
			w.log.Warn("mcp message", "err", err)
			resp = mcpError(e.Message, err)
		}
		if err := proc.RespondMCP(e.RequestID, resp); err != nil {
			w.log.Warn("answer mcp message", "err", err)
		}
	}()
}

// mcpEnv is what the tools may reach: the session's working directory
// (its worktree in a bound channel), this thread's posts and history;
// maxFile, when files can be posted, asks the platform's limit.
func (w *worker) mcpEnv() (env mcptools.Env, maxFile func(context.Context) int64) {
	env = mcptools.Env{Dir: w.cwd(context.Background())}
	ref, ad := w.ref, w.ad
	if fp, ok := w.opt.(adapters.FilePoster); ok {
		if post, ok := ad.(adapters.FilePoster); ok {
			maxFile = fp.MaxFileBytes
			env.Post = func(ctx context.Context, f adapters.OutFile) error {
				_, err := post.PostFile(ctx, ref, f)
				return err
			}
		}
	}
	if tr, ok := w.opt.(adapters.ThreadReader); ok {
		env.Read = func(ctx context.Context, limit int) ([]adapters.Said, error) {
			return tr.ReadThread(ctx, ref, limit)
		}
	}
	return env, maxFile
}

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
