package claudeproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// decodeUserLine decodes a `user` line with a hand-written walker instead of
// encoding/json. User lines carry tool output, often megabytes of it and
// twice (the model's tool_result and tool_use_result); this walker reads
// only the fields it needs, skips the rest with memchr-speed scans, and
// unescapes each wanted string once. Fields of an unexpected type are
// skipped and reported through typeErr, like encoding/json does.
func decodeUserLine(line []byte) (ev *User, typeErr error) {
	s := scanner{b: line}
	ev = &User{}
	noteType := func(field string) {
		if typeErr == nil {
			typeErr = &json.UnmarshalTypeError{Value: "value", Field: field, Struct: "User"}
		}
	}
	str := func(field string, dst *string) { s.stringField(field, dst, noteType) }
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "session_id":
			str("session_id", &ev.SessionID)
		case "uuid":
			str("uuid", &ev.UUID)
		case "parent_tool_use_id":
			str("parent_tool_use_id", &ev.ParentToolUseID)
		case "agent_id":
			str("agent_id", &ev.AgentID)
		case "isReplay":
			v, ok := s.boolean()
			if !ok {
				noteType("isReplay")
				return s.skip()
			}
			ev.IsReplay = v
		case "message":
			if s.peek() != '{' {
				noteType("message")
				return s.skip()
			}
			return s.object(func(key []byte) error {
				if string(key) != "content" {
					return s.skip()
				}
				switch s.peek() {
				case '"':
					str("content", &ev.Text)
					return nil
				case '[':
					return s.array(func() error {
						b, err := s.contentBlock(noteType)
						if err != nil {
							return err
						}
						ev.Blocks = append(ev.Blocks, b)
						return nil
					})
				}
				noteType("message.content")
				return s.skip()
			})
		default:
			return s.skip()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.ws()
	if s.i != len(s.b) {
		return nil, errors.New("user line: data after the JSON object")
	}
	for _, b := range ev.Blocks {
		switch b.Type {
		case "tool_result":
			ev.ToolResults = append(ev.ToolResults, b)
		case "text":
			if ev.Text != "" {
				ev.Text += "\n"
			}
			ev.Text += b.Text
		}
	}
	return ev, typeErr
}

// contentBlock reads one block of a user message.
func (s *scanner) contentBlock(noteType func(string)) (ContentBlock, error) {
	var b ContentBlock
	if s.peek() != '{' {
		noteType("message.content[]")
		return b, s.skip()
	}
	str := func(field string, dst *string) { s.stringField(field, dst, noteType) }
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "type":
			str("type", &b.Type)
		case "text":
			str("text", &b.Text)
		case "tool_use_id":
			str("tool_use_id", &b.ToolUseID)
		case "is_error":
			v, ok := s.boolean()
			if !ok {
				noteType("is_error")
				return s.skip()
			}
			b.IsError = v
		case "content":
			if s.peek() == '"' {
				var c string
				str("content", &c)
				b.Content = ToolResultContent(c)
				return nil
			}
			start := s.i
			if err := s.skip(); err != nil {
				return err
			}
			if err := b.Content.UnmarshalJSON(s.b[start:s.i]); err != nil {
				noteType("content")
			}
		default:
			return s.skip()
		}
		return nil
	})
	return b, err
}

var errSyntax = errors.New("invalid JSON")

func (s *scanner) syntaxErr(what string) error {
	return fmt.Errorf("%w: %s at offset %d", errSyntax, what, s.i)
}

// object walks an object; fn is called with each key (raw, unescaped only
// if needed) positioned at the value, and must consume the value.
func (s *scanner) object(fn func(key []byte) error) error {
	s.ws()
	if !s.eat('{') {
		return s.syntaxErr("expected '{'")
	}
	s.ws()
	if s.eat('}') {
		return nil
	}
	for {
		s.ws()
		end, escaped, ok := s.strEnd()
		if !ok {
			return s.syntaxErr("expected object key")
		}
		key := s.b[s.i+1 : end-1]
		if escaped {
			key = unescape(key)
		}
		s.i = end
		s.ws()
		if !s.eat(':') {
			return s.syntaxErr("expected ':'")
		}
		s.ws()
		if err := fn(key); err != nil {
			return err
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			return nil
		}
		return s.syntaxErr("expected ',' or '}'")
	}
}

// array walks an array; fn must consume one element.
func (s *scanner) array(fn func() error) error {
	s.ws()
	if !s.eat('[') {
		return s.syntaxErr("expected '['")
	}
	s.ws()
	if s.eat(']') {
		return nil
	}
	for {
		s.ws()
		if err := fn(); err != nil {
			return err
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if s.eat(']') {
			return nil
		}
		return s.syntaxErr("expected ',' or ']'")
	}
}

func (s *scanner) skip() error {
	if !s.skipValue() {
		return s.syntaxErr("invalid value")
	}
	return nil
}

// stringField reads a string into dst; null leaves dst alone, and any other
// value is skipped and reported to noteType.
func (s *scanner) stringField(field string, dst *string, noteType func(string)) {
	v, ok, wrong := s.stringOrNull()
	if wrong {
		noteType(field)
	}
	if ok {
		*dst = v
	}
}

// stringOrNull reads a string (ok) or null (neither); any other value is
// skipped and reported as wrong.
func (s *scanner) stringOrNull() (v string, ok, wrong bool) {
	switch s.peek() {
	case '"':
		end, escaped, sok := s.strEnd()
		if !sok {
			return "", false, true
		}
		raw := s.b[s.i+1 : end-1]
		s.i = end
		if escaped || !utf8.Valid(raw) {
			u := validUTF8(unescape(raw))
			return unsafe.String(unsafe.SliceData(u), len(u)), true, false
		}
		return string(raw), true, false
	case 'n':
		s.skipValue()
		return "", false, false
	}
	s.skipValue()
	return "", false, true
}

func (s *scanner) boolean() (bool, bool) {
	switch {
	case bytes.HasPrefix(s.b[s.i:], []byte("true")):
		s.i += 4
		return true, true
	case bytes.HasPrefix(s.b[s.i:], []byte("false")):
		s.i += 5
		return false, true
	case bytes.HasPrefix(s.b[s.i:], []byte("null")):
		s.i += 4
		return false, true
	}
	return false, false
}

// unescape decodes the body of a JSON string (without quotes) into a new
// slice. Invalid escapes are kept as they are and lone surrogates become
// U+FFFD, as encoding/json does; the result is never longer than src.
func unescape(src []byte) []byte {
	dst := make([]byte, 0, len(src))
	for len(src) > 0 {
		i := bytes.IndexByte(src, '\\')
		if i < 0 {
			return append(dst, src...)
		}
		dst = append(dst, src[:i]...)
		src = src[i:]
		if len(src) < 2 {
			return append(dst, src...)
		}
		switch c := src[1]; c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			r, ok := hex4(src[2:])
			if !ok {
				dst = append(dst, src[:2]...)
				src = src[2:]
				continue
			}
			src = src[6:]
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(-1), false
				if len(src) >= 6 && src[0] == '\\' && src[1] == 'u' {
					r2, ok2 = hex4(src[2:])
				}
				if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
					r = dec
					src = src[6:]
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			dst = append(dst, src[:2]...)
		}
		src = src[2:]
	}
	return dst
}

// validUTF8 replaces each byte that is not part of valid UTF-8 with U+FFFD,
// as encoding/json does, so both decoders agree on every input.
func validUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
