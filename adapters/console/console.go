// Package console is the terminal adapter, the embedded default: each line
// typed is a message in the current thread ("main" until `/thread <name>`
// switches), and everything the bot posts is printed as plain lines
// prefixed with the thread's name. It needs no terminal: stdin may be a pipe,
// so conversations can be scripted.
package console

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// Platform is the console's ThreadRef.Platform and Channel.
const Platform = "console"

// OperatorID is the console user's id: the operator, who may do everything.
const OperatorID = "operator"

// Options configure the console.
type Options struct {
	In  io.Reader
	Out io.Writer
	// UserName is shown for the operator (default "operator").
	UserName string
	// TestHooks enables `/as <user-id> <text>`, which sends a line as another
	// user, so tests can act as someone who may not approve.
	TestHooks bool
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Adapter is the console adapter.
type Adapter struct {
	in        io.Reader
	now       func() time.Time
	user      adapters.User
	testHooks bool

	mu      sync.Mutex
	out     *bufio.Writer
	seq     int64
	current string
	texts   map[string]*liveText // message id -> what was printed
	tools   map[string]time.Time // message id -> last time a tool was printed (its input is then shown)
	eof     chan struct{}
	idBase  string
}

type liveText struct {
	thread  string
	printed int // bytes of text already printed (whole lines only)
	text    string
}

// Immediate implements adapters.Immediate: printing never waits on a
// platform, and a transcript shows every edit.
func (a *Adapter) Immediate() {}

// New makes a console adapter.
func New(o Options) *Adapter {
	if o.Now == nil {
		o.Now = time.Now
	}
	name := o.UserName
	if name == "" {
		name = OperatorID
	}
	return &Adapter{
		in:        o.In,
		out:       bufio.NewWriter(o.Out),
		now:       o.Now,
		user:      adapters.User{ID: OperatorID, Name: name},
		testHooks: o.TestHooks,
		current:   "main",
		texts:     make(map[string]*liveText),
		tools:     make(map[string]time.Time),
		eof:       make(chan struct{}),
		// Message ids must stay unique across restarts: they are the dedupe key.
		idBase: strconv.FormatInt(o.Now().UnixNano(), 36),
	}
}

// Name implements adapters.Adapter.
func (a *Adapter) Name() string { return Platform }

// InputClosed is closed when stdin reaches EOF.
func (a *Adapter) InputClosed() <-chan struct{} { return a.eof }

// Thread returns the ref of a console thread.
func Thread(name string) adapters.ThreadRef {
	return adapters.ThreadRef{Platform: Platform, Channel: Platform, Thread: name}
}

// Run reads lines until EOF or ctx ends. EOF is not an error: Run returns
// nil and InputClosed is closed, so the caller can let running turns finish.
func (a *Adapter) Run(ctx context.Context, deliver func(context.Context, adapters.Event) error) error {
	lines := make(chan string)
	errc := make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(a.in)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		errc <- sc.Err()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				close(a.eof)
				select {
				case err := <-errc:
					if err != nil {
						return fmt.Errorf("read console input: %w", err)
					}
				default:
				}
				return nil
			}
			a.handleLine(ctx, line, deliver)
		}
	}
}

func (a *Adapter) handleLine(ctx context.Context, line string, deliver func(context.Context, adapters.Event) error) {
	text := strings.TrimSpace(line)
	if text == "" {
		return
	}
	user := a.user
	if rest, ok := strings.CutPrefix(text, "/thread"); ok && (rest == "" || rest[0] == ' ') {
		name := strings.TrimSpace(rest)
		a.mu.Lock()
		if name == "" {
			a.printf(a.current, "* current thread: %s", a.current)
		} else if strings.ContainsAny(name, " /") {
			a.printf(a.current, "* a thread name is one word without '/'")
		} else {
			a.current = name
			a.printf(name, "* switched to thread %s", name)
		}
		a.flush()
		a.mu.Unlock()
		return
	}
	if rest, ok := strings.CutPrefix(text, "/as "); ok && a.testHooks {
		id, msg, _ := strings.Cut(strings.TrimSpace(rest), " ")
		user = adapters.User{ID: id, Name: id}
		text = strings.TrimSpace(msg)
		if text == "" {
			return
		}
	}
	a.mu.Lock()
	a.seq++
	ev := adapters.Event{
		Thread: Thread(a.current),
		User:   user,
		Message: &adapters.Incoming{
			ID:        a.idBase + "-" + strconv.FormatInt(a.seq, 10),
			Text:      text,
			Mentioned: true,
		},
	}
	a.mu.Unlock()
	if err := deliver(ctx, ev); err != nil {
		a.mu.Lock()
		a.printf(ev.Thread.Thread, "* not delivered: %v", err)
		a.flush()
		a.mu.Unlock()
	}
}

