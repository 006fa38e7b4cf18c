package fakeslack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// --- response_url ---

func (s *Server) handleResponseURL(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.Trim(r.URL.Path, "/"), "/", 3) // kind/team/id
	var body map[string]any
	var decodeErr error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		decodeErr = json.NewDecoder(r.Body).Decode(&body)
	} else if err := r.ParseForm(); err == nil && r.PostForm.Get("payload") != "" {
		decodeErr = json.Unmarshal([]byte(r.PostForm.Get("payload")), &body)
	} else {
		decodeErr = fmt.Errorf("no JSON body")
	}
	s.mu.Lock()
	var ru *responseURL
	if len(parts) == 3 {
		ru = s.responses[parts[2]]
	}
	status, answer := http.StatusOK, map[string]any{"ok": true}
	switch {
	case ru == nil:
		s.violateLocked("POST to unknown response_url %s", r.URL.Path)
		status, answer = http.StatusNotFound, map[string]any{"ok": false, "error": "invalid_url"}
	case decodeErr != nil:
		s.violateLocked("response_url %s: body is not JSON: %v", r.URL.Path, decodeErr)
		status, answer = http.StatusBadRequest, map[string]any{"ok": false, "error": "invalid_payload"}
	case ru.uses >= 5 || time.Since(ru.created) > 30*time.Minute:
		s.violateLocked("response_url %s used %d times / after %v (allowed: 5 times within 30 minutes)", r.URL.Path, ru.uses+1, time.Since(ru.created).Round(time.Second))
		status, answer = http.StatusNotFound, map[string]any{"ok": false, "error": "used_url"}
	default:
		ru.uses++
		if _, code := s.respondLocked(ru, body); code != "" {
			s.violateLocked("response_url %s answered %s", r.URL.Path, code)
			answer = map[string]any{"ok": false, "error": code}
		}
	}
	s.notifyLocked()
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(answer)
}

// respondLocked applies a response_url (or slash-command ack) message:
// delete_original, replace_original, or a new message — ephemeral to the
// user unless response_type is "in_channel".
func (s *Server) respondLocked(ru *responseURL, body map[string]any) (*msg, string) {
	ch := s.channels[ru.channel]
	if ch == nil {
		return nil, "channel_not_found"
	}
	p := params{}
	for _, k := range []string{"text", "blocks", "attachments", "thread_ts"} {
		if v, ok := body[k]; ok && v != nil {
			p[k] = v
		}
	}
	truthy := func(k string) bool { b, _ := body[k].(bool); return b || body[k] == "true" }
	var orig *msg
	if ru.msgTS != "" {
		if ru.ephemeral {
			for _, m := range ch.ephemerals {
				if m.ts == ru.msgTS && !m.deleted {
					orig = m
				}
			}
		} else {
			orig = ch.get(ru.msgTS)
		}
	}
	if truthy("delete_original") {
		if orig == nil {
			return nil, "message_not_found"
		}
		prev := s.wireLocked(nil, orig)
		orig.deleted = true
		if !ru.ephemeral {
			s.echoDeletedLocked(ch, orig, prev)
		}
		return orig, ""
	}
	c, fail := s.parseContentLocked("response_url", p, true)
	if fail != nil {
		return nil, fail.errCode()
	}
	if truthy("replace_original") && orig != nil {
		prev := s.wireLocked(nil, orig)
		orig.text = c.text
		orig.blocks = c.blocks
		if c.hasAttachments {
			orig.attachments = c.attachments
		}
		if !ru.ephemeral {
			orig.editedBy, orig.editedTS = s.Opts.BotUserID, s.newTS()
			s.echoChangedLocked(ch, orig, prev)
		}
		s.wroteLocked("response_url", orig)
		return orig, ""
	}
	m := s.botMsgLocked(ch)
	m.text, m.blocks, m.attachments = c.text, c.blocks, c.attachments
	threadTS := ru.threadTS
	if t := p.str("thread_ts"); t != "" {
		threadTS = t
	}
	if str(body["response_type"]) == "in_channel" {
		s.threadLocked(ch, m, threadTS)
		ch.add(m)
		s.echoNewLocked(ch, m)
		s.wroteLocked("response_url", m)
		return m, ""
	}
	m.ephemeralUser = ru.user
	if root := ch.threadRoot(threadTS); root != nil {
		m.threadTS = root.ts
	}
	ch.ephemerals = append(ch.ephemerals, m)
	s.wroteLocked("response_url", m)
	return m, ""
}
