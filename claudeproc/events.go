package claudeproc

import (
	"encoding/json"
	"time"
)

// Event is one thing the CLI told us, decoded from one stdout line, or one
// thing that happened to the process (Exited). The concrete types below are
// the whole set; consumers switch on them and ignore what they do not need.
type Event interface {
	// Kind names the event for logs and tests: "system/init", "assistant",
	// "stream_event", "unknown", "parse_error", ...
	Kind() string
}

// Meta is the routing information most CLI lines carry. Every field is
// optional on the wire; missing ones stay empty.
type Meta struct {
	SessionID string `json:"session_id"`
	UUID      string `json:"uuid"`
	// ParentToolUseID is the Agent tool_use that a subagent's line belongs
	// to; empty for the main conversation.
	ParentToolUseID string `json:"parent_tool_use_id"`
	// AgentID identifies the subagent that produced the line.
	AgentID string `json:"agent_id"`
}

// SystemInit starts every turn (not only the process): the CLI prints it
// again whenever a turn begins, including turns it starts by itself.
type SystemInit struct {
	Meta
	Cwd               string   `json:"cwd"`
	Tools             []string `json:"tools"`
	Model             string   `json:"model"`
	PermissionMode    string   `json:"permissionMode"`
	ClaudeCodeVersion string   `json:"claude_code_version"`
	Capabilities      []string `json:"capabilities"`
	Raw               json.RawMessage
}

// SystemStatus is system/status; Status is "requesting" before each model
// request, and may be other values (e.g. "compacting") or empty.
// CompactResult ends a compaction ("success"; empty on other lines).
type SystemStatus struct {
	Meta
	Status        string `json:"status"`
	CompactResult string `json:"compact_result"`
}

// APIRetry is system/api_retry: the CLI is retrying a failed model request.
type APIRetry struct {
	Meta
	Attempt      int    `json:"attempt"`
	MaxRetries   int    `json:"max_retries"`
	RetryDelayMS int    `json:"retry_delay_ms"`
	ErrorStatus  int    `json:"error_status"`
	Error        string `json:"error"`
}

// RetryDelay is the wait before the next attempt.
func (e *APIRetry) RetryDelay() time.Duration {
	return time.Duration(e.RetryDelayMS) * time.Millisecond
}

// TaskEvent is one of system/task_started, task_progress, task_updated and
// task_notification: a background Bash command or a subagent.
type TaskEvent struct {
	Meta
	Subtype        string          `json:"subtype"`
	TaskID         string          `json:"task_id"`
	ToolUseID      string          `json:"tool_use_id"`
	Description    string          `json:"description"`
	TaskType       string          `json:"task_type"`
	SubagentType   string          `json:"subagent_type"`
	IsBackgrounded bool            `json:"is_backgrounded"`
	Status         string          `json:"status"`
	Summary        string          `json:"summary"`
	OutputFile     string          `json:"output_file"`
	LastToolName   string          `json:"last_tool_name"`
	Patch          json.RawMessage `json:"patch"`
	Usage          json.RawMessage `json:"usage"`
}

// BackgroundTasksChanged is system/background_tasks_changed.
type BackgroundTasksChanged struct {
	Meta
	Tasks json.RawMessage `json:"tasks"`
}

// Informational is system/informational: a notice for the user.
type Informational struct {
	Meta
	Content string `json:"content"`
	Level   string `json:"level"`
	Tag     string `json:"tag"`
}

// PermissionDenied is system/permission_denied: the CLI refused a tool by
// itself (mode or classifier), without asking us.
type PermissionDenied struct {
	Meta
	ToolName           string `json:"tool_name"`
	ToolUseID          string `json:"tool_use_id"`
	DecisionReasonType string `json:"decision_reason_type"`
	DecisionReason     string `json:"decision_reason"`
	Message            string `json:"message"`
}

// CompactBoundary is system/compact_boundary: the conversation was
// compacted, by /compact (Trigger "manual") or because the context was
// full ("auto"). PreTokens is the context's size before, PostTokens after
// (the summary and what the CLI keeps; 0 when the CLI does not say). The
// CLI nests them in compact_metadata (2.1.309, 2.1.330).
type CompactBoundary struct {
	Meta
	Trigger    string `json:"trigger"`
	PreTokens  int    `json:"pre_tokens"`
	PostTokens int    `json:"post_tokens"`
}

// ThinkingTokens is system/thinking_tokens, an estimate while thinking.
type ThinkingTokens struct {
	Meta
	EstimatedTokens int `json:"estimated_tokens"`
}

// ContentBlock is one block of an assistant or user message.
type ContentBlock struct {
	Type string `json:"type"`
	// text
	Text string `json:"text,omitempty"`
	// thinking
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Content of a tool_result, flattened to text whether the CLI sent a
	// string or a list of text blocks.
	Content ToolResultContent `json:"content,omitempty"`
	IsError bool              `json:"is_error,omitempty"`
	// image
	Source *ImageSource `json:"source,omitempty"`
}

