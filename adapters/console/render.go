package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/claudeops/claudeops/adapters"
)

// How Claude's text looks at a terminal. The bot sends the console every
// edit of a live text (adapters.Immediate), each the whole text so far.
// What was added is written at once, up to the last character, so a slow
// answer shows word by word rather than when it is complete; a line is
// ended when its newline comes (or the text is final). While a line is
// open nothing else may write (it would land in the middle of it): any
// other output first ends it, marked "…", and when the text goes on, the
// cut line is written again whole. So every line in the transcript starts
// with its thread's name, and each of Claude's lines shows whole at least
// once.

// liveText is what the console has written of one text message.
type liveText struct {
	thread    string
	text      string // the text as last edited
	printed   int    // bytes of text written
	lineStart int    // where the line being written starts in text
}

// Post implements adapters.Adapter.
func (a *Adapter) Post(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ref := adapters.MessageRef{Thread: t, ID: a.nextID()}
	a.render(ref, m)
	return ref, a.flush()
}

// Edit implements adapters.Adapter. Text messages print what was added,
// as it comes; tool lines print when they start, wait for a decision and
// finish, and while running at most every 10 s.
func (a *Adapter) Edit(ctx context.Context, ref adapters.MessageRef, m adapters.Message) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.render(ref, m)
	return a.flush()
}

func (a *Adapter) render(ref adapters.MessageRef, m adapters.Message) {
	th := ref.Thread.Thread
	switch m.Kind {
	case adapters.KindText:
		a.renderText(ref, m)
	case adapters.KindTool:
		if m.Tool != nil {
			a.renderTool(ref, m.Tool)
		}
	case adapters.KindNotice:
		for _, l := range lines(m.Text) {
			a.printf(th, "* %s", l)
		}
		a.remember(th, adapters.Said{ID: ref.ID, User: claudeUser, FromBot: true, Text: m.Text})
	case adapters.KindFooter:
		a.printf(th, "— %s", m.Text)
	}
}

// renderText writes what a text message added since it was last shown.
func (a *Adapter) renderText(ref adapters.MessageRef, m adapters.Message) {
	lt := a.texts[ref.ID]
	if lt == nil {
		lt = &liveText{thread: ref.Thread.Thread}
		a.texts[ref.ID] = lt
	}
	if !strings.HasPrefix(m.Text, lt.text[:lt.printed]) {
		// Rewritten rather than extended: show it again, whole.
		a.printf(lt.thread, "claude: (edited)")
		lt.printed, lt.lineStart = 0, 0
	}
	lt.text = m.Text
	end := len(m.Text)
	if !m.Final {
		// Wait for what follows a CR (it may start a "\r\n") and for the
		// rest of a rune cut short.
		end -= incompleteTail(m.Text)
		if strings.HasSuffix(m.Text[:end], "\r") {
			end--
		}
	}
	a.writeText(lt, end, m.Final)
	if m.Final {
		a.remember(lt.thread, adapters.Said{ID: ref.ID, User: claudeUser, FromBot: true, Text: m.Text})
		if a.open == lt {
			a.endLine()
			a.open = nil
		}
		delete(a.texts, ref.ID)
	}
}

// writeText writes lt.text up to end. A line cut by other output is
// written again from its start; final writes it even when nothing was
// added, so that it shows whole.
func (a *Adapter) writeText(lt *liveText, end int, final bool) {
	start := lt.printed
	if a.open != lt {
		cut := lt.printed > lt.lineStart
		if end <= lt.printed && !(final && cut) {
			return
		}
		if cut {
			start = lt.lineStart
		}
		a.closeOpen()
		a.prefix(a.textPrefix(lt))
	}
	seg := lt.text[start:end]
	for {
		i := strings.IndexByte(seg, '\n')
		if i < 0 {
			break
		}
		a.put(strings.TrimSuffix(seg[:i], "\r"))
		a.endLine()
		seg = seg[i+1:]
		lt.lineStart = end - len(seg)
		if seg != "" {
			a.prefix(a.textPrefix(lt))
		}
	}
	lt.printed = end
	if seg == "" && lt.lineStart == end {
		a.open = nil
		return
	}
	a.put(seg)
	a.open = lt
}

// incompleteTail is the length of a UTF-8 sequence that s ends with and
// that more bytes could complete (0 if none).
func incompleteTail(s string) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(s); i++ {
		if utf8.RuneStart(s[len(s)-i]) {
			if utf8.FullRuneInString(s[len(s)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}

func (a *Adapter) textPrefix(lt *liveText) string { return "[" + lt.thread + "] claude: " }

// closeOpen ends a text line left open, marked as cut: what writes next
// starts a line of its own.
func (a *Adapter) closeOpen() {
	if a.open == nil {
		return
	}
	a.put("…")
	a.endLine()
	a.open = nil
}

// printf prints lines prefixed with the thread's name, each line of the
// text with the prefix, escaped (put): nothing printed can pass for
// another line, such as a prompt's outcome. A "\r\n" ends a line like
// "\n"; any other CR shows as an escape.
func (a *Adapter) printf(thread, format string, args ...any) {
	a.closeOpen()
	for _, l := range lines(fmt.Sprintf(format, args...)) {
		a.prefix("[" + thread + "] ")
		a.put(l)
		a.endLine()
	}
}

// lines splits s into its lines; "\r\n" ends a line like "\n".
func lines(s string) []string {
	return strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
}

func (a *Adapter) flush() error {
	if err := a.out.Flush(); err != nil {
		if errors.Is(err, io.ErrClosedPipe) {
			return nil
		}
		return fmt.Errorf("write console output: %w", err)
	}
	return nil
}
