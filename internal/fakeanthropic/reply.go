package fakeanthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Reply is what a Script answers to one request.
type Reply struct {
	// Blocks is the assistant content, in order.
	Blocks []Block
	// StopReason defaults to "tool_use" when Blocks contain a ToolUse block,
	// else "end_turn".
	StopReason string

	// Status, when set to a non-2xx code, makes the reply an API error:
	// {"type":"error","error":{"type":ErrorType,"message":ErrorMessage}}.
	// ErrorType defaults to a type matching the status (429 rate_limit_error,
	// 401 authentication_error, 529 overloaded_error, ... else api_error).
	Status       int
	ErrorType    string
	ErrorMessage string

	// Header holds extra response headers (e.g. "retry-after").
	Header http.Header

	// Hold, when set, pauses the reply: a streaming reply sends message_start
	// and the first delta, then blocks until Hold is closed or the client
	// disconnects (then it stops), then finishes. A non-streaming reply
	// waits before anything is written.
	Hold <-chan struct{}

	// ChunkSize is the number of characters per text_delta, thinking_delta
	// and input_json_delta; default 40.
	ChunkSize int
	// ChunkDelay is slept between delta events (streaming only).
	ChunkDelay time.Duration

	// StreamError, when set (streaming only), sends "event: error" with this
	// error type (e.g. "overloaded_error") right after the first delta and
	// ends the response. The CLI then re-sends the request with
	// "stream": false at once.
	StreamError string
	// Drop (streaming only) aborts the connection right after the first delta,
	// without message_stop. The CLI retries with backoff.
	Drop bool
}

// Block is one content block of a Reply. Build it with Text, ToolUse or
// Thinking.
type Block struct {
	Type string // "text", "tool_use" or "thinking"

	Text string // text

	ID    string          // tool_use: "toolu_fake_<n>", unique in the process
	Name  string          // tool_use
	Input json.RawMessage // tool_use

	Thinking  string // thinking
	Signature string // thinking
}

var (
	toolSeq     atomic.Int64
	responseSeq atomic.Int64
)

// Text returns a text block.
func Text(s string) Block { return Block{Type: "text", Text: s} }

// ToolUse returns a tool_use block with a fresh id "toolu_fake_<n>" (see
// Block.ID). input is marshalled to JSON; a json.RawMessage or []byte is used
// as is; nil becomes {}. ToolUse panics if input cannot be marshalled.
func ToolUse(name string, input any) Block {
	var raw json.RawMessage
	switch v := input.(type) {
	case nil:
		raw = json.RawMessage(`{}`)
	case json.RawMessage:
		raw = append(json.RawMessage(nil), v...)
	case []byte:
		raw = append(json.RawMessage(nil), v...)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("fakeanthropic.ToolUse(%q): cannot marshal input: %v", name, err))
		}
		raw = b
	}
	if !json.Valid(raw) {
		panic(fmt.Sprintf("fakeanthropic.ToolUse(%q): input is not valid JSON: %s", name, raw))
	}
	return Block{
		Type:  "tool_use",
		ID:    "toolu_fake_" + strconv.FormatInt(toolSeq.Add(1), 10),
		Name:  name,
		Input: raw,
	}
}

// Thinking returns a thinking block with a fake signature.
func Thinking(s string) Block {
	return Block{Type: "thinking", Thinking: s, Signature: "ZmFrZS1zaWduYXR1cmU="}
}

