package fakeanthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Request is one parsed POST /v1/messages request. It is immutable once
// recorded; tests may read it from any goroutine.
type Request struct {
	// Seq is the 1-based arrival number of the request on its Server.
	Seq int
	// Path is the request URI path plus query as received (e.g. "/v1/messages?beta=true").
	Path string

	Model     string
	Stream    bool
	MaxTokens int
	// System holds the texts of the top-level "system" prompt (a string or a
	// list of text blocks in the body).
	System []string
	// Messages holds the "messages" array with every content normalised to a
	// list of blocks (string content becomes one text block). Roles seen from
	// the CLI are "user", "assistant" and "system".
	Messages  []Message
	ToolNames []string

	Header http.Header
	Body   []byte
}

// Message is one item of the request's "messages" array.
type Message struct {
	Role    string
	Content []ContentBlock
}

// ContentBlock is one content block of a request message. Only the fields
// that belong to its Type are set; Raw always holds the original JSON.
type ContentBlock struct {
	Type string

	Text string // type "text"

	Thinking  string // type "thinking"
	Signature string // type "thinking"

	ID    string          // type "tool_use"
	Name  string          // type "tool_use"
	Input json.RawMessage // type "tool_use"

	ToolUseID string // type "tool_result"
	Content   string // type "tool_result": string content, or the text blocks of a list joined by "\n"
	IsError   bool   // type "tool_result"

	Raw json.RawMessage
}

// ToolResult is a tool_result block sent back by the CLI.
type ToolResult struct {
	ToolUseID string
	// Content is the result text (a string, or the text blocks of a list
	// joined by "\n") with the <system-reminder> sections the CLI appends
	// removed and surrounding whitespace trimmed.
	Content string
	// RawContent is the result text exactly as sent.
	RawContent string
	IsError    bool
}

func toolResultOf(b ContentBlock) ToolResult {
	return ToolResult{
		ToolUseID:  b.ToolUseID,
		Content:    strings.TrimSpace(StripSystemReminders(b.Content)),
		RawContent: b.Content,
		IsError:    b.IsError,
	}
}

