package slackmd

import (
	"strconv"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
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
