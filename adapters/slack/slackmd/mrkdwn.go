package slackmd

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"golang.org/x/text/width"
)

// mdParser is goldmark's CommonMark parser with the GFM extensions Claude
// uses (tables, strikethrough, autolinked bare URLs, task lists) and
// footnotes. Parsing state lives in a per-call context, so one parser is
// shared (TestToMrkdwnConcurrent runs it under -race).
var mdParser = sync.OnceValue(func() parser.Parser {
	return goldmark.New(goldmark.WithExtensions(extension.GFM, extension.Footnote)).Parser()
})

// Marks used for list items by nesting depth (1-based); deeper lists reuse
// the last one.
var bulletMarks = [...]string{"•", "◦", "▪"}

const (
	horizontalRule = "───"
	fenceMark      = "```"
	nestedIndent   = "    "
	checkedBox     = "☑"
	uncheckedBox   = "☐"
)

// ToMrkdwn renders CommonMark/GFM, as Claude writes it, as Slack mrkdwn.
//
// Inline: **bold** and __bold__ → *bold*; *em* and _em_ → _em_;
// ~~strike~~ → ~strike~; `code` → `code`; [text](url) → <url|text>;
// autolinks and bare URLs → <url> (or <url|label> when the label differs,
// e.g. www.x.org or an e-mail address); ![alt](url) → <url|alt>. Only
// absolute URLs (with a scheme) become links; a relative destination is
// written as "text (dest)". Formatting nested in the same formatting (bold
// in a heading) is flattened because mrkdwn cannot nest it, and a
// formatted span that crosses a line break is closed and reopened on each
// line because mrkdwn formatting does not cross lines.
//
// Blocks: headings → *Heading* on their own line; paragraphs separated by a
// blank line; soft and hard line breaks → a newline (chat shows the lines
// the author wrote); bullet lists → "• item", nested lists indented by four
// spaces with "◦" at depth 2 and "▪" deeper; ordered lists → "1. item" from
// the list's start number; task items → "☐"/"☑"; block quotes → "> "
// lines (nested quotes flattened: mrkdwn has one level, and a quote is
// never indented); thematic breaks → "───"; fenced and indented code → a
// ``` block with the language dropped and the content verbatim (code is
// never indented, even inside a list item, so that copying it gives the
// exact code); GFM tables → a ``` block with aligned columns; footnotes →
// "[1]" and "[1] note" lines at the end; HTML blocks and inline HTML →
// literal text.
//
// Escaping: &, < and > in text and code become &amp; &lt; &gt;, so nothing
// in the model's output can form Slack syntax ("<!channel>", "<@U…>",
// "<#C…>", "<!subteam^…>", "<url|…>"): the only '<' in the result open
// links made from Markdown links, and those never start with '!', '@' or
// '#'. Bare "@channel", "@here" and "@everyone" get a U+200B after the "@"
// (see the package documentation), in code too. mrkdwn has no backslash
// escapes, so literal text is kept literal with U+200B as well: after a
// '*', '_' or '~' that Slack could pair into formatting ("\*not bold\*"),
// after literal backticks, inside runs of three backticks (text or code,
// so a code block cannot end early), and before "&gt;" at the start of a
// line (Slack quotes "&gt; " like "> ").
func ToMrkdwn(md string) string {
	src := []byte(md)
	doc := mdParser().Parse(text.NewReader(src))
	r := &renderer{src: src}
	lines := r.blockChildren(doc, 0, true)
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.s)
	}
	return neutralizeOutsideLinks(strings.TrimRight(b.String(), "\n"))
}

// line is one output line. Code lines belong to a ``` block and quoted
// lines to a block quote; neither is indented by list items (indented
// code would gain spaces, and Slack only quotes "> " at the start of a
// line).
type line struct {
	s      string
	code   bool
	quoted bool
}

type renderer struct {
	src []byte
	// Depth of open bold / italic / strike spans: nested spans of the same
	// kind are flattened.
	bold, italic, strike int
}

// blockChildren renders the block children of n, separated by a blank line
// when loose.
func (r *renderer) blockChildren(n ast.Node, depth int, loose bool) []line {
	var out []line
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		ls := r.block(c, depth)
		if len(ls) == 0 {
			continue
		}
		if loose && len(out) > 0 {
			out = append(out, line{})
		}
		out = append(out, ls...)
	}
	return out
}

