package claudeproc

import (
	"bytes"
	"unicode/utf8"
)

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
