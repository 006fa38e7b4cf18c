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

// Options configure the console. cmd/claudeops reads the fields with an
// env tag from the variable it names (its default in envDefault) and sets
// the others.
type Options struct {
	In  io.Reader
	Out io.Writer
	// UserName is shown for the operator (default "operator").
	UserName string
	// MaxLine is the longest input line taken, in bytes (default
	// DefaultMaxLine). A longer one is refused and said so.
	MaxLine int `env:"CLAUDEOPS_CONSOLE_MAX_LINE" envDefault:"1048576"`
	// TestHooks enables `/as <user-id> <text>`, which sends a line as another
	// user, so tests can act as someone who may not approve.
	TestHooks bool `env:"CLAUDEOPS_CONSOLE_TEST_HOOKS"`
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Adapter is the console adapter.
type Adapter struct {
	in        io.Reader
	echoed    bool // the terminal shows what is typed (inputEchoed)
	maxLine   int
	now       func() time.Time
	user      adapters.User
	testHooks bool

	mu      sync.Mutex
	out     *bufio.Writer
	col     int       // column of the output line being written (tab stops)
	open    *liveText // the text whose last line is written but not ended
	seq     int64
	current string
	texts   map[string]*liveText // message id -> what was printed
	tools   map[string]shownTool // message id -> how a tool line was last printed
	eof     chan struct{}
	idBase  string
	said    history // what each thread said, for ReadThread (files.go)

	conn *adapters.ConnTracker // reading input or not (conn.go)
}

// Immediate implements adapters.Immediate: printing never waits on a
// platform, and a transcript shows every edit.
func (a *Adapter) Immediate() {}

// New makes a console adapter.
func New(o Options) *Adapter {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
	name := o.UserName
	if name == "" {
		name = OperatorID
	}
	return &Adapter{
		in:        o.In,
		echoed:    inputEchoed(o.In, o.Out),
		maxLine:   o.MaxLine,
		out:       bufio.NewWriter(o.Out),
		now:       o.Now,
		user:      adapters.User{ID: OperatorID, Name: name},
		testHooks: o.TestHooks,
		current:   "main",
		texts:     make(map[string]*liveText),
		tools:     make(map[string]shownTool),
		eof:       make(chan struct{}),
		conn:      adapters.NewConnTracker("terminal", o.Now),
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
// A line longer than the limit is refused (the operator is told) and
// reading goes on with the next line.
func (a *Adapter) Run(ctx context.Context, deliver func(context.Context, adapters.Event) error) error {
	a.conn.Set(adapters.Connected, nil)
	defer a.conn.Set(adapters.Disconnected, nil)
	lines := make(chan inputLine)
	errc := make(chan error, 1)
	go func() {
		defer close(lines)
		lr := newLineReader(a.in, a.maxLine)
		for {
			l, err := lr.next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					errc <- err
				}
				return
			}
			select {
			case lines <- l:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case l, ok := <-lines:
			if !ok {
				close(a.eof)
				select {
				case err := <-errc:
					err = fmt.Errorf("read console input: %w", err)
					a.conn.Set(adapters.Disconnected, err)
					return err
				default:
				}
				a.conn.Set(adapters.Disconnected, errInputEnded)
				return nil
			}
			a.lineRead()
			if l.refused {
				a.refuse(l.size)
				continue
			}
			a.handleLine(ctx, l.text, deliver)
		}
	}
}

// lineRead: the operator ended a line, so a line of Claude's text being
// written is cut there, and shown again whole when it goes on. On a
// terminal that echoes, their Enter has already ended it on the screen;
// elsewhere (a pipe, a file) it is ended here.
func (a *Adapter) lineRead() {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.open == nil:
	case a.echoed:
		a.open, a.col = nil, 0
	default:
		a.closeOpen()
		_ = a.flush()
	}
}

// refuse tells the operator that a line of size bytes was not taken.
func (a *Adapter) refuse(size int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.printf(a.current, "* line of %d bytes refused: the limit is %d bytes (CLAUDEOPS_CONSOLE_MAX_LINE); nothing of it was sent", size, a.maxLine)
	_ = a.flush()
}

func (a *Adapter) handleLine(ctx context.Context, line string, deliver func(context.Context, adapters.Event) error) {
	user, text, ok := a.ownCommand(strings.TrimSpace(line))
	if !ok || text == "" {
		return
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
	a.remember(a.current, adapters.Said{ID: ev.Message.ID, User: user, Text: text})
	a.mu.Unlock()
	if err := deliver(ctx, ev); err != nil && !errors.Is(err, adapters.ErrLoggedOnce) { // the bot told the thread
		a.mu.Lock()
		a.printf(ev.Thread.Thread, "* not delivered: %v", err)
		_ = a.flush()
		a.mu.Unlock()
	}
}

func (a *Adapter) nextID() string {
	a.seq++
	return "m" + strconv.FormatInt(a.seq, 10)
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
