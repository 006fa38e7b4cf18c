package mdsplit

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// minStructuredLimit is the smallest limit for which Split looks for good
// cut points and repeats code fences; below it Split just cuts by runes.
const minStructuredLimit = 64

// Split cuts text (mrkdwn or Markdown) into parts of at most limit
// characters, counted as runes (an invalid UTF-8 byte counts as one).
//
// Nothing is lost or duplicated: concatenating the parts, after removing
// the fence lines Split added, gives back text byte for byte. Cuts prefer,
// in this order, the end of a blank line (first one outside code blocks
// that does not follow a heading, then any), a line end, and a blank (or CJK punctuation) — each
// only when it leaves the part at least half full, then the latest of them
// anywhere — and finally a hard cut. A cut is never
// placed inside a rune, an entity such as "&amp;" or "&#128512;", a <…>
// sequence (a Slack link or mention, a Markdown autolink), a CRLF, or
// before a combining mark or zero-width joiner, unless there is no other
// place within the limit (a single "word" longer than the part).
//
// A cut inside a fenced code block (``` or ~~~, also behind "> " quote
// marks, as slackmd.ToMrkdwn writes code inside a quote) ends the part
// with a closing fence (on its own line) and starts the next part with the
// block's opening fence line again (e.g. "```go"), so every part renders on
// its own. Fence lines are never split, and a cut is not placed right
// after an opening fence or right before a closing one. When a fence line
// is too long to repeat within a third of limit, its block is cut like
// plain text.
//
// Text of at most limit runes is returned as is, as one part; "" gives nil.
// limit < 64 is not an error: the text is simply cut every limit runes
// (limit < 1 counts as 1).
func Split(text string, limit int) []string {
	pieces := splitPieces(text, limit)
	if len(pieces) == 0 {
		return nil
	}
	parts := make([]string, len(pieces))
	for i, p := range pieces {
		parts[i] = p.open + text[p.start:p.end] + p.close
	}
	return parts
}

// piece is one part of a Split: text[start:end] (byte offsets) with the
// fence lines added before (open, ending in "\n") and after (close,
// starting with "\n" unless the body ends with one).
type piece struct {
	start, end  int
	open, close string
	// broken is set on both parts around a cut that could not keep code
	// fences intact (a fence line too long to repeat, or no acceptable cut
	// point at all); such parts may not render as separate code blocks.
	broken bool
}

func splitPieces(text string, limit int) []piece {
	if text == "" {
		return nil
	}
	limit = max(limit, 1)
	n := utf8.RuneCountInString(text)
	if n <= limit {
		return []piece{{start: 0, end: len(text)}}
	}
	if limit < minStructuredLimit {
		var out []piece
		start, count := 0, 0
		for i := 0; i < len(text); {
			if count == limit {
				out = append(out, piece{start: start, end: i})
				start, count = i, 0
			}
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
			count++
		}
		return append(out, piece{start: start, end: len(text)})
	}
	return newSplitter(text, limit).run()
}

const (
	lineText = iota
	lineOpen
	lineClose
)

// fenceInfo describes an open code fence.
type fenceInfo struct {
	quotes    int    // '>' quote marks before the fence run
	ch        byte   // '`' or '~'
	count     int    // length of the fence run
	reopen    string // line (with "\n") to start the next part with; "" if too long
	closeBare string // closing fence line without newline
}

type lineInfo struct {
	start, end int // rune positions; end is after the '\n' if any
	kind       int
	fence      *fenceInfo // fence open before this line, or nil
	blank      bool
	heading    bool // "# Title" (Markdown) or "*Title*" (mrkdwn)
	// A cut at rune position e with start < e <= badUntil is inside the
	// line's fence syntax: anywhere in an opening or closing fence line, or,
	// for a fence-like line of text, where the part would end with a
	// prefix that reads as a fence line.
	badUntil int
}

type splitter struct {
	text      string
	limit     int
	n         int
	off       []int // byte offset of each rune position, len n+1
	runes     []rune
	lineOf    []int32 // line containing rune position p
	lines     []lineInfo
	protected []bool // cutting at p would split an entity, <…>, or CRLF
	fenceAt   []bool // the rest of p's line starts with a fence-like run
}

func newSplitter(text string, limit int) *splitter {
	s := &splitter{text: text, limit: limit}
	s.off = make([]int, 0, len(text)+1)
	s.runes = make([]rune, 0, len(text))
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		s.off = append(s.off, i)
		s.runes = append(s.runes, r)
		i += size
	}
	s.n = len(s.runes)
	s.off = append(s.off, len(text))
	s.scanLines()
	s.scanProtected()
	return s
}

// parseFence parses a fence-like line: optional blanks and '>' quote
// marks, then a run of at least three '`' or '~'.
func parseFence(l string) (quotes int, ch byte, count int, rest string, ok bool) {
	i := 0
	for i < len(l) {
		switch l[i] {
		case ' ', '\t':
		case '>':
			quotes++
		default:
			goto run
		}
		i++
	}
run:
	if i >= len(l) || (l[i] != '`' && l[i] != '~') {
		return 0, 0, 0, "", false
	}
	ch = l[i]
	j := i
	for j < len(l) && l[j] == ch {
		j++
	}
	if j-i < 3 {
		return 0, 0, 0, "", false
	}
	return quotes, ch, j - i, l[j:], true
}

