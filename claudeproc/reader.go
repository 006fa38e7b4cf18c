package claudeproc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// DefaultMaxLineBytes is the default cap on one stdout line (10 MiB).
const DefaultMaxLineBytes = 10 << 20

// Reader turns the CLI's NDJSON stdout into events. It is tolerant: unknown
// fields are ignored, unknown types become Unknown events (logged once per
// type), malformed lines become ParseError events and reading goes on, and a
// line over the cap becomes a Truncated event without ever being held whole.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	br  *bufio.Reader
	max int
	dec *decoder
	log *slog.Logger
	buf []byte
	sh  shortener // an over-cap line's copy with its strings cut (shorten.go)

	mu       sync.Mutex
	seenKind map[string]bool
}

// NewReader reads lines from r. maxLine ≤ 0 means DefaultMaxLineBytes.
func NewReader(r io.Reader, maxLine int, log *slog.Logger) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rd := &Reader{
		br:       bufio.NewReaderSize(r, 64<<10),
		max:      maxLine,
		dec:      newDecoder(),
		log:      log,
		seenKind: make(map[string]bool),
	}
	rd.dec.onTypeError = func(kind string, err error) {
		rd.once("type-error/"+kind, func() {
			rd.log.Warn("claude: field of unexpected type ignored", "kind", kind, "err", err)
		})
	}
	return rd
}

func (r *Reader) once(key string, f func()) {
	r.mu.Lock()
	seen := r.seenKind[key]
	r.seenKind[key] = true
	r.mu.Unlock()
	if !seen {
		f()
	}
}

// Next returns the next event, or io.EOF when the stream ended cleanly. Other
// errors are read errors of the underlying stream. Blank lines are skipped.
func (r *Reader) Next() (Event, error) {
	for {
		line, size, err := r.readLine()
		if err != nil && len(line) == 0 && size == 0 {
			return nil, err
		}
		if int64(len(line)) < size {
			if ev := r.shortResult(size); ev != nil {
				return ev, nil
			}
			return r.truncated(line, size), nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		ev := r.dec.decode(line)
		r.note(ev)
		// A final line without a newline is still a line; the error (EOF)
		// comes with the next call.
		return ev, nil
	}
}

func (r *Reader) note(ev Event) {
	switch e := ev.(type) {
	case *Unknown:
		key := e.Type
		if e.Subtype != "" {
			key += "/" + e.Subtype
		}
		r.once("unknown/"+key, func() {
			r.log.Warn("claude: unknown line type, passing it on", "type", key)
		})
	case *ParseError:
		r.log.Warn("claude: malformed stdout line skipped", "err", e.Err, "line", truncateForLog(e.Line))
	}
}

// shortResult is the over-cap line decoded from its shortened copy, if
// that copy fits the cap and is a result; else nil.
func (r *Reader) shortResult(size int64) Event {
	short, ok := r.sh.result()
	if !ok {
		return nil
	}
	if typ, _, ok := sniffType(short); !ok || typ != "result" {
		return nil
	}
	ev := r.dec.decode(short)
	if _, bad := ev.(*ParseError); bad {
		return nil
	}
	r.log.Warn("claude: a result line over the cap was read with its long strings cut",
		"original_size", size, "cap", r.max, "kept", len(short))
	return ev
}

func (r *Reader) truncated(prefix []byte, size int64) *Truncated {
	marker := fmt.Sprintf("[truncated: original_size=%d bytes]", size)
	t := &Truncated{
		Type:         prefixField(prefix, "type"),
		Subtype:      prefixField(prefix, "subtype"),
		ToolUseID:    prefixField(prefix, "tool_use_id"),
		SessionID:    prefixField(prefix, "session_id"),
		OriginalSize: size,
		Prefix:       append(bytes.Clone(prefix), marker...),
	}
	r.log.Warn("claude: stdout line over the cap was truncated",
		"type", t.Type, "original_size", size, "cap", r.max)
	return t
}

// readLine returns the next line without its newline and the line's full
// size. When size > len(line) the line was longer than the cap and only its
// first r.max bytes are returned; the rest was read and discarded.
// The returned slice is valid until the next call.
func (r *Reader) readLine() ([]byte, int64, error) {
	// Keep the buffer for the next long line, but give back memory after
	// an unusually long one.
	if cap(r.buf) > 4<<20 {
		r.buf = nil
	}
	r.buf = r.buf[:0]
	r.sh.active = false
	var size int64
	for {
		frag, err := r.br.ReadSlice('\n')
		n := len(frag)
		if err == nil {
			n-- // drop the newline
		}
		size += int64(n)
		if size > int64(r.max) {
			// Over the cap: the shortened copy gets the whole line, the
			// head kept so far first.
			if !r.sh.active {
				r.sh.reset(r.max)
				r.sh.active = true
				r.sh.feed(r.buf)
			}
			r.sh.feed(frag[:n])
		}
		if room := r.max - len(r.buf); room > 0 {
			take := min(room, n)
			if err == nil && len(r.buf) == 0 && take == n {
				// Fast path: the whole line is in bufio's buffer.
				return frag[:n], size, nil
			}
			r.buf = append(r.buf, frag[:take]...)
		}
		switch {
		case err == nil:
			return r.buf, size, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return r.buf, size, err
		}
	}
}

func truncateForLog(b []byte) string {
	const n = 256
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