// ImageSource is the source of an image content block.
type ImageSource struct {
	Type      string `json:"type"` // "base64" or "url"
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// Assistant is one assistant line. The CLI prints one line per content block,
// all sharing MessageID, so Block is the single block of the line; Blocks
// holds all of them for the rare line that carries more.
type Assistant struct {
	Meta
	MessageID string
	Model     string
	RequestID string
	Block     ContentBlock
	Blocks    []ContentBlock
	// Error is set on synthetic API error messages ("authentication_failed",
	// "rate_limit", "server_error"); IsAPIError marks them.
	Error      string
	IsAPIError bool
	Usage      Usage
}

// User is a user line: tool results echoed back (ToolResults), or text the CLI
// records as the user's (e.g. "[Request interrupted by user]", or a replayed
// prompt with --replay-user-messages).
type User struct {
	Meta
	Text        string
	ToolResults []ContentBlock
	Blocks      []ContentBlock
	// IsReplay is true for prompts the CLI echoes back.
	IsReplay bool
}

// StreamEvent is a stream_event line (--include-partial-messages) with the
// reader's reassembly: Delta is this line's text (text_delta or
// thinking_delta), and when a content block ends, Block holds the whole block
// (the tool_use input reassembled from its input_json_delta pieces).
type StreamEvent struct {
	Meta
	APIMessageID string
	// EventType is message_start, content_block_start, content_block_delta,
	// content_block_stop, message_delta, message_stop (or ping, error, ...).
	EventType string
	Index     int
	// DeltaType is text_delta, input_json_delta, thinking_delta,
	// signature_delta for content_block_delta.
	DeltaType string
	Delta     string
	// Block is set at content_block_start (the block's type, id and name) and
	// at content_block_stop (the complete block), nil otherwise.
	Block *ContentBlock
	// StopReason comes with message_delta.
	StopReason string
}

// ControlRequest is a control_request from the CLI. can_use_tool is the only
// subtype 2.1.330 sends on its own (mcp_message, with SDK MCP servers,
// becomes an MCPMessage); others arrive with Subtype set and Raw kept.
type ControlRequest struct {
	RequestID string
	Subtype   string
	// CanUseTool is set for subtype can_use_tool.
	CanUseTool *CanUseTool
	Raw        json.RawMessage
}

// CanUseTool asks whether a tool may run (and carries AskUserQuestion).
type CanUseTool struct {
	ToolName                string            `json:"tool_name"`
	DisplayName             string            `json:"display_name"`
	Input                   json.RawMessage   `json:"input"`
	Description             string            `json:"description"`
	PermissionSuggestions   []json.RawMessage `json:"permission_suggestions"`
	BlockedPath             string            `json:"blocked_path"`
	DecisionReason          string            `json:"decision_reason"`
	DecisionReasonType      string            `json:"decision_reason_type"`
	RequiresUserInteraction bool              `json:"requires_user_interaction"`
	ToolUseID               string            `json:"tool_use_id"`
	AgentID                 string            `json:"agent_id"`
}

// ControlCancelRequest: the CLI withdrew one of its control requests (it
// does so for a pending can_use_tool when a turn is interrupted). Late
// answers to it are ignored by the CLI, so the prompt should be closed.
type ControlCancelRequest struct {
	RequestID string
}

// ControlResponse answers one of our control requests. Process routes those
// to the waiting caller; this event surfaces only responses nobody waits for.
type ControlResponse struct {
	RequestID string
	Subtype   string // success or error
	Response  json.RawMessage
	Error     string
	ErrorCode string
}

// CommandLifecycle reports a user message we sent with a uuid: queued,
// started, completed or cancelled.
type CommandLifecycle struct {
	Meta
	CommandUUID string `json:"command_uuid"`
	State       string `json:"state"`
}

// Usage is token usage as the API reports it.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// PermissionDenial lists a tool call that was denied during the turn.
type PermissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// Result ends a turn. IsError is the failure flag: API errors come with
// subtype "success" and IsError true.
type Result struct {
	Meta
	Subtype           string             `json:"subtype"`
	IsError           bool               `json:"is_error"`
	Result            string             `json:"result"`
	StopReason        string             `json:"stop_reason"`
	TerminalReason    string             `json:"terminal_reason"`
	NumTurns          int                `json:"num_turns"`
	DurationMS        int64              `json:"duration_ms"`
	DurationAPIMS     int64              `json:"duration_api_ms"`
	TotalCostUSD      float64            `json:"total_cost_usd"`
	Usage             Usage              `json:"usage"`
	PermissionDenials []PermissionDenial `json:"permission_denials"`
	Errors            []string           `json:"errors"`
	APIErrorStatus    int                `json:"api_error_status"`
	// LocalCommand names the slash command the CLI ran itself for this
	// result ("compact", "context", "cost"): no model turn, NumTurns 0,
	// Result its output.
	LocalCommand string `json:"local_command"`
	// ModelUsageSinceLastResult is this turn's usage per model; the other
	// cost and usage figures are cumulative for the session.
	ModelUsageSinceLastResult map[string]ModelUsage `json:"model_usage_since_last_result"`
}

// ModelUsage is one model's usage in a result.
type ModelUsage struct {
	InputTokens  int64   `json:"inputTokens"`
	OutputTokens int64   `json:"outputTokens"`
	CostUSD      float64 `json:"costUSD"`
}

// TurnCostUSD is what this turn cost: the sum over models since the last
// result, or the session's total when the CLI does not say.
func (r *Result) TurnCostUSD() float64 {
	if r.ModelUsageSinceLastResult == nil {
		return r.TotalCostUSD
	}
	var c float64
	for _, u := range r.ModelUsageSinceLastResult {
		c += u.CostUSD
	}
	return c
}

// Duration is the turn's wall time as the CLI measured it.
func (r *Result) Duration() time.Duration { return time.Duration(r.DurationMS) * time.Millisecond }

// ToolProgress is tool_progress, sent by older and newer CLIs; 2.1.330
// sends it as a heartbeat of an MCP tool call still running after 30 s,
// with ToolUseID "<call's id>-heartbeat-<n>" and the call's id as
// ParentToolUseID.
type ToolProgress struct {
	Meta
	ToolUseID          string  `json:"tool_use_id"`
	ToolName           string  `json:"tool_name"`
	ElapsedTimeSeconds float64 `json:"elapsed_time_seconds"`
}

// KeepAlive is keep_alive, sent by some CLI versions while idle.
type KeepAlive struct{}

// ToolUseSummary is tool_use_summary, sent by some CLI versions.
type ToolUseSummary struct {
	Meta
	Summary             string   `json:"summary"`
	PrecedingToolUseIDs []string `json:"preceding_tool_use_ids"`
}

// Unknown is a line of a type (or system subtype) this package does not know.
// It is surfaced, not dropped: a newer CLI may say something worth logging.
type Unknown struct {
	Type    string
	Subtype string
	Raw     json.RawMessage
}

// ParseError is a stdout line that was not valid JSON or did not fit the
// shape of its type. Reading goes on with the next line.
type ParseError struct {
	Line []byte // the offending line, at most 4 KiB of it
	Err  error
}

// Truncated is a line longer than the reader's cap. Prefix holds its first
// cap bytes followed by the marker "[truncated: original_size=N bytes]";
// Type, Subtype and ToolUseID are recovered from the prefix where possible.
type Truncated struct {
	Type         string
	Subtype      string
	ToolUseID    string
	SessionID    string
	OriginalSize int64
	Prefix       []byte
	// For a control_request: the envelope's request_id and the request's
	// tool_name, read from the line's head (controlHead), and Refused, what
	// the process answered the CLI with (empty if it could not answer: no
	// request_id in the head).
	RequestID string
	ToolName  string
	Refused   string
}

// Exited is the last event of a process: it exited or was killed.
type Exited struct {
	Info ExitInfo
	// MidTurn is true when the process ended while a turn was running
	// (a message had been sent and no result came back).
	MidTurn bool
}

func (*SystemInit) Kind() string             { return "system/init" }
func (*SystemStatus) Kind() string           { return "system/status" }
func (*APIRetry) Kind() string               { return "system/api_retry" }
func (e *TaskEvent) Kind() string            { return "system/" + e.Subtype }
func (*BackgroundTasksChanged) Kind() string { return "system/background_tasks_changed" }
func (*Informational) Kind() string          { return "system/informational" }
func (*PermissionDenied) Kind() string       { return "system/permission_denied" }
func (*CompactBoundary) Kind() string        { return "system/compact_boundary" }
func (*ThinkingTokens) Kind() string         { return "system/thinking_tokens" }
func (*Assistant) Kind() string              { return "assistant" }
func (*User) Kind() string                   { return "user" }
func (*StreamEvent) Kind() string            { return "stream_event" }
func (*ControlRequest) Kind() string         { return "control_request" }
func (*ControlCancelRequest) Kind() string   { return "control_cancel_request" }
func (*ControlResponse) Kind() string        { return "control_response" }
func (*CommandLifecycle) Kind() string       { return "command_lifecycle" }
func (*Result) Kind() string                 { return "result" }
func (*ToolProgress) Kind() string           { return "tool_progress" }
func (*KeepAlive) Kind() string              { return "keep_alive" }
func (*ToolUseSummary) Kind() string         { return "tool_use_summary" }
func (*Unknown) Kind() string                { return "unknown" }
func (*ParseError) Kind() string             { return "parse_error" }
func (*Truncated) Kind() string              { return "truncated" }
func (*Exited) Kind() string                 { return "exited" }
