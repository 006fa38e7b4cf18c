package claudeproc

import (
	"encoding/json"
	"log/slog"
	"strconv"
	"time"
)

// Options configure one process. The zero value runs `claude` from PATH in
// the current directory with an environment built from this process's own
// by the allowlist (see BuildEnv).
type Options struct {
	// Bin is the CLI executable; default "claude" (looked up in PATH).
	Bin string
	// Dir is the working directory of the session.
	Dir string
	// Resume continues a stored session (--resume); ForkSession copies it
	// into a new session id instead (--fork-session).
	Resume      string
	ForkSession bool
	// SessionID presets the id of a new session (--session-id).
	SessionID      string
	Model          string
	PermissionMode string
	// AppendSystemPrompt is added to the end of the CLI's system prompt
	// (--append-system-prompt, one argument: no shell sees it).
	AppendSystemPrompt string
	// FreshSystemPrompt renders the system prompt anew on every request
	// (--system-prompt-snapshot off). By default the CLI records the
	// prompt of a conversation's first request and sends that record on
	// every later request and resume, so a resumed session would keep an
	// AppendSystemPrompt it was first launched with.
	FreshSystemPrompt bool
	AllowedTools      []string
	DisallowedTools   []string
	MaxTurns          int
	// Effort is how hard the model thinks (--effort: low, medium, high,
	// xhigh, max; both supported CLI versions take it); "" leaves it the
	// CLI's own.
	Effort string
	// Guard, when set, keeps tool decisions with the host; see Guard.
	Guard *Guard
	// SDKMCPServers names MCP servers the host serves itself over the
	// control protocol (MCPMessage, RespondMCP; see mcp.go).
	SDKMCPServers []string
	// MCPServers are MCP servers the operator gives the session, by
	// name: each the CLI's own server object (stdio: command, args, env;
	// http: url, headers), secrets included. The CLI reads them from a
	// pipe, never from its command line or environment (mcpservers.go);
	// the Runner must be a ConfigPasser.
	MCPServers map[string]json.RawMessage
	// PluginDirs are local plugin directories the operator gives the
	// session. A guarded session never gets one whole: its skills are
	// built as the repository's are (reposkills.go) and its agents read
	// (repoagents.go); nothing else of it takes effect
	// (operatorplugins.go). An unguarded one gets each (--plugin-dir).
	PluginDirs []string
	// SkillsBase, when set, is where Start builds the repository's skills
	// of a guarded session as a plugin the model may call (reposkills.go):
	// a directory apart from every working directory that the runner can
	// show read-only. "" offers the model no skills.
	SkillsBase string
	// Runner starts the CLI; nil is Local{}, a child process of ours.
	Runner Runner
	// Session names the session to the runner.
	Session Session
	// Mounts are more directories of the host the session sees (Mount).
	Mounts []Mount
	// Image, when set, is the image the session's CLI runs from in place
	// of the runner's own (Spec.Image): a runner with images only.
	Image string
	// Progress, when set, is told what the runner waits on before the CLI
	// runs (a Pod waiting for capacity), as a sentence for people.
	Progress func(text string)
	// ExtraArgs are appended to the command line as they are.
	ExtraArgs []string
	// Env is the child's whole environment. Nil means BuildEnv(os.Environ(), nil).
	Env []string
	// MaxLineBytes caps one stdout line; default DefaultMaxLineBytes.
	MaxLineBytes int
	// StderrBytes is how much of stderr's tail is kept; default 64 KiB.
	StderrBytes int
	// RequestTimeout bounds our control requests when the caller's context
	// has no earlier deadline; default 30 s.
	RequestTimeout time.Duration
	// StopGrace is how long each shutdown step waits (after closing stdin,
	// after SIGTERM); default 5 s.
	StopGrace time.Duration
	// EventBuffer is how many events may wait for the consumer before the
	// reader stops reading stdout (and so the CLI blocks); default 4096.
	EventBuffer int
	Logger      *slog.Logger

	// agents is the repository's subagents as --agents JSON, read by
	// Start for a guarded session (repoagents.go).
	agents string
	// skillsDir is where Start built the session's skills, builtPlugins
	// the plugins built there and skills their names as the model calls
	// them, <plugin>:<name> (reposkills.go).
	skillsDir    string
	builtPlugins []string
	skills       []string
}

// Args returns the CLI arguments for o: the stream-json flags the protocol
// needs, then the session options.
func (o *Options) Args() []string {
	args := []string{
		"-p",
		"--output-format", "stream-json",
		"--input-format", "stream-json",
		"--verbose",
		"--permission-prompt-tool", "stdio",
		"--include-partial-messages",
	}
	if o.Resume != "" {
		args = append(args, "--resume", o.Resume)
		if o.ForkSession {
			args = append(args, "--fork-session")
		}
	}
	if o.SessionID != "" {
		args = append(args, "--session-id", o.SessionID)
	}
	if o.Model != "" {
		args = append(args, "--model", o.Model)
	}
	if o.Effort != "" {
		args = append(args, "--effort", o.Effort)
	}
	if o.Guard != nil {
		args = append(args, o.Guard.args(o.PermissionMode, o.Dir, len(o.skills) > 0)...)
	} else if o.PermissionMode != "" {
		args = append(args, "--permission-mode", o.PermissionMode)
	}
	if o.agents != "" {
		args = append(args, "--agents", o.agents)
	}
	args = append(args, o.mcpArgs()...)
	if len(o.MCPServers) > 0 {
		args = append(args, "--mcp-config", MCPConfigPath)
	}
	if o.Guard == nil {
		for _, d := range o.PluginDirs {
			args = append(args, "--plugin-dir", d)
		}
	}
	for _, d := range o.builtPlugins {
		args = append(args, "--plugin-dir", d)
	}
	if o.AppendSystemPrompt != "" {
		args = append(args, "--append-system-prompt", o.AppendSystemPrompt)
	}
	if o.FreshSystemPrompt {
		args = append(args, "--system-prompt-snapshot", "off")
	}
	if len(o.AllowedTools) > 0 {
		args = append(args, "--allowedTools")
		args = append(args, o.AllowedTools...)
	}
	if len(o.DisallowedTools) > 0 {
		args = append(args, "--disallowedTools")
		args = append(args, o.DisallowedTools...)
	}
	if o.MaxTurns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(o.MaxTurns))
	}
	return append(args, o.ExtraArgs...)
}
