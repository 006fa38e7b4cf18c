package claudeproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
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

type blockKey struct {
	message string
	index   int
}

type blockState struct {
	block ContentBlock
	acc   []byte
}

// maxOpenBlocks bounds reassembly state: a stream cut off by an interrupt
// never sends content_block_stop, so stale entries must not pile up.
const maxOpenBlocks = 256

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

type wireStream struct {
	Meta
	APIMessageID string `json:"api_message_id"`
	Event        struct {
		Type         string        `json:"type"`
		Index        int           `json:"index"`
		ContentBlock *ContentBlock `json:"content_block"`
		Message      *struct {
			ID string `json:"id"`
		} `json:"message"`
		Delta struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			PartialJSON string `json:"partial_json"`
			Thinking    string `json:"thinking"`
			Signature   string `json:"signature"`
			StopReason  string `json:"stop_reason"`
		} `json:"delta"`
	} `json:"event"`
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
				Trigger   string `json:"trigger"`
				PreTokens int    `json:"pre_tokens"`
			} `json:"compact_metadata"`
		}
		if json.Unmarshal(line, &w) == nil && cb.Trigger == "" {
			cb.Trigger, cb.PreTokens = w.Meta.Trigger, w.Meta.PreTokens
		}
	}
	return ev, err
}

func (d *decoder) decodeStream(line []byte) (Event, error) {
	var w wireStream
	err := json.Unmarshal(line, &w)
	if err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return nil, err
		}
	}
	e := &w.Event
	ev := &StreamEvent{Meta: w.Meta, APIMessageID: w.APIMessageID, EventType: e.Type, Index: e.Index}
	msg := w.APIMessageID
	if msg == "" && e.Message != nil {
		msg = e.Message.ID
	}
	key := blockKey{message: w.ParentToolUseID + "\x00" + msg, index: e.Index}
	switch e.Type {
	case "content_block_start":
		if e.ContentBlock == nil {
			break
		}
		if len(d.blocks) >= maxOpenBlocks {
			clear(d.blocks)
		}
		st := &blockState{block: *e.ContentBlock}
		switch st.block.Type {
		case "text":
			st.acc = append(st.acc, st.block.Text...)
		case "thinking":
			st.acc = append(st.acc, st.block.Thinking...)
		case "tool_use":
			// The start carries "input": {} — the real input comes as deltas.
			st.block.Input = nil
		}
		d.blocks[key] = st
		b := *e.ContentBlock
		ev.Block = &b
	case "content_block_delta":
		ev.DeltaType = e.Delta.Type
		st := d.blocks[key]
		switch e.Delta.Type {
		case "text_delta":
			ev.Delta = e.Delta.Text
			if st != nil {
				st.acc = append(st.acc, e.Delta.Text...)
			}
		case "thinking_delta":
			ev.Delta = e.Delta.Thinking
			if st != nil {
				st.acc = append(st.acc, e.Delta.Thinking...)
			}
		case "input_json_delta":
			ev.Delta = e.Delta.PartialJSON
			if st != nil {
				st.acc = append(st.acc, e.Delta.PartialJSON...)
			}
		case "signature_delta":
			if st != nil {
				st.block.Signature += e.Delta.Signature
			}
		}
	case "content_block_stop":
		st := d.blocks[key]
		if st == nil {
			break
		}
		delete(d.blocks, key)
		b := st.block
		switch b.Type {
		case "text":
			b.Text = string(st.acc)
		case "thinking":
			b.Thinking = string(st.acc)
		case "tool_use":
			if len(bytes.TrimSpace(st.acc)) == 0 {
				b.Input = json.RawMessage("{}")
			} else {
				b.Input = json.RawMessage(st.acc)
			}
		}
		ev.Block = &b
	case "message_delta":
		ev.StopReason = e.Delta.StopReason
	case "message_stop":
		for k := range d.blocks {
			if k.message == key.message {
				delete(d.blocks, k)
			}
		}
	}
	return ev, err
}

// sniffType finds the top-level "type" and "subtype" of a JSON object without
// decoding it: one quick walk over the keys, skipping values. "type" is not
// always the first key (result lines put it late).
func sniffType(line []byte) (typ, subtype string, ok bool) {
	s := scanner{b: line}
	s.ws()
	if !s.eat('{') {
		return "", "", false
	}
	for {
		s.ws()
		if s.eat('}') {
			return typ, subtype, typ != ""
		}
		key, kok := s.str()
		if !kok {
			return "", "", false
		}
		s.ws()
		if !s.eat(':') {
			return "", "", false
		}
		s.ws()
		switch {
		case (key == "type" || key == "subtype") && s.peek() == '"':
			v, vok := s.str()
			if !vok {
				return "", "", false
			}
			if key == "type" {
				typ = v
			} else {
				subtype = v
			}
		default:
			if !s.skipValue() {
				return "", "", false
			}
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			return typ, subtype, typ != ""
		}
		return "", "", false
	}
}

// scanner is a minimal JSON walker for sniffType and for recovering fields
// from the prefix of a truncated line. It validates only structure.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// strEnd returns the index just past the closing quote of the string that
// starts at s.i, and whether it contained escapes.
func (s *scanner) strEnd() (end int, escaped bool, ok bool) {
	if s.peek() != '"' {
		return 0, false, false
	}
	i := s.i + 1
	for {
		j := bytes.IndexByte(s.b[i:], '"')
		if j < 0 {
			return 0, false, false
		}
		q := i + j
		// Count the backslashes before the quote: odd means escaped.
		n := 0
		for k := q - 1; k > s.i && s.b[k] == '\\'; k-- {
			n++
		}
		if bytes.IndexByte(s.b[i:q], '\\') >= 0 {
			escaped = true
		}
		if n%2 == 0 {
			return q + 1, escaped, true
		}
		i = q + 1
	}
}

func (s *scanner) str() (string, bool) {
	end, escaped, ok := s.strEnd()
	if !ok {
		return "", false
	}
	raw := s.b[s.i:end]
	s.i = end
	if !escaped && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), true
	}
	return string(validUTF8(unescape(raw[1 : len(raw)-1]))), true
}

func (s *scanner) skipValue() bool {
	switch c := s.peek(); c {
	case '"':
		end, _, ok := s.strEnd()
		s.i = end
		return ok
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				end, _, ok := s.strEnd()
				if !ok {
					return false
				}
				s.i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	default:
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.i > start
			}
			s.i++
		}
		return s.i > start
	}
}

// prefixField finds the first `"name":"value"` string field anywhere in a
// (possibly cut) line. Used only for truncated lines, where the line is not
// valid JSON any more.
func prefixField(b []byte, name string) string {
	pat := []byte(`"` + name + `":`)
	for off := 0; ; {
		i := bytes.Index(b[off:], pat)
		if i < 0 {
			return ""
		}
		s := scanner{b: b, i: off + i + len(pat)}
		s.ws()
		if s.peek() == '"' {
			if v, ok := s.str(); ok {
				return v
			}
			return ""
		}
		off += i + len(pat)
	}
}
