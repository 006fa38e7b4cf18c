package slackmd

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

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