func (r *renderer) block(n ast.Node, depth int) []line {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return textLines(r.inline(n))
	case *ast.Heading:
		r.bold++
		s := r.inline(n)
		r.bold--
		s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
		if s == "" {
			return nil
		}
		return []line{{s: wrapSpan("*", s)}}
	case *ast.ThematicBreak:
		return []line{{s: horizontalRule}}
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return r.codeBlock(n)
	case *ast.HTMLBlock:
		var b strings.Builder
		writeLines(&b, r.src, n.Lines())
		if n.HasClosure() {
			b.Write(n.ClosureLine.Value(r.src))
		}
		return textLines(escText(strings.TrimRight(b.String(), "\r\n")))
	case *ast.Blockquote:
		// mrkdwn has one level of quoting: nested quotes are flattened.
		inner := r.blockChildren(n, depth, false)
		out := make([]line, 0, len(inner))
		for _, l := range inner {
			switch {
			case l.quoted:
				out = append(out, l)
			case l.code:
				out = append(out, line{s: "> " + l.s, code: true, quoted: true})
			case strings.TrimSpace(l.s) == "":
				// A lone ">" may show literally; paragraphs of a quote are
				// simply consecutive quoted lines.
			default:
				out = append(out, line{s: "> " + l.s, quoted: true})
			}
		}
		return out
	case *ast.List:
		return r.list(n, depth+1)
	case *east.Table:
		return r.table(n)
	case *east.FootnoteList:
		// Footnotes follow the text as "[1] note" lines.
		return r.blockChildren(n, depth, false)
	case *east.Footnote:
		ls := r.blockChildren(n, depth, false)
		label := "[" + strconv.Itoa(n.Index) + "]"
		if len(ls) == 0 || ls[0].code || ls[0].quoted {
			return append([]line{{s: label}}, ls...)
		}
		ls[0].s = label + " " + ls[0].s
		return ls
	default:
		return r.blockChildren(n, depth, true)
	}
}

// textLines splits rendered inline text into lines. A line that starts with
// an escaped ">" gets a U+200B in front: Slack stores typed quotes as
// "&gt; …", so "&gt;" at the start of a line would still quote it.
func textLines(s string) []line {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	parts := strings.Split(s, "\n")
	out := make([]line, len(parts))
	for i, p := range parts {
		if strings.HasPrefix(p, "&gt;") {
			p = zwsp + p
		}
		out[i] = line{s: p}
	}
	return out
}

func writeLines(b *strings.Builder, src []byte, lines *text.Segments) {
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(src))
	}
}

func (r *renderer) codeBlock(n ast.Node) []line {
	var b strings.Builder
	writeLines(&b, r.src, n.Lines())
	content := strings.ReplaceAll(b.String(), "\r\n", "\n")
	content = strings.TrimSuffix(content, "\n")
	out := []line{{s: fenceMark, code: true}}
	if n.Lines().Len() > 0 {
		for _, l := range strings.Split(esc(content), "\n") {
			out = append(out, line{s: l, code: true})
		}
	}
	return append(out, line{s: fenceMark, code: true})
}

func (r *renderer) list(n *ast.List, depth int) []line {
	var out []line
	i := 0
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		var marker string
		if n.IsOrdered() {
			marker = strconv.Itoa(n.Start+i) + string(n.Marker)
		} else {
			marker = bulletMarks[min(depth, len(bulletMarks))-1]
		}
		i++
		ls := r.listItem(item, depth, marker, !n.IsTight)
		if !n.IsTight && len(out) > 0 {
			out = append(out, line{})
		}
		out = append(out, ls...)
	}
	return out
}

func (r *renderer) listItem(item ast.Node, depth int, marker string, loose bool) []line {
	pad := strings.Repeat(" ", displayWidth(marker)+1)
	var out []line
	first := true
	for c := item.FirstChild(); c != nil; c = c.NextSibling() {
		ls := r.block(c, depth)
		if len(ls) == 0 {
			continue
		}
		if !first && loose {
			out = append(out, line{})
		}
		_, isList := c.(*ast.List)
		for _, l := range ls {
			switch {
			case first && (l.code || l.quoted):
				out = append(out, line{s: marker}, l)
			case first:
				out = append(out, line{s: marker + " " + l.s})
			case l.code || l.quoted:
				out = append(out, l)
			case l.s == "":
				out = append(out, l)
			case isList:
				out = append(out, line{s: nestedIndent + l.s})
			default:
				out = append(out, line{s: pad + l.s})
			}
			first = false
		}
	}
	if first {
		out = append(out, line{s: marker})
	}
	return out
}

