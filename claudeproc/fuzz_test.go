package claudeproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReader feeds arbitrary bytes to the reader: it must never panic or
// stall, must yield at most one event per line, and its hand-written user
// decoder must agree with encoding/json wherever the line is valid JSON.
// Seeded with every line of the real transcripts.
func FuzzReader(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.ndjson"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(line) > 0 && len(line) < 8<<10 {
				f.Add(line)
			}
		}
	}
	f.Add([]byte(`{"type":"user","message":{"content":"\ud83d\ude00 \u00"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data), 1<<10, nil)
		lines := bytes.Count(data, []byte("\n")) + 1
		n := 0
		for {
			ev, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev == nil {
				t.Fatal("nil event")
			}
			n++
			if n > lines {
				t.Fatalf("%d events from %d lines", n, lines)
			}
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if typ, _, ok := sniffType(line); ok && typ == "user" && json.Valid(line) {
				compareUserDecoders(t, line)
			}
		}
	})
}
