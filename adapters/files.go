package adapters

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// OutFile is a file the bot posts into a thread on Claude's behalf (the
// send_file tool). Name and Data come from the session's workspace:
// untrusted, shown as a file and never as markup.
type OutFile struct {
	// Name is the file's base name as shown (no directory).
	Name string
	Data []byte
	// Comment is an optional note shown with the file: plain text and
	// untrusted (Claude writes it), shown escaped with mentions and links
	// inert, never as markup.
	Comment string
}

// FilePoster is optional: adapters that can post a file into a thread.
type FilePoster interface {
	// MaxFileBytes is the largest file PostFile takes on this platform
	// (its upload limit as the platform states it, else the adapter's
	// own cap).
	MaxFileBytes(ctx context.Context) int64
	// PostFile posts f into thread t, after what was posted into t before
	// it returned. A file larger than MaxFileBytes is refused with an
	// error and nothing is posted.
	PostFile(ctx context.Context, t ThreadRef, f OutFile) (MessageRef, error)
}

// Said is one message of a thread as the platform holds it.
type Said struct {
	// ID is the message's identity on its platform (Slack ts, Matrix
	// event id).
	ID   string
	User User
	// FromBot marks the bot's own messages.
	FromBot bool
	// Text as written: untrusted.
	Text string
	At   time.Time
}

// ThreadReader is optional: adapters that can read a thread back (the
// read_thread tool).
type ThreadReader interface {
	// ReadThread returns the last (at most) limit messages of thread t,
	// oldest first, its root included: everyone's, also those that did
	// not address the bot, and the bot's own marked FromBot. Only t is
	// read; it never reaches another thread or channel.
	ReadThread(ctx context.Context, t ThreadRef, limit int) ([]Said, error)
}

// maxNameBytes bounds a file name (what file systems take).
const maxNameBytes = 255

// FileName is the name a posted file shows: its last path element (a name
// never says where it came from), every control, format or invalid
// character (a newline above all) as "_", at most 255 bytes; "file" when
// nothing is left.
func FileName(s string) string {
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 {
			return '_'
		}
		return r
	}, s))
	for len(s) > maxNameBytes {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	if s == "" || s == "." || s == ".." {
		return "file"
	}
	return s
}
