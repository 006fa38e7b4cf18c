package claudeproc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// UserMessage is a prompt for the CLI. Either Text or Content is set.
type UserMessage struct {
	Text string
	// Content is a list of blocks: text and image (base64 or url).
	Content []ContentBlock
	// UUID, when set, makes the CLI report the message's lifecycle
	// (queued, started, completed, cancelled) as CommandLifecycle events.
	UUID string
}

// TextBlock is a text content block.
func TextBlock(s string) ContentBlock { return ContentBlock{Type: "text", Text: s} }

// ImageBlock is a base64 image content block (mediaType e.g. "image/png").
func ImageBlock(mediaType string, data []byte) ContentBlock {
	return ContentBlock{Type: "image", Source: &ImageSource{Type: "base64", MediaType: mediaType, Data: base64.StdEncoding.EncodeToString(data)}}
}

type wireUserOut struct {
	Type            string          `json:"type"`
	Message         wireUserContent `json:"message"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	SessionID       string          `json:"session_id"`
	UUID            string          `json:"uuid,omitempty"`
}

type wireUserContent struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// outBlock is a content block as the CLI accepts it on stdin: only the
// fields of its type.
type outBlock struct {
	Type   string       `json:"type"`
	Text   *string      `json:"text,omitempty"`
	Source *ImageSource `json:"source,omitempty"`
}

// Send writes a user message. While a turn runs the CLI queues it (and, if a
// tool is running, injects it into the same turn).
func (p *Process) Send(m UserMessage) error {
	var content any = m.Text
	if len(m.Content) > 0 {
		blocks := make([]outBlock, 0, len(m.Content))
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				t := b.Text
				blocks = append(blocks, outBlock{Type: "text", Text: &t})
			case "image":
				if b.Source == nil {
					return errors.New("send message: image block without source")
				}
				blocks = append(blocks, outBlock{Type: "image", Source: b.Source})
			default:
				return fmt.Errorf("send message: unsupported content block type %q", b.Type)
			}
		}
		content = blocks
	} else if m.Text == "" {
		return errors.New("send message: empty message")
	}
	// The turn is marked before the line is written: the CLI may answer
	// (and the reader mark the turn done) before Write returns.
	was := p.InTurn()
	p.setInTurn(true)
	err := p.writeLine(wireUserOut{
		Type:    "user",
		Message: wireUserContent{Role: "user", Content: content},
		UUID:    m.UUID,
	})
	if err != nil {
		p.setInTurn(was)
		return err
	}
	return nil
}

// SendText is Send with a plain text message.
func (p *Process) SendText(text string) error { return p.Send(UserMessage{Text: text}) }

// PermissionUpdate is one entry of updatedPermissions, as the CLI suggests
// them in can_use_tool (e.g. addRules with destination "session").
type PermissionUpdate = json.RawMessage

// Allow answers a can_use_tool request with "allow". updatedInput may be nil
// (the original input is used); for AskUserQuestion it carries the answers.
// updatedPermissions, when given, are applied by the CLI (e.g. a session
// rule so the same command is not asked again).
func (p *Process) Allow(requestID string, updatedInput json.RawMessage, updatedPermissions []PermissionUpdate) error {
	resp := map[string]any{"behavior": "allow"}
	if len(updatedInput) > 0 {
		resp["updatedInput"] = updatedInput
	}
	if len(updatedPermissions) > 0 {
		resp["updatedPermissions"] = updatedPermissions
	}
	return p.respond(requestID, resp)
}

// Deny answers a can_use_tool request with "deny". The model sees message
// as the tool's error result; with interrupt the turn ends after it.
func (p *Process) Deny(requestID, message string, interrupt bool) error {
	if message == "" {
		// The CLI treats a deny without message as an invalid result.
		message = "The user denied this tool use."
	}
	resp := map[string]any{"behavior": "deny", "message": message}
	if interrupt {
		resp["interrupt"] = true
	}
	return p.respond(requestID, resp)
}

// RespondError answers a control request with an error; for can_use_tool
// the model sees "Tool permission request failed: Error: <message>".
func (p *Process) RespondError(requestID, message string) error {
	return p.controlResponse(map[string]any{"subtype": "error", "request_id": requestID, "error": message})
}

func (p *Process) respond(requestID string, response map[string]any) error {
	if requestID == "" {
		return errors.New("control response: empty request_id")
	}
	return p.controlResponse(map[string]any{"subtype": "success", "request_id": requestID, "response": response})
}

// controlResponse writes one control_response line carrying body.
func (p *Process) controlResponse(body map[string]any) error {
	return p.writeLine(map[string]any{"type": "control_response", "response": body})
}

// CancelRequest sends control_cancel_request for one of our own requests.
// (2.1.330 ignores it; it is part of the protocol for other versions.)
func (p *Process) CancelRequest(requestID string) error {
	return p.writeLine(map[string]any{"type": "control_cancel_request", "request_id": requestID})
}

// InterruptResult is the CLI's answer to interrupt.
type InterruptResult struct {
	StillQueued []string `json:"still_queued"`
	Cancelled   []string `json:"cancelled"`
}

// Interrupt aborts the running turn (the process stays alive). With
// cancelQueued, messages queued behind it are dropped instead of run next.
// It blocks until the CLI answers, ctx ends or the request times out.
func (p *Process) Interrupt(ctx context.Context, cancelQueued bool) (InterruptResult, error) {
	var body map[string]any
	if cancelQueued {
		body = map[string]any{"cancel_queued": true}
	}
	var r InterruptResult
	raw, err := p.request(ctx, "interrupt", body)
	if err != nil {
		return r, err
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r); err != nil {
			return r, fmt.Errorf("decode interrupt response: %w", err)
		}
	}
	return r, nil
}

// SetPermissionMode switches the live session's mode (default, acceptEdits,
// plan, ...). An invalid mode comes back as a *ControlError. A guarded
// process (Options.Guard) only takes default and plan: any other mode is
// refused here, before reaching the CLI.
func (p *Process) SetPermissionMode(ctx context.Context, mode string) (string, error) {
	if err := checkGuardMode(p.opts.Guard, mode); err != nil {
		return "", err
	}
	return p.set(ctx, "set_permission_mode", "mode", mode)
}

// SetModel switches the live session's model ("default" resets it) and
// returns the model the CLI reports.
func (p *Process) SetModel(ctx context.Context, model string) (string, error) {
	return p.set(ctx, "set_model", "model", model)
}

// set sends a control request that sets one value (key: value) and
// returns the value the CLI's answer reports under the same key, or the
// value asked for when the answer names none.
func (p *Process) set(ctx context.Context, subtype, key, value string) (string, error) {
	raw, err := p.request(ctx, subtype, map[string]any{key: value})
	if err != nil {
		return "", err
	}
	var r map[string]json.RawMessage
	_ = json.Unmarshal(raw, &r)
	var got string
	if v, ok := r[key]; ok {
		_ = json.Unmarshal(v, &got)
	}
	if got == "" {
		got = value
	}
	return got, nil
}

// InitializeRequest is the optional first control request. The CLI applies
// it only when it comes before the first user message.
type InitializeRequest struct {
	AppendSystemPrompt string `json:"appendSystemPrompt,omitempty"`
	SystemPrompt       string `json:"systemPrompt,omitempty"`
}

// InitializeResponse is the part of the answer the bot uses; Raw has it all.
type InitializeResponse struct {
	ClaudeCodeVersion     string `json:"claude_code_version"`
	CurrentPermissionMode string `json:"current_permission_mode"`
	PID                   int    `json:"pid"`
	Models                []struct {
		Value       string `json:"value"`
		DisplayName string `json:"displayName"`
	} `json:"models"`
	// Commands are the slash commands the session offers: the CLI's own
	// (Builtin), and those of skills, plugins and the project's
	// .claude/commands, as the CLI found them at start.
	Commands []SlashCommand  `json:"commands"`
	Raw      json.RawMessage `json:"-"`
}

// SlashCommand is one command of the initialize response: a message
// "/<Name> args" (or "/<alias> args") runs it. Builtin marks the CLI's own
// (its bundled skills included); a project's command has no such key.
type SlashCommand struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	ArgumentHint string   `json:"argumentHint"`
	Aliases      []string `json:"aliases"`
	Builtin      bool     `json:"builtin"`
}

// Initialize sends the initialize control request.
func (p *Process) Initialize(ctx context.Context, req InitializeRequest) (*InitializeResponse, error) {
	body := map[string]any{}
	if req.AppendSystemPrompt != "" {
		body["appendSystemPrompt"] = req.AppendSystemPrompt
	}
	if req.SystemPrompt != "" {
		body["systemPrompt"] = req.SystemPrompt
	}
	raw, err := p.request(ctx, "initialize", body)
	if err != nil {
		return nil, err
	}
	r := &InitializeResponse{Raw: raw}
	if err := json.Unmarshal(raw, r); err != nil {
		return r, fmt.Errorf("decode initialize response: %w", err)
	}
	return r, nil
}
