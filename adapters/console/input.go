package console

import (
	"bufio"
	"errors"
	"io"
)

// DefaultMaxLine is the longest input line taken by default: 1 MiB. It is
// what the console took before it had a setting, so nothing that worked
// stops working, and it is more than a model can read: a prompt of 1 MiB
// is some 250 000 tokens, beyond Claude's context window. A longer line
// is refused, not cut: half a prompt would be taken as a whole one.
const DefaultMaxLine = 1 << 20

// inputLine is one line read: its text, or, when it was longer than the
// limit, only its size (its bytes were discarded as they came).
type inputLine struct {
	text    string
	size    int // bytes of the line, without its line ending
	refused bool
}

// lineReader reads lines of at most max bytes, holding no more than that
// (and one buffer) in memory whatever comes: the rest of a longer line is
// counted and discarded, and the line after it is read as usual. A line
// ends with "\n" or "\r\n" (neither is part of it), or at EOF.
type lineReader struct {
	r   *bufio.Reader
	max int
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next reads the next line. At the end of the input it returns io.EOF
// (after the last line, which may lack a newline); another error is the
// reader's.
func (lr *lineReader) next() (inputLine, error) {
	var (
		buf  []byte
		n    int  // bytes of the line so far, its ending included
		over bool // longer than max: buf is dropped, n still counts
		last byte // the byte before the chunk being read, for a split "\r\n"
	)
	for {
		chunk, err := lr.r.ReadSlice('\n')
		n += len(chunk)
		if !over {
			// max+2 leaves room for a "\r\n" that is not part of the line.
			if len(buf)+len(chunk) > lr.max+2 {
				over, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			last = chunk[len(chunk)-1]
			continue
		case errors.Is(err, io.EOF) && n == 0:
			return inputLine{}, io.EOF
		case err != nil && !errors.Is(err, io.EOF):
			return inputLine{}, err
		}
		// The line is complete: it ended with "\n", or the input ended.
		size := n - lineEnding(chunk, last)
		if over || size > lr.max {
			return inputLine{size: size, refused: true}, nil
		}
		return inputLine{text: string(buf[:size]), size: size}, nil
	}
}

// lineEnding is the length of the "\n" or "\r\n" that ends the last
// chunk of a line (0 at EOF without one); last is the byte before chunk.
func lineEnding(chunk []byte, last byte) int {
	k := len(chunk)
	switch {
	case k == 0 || chunk[k-1] != '\n':
		return 0
	case k >= 2 && chunk[k-2] == '\r', k == 1 && last == '\r':
		return 2
	}
	return 1
}
