package claudeproc

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOverCapResultIsRead: a result line over the cap — a denied Write of
// 100 KiB rides in its permission_denials, and the CLI puts "type" late —
// still ends the turn: it is read from a copy with its long strings cut,
// keeping the fields the bot needs (the turn's usage, the subtype, the
// session). Without it the line was Truncated (type unknown) and the turn
// stayed open until its limit.
func TestOverCapResultIsRead(t *testing.T) {
	t.Parallel()
	const capBytes = 64 << 10
	big := strings.Repeat("é\\\"\\u00e9x", (100<<10)/10) // escapes and multi-byte characters at any cut
	result := `{"duration_ms":5,"session_id":"s1","total_cost_usd":0.5,"permission_denials":[{"tool_name":"Write","tool_use_id":"toolu_1","tool_input":{"file_path":"big.txt","content":"` + big + `"}}],` +
		`"is_error":false,"num_turns":2,"subtype":"success","result":"done","type":"result",` +
		`"model_usage_since_last_result":{"m":{"inputTokens":10,"outputTokens":2,"costUSD":0.25}}}`
	if !json.Valid([]byte(result)) {
		t.Fatal("the test's line is not JSON")
	}
	next := `{"type":"system","subtype":"status","status":"requesting","session_id":"s1"}`
	tooMany := `{"type":"result","a":[` + strings.Repeat(`"x",`, capBytes/4) + `"x"]}` // short strings, still over the cap
	userOver := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"` + strings.Repeat("y", capBytes+10) + `"}]}}`

	evs := readAll(t, strings.NewReader(result+"\n"+next+"\n"+tooMany+"\n"+userOver+"\n"+next+"\n"), capBytes)
	if len(evs) != 5 {
		t.Fatalf("got %d events", len(evs))
	}
	res, ok := evs[0].(*Result)
	if !ok {
		t.Fatalf("the result over the cap: %s", describe(evs[0]))
	}
	if res.Subtype != "success" || res.SessionID != "s1" || res.Result != "done" || res.TurnCostUSD() != 0.25 || len(res.PermissionDenials) != 1 {
		t.Errorf("result read as %s, cost %g, denials %d", describe(res), res.TurnCostUSD(), len(res.PermissionDenials))
	}
	if _, ok := evs[1].(*SystemStatus); !ok {
		t.Errorf("after it: %s", describe(evs[1]))
	}
	if tr, ok := evs[2].(*Truncated); !ok || tr.OriginalSize != int64(len(tooMany)) {
		t.Errorf("a result still over the cap when shortened: %s", describe(evs[2]))
	}
	if tr, ok := evs[3].(*Truncated); !ok || tr.ToolUseID != "toolu_2" {
		t.Errorf("a user line over the cap stays Truncated: %s", describe(evs[3]))
	}
	if _, ok := evs[4].(*SystemStatus); !ok {
		t.Errorf("at the end: %s", describe(evs[4]))
	}
}

// TestShortenerKeepsJSON: wherever the cut falls (escapes, \u sequences,
// multi-byte characters), the shortened line is valid JSON and keeps the
// head of each long string.
func TestShortenerKeepsJSON(t *testing.T) {
	t.Parallel()
	for _, unit := range []string{"a", "é", "\\\"", "\\\\", "\\u00e9", "\\ud83d\\ude00", "😀", "\\n"} {
		for pad := range 7 {
			s := strings.Repeat("p", pad) + strings.Repeat(unit, 3*keepString/len(unit))
			line := `{"k":"` + s + `","n":1,"o":{"x":"short"}}`
			var sh shortener
			sh.reset(1 << 20)
			sh.active = true
			for i := 0; i < len(line); i += 997 { // fed in pieces, as the reader does
				sh.feed([]byte(line[i:min(i+997, len(line))]))
			}
			out, ok := sh.result()
			var v struct {
				K string         `json:"k"`
				N int            `json:"n"`
				O map[string]any `json:"o"`
			}
			if !ok || json.Unmarshal(out, &v) != nil {
				t.Fatalf("unit %q pad %d: not JSON: …%s", unit, pad, out[max(0, len(out)-80):])
			}
			if v.N != 1 || v.O["x"] != "short" || !strings.Contains(v.K, " bytes cut]") || len(out) > keepString+200 {
				t.Errorf("unit %q pad %d: %d bytes, n %d, o %v", unit, pad, len(out), v.N, v.O)
			}
		}
	}
}
