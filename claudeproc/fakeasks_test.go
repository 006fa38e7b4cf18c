package claudeproc

import (
	"encoding/json"
	"strings"
)

// fakeBigInput is the size of the Write content the fake asks about: over
// the lowest line cap the bot takes (64 KiB).
const fakeBigInput = 100 << 10

// ask writes the control request text names, in the order the real CLI
// writes its fields (type, request_id, then the request: subtype,
// tool_name, display_name, input, …, tool_use_id); false if text names
// none.
func (f *fakeCLI) ask(text string) bool {
	switch text {
	case "big-ask":
		input, _ := json.Marshal(map[string]string{"file_path": "/fake/big.txt", "content": strings.Repeat("a", fakeBigInput)})
		f.emitRaw([]byte(`{"type":"control_request","request_id":"req-big","request":{"subtype":"can_use_tool",` +
			`"tool_name":"Write","display_name":"Write","input":` + string(input) +
			`,"permission_suggestions":[],"tool_use_id":"toolu_big"}}`))
	case "malformed-ask": // a stray byte after the request: not JSON
		f.emitRaw([]byte(`{"type":"control_request","request_id":"req-bad","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"true"}}}}`))
	case "malformed-future-ask":
		f.emitRaw([]byte(`{"type":"control_request","request_id":"req-bad2","request":{"subtype":"fake_future_request","payload":{"a":1,}}}`))
	case "future-ask":
		f.emitRaw([]byte(`{"type":"control_request","request_id":"req-future","request":{"subtype":"fake_future_request","payload":{"a":1}}}`))
	default:
		return false
	}
	return true
}

// answered prints the answer the fake got and ends the turn.
func (f *fakeCLI) answered(line []byte) {
	f.emit(map[string]any{"type": "fake_answer", "answer": json.RawMessage(line)})
	f.finishTurn("success", false, "answered")
}
