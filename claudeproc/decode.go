package claudeproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ToolResultContent is a tool_result's content flattened to text: the CLI
// sends either a string or a list of blocks; text blocks are joined, other
// blocks (images) are noted as "[image]".
type ToolResultContent string

// UnmarshalJSON accepts a string, a list of content blocks, or null.
func (c *ToolResultContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] == 'n' {
		*c = ""
		return nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = ToolResultContent(s)
		return nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &blocks); err != nil {
		return err
	}
	var sb []byte
	for i, bl := range blocks {
		if i > 0 {
			sb = append(sb, '\n')
		}
		switch bl.Type {
		case "text":
			sb = append(sb, bl.Text...)
		default:
			sb = append(sb, '[')
			sb = append(sb, bl.Type...)
			sb = append(sb, ']')
		}
	}
	*c = ToolResultContent(sb)
	return nil
}

// decoder turns single stdout lines into events. It keeps the state needed to
// reassemble streamed content blocks; it is not safe for concurrent use (the
// reader goroutine owns it).
type decoder struct {
	blocks map[blockKey]*blockState
	// onTypeError is told about fields of the wrong type, which are skipped:
	// the rest of the line is still used.
	onTypeError func(kind string, err error)
}

func newDecoder() *decoder {
	return &decoder{blocks: make(map[blockKey]*blockState)}
}

type wireAssistant struct {
	Meta
	Message           wireAssistantMessage `json:"message"`
	RequestID         string               `json:"request_id"`
	Error             string               `json:"error"`
	IsAPIErrorMessage bool                 `json:"is_api_error_message"`
}

type wireAssistantMessage struct {
	ID      string         `json:"id"`
	Model   string         `json:"model"`
	Content []ContentBlock `json:"content"`
	Usage   Usage          `json:"usage"`
}

type wireControlRequest struct {
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
}

type wireControlResponse struct {
	Response struct {
		Subtype   string          `json:"subtype"`
		RequestID string          `json:"request_id"`
		Response  json.RawMessage `json:"response"`
		Error     string          `json:"error"`
		ErrorCode string          `json:"error_code"`
	} `json:"response"`
}

// decode turns one complete line into an event. It never fails: malformed
// input becomes a ParseError, unknown input an Unknown.
func (d *decoder) decode(line []byte) Event {
	typ, subtype, ok := sniffType(line)
	if !ok {
		// Not a JSON object we can walk: let encoding/json say why.
		var v any
		err := json.Unmarshal(line, &v)
		if err == nil {
			err = errors.New(`line is not a JSON object with a string "type"`)
		}
		return parseError(line, err)
	}
	ev, err := d.decodeTyped(typ, subtype, line)
	if err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && ev != nil {
			// A field of the wrong type was skipped; the rest is good.
			if d.onTypeError != nil {
				d.onTypeError(ev.Kind(), err)
			}
			return ev
		}
		return parseError(line, fmt.Errorf("decode %s line: %w", typ, err))
	}
	return ev
}

func parseError(line []byte, err error) *ParseError {
	const keep = 4 << 10
	if len(line) > keep {
		line = line[:keep]
	}
	return &ParseError{Line: bytes.Clone(line), Err: err}
}

func (d *decoder) decodeTyped(typ, subtype string, line []byte) (Event, error) {
	switch typ {
	case "stream_event":
		return d.decodeStream(line)
	case "assistant":
		var w wireAssistant
		err := json.Unmarshal(line, &w)
		ev := &Assistant{
			Meta:       w.Meta,
			MessageID:  w.Message.ID,
			Model:      w.Message.Model,
			RequestID:  w.RequestID,
			Blocks:     w.Message.Content,
			Error:      w.Error,
			IsAPIError: w.IsAPIErrorMessage,
			Usage:      w.Message.Usage,
		}
		if len(ev.Blocks) > 0 {
			ev.Block = ev.Blocks[0]
		}
		return ev, err
	case "user":
		ev, err := decodeUserLine(line)
		if ev == nil {
			return nil, err
		}
		return ev, err
	case "system":
		return d.decodeSystem(subtype, line)
	case "result":
		var ev Result
		err := json.Unmarshal(line, &ev)
		return &ev, err
	case "control_request":
		var w wireControlRequest
		if err := json.Unmarshal(line, &w); err != nil {
			return nil, err
		}
		ev := &ControlRequest{RequestID: w.RequestID, Raw: w.Request}
		_, sub, _ := sniffType(w.Request)
		ev.Subtype = sub
		if sub == "mcp_message" {
			if m, ok := decodeMCPMessage(w.RequestID, w.Request); ok {
				return m, nil
			}
		}
		if sub == "can_use_tool" {
			var c CanUseTool
			err := json.Unmarshal(w.Request, &c)
			ev.CanUseTool = &c
			return ev, err
		}
		return ev, nil
	case "control_response":
		var w wireControlResponse
		err := json.Unmarshal(line, &w)
		r := w.Response
		return &ControlResponse{RequestID: r.RequestID, Subtype: r.Subtype, Response: r.Response, Error: r.Error, ErrorCode: r.ErrorCode}, err
	case "control_cancel_request":
		var w struct {
			RequestID string `json:"request_id"`
		}
		err := json.Unmarshal(line, &w)
		return &ControlCancelRequest{RequestID: w.RequestID}, err
	case "command_lifecycle":
		var ev CommandLifecycle
		err := json.Unmarshal(line, &ev)
		return &ev, err
	case "tool_progress":
		var ev ToolProgress
		err := json.Unmarshal(line, &ev)
		return &ev, err
	case "keep_alive":
		return &KeepAlive{}, nil
	case "tool_use_summary":
		var ev ToolUseSummary
		err := json.Unmarshal(line, &ev)
		return &ev, err
	}
	return unknown(typ, subtype, line), nil
}

func unknown(typ, subtype string, line []byte) *Unknown {
	return &Unknown{Type: typ, Subtype: subtype, Raw: bytes.Clone(line)}
}

func (d *decoder) decodeSystem(subtype string, line []byte) (Event, error) {
	var ev Event
	switch subtype {
	case "init":
		e := &SystemInit{}
		err := json.Unmarshal(line, e)
		e.Raw = bytes.Clone(line)
		return e, err
	case "status":
		ev = &SystemStatus{}
	case "api_retry":
		ev = &APIRetry{}
	case "task_started", "task_progress", "task_updated", "task_notification":
		ev = &TaskEvent{}
	case "background_tasks_changed":
		ev = &BackgroundTasksChanged{}
	case "informational":
		ev = &Informational{}
	case "permission_denied":
		ev = &PermissionDenied{}
	case "compact_boundary":
		ev = &CompactBoundary{}
	case "thinking_tokens":
		ev = &ThinkingTokens{}
	default:
		return unknown("system", subtype, line), nil
	}
	err := json.Unmarshal(line, ev)
	if cb, ok := ev.(*CompactBoundary); ok {
		// compact_boundary nests its details in compact_metadata.
		var w struct {
			Meta struct {
				Trigger    string `json:"trigger"`
				PreTokens  int    `json:"pre_tokens"`
				PostTokens int    `json:"post_tokens"`
			} `json:"compact_metadata"`
		}
		if json.Unmarshal(line, &w) == nil && cb.Trigger == "" {
			cb.Trigger, cb.PreTokens, cb.PostTokens = w.Meta.Trigger, w.Meta.PreTokens, w.Meta.PostTokens
		}
	}
	return ev, err
}