func (a *Adapter) nextID() string {
	a.seq++
	return "m" + strconv.FormatInt(a.seq, 10)
}

// Post implements adapters.Adapter.
func (a *Adapter) Post(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ref := adapters.MessageRef{Thread: t, ID: a.nextID()}
	a.render(ref, m)
	return ref, a.flush()
}

// Edit implements adapters.Adapter. Text messages print what was added
// (whole lines while streaming, the rest when final); tool lines print when
// they finish, and while running at most every 10 s.
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
		lt := a.texts[ref.ID]
		if lt == nil {
			lt = &liveText{thread: th}
			a.texts[ref.ID] = lt
		}
		if !strings.HasPrefix(m.Text, lt.text[:lt.printed]) {
			// Rewritten rather than extended: show it again, whole.
			a.printf(th, "claude: (edited)")
			lt.printed = 0
		}
		lt.text = m.Text
		end := lt.printed
		if m.Final {
			end = len(m.Text)
		} else if i := strings.LastIndexByte(m.Text, '\n'); i+1 > end {
			end = i + 1
		}
		if end > lt.printed {
			for _, l := range strings.Split(strings.TrimSuffix(m.Text[lt.printed:end], "\n"), "\n") {
				a.printf(th, "claude: %s", l)
			}
			lt.printed = end
		}
		if m.Final {
			delete(a.texts, ref.ID)
		}
	case adapters.KindTool:
		if m.Tool != nil {
			a.renderTool(ref, m.Tool)
		}
	case adapters.KindNotice:
		for _, l := range strings.Split(m.Text, "\n") {
			a.printf(th, "* %s", l)
		}
	case adapters.KindFooter:
		a.printf(th, "— %s", m.Text)
	}
}

// renderTool prints a tool's line: when it starts, at most every 10 s
// while it runs, and when it ends. The first print shows every line of
// its input; later ones its first line.
func (a *Adapter) renderTool(ref adapters.MessageRef, t *adapters.Tool) {
	th := ref.Thread.Thread
	indent := strings.Repeat("  ", t.Depth)
	last, seen := a.tools[ref.ID]
	var s string
	if t.State == adapters.ToolRunning {
		if seen && a.now().Sub(last) < 10*time.Second {
			return
		}
		s = indent + "⚙ " + toolLabel(t, seen)
		if seen {
			s += " (" + adapters.FormatDuration(t.Elapsed) + ")"
		}
		a.tools[ref.ID] = a.now()
	} else {
		mark := map[adapters.ToolState]string{adapters.ToolOK: "✓", adapters.ToolFailed: "✗", adapters.ToolDenied: "⊘"}[t.State]
		s = fmt.Sprintf("%s%s %s (%s)", indent, mark, toolLabel(t, seen), adapters.FormatDuration(t.Elapsed))
		if t.Preview != "" {
			s += " → " + oneLine(t.Preview, 160)
		}
		delete(a.tools, ref.ID)
	}
	a.printf(th, "%s", s)
	if !seen {
		for _, l := range inputRest(t.Input) {
			a.printf(th, "%s    │ %s", indent, l)
		}
	}
}