func (r *renderer) table(n *east.Table) []line {
	var rows [][]string
	cols := 0
	for row := n.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			s := strings.TrimSpace(r.plain(cell, true))
			cells = append(cells, strings.ReplaceAll(s, "\n", " "))
		}
		cols = max(cols, len(cells))
		rows = append(rows, cells)
	}
	widths := make([]int, cols)
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	align := func(i int) east.Alignment {
		if i < len(n.Alignments) {
			return n.Alignments[i]
		}
		return east.AlignNone
	}
	format := func(row []string) string {
		var b strings.Builder
		b.WriteString("|")
		for i := range cols {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			gap := widths[i] - displayWidth(c)
			left := 0
			switch align(i) {
			case east.AlignRight:
				left = gap
			case east.AlignCenter:
				left = gap / 2
			}
			b.WriteString(" ")
			b.WriteString(strings.Repeat(" ", left))
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", gap-left))
			b.WriteString(" |")
		}
		return b.String()
	}
	out := []line{{s: fenceMark, code: true}}
	for i, row := range rows {
		out = append(out, line{s: esc(format(row)), code: true})
		if i == 0 {
			var b strings.Builder
			b.WriteString("|")
			for _, w := range widths {
				b.WriteString(strings.Repeat("-", w+2))
				b.WriteString("|")
			}
			out = append(out, line{s: b.String(), code: true})
		}
	}
	return append(out, line{s: fenceMark, code: true})
}

// displayWidth estimates the monospace width of s: East Asian wide and
// fullwidth runes count two columns, combining marks and zero-width
// characters none, and an emoji presentation selector (U+FE0F) widens the
// preceding narrow symbol ("⚠️") to two.
func displayWidth(s string) int {
	w, prev := 0, 0
	for _, r := range s {
		switch {
		case r == '\ufe0f':
			if prev == 1 {
				w++
				prev = 2
			}
		case r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\ufeff' ||
			(r >= '\ufe00' && r <= '\ufe0e') || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
		default:
			switch width.LookupRune(r).Kind() {
			case width.EastAsianWide, width.EastAsianFullwidth:
				prev = 2
			default:
				prev = 1
			}
			w += prev
		}
	}
	return w
}

// inline renders the inline children of n as mrkdwn. Consecutive text
// nodes are escaped together, so that literal markers split over several
// nodes are still seen as pairs.
func (r *renderer) inline(n ast.Node) string {
	var b, pending strings.Builder
	flush := func() {
		if pending.Len() > 0 {
			b.WriteString(escText(pending.String()))
			pending.Reset()
		}
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Value(r.src)
			if c.IsRaw() {
				pending.Write(v)
			} else {
				pending.WriteString(unescapeMarkdown(v))
			}
			if c.HardLineBreak() || c.SoftLineBreak() {
				pending.WriteByte('\n')
			}
		case *ast.String:
			if c.IsCode() || c.IsRaw() {
				pending.Write(c.Value)
			} else {
				pending.WriteString(unescapeMarkdown(c.Value))
			}
		default:
			flush()
			r.inlineNode(&b, c)
		}
	}
	flush()
	return b.String()
}

func (r *renderer) inlineNode(b *strings.Builder, n ast.Node) {
	switch n := n.(type) {
	case *ast.CodeSpan:
		b.WriteString(wrapSpan("`", esc(r.codeSpanText(n))))
	case *ast.Emphasis:
		if n.Level >= 2 {
			r.span(b, n, "*", &r.bold)
		} else {
			r.span(b, n, "_", &r.italic)
		}
	case *east.Strikethrough:
		r.span(b, n, "~", &r.strike)
	case *ast.Link:
		b.WriteString(r.link(n.Destination, r.plain(n, false), true))
	case *ast.Image:
		b.WriteString(r.link(n.Destination, r.plain(n, false), true))
	case *ast.AutoLink:
		url, label := autoLinkURL(n, r.src)
		if n.AutoLinkType == ast.AutoLinkEmail && !plainEmailRE.MatchString(label) {
			// CommonMark accepts "<!subteam^S1|@ops>" as an e-mail
			// autolink; show what was written instead of a mailto link.
			b.WriteString(esc("<" + label + ">"))
			break
		}
		b.WriteString(r.link([]byte(url), label, false))
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b.WriteString(escText(string(seg.Value(r.src))))
		}
	case *east.FootnoteLink:
		b.WriteString("[" + strconv.Itoa(n.Index) + "]")
	case *east.FootnoteBacklink:
	case *east.TaskCheckBox:
		if n.IsChecked {
			b.WriteString(checkedBox + " ")
		} else {
			b.WriteString(uncheckedBox + " ")
		}
	default:
		b.WriteString(r.inline(n))
	}
}

// span renders a formatted span; depth counts open spans of its kind so that
// nested ones are flattened.
func (r *renderer) span(b *strings.Builder, n ast.Node, mark string, depth *int) {
	if *depth > 0 {
		b.WriteString(r.inline(n))
		return
	}
	*depth++
	s := r.inline(n)
	*depth--
	b.WriteString(wrapSpan(mark, s))
}

