package console

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/claudeops/claudeops/adapters"
)

// The optional capabilities the send_file and read_thread tools use.
var (
	_ adapters.FilePoster   = (*Adapter)(nil)
	_ adapters.ThreadReader = (*Adapter)(nil)
)

// maxFileBytes is the largest file PostFile takes: a terminal is no place
// for more, and the file is held whole in memory on its way.
const maxFileBytes = 10 << 20

// shownFileBytes: a text file up to this size is printed whole; a larger
// one, or one that is not text, is only named.
const shownFileBytes = 64 << 10

// MaxFileBytes implements adapters.FilePoster.
func (a *Adapter) MaxFileBytes(context.Context) int64 { return maxFileBytes }

// PostFile implements adapters.FilePoster: the comment as Claude's lines,
// then "📎 <name> (<size>)", then the file's lines when it is UTF-8 text of
// at most shownFileBytes, else a line saying what it is and that it is not
// shown. Everything
// is escaped like all output, the name kept on its one line.
func (a *Adapter) PostFile(ctx context.Context, t adapters.ThreadRef, f adapters.OutFile) (adapters.MessageRef, error) {
	if len(f.Data) > maxFileBytes {
		return adapters.MessageRef{}, fmt.Errorf("console: file of %d bytes refused: the limit is %d bytes", len(f.Data), maxFileBytes)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	ref := adapters.MessageRef{Thread: t, ID: a.nextID()}
	th := t.Thread
	comment := strings.TrimSpace(f.Comment)
	if comment != "" {
		for _, l := range lines(comment) {
			a.printf(th, "claude: %s", l)
		}
	}
	name := inLine(f.Name)
	a.printf(th, "📎 %s (%s)", name, byteSize(len(f.Data)))
	switch text := isText(f.Data); {
	case len(f.Data) == 0:
		a.printf(th, "    (empty)")
	case text && len(f.Data) <= shownFileBytes:
		for _, l := range lines(strings.TrimSuffix(string(f.Data), "\n")) {
			a.printf(th, "    %s", l)
		}
	case text:
		a.printf(th, "    (text, %d bytes, not shown)", len(f.Data))
	default:
		a.printf(th, "    (binary, %d bytes, not shown)", len(f.Data))
	}
	a.remember(th, adapters.Said{ID: ref.ID, User: claudeUser, FromBot: true, Text: strings.TrimSpace(comment + "\n[file: " + name + "]")})
	return ref, a.flush()
}

// isText: valid UTF-8 without NUL.
func isText(data []byte) bool {
	return utf8.Valid(data) && !bytes.Contains(data, []byte{0})
}

// inLine keeps s on one line: a line break in a name shows as an escape
// rather than starting a line that could pass for another.
func inLine(s string) string {
	return strings.NewReplacer("\r", `\x0d`, "\n", `\x0a`).Replace(s)
}

// byteSize is n for people: "300 bytes", "1.5 KiB", "2.0 MiB".
func byteSize(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// What the console remembers of its threads, for ReadThread: the last
// historyLines messages of each of the historyThreads threads last written
// in; the oldest go first.
const (
	historyLines   = 200
	historyThreads = 100
)

// claudeUser is who the bot's own messages are from.
var claudeUser = adapters.User{ID: "claude", Name: "claude"}

// history is the console's memory of what was said, by thread.
type history struct {
	threads map[string][]adapters.Said
	order   []string // thread names, least recently written first
}

// remember keeps message s of thread th, said now. The caller holds a.mu.
func (a *Adapter) remember(th string, s adapters.Said) {
	h := &a.said
	if h.threads == nil {
		h.threads = make(map[string][]adapters.Said)
	}
	if i := slices.Index(h.order, th); i >= 0 {
		h.order = slices.Delete(h.order, i, i+1)
	} else if len(h.order) == historyThreads {
		delete(h.threads, h.order[0])
		h.order = slices.Delete(h.order, 0, 1)
	}
	h.order = append(h.order, th)
	s.At = a.now()
	msgs := append(h.threads[th], s)
	if len(msgs) > historyLines {
		msgs = slices.Delete(msgs, 0, len(msgs)-historyLines)
	}
	h.threads[th] = msgs
}

// ReadThread implements adapters.ThreadReader from what the console
// remembers (see historyLines): the lines people typed in the thread, and
// the bot's own Claude texts (once final), notices and files, marked
// FromBot. Tool lines, footers and prompts are not kept. Nothing said
// before this run is known.
func (a *Adapter) ReadThread(ctx context.Context, t adapters.ThreadRef, limit int) ([]adapters.Said, error) {
	if limit <= 0 {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	msgs := a.said.threads[t.Thread]
	return slices.Clone(msgs[max(0, len(msgs)-limit):]), nil
}