// Ask implements adapters.Adapter: the prompt and how to answer it.
func (a *Adapter) Ask(ctx context.Context, t adapters.ThreadRef, p adapters.Prompt) (adapters.MessageRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ref := adapters.MessageRef{Thread: t, ID: a.nextID()}
	th := t.Thread
	switch p.Kind {
	case adapters.PromptApproval:
		// Every line of what is asked, whatever its length.
		a.printf(th, "? approval %s: %s", p.ID, p.Title)
		for _, l := range strings.Split(p.Detail, "\n") {
			a.printf(th, "    %s", l)
		}
		a.printNote(th, p.Note)
		var typed []string
		for _, c := range p.Choices {
			typed = append(typed, c.Typed)
		}
		a.printf(th, "  reply: %s", strings.Join(typed, " | "))
	case adapters.PromptQuestion:
		for i, q := range p.Questions {
			head := q.Text
			if q.Header != "" {
				head = "[" + q.Header + "] " + head
			}
			if len(p.Questions) > 1 {
				head = fmt.Sprintf("(%d/%d) %s", i+1, len(p.Questions), head)
			}
			a.printf(th, "? question %s: %s", p.ID, head)
			for j, o := range q.Options {
				if o.Description != "" {
					a.printf(th, "    %d. %s — %s", j+1, o.Label, o.Description)
				} else {
					a.printf(th, "    %d. %s", j+1, o.Label)
				}
			}
			if q.Multi {
				a.printf(th, "  reply: option numbers, comma-separated (e.g. 1,3), or your own answer")
			} else {
				a.printf(th, "  reply: an option number, or your own answer")
			}
		}
		a.printNote(th, p.Note)
	}
	return ref, a.flush()
}

// printNote prints a prompt's note (Markdown, shown as written).
func (a *Adapter) printNote(th, note string) {
	if note == "" {
		return
	}
	for _, l := range strings.Split(note, "\n") {
		a.printf(th, "  note: %s", l)
	}
}

// UpdatePrompt implements adapters.Adapter.
func (a *Adapter) UpdatePrompt(ctx context.Context, ref adapters.MessageRef, p adapters.Prompt) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	kind := "approval"
	if p.Kind == adapters.PromptQuestion {
		kind = "question"
	}
	a.printf(ref.Thread.Thread, "! %s %s: %s", kind, p.ID, p.Outcome)
	return a.flush()
}

// Tell implements adapters.Teller: the console has one reader, so it is a
// notice addressed to the user.
func (a *Adapter) Tell(ctx context.Context, t adapters.ThreadRef, user adapters.User, text string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.printf(t.Thread, "* (to %s) %s", user.ID, text)
	return a.flush()
}

// printf prints lines prefixed with the thread's name. Each line of the
// text gets the prefix, and characters that would move the cursor, change
// the terminal or hide text show as escapes: nothing printed can pass for
// another line, such as a prompt's outcome.
func (a *Adapter) printf(thread, format string, args ...any) {
	for _, l := range strings.Split(fmt.Sprintf(format, args...), "\n") {
		a.out.WriteString(adapters.Visible("[" + thread + "] " + l))
		a.out.WriteByte('\n')
	}
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

// toolLabel is "Bash: make test", or just the name when there is no
// input; the first line of a longer input, with " …" when its other lines
// were shown before (again: they follow).
func toolLabel(t *adapters.Tool, again bool) string {
	if t.Input == "" {
		return t.Name
	}
	first, _, _ := strings.Cut(t.Input, "\n")
	if again && inputRest(t.Input) != nil {
		first += " …"
	}
	return t.Name + ": " + first
}

// inputRest is the lines of a tool's input after its first.
func inputRest(in string) []string {
	_, rest, _ := strings.Cut(in, "\n")
	if rest = strings.TrimRight(rest, "\n"); rest == "" {
		return nil
	}
	return strings.Split(rest, "\n")
}

func oneLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…" // never cut a rune in two
	}
	return s
}

// OpenThread implements adapters.Opener: a scheduled run gets a thread of
// its own, named after the moment it started.
func (a *Adapter) OpenThread(ctx context.Context, channel string, m adapters.Message) (adapters.ThreadRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	t := Thread("run-" + strconv.FormatInt(a.now().Unix(), 36) + strconv.FormatInt(a.seq, 36))
	a.render(adapters.MessageRef{Thread: t, ID: a.nextID()}, m)
	return t, a.flush()
}
