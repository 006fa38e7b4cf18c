package claudeproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// bigToolResultLine builds a user tool-result echo of about size bytes, the
// shape the CLI prints for a Bash command with large output: the output
// appears twice (the model's tool_result and tool_use_result.stdout).
func bigToolResultLine(size int) []byte {
	var out strings.Builder
	for i := 0; out.Len() < size/2-400; i++ {
		out.WriteString("drwxr-xr-x  2 root root 4096 Nov 22 05:32 \"some dir\"\twith\\tabs and unicode é ✓ line ")
		out.WriteString(strings.Repeat("x", i%40))
		out.WriteByte('\n')
	}
	o := out.String()
	line, _ := json.Marshal(map[string]any{
		"type": "user",
		"message": map[string]any{"role": "user", "content": []any{map[string]any{
			"tool_use_id": "toolu_fake_1", "type": "tool_result", "content": o, "is_error": false,
		}}},
		"parent_tool_use_id": nil,
		"session_id":         "3562cea9-dc06-4b3f-812f-a4990d633cf8",
		"uuid":               "eb406a3c-0b89-405d-b7cc-bcdd85d0f054",
		"timestamp":          "2026-11-22T04:44:26.963Z",
		"tool_use_result":    map[string]any{"stdout": o, "stderr": "", "interrupted": false, "isImage": false},
	})
	return append(line, '\n')
}

const smallDelta = `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello from the fake model. messages_in_c"}},"session_id":"3562cea9-dc06-4b3f-812f-a4990d633cf8","parent_tool_use_id":null,"uuid":"eb406a3c-0b89-405d-b7cc-bcdd85d0f054","api_message_id":"msg_fake_000002"}` + "\n"

// repeatReader yields the same bytes n times without allocating.
type repeatReader struct {
	data []byte
	n    int
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	c := copy(p, r.data[r.off:])
	r.off += c
	if r.off == len(r.data) {
		r.off = 0
		r.n--
	}
	return c, nil
}

func benchLines(b *testing.B, line []byte, perOp int) {
	b.SetBytes(int64(len(line) * perOp))
	b.ReportAllocs()
	rr := &repeatReader{data: line, n: b.N * perOp}
	rd := NewReader(rr, 0, nil)
	b.ResetTimer()
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		switch ev.(type) {
		case *ParseError, *Unknown, *Truncated:
			b.Fatalf("unexpected %s", describe(ev))
		}
	}
}

// BenchmarkReaderLargeToolResult: one 2 MiB tool-result line per op.
func BenchmarkReaderLargeToolResult(b *testing.B) {
	line := bigToolResultLine(2 << 20)
	benchLines(b, line, 1)
}

// BenchmarkReaderSmallStreamEvents: one small text_delta stream_event per op;
// allocs/op is the per-event allocation count.
func BenchmarkReaderSmallStreamEvents(b *testing.B) {
	start := `{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},"session_id":"s","parent_tool_use_id":null,"uuid":"u","api_message_id":"msg_fake_000002"}` + "\n"
	_ = start
	benchLines(b, []byte(smallDelta), 1)
}

func TestBigLineFixtureShape(t *testing.T) {
	line := bigToolResultLine(2 << 20)
	evs := readAll(t, bytes.NewReader(line), 0)
	if len(evs) != 1 {
		t.Fatalf("got %d events", len(evs))
	}
	u, ok := evs[0].(*User)
	if !ok || len(u.ToolResults) != 1 || len(u.ToolResults[0].Content) < 900<<10 {
		t.Fatalf("got %s", describe(evs[0]))
	}
}

// TestStreamEventAllocsConstant: decoding a text_delta costs the same number
// of allocations whatever the delta's length (amortised reassembly aside).
func TestStreamEventAllocsConstant(t *testing.T) {
	allocs := func(text string) float64 {
		line := []byte(strings.Replace(smallDelta, "Hello from the fake model. messages_in_c", text, 1))
		d := newDecoder()
		return testing.AllocsPerRun(200, func() {
			if _, ok := d.decode(bytes.TrimSpace(line)).(*StreamEvent); !ok {
				t.Fatal("not a stream event")
			}
		})
	}
	short, long := allocs("hi"), allocs(strings.Repeat("word ", 400))
	if short != long {
		t.Errorf("allocs per event: %v for 2 bytes, %v for 2000 bytes", short, long)
	}
}