func (s *splitter) scanLines() {
	s.lineOf = make([]int32, s.n+1)
	var open *fenceInfo
	start := 0
	for p := 0; p <= s.n; p++ {
		if p < s.n && s.runes[p] != '\n' {
			continue
		}
		end := p
		if p < s.n {
			end = p + 1
		}
		if end == start && p == s.n && len(s.lines) > 0 {
			break // text ends with '\n': no empty last line
		}
		l := s.text[s.off[start]:s.off[p]]
		li := lineInfo{start: start, end: end, fence: open, blank: strings.TrimSpace(l) == "", heading: isHeading(l)}
		quotes, ch, count, rest, ok := parseFence(l)
		li.badUntil = start
		switch {
		case ok && open == nil && !(ch == '`' && strings.IndexByte(rest, '`') >= 0):
			li.kind = lineOpen
			li.badUntil = end
			open = s.newFence(l, quotes, ch, count)
		case ok && open != nil && ch == open.ch && count >= open.count && quotes == open.quotes &&
			strings.TrimSpace(rest) == "":
			li.kind = lineClose
			li.badUntil = end
			open = nil
		case ok && open == nil:
			// "```a`b": text, but a prefix without the second backtick
			// would open a code block.
			tick := len(l) - len(rest) + strings.IndexByte(rest, '`')
			li.badUntil = start + utf8.RuneCountInString(l[:tick])
		case ok:
			// Inside a code block: a prefix made of the fence run and
			// blanks would close it.
			afterBlanks := len(l) - len(strings.TrimLeft(rest, " \t"))
			li.badUntil = start + utf8.RuneCountInString(l[:afterBlanks])
		}
		for q := start; q < end; q++ {
			s.lineOf[q] = int32(len(s.lines))
		}
		s.lines = append(s.lines, li)
		start = end
	}
	s.lineOf[s.n] = int32(len(s.lines) - 1)
}

// newFence records an opening fence line. The reopen line is the fence line
// itself, or just its quote marks and fence run when the whole line is too
// long; a fence whose reopen and close cannot fit in a third of the limit
// is not repeated at all.
func (s *splitter) newFence(l string, quotes int, ch byte, count int) *fenceInfo {
	f := &fenceInfo{quotes: quotes, ch: ch, count: count}
	runAt := strings.IndexByte(l, ch)
	prefix := l[:runAt]
	f.closeBare = prefix + strings.Repeat(string(ch), count)
	closeLen := 1 + utf8.RuneCountInString(f.closeBare)
	budget := s.limit / 3
	for _, cand := range []string{l + "\n", f.closeBare + "\n"} {
		if utf8.RuneCountInString(cand)+closeLen <= budget {
			f.reopen = cand
			break
		}
	}
	return f
}

func (s *splitter) scanProtected() {
	s.protected = make([]bool, s.n+1)
	s.fenceAt = make([]bool, s.n+1)
	r := s.runes
	for i := 0; i < s.n; i++ {
		switch r[i] {
		case '&':
			j := i + 1
			if j < s.n && r[j] == '#' {
				j++
			}
			k := j
			for k < s.n && k-j < 32 && isEntityChar(r[k]) {
				k++
			}
			if k > j && k < s.n && r[k] == ';' {
				for q := i + 1; q <= k; q++ {
					s.protected[q] = true
				}
			}
		case '<':
			k := i + 1
			for k < s.n && r[k] != '>' && r[k] != '<' && r[k] != '\n' {
				k++
			}
			if k < s.n && r[k] == '>' {
				for q := i + 1; q <= k; q++ {
					s.protected[q] = true
				}
			}
		case '\r':
			if i+1 < s.n && r[i+1] == '\n' {
				s.protected[i+1] = true
			}
		}
	}
	// fenceAt[p]: skipping blanks and '>' from p reaches a run of three
	// '`' or '~' on the same line. Computed backwards in one pass.
	next := s.n // first position >= p that is not a blank or '>'
	for p := s.n - 1; p >= 0; p-- {
		switch r[p] {
		case ' ', '\t', '>':
		default:
			next = p
		}
		if r[p] == '\n' {
			next = p
		}
		if q := next; q+2 < s.n && (r[q] == '`' || r[q] == '~') && r[q+1] == r[q] && r[q+2] == r[q] {
			s.fenceAt[p] = true
		}
	}
}

// isHeading recognises the heading lines of Markdown ("## Title") and of
// mrkdwn as slackmd.ToMrkdwn writes them ("*Title*"), so that a part does
// not end with a heading.
func isHeading(l string) bool {
	l = strings.TrimSpace(l)
	if strings.HasPrefix(l, "#") {
		t := strings.TrimLeft(l, "#")
		return len(l)-len(t) <= 6 && (t == "" || t[0] == ' ' || t[0] == '\t')
	}
	return len(l) >= 3 && l[0] == '*' && l[len(l)-1] == '*' && l[1] != ' '
}

