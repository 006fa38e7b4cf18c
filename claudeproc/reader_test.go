package claudeproc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// padLine builds a valid tool-result user line of exactly n bytes
// (newline excluded).
func padLine(t testing.TB, n int) []byte {
	t.Helper()
	head := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_big","content":"`
	tail := `","is_error":false}]},"session_id":"s1","uuid":"u1"}`
	fill := n - len(head) - len(tail)
	if fill < 0 {
		t.Fatalf("line too short: %d", n)
	}
	b := make([]byte, 0, n+1)
	b = append(b, head...)
	b = append(b, bytes.Repeat([]byte("a"), fill)...)
	b = append(b, tail...)
	return b
}

func TestReaderTolerance(t *testing.T) {
	textLine := `{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"hi"}]},"session_id":"s1"}`
	tests := []struct {
		name  string
		input string
		want  []string // describe() of each event
	}{
		{
			name:  "extra fields are ignored",
			input: `{"type":"system","subtype":"init","session_id":"s1","model":"m","cwd":"/x","tools":["Bash"],"future_field":{"nested":[1,2,{"x":null}]},"another":"y"}` + "\n",
			want:  []string{"system/init model=m mode= version= tools=1"},
		},
		{
			name:  "unknown type is surfaced",
			input: `{"type":"brand_new_thing","payload":{"a":1}}` + "\n" + textLine + "\n",
			want:  []string{"unknown brand_new_thing/", `assistant text="hi"`},
		},
		{
			name:  "unknown system subtype is surfaced",
			input: `{"type":"system","subtype":"hologram","session_id":"s1"}` + "\n",
			want:  []string{"unknown system/hologram"},
		},
		{
			name:  "wrong field types are skipped, the rest kept",
			input: `{"type":"result","subtype":"success","is_error":"nope","num_turns":"2","duration_ms":12,"result":"done","session_id":"s1"}` + "\n",
			want:  []string{`result success is_error=false terminal= turns=0 denials=0 api_status=0 result="done"`},
		},
		{
			name:  "wrong field types in a user line",
			input: `{"type":"user","session_id":7,"message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"out","is_error":"yes"}]}}` + "\n",
			want:  []string{`user tool_result(error=false len=3)="out"`},
		},
		{
			name:  "tool_result content as a list of blocks",
			input: `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}]}}` + "\n",
			want:  []string{`user tool_result(error=false len=11)="a\\n[image]\\nb"`},
		},
		{
			name:  "malformed line then reading goes on",
			input: "{\"type\":\"assistant\",\"message\":\n" + textLine + "\n" + "not json at all\n" + `["an","array"]` + "\n" + textLine + "\n",
			want: []string{
				"parse_error unexpected end of JSON input",
				`assistant text="hi"`,
				"parse_error invalid character 'o' in literal null (expecting 'u')",
				`parse_error line is not a JSON object with a string "type"`,
				`assistant text="hi"`,
			},
		},
		{
			name:  "blank lines, CRLF and a last line without newline",
			input: "\n\r\n" + textLine + "\r\n\n" + textLine,
			want:  []string{`assistant text="hi"`, `assistant text="hi"`},
		},
		{
			name:  "type not the first key",
			input: `{"session_id":"s1","uuid":"u","command_uuid":"c1","state":"queued","type":"command_lifecycle"}` + "\n",
			want:  []string{"command_lifecycle queued"},
		},
		{
			name:  "escapes and unicode in user text",
			input: `{"type":"user","message":{"content":[{"type":"text","text":"a\"b\\c\n\u00e9\ud83d\ude00\ud800x"}]}}` + "\n",
			want:  []string{"user text=\"a\\\"b\\\\c\\\\né😀\ufffdx\""},
		},
		{
			name:  "older protocol types",
			input: `{"type":"keep_alive"}` + "\n" + `{"type":"tool_progress","tool_use_id":"t","tool_name":"Bash","elapsed_time_seconds":3.5}` + "\n" + `{"type":"tool_use_summary","summary":"ran 2 tools","preceding_tool_use_ids":["a","b"]}` + "\n",
			want:  []string{"keep_alive", "tool_progress", "tool_use_summary"},
		},
		{
			name:  "compact boundary",
			input: `{"type":"system","subtype":"compact_boundary","compact_metadata":{"trigger":"auto","pre_tokens":12345},"session_id":"s"}` + "\n",
			want:  []string{"system/compact_boundary trigger=auto pre_tokens=12345 post_tokens=0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, ev := range readAll(t, strings.NewReader(tt.input), 0) {
				got = append(got, describe(ev))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestCompactBoundaryFields(t *testing.T) {
	evs := readAll(t, strings.NewReader(`{"type":"system","subtype":"compact_boundary","compact_metadata":{"trigger":"auto","pre_tokens":12345,"post_tokens":2345}}`+"\n"), 0)
	cb, ok := evs[0].(*CompactBoundary)
	if !ok || cb.Trigger != "auto" || cb.PreTokens != 12345 || cb.PostTokens != 2345 {
		t.Fatalf("got %#v", evs[0])
	}
}

func TestReaderLineCap(t *testing.T) {
	const capBytes = DefaultMaxLineBytes
	normal := `{"type":"system","subtype":"status","status":"requesting","session_id":"s1"}`

	t.Run("line one byte under the cap parses", func(t *testing.T) {
		line := padLine(t, capBytes-1)
		evs := readAll(t, io.MultiReader(bytes.NewReader(line), strings.NewReader("\n"+normal+"\n")), 0)
		if len(evs) != 2 {
			t.Fatalf("got %d events", len(evs))
		}
		u, ok := evs[0].(*User)
		if !ok || len(u.ToolResults) != 1 || u.ToolResults[0].ToolUseID != "toolu_big" {
			t.Fatalf("first event: %s", describe(evs[0]))
		}
		if _, ok := evs[1].(*SystemStatus); !ok {
			t.Fatalf("second event: %s", describe(evs[1]))
		}
	})

	t.Run("line at exactly the cap parses", func(t *testing.T) {
		evs := readAll(t, bytes.NewReader(append(padLine(t, capBytes), '\n')), 0)
		if _, ok := evs[0].(*User); !ok || len(evs) != 1 {
			t.Fatalf("got %s", describe(evs[0]))
		}
	})

	t.Run("12 MiB line is truncated and the next lines parse", func(t *testing.T) {
		const size = 12 << 20
		var logs bytes.Buffer
		rd := NewReader(io.MultiReader(
			bytes.NewReader(padLine(t, size)),
			strings.NewReader("\n"+normal+"\n"+normal+"\n"),
		), 0, slog.New(slog.NewTextHandler(&logs, nil)))
		var evs []Event
		for {
			ev, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
		if len(evs) != 3 {
			t.Fatalf("got %d events", len(evs))
		}
		tr, ok := evs[0].(*Truncated)
		if !ok {
			t.Fatalf("first event: %s", describe(evs[0]))
		}
		marker := fmt.Sprintf("[truncated: original_size=%d bytes]", size)
		if tr.OriginalSize != size || tr.Type != "user" || tr.ToolUseID != "toolu_big" || tr.SessionID != "" {
			t.Errorf("truncated = %+v", struct {
				Size            int64
				Type, Tool, Sid string
			}{tr.OriginalSize, tr.Type, tr.ToolUseID, tr.SessionID})
		}
		if !bytes.HasSuffix(tr.Prefix, []byte(marker)) || len(tr.Prefix) != capBytes+len(marker) {
			t.Errorf("prefix: len %d, ends %q", len(tr.Prefix), tr.Prefix[max(0, len(tr.Prefix)-60):])
		}
		for _, ev := range evs[1:] {
			if _, ok := ev.(*SystemStatus); !ok {
				t.Errorf("after the long line: %s", describe(ev))
			}
		}
		if !strings.Contains(logs.String(), "truncated") || !strings.Contains(logs.String(), "original_size=12582912") {
			t.Errorf("no truncation warning logged: %s", logs.String())
		}
	})

	t.Run("configurable cap", func(t *testing.T) {
		evs := readAll(t, strings.NewReader(string(padLine(t, 300))+"\n"+normal+"\n"), 200)
		if tr, ok := evs[0].(*Truncated); !ok || tr.OriginalSize != 300 || len(tr.Prefix) != 200+len("[truncated: original_size=300 bytes]") {
			t.Fatalf("got %s", describe(evs[0]))
		}
		if _, ok := evs[1].(*SystemStatus); !ok {
			t.Fatalf("got %s", describe(evs[1]))
		}
	})
}

// TestReaderTruncatedLineMemory: a line far over the cap is never held
// whole: reading it allocates about the cap, not the line.
func TestReaderTruncatedLineMemory(t *testing.T) {
	const size = 64 << 20
	r := io.MultiReader(strings.NewReader(`{"type":"user","x":"`), &repeatReader{data: bytes.Repeat([]byte("z"), 1<<20), n: size >> 20}, strings.NewReader("\"}\n"))
	allocs := testing.AllocsPerRun(1, func() {})
	_ = allocs
	var before, after runtimeMem
	before.read()
	evs := readAll(t, r, 1<<20)
	after.read()
	if tr, ok := evs[0].(*Truncated); !ok || tr.OriginalSize != size+int64(len(`{"type":"user","x":""}`)) {
		t.Fatalf("got %s", describe(evs[0]))
	}
	if grown := after.totalAlloc - before.totalAlloc; grown > 16<<20 {
		t.Errorf("reading a %d MiB line allocated %d MiB", size>>20, grown>>20)
	}
}

// TestUserDecoderMatchesEncodingJSON compares the hand-written user-line
// decoder with encoding/json on every user line of the real transcripts.
func TestUserDecoderMatchesEncodingJSON(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.ndjson"))
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if !bytes.Contains(line, []byte(`"type":"user"`)) {
				continue
			}
			n++
			compareUserDecoders(t, line)
		}
	}
	if n < 50 {
		t.Fatalf("only %d user lines found", n)
	}
}

func compareUserDecoders(t *testing.T, line []byte) {
	t.Helper()
	fast, ferr := decodeUserLine(line)
	var ref struct {
		Meta
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		IsReplay bool `json:"isReplay"`
	}
	rerr := json.Unmarshal(line, &ref)
	if (ferr != nil) != (rerr != nil) {
		// Type errors are tolerated by both; only syntax must agree.
		_, fTyped := any(ferr).(interface{ Unwrap() error })
		_ = fTyped
		if fast == nil || rerr == nil {
			t.Fatalf("fast err %v, encoding/json err %v for %s", ferr, rerr, truncateForLog(line))
		}
	}
	if fast == nil || rerr != nil {
		return
	}
	if fast.Meta != ref.Meta || fast.IsReplay != ref.IsReplay {
		t.Errorf("meta %+v != %+v", fast.Meta, ref.Meta)
	}
	var text string
	var blocks []ContentBlock
	if c := bytes.TrimSpace(ref.Message.Content); len(c) > 0 && c[0] == '"' {
		_ = json.Unmarshal(c, &text)
	} else if len(c) > 0 {
		_ = json.Unmarshal(c, &blocks)
	}
	if len(blocks) != len(fast.Blocks) {
		t.Fatalf("blocks %d != %d", len(fast.Blocks), len(blocks))
	}
	for i := range blocks {
		a, b := fast.Blocks[i], blocks[i]
		if a.Type != b.Type || a.Text != b.Text || a.ToolUseID != b.ToolUseID || a.Content != b.Content || a.IsError != b.IsError {
			t.Errorf("block %d: fast %+v, json %+v", i, a, b)
		}
	}
	if len(blocks) == 0 && fast.Text != text {
		t.Errorf("text %q != %q", fast.Text, text)
	}
}

// TestInitializeCommands: the slash commands of the real initialize
// response (2.1.330), with the aliases a person may type and whether each
// is the CLI's own.
func TestInitializeCommands(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtureDir, "initialize.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	var resp *InitializeResponse
	for _, ev := range readAll(t, bytes.NewReader(data), 0) {
		if cr, ok := ev.(*ControlResponse); ok && resp == nil {
			resp = &InitializeResponse{}
			if err := json.Unmarshal(cr.Response, resp); err != nil {
				t.Fatal(err)
			}
		}
	}
	if resp == nil {
		t.Fatal("no initialize response in the fixture")
	}
	byName := map[string]SlashCommand{}
	for _, c := range resp.Commands {
		byName[c.Name] = c
	}
	for _, tt := range []struct {
		name    string
		aliases []string
	}{
		{"compact", nil}, {"context", nil}, {"usage", []string{"cost", "stats"}}, {"clear", []string{"reset", "new"}}, {"model", nil},
	} {
		c, ok := byName[tt.name]
		if !ok || !c.Builtin || !slices.Equal(c.Aliases, tt.aliases) {
			t.Errorf("command %q: %+v (present %v), want builtin with aliases %q", tt.name, c, ok, tt.aliases)
		}
	}
}
