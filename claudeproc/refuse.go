package claudeproc

import "fmt"

// The control requests the process cannot pass on are answered here, on
// the reader, as screenMCP does (one short line; the CLI reads stdin while
// it writes stdout): silence would hold the CLI's turn until the turn limit.

// knownRequests are the control_request subtypes the bot answers:
// can_use_tool (the bot's approvals) and mcp_message (mcp.go).
var knownRequests = map[string]bool{"can_use_tool": true, "mcp_message": true}

// refuseUnknown answers a control request of a subtype the bot does not
// know (a newer CLI's) with an error, as the CLI itself answers one it does
// not know; logged once per subtype. It reports whether it did; such a
// request is not passed on.
func (p *Process) refuseUnknown(ev Event) bool {
	cr, ok := ev.(*ControlRequest)
	if !ok || knownRequests[cr.Subtype] {
		return false
	}
	if !p.unknownSeen[cr.Subtype] {
		p.unknownSeen[cr.Subtype] = true
		p.log.Warn("claude: control request of an unknown subtype answered with an error", "subtype", cr.Subtype, "request", cr.RequestID)
	}
	if cr.RequestID == "" {
		return true
	}
	if err := p.RespondError(cr.RequestID, "Unsupported control request subtype: "+cr.Subtype); err != nil {
		p.log.Warn("claude: answer an unknown control request", "request", cr.RequestID, "err", err)
	}
	return true
}

// refuseTruncated answers a control request longer than the line cap: the
// reader kept only its head, so it cannot be shown or decided. A
// can_use_tool is denied saying why (the model can try smaller pieces),
// any other subtype gets an error. The event goes on, with Refused set, so
// that the thread is told.
func (p *Process) refuseTruncated(ev Event) {
	t, ok := ev.(*Truncated)
	if !ok || t.Type != "control_request" {
		return
	}
	id, sub, tool, _ := controlHead(t.Prefix)
	t.RequestID, t.Subtype, t.ToolName = id, sub, tool
	limit := p.opts.MaxLineBytes
	if limit <= 0 {
		limit = DefaultMaxLineBytes
	}
	if id == "" {
		p.log.Error("claude: a control request over the line cap names no request_id in its head; it cannot be answered",
			"subtype", sub, "size", t.OriginalSize)
		return
	}
	var msg string
	if sub == "can_use_tool" {
		msg = fmt.Sprintf("Denied without asking anyone: this %s request is %d bytes, over the bot's limit of %d bytes for one message from Claude Code (CLAUDEOPS_MAX_LINE_BYTES), too large to show to a person for a decision. Make the change in smaller pieces.",
			orUnnamed(tool), t.OriginalSize, limit)
	} else {
		msg = fmt.Sprintf("control request %q of %d bytes is over the bot's line limit of %d bytes", sub, t.OriginalSize, limit)
	}
	t.Refused = msg
	p.refuseControl(id, sub, msg, "over the line cap", "tool", tool, "size", t.OriginalSize)
}

// refuseControl answers control request id, which cannot be passed on
// (why), with msg: a can_use_tool is denied (the model reads msg as the
// tool's result), any other subtype gets an error response.
func (p *Process) refuseControl(id, sub, msg, why string, logArgs ...any) {
	var err error
	if sub == "can_use_tool" {
		err = p.Deny(id, msg, false)
	} else {
		err = p.RespondError(id, msg)
	}
	p.log.Warn("claude: a control request "+why+" was refused", append([]any{"request", id, "subtype", sub}, logArgs...)...)
	if err != nil {
		p.log.Warn("claude: answer a control request "+why, "request", id, "err", err)
	}
}

func orUnnamed(tool string) string {
	if tool == "" {
		return "tool"
	}
	return tool
}

// refuseMalformed answers a control request line that is not valid JSON
// (a ParseError whose head reads as one): it cannot be decided, and
// silence would hold the CLI's turn until the turn limit. A can_use_tool
// is denied saying why, any other subtype gets an error; the ParseError
// goes on to the thread as before. A line whose head names no request_id
// cannot be answered.
func (p *Process) refuseMalformed(ev Event) {
	pe, ok := ev.(*ParseError)
	if !ok {
		return
	}
	id, sub, tool, typ := controlHead(pe.Line)
	if typ != "control_request" || id == "" {
		return
	}
	msg := fmt.Sprintf("control request %q was not valid JSON", sub)
	if sub == "can_use_tool" {
		msg = "Denied without asking anyone: Claude Code's " + orUnnamed(tool) + " request was not valid JSON, so it could not be shown to a person."
	}
	p.refuseControl(id, sub, msg, "that is not valid JSON", "tool", tool, "err", pe.Err)
}

// controlHead reads a control line's envelope type and request_id and its
// request's subtype and tool_name from the line's head, which may be cut
// anywhere. The CLI writes the envelope's fields, then the request's short
// ones, before the input; only keys at their own depth count, so a key of
// the same name inside the input is never taken.
func controlHead(b []byte) (requestID, subtype, toolName, typ string) {
	s := scanner{b: b}
	fields := func(want map[string]*string, nested string, inner func()) bool {
		s.ws()
		if !s.eat('{') {
			return false
		}
		for {
			s.ws()
			key, ok := s.str()
			if !ok {
				return false
			}
			s.ws()
			if !s.eat(':') {
				return false
			}
			s.ws()
			switch dst := want[key]; {
			case dst != nil && s.peek() == '"':
				v, ok := s.str()
				if !ok {
					return false
				}
				*dst = v
			case key == nested && inner != nil:
				inner()
				return false // the request holds the big input: stop after it
			default:
				if !s.skipValue() {
					return false
				}
			}
			s.ws()
			if !s.eat(',') {
				return false
			}
		}
	}
	fields(map[string]*string{"request_id": &requestID, "type": &typ}, "request", func() {
		fields(map[string]*string{"subtype": &subtype, "tool_name": &toolName}, "", nil)
	})
	return requestID, subtype, toolName, typ
}