type wireRequest struct {
	Model     string            `json:"model"`
	Stream    bool              `json:"stream"`
	MaxTokens int               `json:"max_tokens"`
	System    json.RawMessage   `json:"system"`
	Messages  []wireMessage     `json:"messages"`
	Tools     []json.RawMessage `json:"tools"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// ParseRequest parses a Messages API request body. Header may be nil.
// It is exported so tests can build Requests from recorded bodies.
func ParseRequest(body []byte, header http.Header) (*Request, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("fakeanthropic: request body is not a Messages request: %w", err)
	}
	r := &Request{
		Model:     w.Model,
		Stream:    w.Stream,
		MaxTokens: w.MaxTokens,
		Header:    header.Clone(),
		Body:      append([]byte(nil), body...),
	}
	if r.Header == nil {
		r.Header = http.Header{}
	}
	sys, err := parseContent(w.System)
	if err != nil {
		return nil, fmt.Errorf("fakeanthropic: system: %w", err)
	}
	for _, b := range sys {
		if b.Type == "text" {
			r.System = append(r.System, b.Text)
		}
	}
	for i, m := range w.Messages {
		blocks, err := parseContent(m.Content)
		if err != nil {
			return nil, fmt.Errorf("fakeanthropic: messages[%d]: %w", i, err)
		}
		r.Messages = append(r.Messages, Message{Role: m.Role, Content: blocks})
	}
	for i, raw := range w.Tools {
		var tool struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &tool); err != nil {
			return nil, fmt.Errorf("fakeanthropic: tools[%d]: %w", i, err)
		}
		r.ToolNames = append(r.ToolNames, tool.Name)
	}
	return r, nil
}

// parseContent normalises a content value (absent, null, a string or a list
// of blocks) to a list of blocks.
func parseContent(raw json.RawMessage) ([]ContentBlock, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	if s[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, err
		}
		rawBlock, _ := json.Marshal(map[string]string{"type": "text", "text": text})
		return []ContentBlock{{Type: "text", Text: text, Raw: rawBlock}}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("content is neither a string nor a list: %w", err)
	}
	blocks := make([]ContentBlock, 0, len(items))
	for _, item := range items {
		var wb wireBlock
		if err := json.Unmarshal(item, &wb); err != nil {
			return nil, fmt.Errorf("content block: %w", err)
		}
		b := ContentBlock{Type: wb.Type, Raw: append(json.RawMessage(nil), item...)}
		switch wb.Type {
		case "text":
			b.Text = wb.Text
		case "thinking":
			b.Thinking = wb.Thinking
			b.Signature = wb.Signature
		case "tool_use", "server_tool_use":
			b.ID, b.Name, b.Input = wb.ID, wb.Name, wb.Input
		case "tool_result":
			b.ToolUseID = wb.ToolUseID
			b.IsError = wb.IsError
			inner, err := parseContent(wb.Content)
			if err != nil {
				return nil, fmt.Errorf("tool_result content: %w", err)
			}
			var texts []string
			for _, ib := range inner {
				if ib.Type == "text" {
					texts = append(texts, ib.Text)
				}
			}
			b.Content = strings.Join(texts, "\n")
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// lastUser returns the last message with role "user", or nil.
func (r *Request) lastUser() *Message {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return &r.Messages[i]
		}
	}
	return nil
}

// LastUserText returns the text the human typed in the last user message:
// its text blocks with the CLI's own additions removed
// (<system-reminder>...</system-reminder> sections, and the
// <local-command-caveat>, <command-name>, <command-message>, <command-args>,
// <local-command-stdout>/<local-command-stderr> sections the CLI adds after a
// set_model), empty remainders dropped, joined by "\n". tool_result blocks
// are ignored, so it is "" for a message that only carries tool results.
//
// Note that the CLI merges consecutive user content into one message, so
// this is everything typed since the last assistant message.
//
// The line claudeops puts first on every message it passes on, naming the
// sender ("[from ana · U1]"), is left out: see LastUserSender.
func (r *Request) LastUserText() string {
	_, text := splitSender(r.lastUserText())
	return text
}

// LastUserSender is the sender line claudeops put first on the last user
// message ("[from ana · U1]"), or "" when it has none.
func (r *Request) LastUserSender() string {
	sender, _ := splitSender(r.lastUserText())
	return sender
}

func splitSender(s string) (sender, text string) {
	if !strings.HasPrefix(s, "[from ") {
		return "", s
	}
	line, rest, _ := strings.Cut(s, "\n")
	if !strings.HasSuffix(line, "]") {
		return "", s
	}
	return line, strings.TrimSpace(rest)
}

func (r *Request) lastUserText() string {
	m := r.lastUser()
	if m == nil {
		return ""
	}
	var parts []string
	for _, b := range m.Content {
		if b.Type != "text" {
			continue
		}
		if t := strings.TrimSpace(stripTags(b.Text, cliTags...)); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// cliTags are the tagged sections the CLI adds to user messages.
var cliTags = []string{
	"system-reminder", "local-command-caveat", "command-name", "command-message",
	"command-args", "local-command-stdout", "local-command-stderr",
}

// StripSystemReminders removes every <system-reminder>...</system-reminder>
// section (an unterminated one runs to the end of s).
func StripSystemReminders(s string) string { return stripTags(s, "system-reminder") }

// stripTags removes every <tag>...</tag> section of the given tags.
func stripTags(s string, tags ...string) string {
	for _, tag := range tags {
		s = stripTag(s, tag)
	}
	return s
}

func stripTag(s, tag string) string {
	open, closeTag := "<"+tag+">", "</"+tag+">"
	if !strings.Contains(s, open) {
		return s
	}
	var out strings.Builder
	for {
		i := strings.Index(s, open)
		if i < 0 {
			out.WriteString(s)
			return out.String()
		}
		out.WriteString(s[:i])
		rest := s[i+len(open):]
		j := strings.Index(rest, closeTag)
		if j < 0 {
			return out.String()
		}
		s = rest[j+len(closeTag):]
	}
}

// ToolResults returns the tool_result blocks of the last user message.
func (r *Request) ToolResults() []ToolResult {
	m := r.lastUser()
	if m == nil {
		return nil
	}
	var out []ToolResult
	for _, b := range m.Content {
		if b.Type == "tool_result" {
			out = append(out, toolResultOf(b))
		}
	}
	return out
}

// ToolResult returns the tool_result for toolUseID anywhere in the request.
func (r *Request) ToolResult(toolUseID string) (ToolResult, bool) {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" && b.ToolUseID == toolUseID {
				return toolResultOf(b), true
			}
		}
	}
	return ToolResult{}, false
}

// SystemMessages returns the texts of the role "system" items of messages, in
// order (each item's text blocks joined by "\n").
func (r *Request) SystemMessages() []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role != "system" {
			continue
		}
		var texts []string
		for _, b := range m.Content {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
		out = append(out, strings.Join(texts, "\n"))
	}
	return out
}

// Transcript returns all text of all messages (text, thinking, tool_use
// inputs, tool_result contents), one block per line, each prefixed by the
// role, e.g. "user: hello". Use strings.Contains on it to check what history
// the model saw.
func (r *Request) Transcript() string {
	var sb strings.Builder
	for _, m := range r.Messages {
		for _, b := range m.Content {
			var text string
			switch b.Type {
			case "text":
				text = b.Text
			case "thinking":
				text = b.Thinking
			case "tool_use", "server_tool_use":
				text = b.Name + " " + string(b.Input)
			case "tool_result":
				text = b.Content
			default:
				continue
			}
			sb.WriteString(m.Role)
			sb.WriteString(": ")
			sb.WriteString(text)
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

// compactionAsk is how the CLI's summarization request (/compact, or
// compaction when the context is full) asks the model, in 2.1.309 and
// 2.1.330; its answer becomes the compacted history.
const compactionAsk = "Your task is to create a detailed summary of the conversation so far"

// IsCompaction reports whether r is the CLI's summarization request.
func (r *Request) IsCompaction() bool {
	return strings.Contains(r.LastUserText(), compactionAsk)
}

// IsProbe reports whether r is the CLI's model probe (sent for set_model):
// non-streaming, max_tokens 1, no tools.
func (r *Request) IsProbe() bool {
	return !r.Stream && r.MaxTokens == 1 && len(r.ToolNames) == 0
}

// HasTool reports whether the request offered a tool with this name.
func (r *Request) HasTool(name string) bool {
	for _, n := range r.ToolNames {
		if n == name {
			return true
		}
	}
	return false
}