// afterHeading reports whether the last non-blank line before line L is a
// heading.
func (s *splitter) afterHeading(L int) bool {
	for i := L - 1; i >= 0 && i >= L-8; i-- {
		if !s.lines[i].blank {
			return s.lines[i].heading && s.lines[i].fence == nil
		}
	}
	return false
}

func isEntityChar(r rune) bool {
	return r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
}

// cut describes cutting before rune position e.
type cut struct {
	bad      bool       // splits a fence line or empties a code block
	fence    *fenceInfo // code block open at the cut, if any
	closeLen int        // runes of the closing fence the part needs
}

func (s *splitter) classify(e int) cut {
	li := &s.lines[s.lineOf[e]]
	var c cut
	if e == li.start {
		c.fence = li.fence
		if li.fence != nil && (li.kind == lineClose || (s.lineOf[e] > 0 && s.lines[s.lineOf[e]-1].kind == lineOpen)) {
			c.bad = true
		}
	} else {
		c.fence = li.fence
		c.bad = e <= li.badUntil || s.fenceAt[e]
	}
	if c.fence != nil && c.fence.reopen != "" {
		c.closeLen = utf8.RuneCountInString(c.fence.closeBare)
		if s.runes[e-1] != '\n' {
			c.closeLen++
		}
	}
	return c
}

func (s *splitter) closeFor(e int, c cut) string {
	if c.fence == nil || c.fence.reopen == "" {
		return ""
	}
	if s.runes[e-1] == '\n' {
		return c.fence.closeBare
	}
	return "\n" + c.fence.closeBare
}

// joinsPrevious reports whether the rune at e attaches to the one before
// (combining marks, joiners, variation selectors, emoji modifiers and tags).
func (s *splitter) joinsPrevious(e int) bool {
	r := s.runes[e]
	if s.runes[e-1] == '\u200d' {
		return true
	}
	switch {
	case r == '\u200d', r >= '\ufe00' && r <= '\ufe0f', r >= 0x1f3fb && r <= 0x1f3ff, r >= 0xe0020 && r <= 0xe007f:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc)
}

func isBreakRune(r rune) bool {
	switch r {
	case ' ', '\t', '。', '、', '，', '！', '？', '；', '：':
		return true
	}
	return false
}

const (
	passBlankNotHeading = iota
	passBlank
	passLine
	passSpace
	passAnySoft
	passHard
	passHardUnprotected
	passForced
)

func (s *splitter) run() []piece {
	var out []piece
	p0, open, broken := 0, "", false
	for {
		budget := s.limit - utf8.RuneCountInString(open)
		if s.n-p0 <= budget {
			return append(out, piece{start: s.off[p0], end: len(s.text), open: open, broken: broken})
		}
		hi := p0 + budget
		e, c, pass := s.choose(p0, hi, budget)
		pc := piece{start: s.off[p0], end: s.off[e], open: open, broken: broken}
		next := ""
		broken = false
		if pass == passForced || (c.fence != nil && c.fence.reopen == "") {
			pc.broken, broken = true, true
		}
		if c.fence != nil && c.fence.reopen != "" {
			pc.close = s.closeFor(e, c)
			next = c.fence.reopen
		}
		out = append(out, pc)
		p0, open = e, next
	}
}

// choose picks the cut position in (p0, hi] for a part with budget runes
// left after its opening fence.
func (s *splitter) choose(p0, hi, budget int) (int, cut, int) {
	lo := p0 + budget/2
	for pass := passBlankNotHeading; pass <= passForced; pass++ {
		stop := p0 + 1
		if pass <= passSpace {
			stop = max(lo, stop)
		}
		for e := hi; e >= stop; e-- {
			if !s.accepts(pass, e) {
				continue
			}
			c := s.classify(e)
			if pass < passForced && c.bad {
				continue
			}
			if e-p0+c.closeLen <= budget {
				return e, c, pass
			}
		}
	}
	// Unreachable with handled fences (their reopen and close fit in a
	// third of the limit); keep progress anyway, without fences.
	return p0 + 1, cut{}, passForced
}

func (s *splitter) accepts(pass, e int) bool {
	r := s.runes
	switch pass {
	case passBlankNotHeading:
		L := int(s.lineOf[e])
		return r[e-1] == '\n' && s.lines[L-1].blank && s.lines[L].fence == nil && !s.afterHeading(L)
	case passBlank:
		return r[e-1] == '\n' && s.lines[s.lineOf[e]-1].blank && !s.protected[e]
	case passLine:
		return r[e-1] == '\n' && !s.protected[e]
	case passSpace:
		return isBreakRune(r[e-1]) && !s.protected[e]
	case passAnySoft:
		return (r[e-1] == '\n' || isBreakRune(r[e-1])) && !s.protected[e]
	case passHard:
		return !s.protected[e] && !s.joinsPrevious(e)
	}
	return true
}