// wrapSpan puts mark around s line by line, keeping leading and trailing
// blanks outside the marks (mrkdwn needs the marks next to text, and does
// not continue formatting over a line break).
func wrapSpan(mark, s string) string {
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		core := strings.TrimSpace(p)
		if core == "" {
			continue
		}
		lead := p[:strings.Index(p, core)]
		trail := p[len(lead)+len(core):]
		parts[i] = lead + mark + core + mark + trail
	}
	return strings.Join(parts, "\n")
}

func (r *renderer) codeSpanText(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		var v []byte
		switch c := c.(type) {
		case *ast.Text:
			v = c.Value(r.src)
		case *ast.String:
			v = c.Value
		default:
			continue
		}
		s := string(v)
		if strings.HasSuffix(s, "\n") {
			s = strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r") + " "
		}
		b.WriteString(s)
	}
	return b.String()
}

// plain renders the inline children of n as unescaped plain text (link
// labels, image alt text, table cells). With urls, links are written as
// "text (url)".
func (r *renderer) plain(n ast.Node, urls bool) string {
	var b strings.Builder
	var walk func(ast.Node)
	walk = func(p ast.Node) {
		for c := p.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				v := c.Value(r.src)
				if c.IsRaw() {
					b.Write(v)
				} else {
					b.WriteString(unescapeMarkdown(v))
				}
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				if c.IsCode() || c.IsRaw() {
					b.Write(c.Value)
				} else {
					b.WriteString(unescapeMarkdown(c.Value))
				}
			case *ast.CodeSpan:
				b.WriteString(r.codeSpanText(c))
			case *ast.Link, *ast.Image:
				start := b.Len()
				walk(c)
				if urls {
					dest := destination(c)
					if label := b.String()[start:]; label != dest {
						if label != "" {
							b.WriteString(" (")
							b.WriteString(dest)
							b.WriteString(")")
						} else {
							b.WriteString(dest)
						}
					}
				}
			case *ast.AutoLink:
				_, label := autoLinkURL(c, r.src)
				b.WriteString(label)
			case *ast.RawHTML:
				for i := 0; i < c.Segments.Len(); i++ {
					seg := c.Segments.At(i)
					b.Write(seg.Value(r.src))
				}
			case *east.FootnoteLink:
				b.WriteString("[" + strconv.Itoa(c.Index) + "]")
			case *east.FootnoteBacklink:
			case *east.TaskCheckBox:
				if c.IsChecked {
					b.WriteString(checkedBox + " ")
				} else {
					b.WriteString(uncheckedBox + " ")
				}
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return b.String()
}

// destination returns the unescaped destination of a link or image.
func destination(n ast.Node) string {
	switch n := n.(type) {
	case *ast.Link:
		return unescapeMarkdown(n.Destination)
	case *ast.Image:
		return unescapeMarkdown(n.Destination)
	}
	return ""
}

func autoLinkURL(n *ast.AutoLink, src []byte) (url, label string) {
	url = string(n.URL(src))
	label = string(n.Label(src))
	if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(url), "mailto:") {
		url = "mailto:" + url
	}
	return url, label
}

// plainEmailRE is what an e-mail address worth linking looks like.
var plainEmailRE = regexp.MustCompile(`^[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+$`)

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.\-]{0,31}:`)

// link renders a link as <url|label>. resolve says whether dest is a
// Markdown link destination (backslash escapes and entities to resolve)
// rather than an autolink's literal URL. Without a URL scheme (a relative
// path, an anchor, or something like "!here" or "@U123" that Slack would
// read as a mention) no link is made: the text is "label (dest)".
func (r *renderer) link(dest []byte, label string, resolve bool) string {
	raw := string(dest)
	if resolve {
		raw = unescapeMarkdown(dest)
	}
	label = strings.TrimSpace(strings.Join(strings.Fields(label), " "))
	if !schemeRE.MatchString(raw) {
		switch {
		case raw == "":
			return esc(label)
		case label == "" || label == raw:
			return esc(raw)
		default:
			return esc(label) + " (" + esc(raw) + ")"
		}
	}
	url := slackURL(util.URLEscape(dest, resolve))
	if label == "" || label == raw {
		return "<" + url + ">"
	}
	return "<" + url + "|" + neutralizeBroadcasts(esc(label)) + ">"
}

// slackURL makes an (already percent-encoded) URL safe inside <…|…>: '&'
// becomes &amp; as Slack expects, and the characters that would end the
// URL part ('<', '>', '|') and blanks are percent-encoded.
func slackURL(u []byte) string {
	var b strings.Builder
	b.Grow(len(u) + 8)
	for _, c := range u {
		switch c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("%3C")
		case '>':
			b.WriteString("%3E")
		case '|':
			b.WriteString("%7C")
		case ' ':
			b.WriteString("%20")
		case '\n', '\r', '\t':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
