package fakeslack

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Errors that mean the app sent something Slack rejects: each is a Violation.
var violationErrors = map[string]bool{
	"invalid_blocks": true, "invalid_blocks_format": true, "msg_blocks_too_long": true,
	"msg_too_long": true, "markdown_text_conflict": true, "no_text": true, "invalid_chunks": true,
	"invalid_arguments": true, "missing_recipient_user_id": true, "missing_recipient_team_id": true,
	"streaming_state_conflict": true, "invalid_attachments": true, "too_many_attachments": true,
	"not_authed": true, "invalid_auth": true, "not_allowed_token_type": true, "unknown_method": true,
	"invalid_form_data": true, "invalid_name": true, "invalid_metadata_format": true,
}

type apiMethod struct {
	appToken bool // needs the app-level token
	fn       func(s *Server, p params) result
}

var apiMethods = map[string]apiMethod{
	"auth.test":                             {fn: (*Server).apiAuthTest},
	"apps.connections.open":                 {appToken: true, fn: (*Server).apiConnectionsOpen},
	"chat.postMessage":                      {fn: (*Server).apiPostMessage},
	"chat.update":                           {fn: (*Server).apiUpdate},
	"chat.delete":                           {fn: (*Server).apiDelete},
	"chat.postEphemeral":                    {fn: (*Server).apiPostEphemeral},
	"chat.startStream":                      {fn: (*Server).apiStartStream},
	"chat.appendStream":                     {fn: (*Server).apiAppendStream},
	"chat.stopStream":                       {fn: (*Server).apiStopStream},
	"chat.getPermalink":                     {fn: (*Server).apiGetPermalink},
	"assistant.threads.setStatus":           {fn: (*Server).apiSetStatus},
	"assistant.threads.setTitle":            {fn: (*Server).apiAssistantNoop},
	"assistant.threads.setSuggestedPrompts": {fn: (*Server).apiAssistantNoop},
	"reactions.add":                         {fn: (*Server).apiReactionsAdd},
	"reactions.remove":                      {fn: (*Server).apiReactionsRemove},
	"users.info":                            {fn: (*Server).apiUsersInfo},
	"conversations.info":                    {fn: (*Server).apiConversationsInfo},
	"conversations.replies":                 {fn: (*Server).apiConversationsReplies},
	"conversations.history":                 {fn: (*Server).apiConversationsHistory},
	"conversations.open":                    {fn: (*Server).apiConversationsOpen},
	"files.getUploadURLExternal":            {fn: (*Server).apiGetUploadURL},
	"files.completeUploadExternal":          {fn: (*Server).apiCompleteUpload},
}

func (s *Server) handleAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	now := time.Now()
	p, isJSON, parseErr := parseParams(r)

	token := ""
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		token = strings.TrimPrefix(h, "Bearer ")
	} else if !isJSON { // Slack ignores a token inside a JSON body
		token = p.str("token")
	}
	tokenInQuery := r.URL.Query().Get("token") != ""
	delete(p, "token")
	s.holdFor(method, r.Context().Done())

	s.mu.Lock()
	res := s.dispatchLocked(method, p, token, parseErr, now)
	if tokenInQuery {
		s.violateLocked("%s: token passed in the query string (Slack rejects that for new apps)", method)
	}
	if isJSON && !strings.Contains(strings.ToLower(r.Header.Get("Content-Type")), "charset") {
		// What Slack answers to a JSON body without a charset.
		res.body["warning"] = "missing_charset"
		md, _ := res.body["response_metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
			res.body["response_metadata"] = md
		}
		md["warnings"] = []string{"missing_charset"}
	}
	code := res.errCode()
	if violationErrors[code] {
		detail := ""
		if msgs := res.messages(); len(msgs) > 0 {
			detail = ": " + strings.Join(msgs, "; ")
		}
		s.violateLocked("%s answered %s%s", method, code, detail)
	}
	s.calls = append(s.calls, Call{Method: method, Params: map[string]any(p), Time: now, Status: res.status, Error: code, Messages: res.messages()})
	s.notifyLocked()
	s.mu.Unlock()

	body, _ := json.Marshal(res.body)
	s.logf("%s %v → %d %s", method, p, res.status, body)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if res.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(res.retryAfter))
	}
	w.WriteHeader(res.status)
	_, _ = w.Write(body)
	if res.status == http.StatusTooManyRequests {
		s.answered429(method, p)
	}
}