func (rep *Reply) stopReason() string {
	if rep.StopReason != "" {
		return rep.StopReason
	}
	for _, b := range rep.Blocks {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

func (rep *Reply) chunkSize() int {
	if rep.ChunkSize > 0 {
		return rep.ChunkSize
	}
	return 40
}

func (rep *Reply) isError() bool {
	return rep.Status != 0 && (rep.Status < 200 || rep.Status > 299)
}

func (rep *Reply) isEmpty() bool {
	return len(rep.Blocks) == 0 && rep.Status == 0 && rep.StopReason == "" &&
		rep.Hold == nil && rep.StreamError == "" && !rep.Drop
}

func defaultErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}

// errorBody returns the JSON body of an API error.
func errorBody(typ, msg string) []byte {
	b, _ := json.Marshal(map[string]any{
		"type":  "error",
		"error": map[string]string{"type": typ, "message": msg},
	})
	return b
}

// wireContent is a response content block in Messages API JSON form.
func (b Block) wireContent() map[string]any {
	switch b.Type {
	case "text":
		return map[string]any{"type": "text", "text": b.Text}
	case "tool_use":
		input := b.Input
		if len(input) == 0 {
			input = json.RawMessage(`{}`)
		}
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": input}
	case "thinking":
		return map[string]any{"type": "thinking", "thinking": b.Thinking, "signature": b.Signature}
	default:
		return map[string]any{"type": b.Type}
	}
}

// startContent is the content_block of content_block_start.
func (b Block) startContent() map[string]any {
	switch b.Type {
	case "text":
		return map[string]any{"type": "text", "text": ""}
	case "tool_use":
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
	case "thinking":
		return map[string]any{"type": "thinking", "thinking": "", "signature": ""}
	default:
		return map[string]any{"type": b.Type}
	}
}

// chunks splits s into pieces of at most n runes (no piece for "").
func chunks(s string, n int) []string {
	var out []string
	for s != "" {
		i, count := 0, 0
		for i < len(s) && count < n {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			count++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

func outputTokens(blocks []Block) int {
	n := 1
	for _, b := range blocks {
		n += (len(b.Text) + len(b.Thinking) + len(b.Input)) / 4
	}
	return n
}

func usage(outTokens int) map[string]any {
	return map[string]any{
		"input_tokens":                10,
		"output_tokens":               outTokens,
		"cache_creation_input_tokens": 0,
		"cache_read_input_tokens":     0,
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name  string
	data  any
	delta bool // a content_block_delta
}

// streamEvents returns the SSE events for a reply.
func streamEvents(rep *Reply, msgID, model string) []sseEvent {
	out := outputTokens(rep.Blocks)
	evs := []sseEvent{{name: "message_start", data: map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": usage(1),
		},
	}}}
	n := rep.chunkSize()
	for i, b := range rep.Blocks {
		evs = append(evs, sseEvent{name: "content_block_start", data: map[string]any{
			"type": "content_block_start", "index": i, "content_block": b.startContent(),
		}})
		delta := func(d map[string]any) {
			evs = append(evs, sseEvent{name: "content_block_delta", delta: true, data: map[string]any{
				"type": "content_block_delta", "index": i, "delta": d,
			}})
		}
		switch b.Type {
		case "text":
			for _, c := range chunks(b.Text, n) {
				delta(map[string]any{"type": "text_delta", "text": c})
			}
		case "tool_use":
			input := string(b.Input)
			if input == "" {
				input = "{}"
			}
			for _, c := range chunks(input, n) {
				delta(map[string]any{"type": "input_json_delta", "partial_json": c})
			}
		case "thinking":
			for _, c := range chunks(b.Thinking, n) {
				delta(map[string]any{"type": "thinking_delta", "thinking": c})
			}
			delta(map[string]any{"type": "signature_delta", "signature": b.Signature})
		}
		evs = append(evs, sseEvent{name: "content_block_stop", data: map[string]any{
			"type": "content_block_stop", "index": i,
		}})
	}
	evs = append(evs,
		sseEvent{name: "message_delta", data: map[string]any{
			"type":  "message_delta",
			"delta": map[string]any{"stop_reason": rep.stopReason(), "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": out},
		}},
		sseEvent{name: "message_stop", data: map[string]any{"type": "message_stop"}},
	)
	return evs
}

// messageJSON returns the non-streaming Messages response body.
func messageJSON(rep *Reply, msgID, model string) []byte {
	content := make([]any, 0, len(rep.Blocks))
	for _, b := range rep.Blocks {
		content = append(content, b.wireContent())
	}
	body, _ := json.Marshal(map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": rep.stopReason(), "stop_sequence": nil,
		"usage": usage(outputTokens(rep.Blocks)),
	})
	return body
}
