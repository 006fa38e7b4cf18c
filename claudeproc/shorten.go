package claudeproc

import "strconv"

// A result line over the cap is the turn's end: losing it would leave the
// turn open until its limit. It goes over the cap when a denied call's
// input is large (permission_denials carries each denied call's whole
// input) and the CLI writes its keys in no fixed order, so its head does
// not say what it is. The reader therefore also keeps a copy of an
// over-cap line with every string cut to its first keepString bytes; if
// that copy fits the cap and is a result, the result is decoded from it.
// Only results: a shortened request must never be shown to be decided
// (refuse.go), and other lines keep their Truncated form.

// keepString is how much of each string a shortened line keeps.
const keepString = 2 << 10

// shortener copies a JSON line with its long strings cut, without ever
// holding more than max bytes. The cut falls between characters and never
// inside an escape, so that the copy stays valid JSON.
type shortener struct {
	out    []byte
	max    int
	active bool
	failed bool

	inStr, esc, dropping bool
	hex                  int   // hex digits left of a \u escape
	kept                 int   // bytes kept of the current string
	cut                  int64 // bytes dropped of the current string
}

func (s *shortener) reset(max int) {
	if cap(s.out) > 4<<20 {
		s.out = nil
	}
	*s = shortener{out: s.out[:0], max: max}
}

func (s *shortener) put(c byte) {
	if len(s.out) >= s.max {
		s.failed = true
		return
	}
	s.out = append(s.out, c)
}

// result is the shortened line if it fits the cap.
func (s *shortener) result() ([]byte, bool) {
	return s.out, s.active && !s.failed && !s.inStr
}

func (s *shortener) feed(b []byte) {
	for _, c := range b {
		if s.failed {
			return
		}
		switch {
		case !s.inStr:
			s.put(c)
			if c == '"' {
				s.inStr, s.esc, s.dropping, s.hex, s.kept, s.cut = true, false, false, 0, 0, 0
			}
		case s.dropping:
			s.drop(c)
		default:
			s.keep(c)
		}
	}
}

// keep copies one byte of a string, or starts dropping at a character's
// first byte once keepString bytes are kept.
func (s *shortener) keep(c byte) {
	switch {
	case s.esc:
		s.esc = false
		if c == 'u' {
			s.hex = 4
		}
	case s.hex > 0:
		s.hex--
	case c == '"':
		s.inStr = false
	case s.kept >= keepString && c&0xC0 != 0x80:
		s.dropping = true
		s.drop(c)
		return
	case c == '\\':
		s.esc = true
	}
	s.put(c)
	s.kept++
}

// drop skips one byte of a string; at its closing quote it says how much
// was cut.
func (s *shortener) drop(c byte) {
	switch {
	case s.esc:
		s.esc = false
	case c == '\\':
		s.esc = true
	case c == '"':
		for _, m := range []byte("… [" + strconv.FormatInt(s.cut, 10) + " bytes cut]\"") {
			s.put(m)
		}
		s.inStr = false
		return
	}
	s.cut++
}
