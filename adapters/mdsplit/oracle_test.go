package mdsplit

import (
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

// ---- test oracle: an independent code-fence scanner ----

var fenceLineRE = regexp.MustCompile("^([ \t>]*)(`{3,}|~{3,})(.*)$")

type oracleFence struct {
	quotes int
	ch     byte
	n      int
}

func oracleStep(st *oracleFence, line string) *oracleFence {
	if !isFenceLine(line) {
		return st
	}
	m := fenceLineRE.FindStringSubmatch(line)
	if m == nil {
		return st
	}
	q, ch, n, rest := strings.Count(m[1], ">"), m[2][0], len(m[2]), m[3]
	if st == nil {
		if ch == '`' && strings.Contains(rest, "`") {
			return nil
		}
		return &oracleFence{q, ch, n}
	}
	if ch == st.ch && n >= st.n && q == st.quotes && strings.TrimSpace(rest) == "" {
		return nil
	}
	return st
}

// oracleState is the fence open after the complete lines of s (a trailing
// line without '\n' is not looked at: a cut there is inside that line).
func oracleState(s string) *oracleFence {
	var st *oracleFence
	for {
		nl := strings.IndexByte(s, '\n')
		if nl < 0 {
			return st
		}
		st = oracleStep(st, s[:nl])
		s = s[nl+1:]
	}
}

// oracleFinal is the fence open at the end of s, all lines included.
func oracleFinal(s string) *oracleFence {
	st := oracleState(s)
	if i := strings.LastIndexByte(s, '\n'); i < len(s)-1 {
		st = oracleStep(st, s[i+1:])
	}
	return st
}

func isFenceLine(l string) bool {
	return (strings.Contains(l, "``"+"`") || strings.Contains(l, "~~~")) && fenceLineRE.MatchString(l)
}

// oracleLines precomputes, for every line start of s, the fence open before
// that line, so that oracleState(s[:pos]) is a lookup.
type oracleLines struct {
	starts []int
	states []*oracleFence
	final  *oracleFence // after every complete line
}

func newOracleLines(s string) *oracleLines {
	o := &oracleLines{}
	var st *oracleFence
	pos := 0
	for {
		o.starts = append(o.starts, pos)
		o.states = append(o.states, st)
		nl := strings.IndexByte(s[pos:], '\n')
		if nl < 0 {
			o.final = st
			return o
		}
		if l := s[pos : pos+nl]; strings.Contains(l, "``"+"`") || strings.Contains(l, "~~~") {
			st = oracleStep(st, l)
		}
		pos += nl + 1
	}
}

// at is oracleState(s[:pos]).
func (o *oracleLines) at(pos int) *oracleFence {
	i := sort.SearchInts(o.starts, pos+1) - 1
	return o.states[i]
}

// reassemble removes from parts only fence lines that Split may have added
// (a fence line first in a part that starts inside a code block, a fence
// line last in a part that ends inside one) and reports whether the result
// is exactly input. Whether the '\n' before an added closing fence was
// added or is the input's own is found by search.
func reassemble(input string, parts []string) bool {
	o := newOracleLines(input)
	failed := map[[2]int]bool{} // (part, position) pairs known not to work
	var dfs func(i, pos int) bool
	dfs = func(i, pos int) bool {
		if i == len(parts) {
			return pos == len(input)
		}
		if failed[[2]int{i, pos}] {
			return false
		}
		defer func() { failed[[2]int{i, pos}] = true }() // only reached on failure
		p := parts[i]
		if o.at(pos) != nil {
			nl := strings.IndexByte(p, '\n')
			if nl < 0 || !isFenceLine(p[:nl]) {
				return false
			}
			p = p[nl+1:]
		}
		type cand struct {
			body     string
			stripped bool
		}
		cands := []cand{{p, false}}
		if i < len(parts)-1 {
			last := p[strings.LastIndexByte(p, '\n')+1:]
			if isFenceLine(last) {
				body := p[:len(p)-len(last)]
				cands = append(cands, cand{body, true})
				if strings.HasSuffix(body, "\n") {
					cands = append(cands, cand{body[:len(body)-1], true})
				}
			}
		}
		for _, c := range cands {
			if !strings.HasPrefix(input[pos:], c.body) || c.body == "" {
				continue
			}
			if i < len(parts)-1 && c.stripped != (o.at(pos+len(c.body)) != nil) {
				continue
			}
			if dfs(i+1, pos+len(c.body)) {
				return true
			}
		}
		return false
	}
	return dfs(0, 0)
}

var protectedSpanRE = regexp.MustCompile(`&#?[A-Za-z0-9]{1,32};|<[^<>\n]*>`)

// checkSplit verifies every invariant of Split(text, limit). strict adds
// the guarantees that hold for ordinary input (short fence lines, short
// entities and links): fences intact, cuts never inside entities or links.
func checkSplit(t testing.TB, text string, limit int, strict bool) []string {
	t.Helper()
	parts := Split(text, limit)
	pieces := splitPieces(text, limit)
	if text == "" {
		if parts != nil {
			t.Fatalf("Split(\"\") = %q, want nil", parts)
		}
		return nil
	}
	if len(parts) != len(pieces) {
		t.Fatalf("Split gave %d parts, splitPieces %d", len(parts), len(pieces))
	}
	lim := max(limit, 1)
	var joined strings.Builder
	broken := false
	runes := 0
	for i, p := range pieces {
		if parts[i] != p.open+text[p.start:p.end]+p.close {
			t.Fatalf("part %d is not open+body+close", i)
		}
		if n := utf8.RuneCountInString(parts[i]); n > lim {
			t.Fatalf("part %d has %d runes, limit %d", i, n, limit)
		}
		if p.start >= p.end {
			t.Fatalf("part %d has an empty body", i)
		}
		if i == 0 && p.start != 0 || i > 0 && p.start != pieces[i-1].end {
			t.Fatalf("part %d does not continue the previous one", i)
		}
		if p.open != "" && (!strings.HasSuffix(p.open, "\n") || !isFenceLine(strings.TrimSuffix(p.open, "\n"))) {
			t.Fatalf("part %d: added opening %q is not a fence line", i, p.open)
		}
		if p.close != "" && !isFenceLine(strings.TrimPrefix(p.close, "\n")) {
			t.Fatalf("part %d: added closing %q is not a fence line", i, p.close)
		}
		if limit < minStructuredLimit && (p.open != "" || p.close != "") {
			t.Fatalf("limit %d < %d must not add fences", limit, minStructuredLimit)
		}
		joined.WriteString(text[p.start:p.end])
		runes += utf8.RuneCountInString(text[p.start:p.end])
		broken = broken || p.broken
	}
	if joined.String() != text {
		t.Fatalf("bodies do not join to the input")
	}
	if runes != utf8.RuneCountInString(text) {
		t.Fatalf("a cut split a rune: %d runes in parts, %d in input", runes, utf8.RuneCountInString(text))
	}
	if strict && broken {
		t.Fatalf("ordinary input produced a part with broken fences")
	}
	if broken {
		return parts
	}
	if limit < minStructuredLimit {
		if strings.Join(parts, "") != text {
			t.Fatalf("limit %d: parts do not join to the input", limit)
		}
		return parts
	}
	if !reassemble(text, parts) {
		t.Fatalf("removing the added fence lines does not give back the input (limit %d)\ninput: %q\nparts: %q", limit, text, parts)
	}
	for i, part := range parts {
		st := oracleFinal(part)
		if st != nil && !(i == len(parts)-1 && oracleFinal(text) != nil) {
			t.Fatalf("part %d leaves a code block open: %q", i, part)
		}
	}
	checkCuts(t, text, limit, strict, pieces)
	return parts
}

// checkCuts checks where the parts were cut: never inside a fence line and,
// when strict, never inside a short entity or link. It is checkSplit's last
// step, apart so that each function reads as one list of invariants.
func checkCuts(t testing.TB, text string, limit int, strict bool, pieces []piece) {
	t.Helper()
	// No cut inside a fence line.
	o := newOracleLines(text)
	var spans [][]int
	if strict {
		spans = protectedSpanRE.FindAllStringIndex(text, -1)
	}
	for _, p := range pieces[1:] {
		c := p.start
		ls := strings.LastIndexByte(text[:c], '\n') + 1
		le := strings.IndexByte(text[c:], '\n')
		if le < 0 {
			le = len(text)
		} else {
			le += c
		}
		if l := text[ls:le]; ls < c && isFenceLine(l) {
			st := o.at(ls)
			if st == nil && oracleStep(nil, l) != nil || st != nil && oracleStep(st, l) == nil {
				t.Fatalf("cut at %d is inside the fence line %q", c, l)
			}
		}
		if strict {
			for _, m := range spans {
				if m[0] < c && c < m[1] && utf8.RuneCountInString(text[m[0]:m[1]]) <= limit/4 {
					t.Fatalf("cut at %d is inside %q", c, text[m[0]:m[1]])
				}
			}
		}
	}
}