func (s *Server) dispatchLocked(method string, p params, token string, parseErr error, now time.Time) result {
	if s.closed {
		return errRes("service_unavailable")
	}
	m, ok := apiMethods[method]
	if !ok {
		r := errRes("unknown_method")
		r.body["req_method"] = method
		return r
	}
	if parseErr != nil {
		return errRes("invalid_form_data")
	}
	switch {
	case token == "":
		return errRes("not_authed")
	case m.appToken && token == s.Opts.BotToken, !m.appToken && token == s.Opts.AppToken:
		return errRes("not_allowed_token_type")
	case m.appToken && token != s.Opts.AppToken, !m.appToken && token != s.Opts.BotToken:
		return errRes("invalid_auth")
	}
	if ra := s.rateLimitLocked(method, p, now); ra > 0 {
		r := errRes("ratelimited")
		r.status, r.retryAfter = http.StatusTooManyRequests, ra
		return r
	}
	if fs := s.faults[method]; len(fs) > 0 {
		f := fs[0]
		if f.Times--; f.Times <= 0 {
			s.faults[method] = fs[1:]
		} else {
			fs[0] = f
		}
		r := errRes(f.Error)
		r.status, r.retryAfter = f.Status, f.RetryAfter
		if f.Status == http.StatusTooManyRequests && f.RetryAfter > 0 {
			key, _, _, ok := limitFor(method, p)
			if !ok {
				key = method
			}
			until := now.Add(time.Duration(f.RetryAfter) * time.Second)
			s.windows[key] = window{until: until, retryAfter: f.RetryAfter, at: until} // at: once answered
		}
		return r
	}
	return m.fn(s, p)
}

// --- identity and connections ---

func (s *Server) apiAuthTest(params) result {
	return okRes(map[string]any{
		"url":                   "https://" + s.Opts.TeamDomain + ".slack.com/",
		"team":                  s.Opts.TeamName,
		"user":                  s.Opts.BotName,
		"team_id":               s.Opts.TeamID,
		"user_id":               s.Opts.BotUserID,
		"bot_id":                s.Opts.BotID,
		"is_enterprise_install": false,
	})
}

func (s *Server) apiConnectionsOpen(params) result {
	ticket := newUUID()
	s.tickets[ticket] = time.Now()
	u := strings.Replace(s.URL, "http://", "ws://", 1) + "/link/?ticket=" + ticket + "&app_id=" + s.Opts.AppID
	return okRes(map[string]any{"url": u})
}

// --- channels ---

// postChannelLocked resolves the channel argument of a posting method.
func (s *Server) postChannelLocked(id string) (*channelState, string) {
	if id == "" {
		return nil, "channel_not_found"
	}
	if strings.HasPrefix(id, "U") || strings.HasPrefix(id, "W") {
		if _, ok := s.users[id]; !ok {
			return nil, "channel_not_found"
		}
		return s.imChannelLocked(id), ""
	}
	ch := s.channelLocked(id)
	if ch == nil {
		return nil, "channel_not_found"
	}
	if ch.NotMember {
		if ch.Type == "channel" {
			return nil, "not_in_channel"
		}
		return nil, "channel_not_found"
	}
	if ch.Archived {
		return nil, "is_archived"
	}
	return ch, ""
}

// channelLocked finds a channel by ID or #name.
func (s *Server) channelLocked(id string) *channelState {
	if ch := s.channels[id]; ch != nil {
		return ch
	}
	name := strings.TrimPrefix(id, "#")
	for _, cid := range s.chanOrder {
		if ch := s.channels[cid]; ch.Name == name && ch.Type != "im" {
			return ch
		}
	}
	return nil
}

// readChannelLocked resolves a channel the bot reads (history, info).
func (s *Server) readChannelLocked(id string) (*channelState, string) {
	ch := s.channelLocked(id)
	if ch == nil || (ch.NotMember && ch.Type != "channel") {
		return nil, "channel_not_found"
	}
	return ch, ""
}
