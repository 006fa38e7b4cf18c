package fakeslack

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// params are a call's arguments: form fields as strings, JSON bodies as
// decoded JSON values.
type params map[string]any

func (p params) has(k string) bool { _, ok := p[k]; return ok }

func (p params) str(k string) string {
	v, ok := p[k]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (p params) boolean(k string) bool {
	v := p[k]
	if b, ok := v.(bool); ok {
		return b
	}
	s := strings.ToLower(p.str(k))
	return s == "true" || s == "1"
}

// isFalse: the argument is present and false ("false" or "0" in a form,
// false in a JSON body).
func (p params) isFalse(k string) bool {
	v, ok := p[k]
	if !ok {
		return false
	}
	if b, ok := v.(bool); ok {
		return !b
	}
	s := strings.ToLower(p.str(k))
	return s == "false" || s == "0"
}

// jsonArg decodes a JSON argument: a JSON-encoded string (form) or an
// already decoded value (JSON body).
func (p params) jsonArg(k string) (any, error) {
	v := p[k]
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	var out any
	err := json.Unmarshal([]byte(s), &out)
	return out, err
}

// parseParams reads a Web API request's arguments: query string, then a
// urlencoded, multipart or JSON body.
func parseParams(r *http.Request) (params, bool, error) {
	p := params{}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			p[k] = v[0]
		}
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	isJSON := false
	switch {
	case r.Method == http.MethodGet:
	case ct == "application/json":
		isJSON = true
		body, err := io.ReadAll(io.LimitReader(r.Body, 10<<20))
		if err != nil {
			return p, isJSON, err
		}
		if len(strings.TrimSpace(string(body))) == 0 {
			break
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return p, isJSON, err
		}
		for k, v := range m {
			p[k] = v
		}
	case ct == "multipart/form-data":
		if err := r.ParseMultipartForm(10 << 20); err != nil {
			return p, isJSON, err
		}
		for k, v := range r.MultipartForm.Value {
			if len(v) > 0 {
				p[k] = v[0]
			}
		}
	default:
		if err := r.ParseForm(); err != nil {
			return p, isJSON, err
		}
		for k, v := range r.PostForm {
			if len(v) > 0 {
				p[k] = v[0]
			}
		}
	}
	return p, isJSON, nil
}

// result is a Web API answer.
type result struct {
	status     int
	body       map[string]any
	retryAfter int
}

func okRes(kv map[string]any) result {
	body := map[string]any{"ok": true}
	for k, v := range kv {
		body[k] = v
	}
	return result{status: http.StatusOK, body: body}
}

func errRes(code string) result {
	return result{status: http.StatusOK, body: map[string]any{"ok": false, "error": code}}
}

func errMsgs(code string, msgs ...string) result {
	r := errRes(code)
	r.body["response_metadata"] = map[string]any{"messages": msgs}
	return r
}

func (r result) errCode() string {
	if ok, _ := r.body["ok"].(bool); ok {
		return ""
	}
	s, _ := r.body["error"].(string)
	return s
}

func (r result) messages() []string {
	md, _ := r.body["response_metadata"].(map[string]any)
	msgs, _ := md["messages"].([]string)
	return msgs
}

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

// --- message content ---

type content struct {
	text, markdown                  string
	hasText, hasMarkdown, hasBlocks bool
	blocks                          json.RawMessage // normalized; nil if none/empty
	attachments                     json.RawMessage
	hasAttachments                  bool
	truncated                       bool
	metadata                        json.RawMessage
}

// parseContentLocked validates text / blocks / markdown_text / attachments
// as Slack does. With truncate, text past MaxText is truncated
// (chat.postMessage); without, text past MaxUpdateText is msg_too_long.
func (s *Server) parseContentLocked(method string, p params, truncate bool) (content, *result) {
	var c content
	fail := func(r result) (content, *result) { return c, &r }

	c.text, c.hasText = p.str("text"), p.str("text") != ""
	c.markdown, c.hasMarkdown = p.str("markdown_text"), p.has("markdown_text")

	var blockList []any
	if p.has("blocks") && p.str("blocks") != "" {
		v, err := p.jsonArg("blocks")
		arr, isArr := v.([]any)
		if err != nil || !isArr {
			return fail(errRes("invalid_blocks_format"))
		}
		blockList = arr
		c.hasBlocks = true
	}
	if c.hasMarkdown && (c.hasText || len(blockList) > 0) {
		return fail(errRes("markdown_text_conflict"))
	}
	if c.hasMarkdown && runes(c.markdown) > MaxMarkdownText {
		return fail(errRes("msg_too_long"))
	}
	if c.hasBlocks {
		chk := validateBlocks(blockList, "/blocks")
		if len(chk.errs) > 0 {
			return fail(errMsgs("invalid_blocks", chk.errs...))
		}
		if chk.totalText > MaxBlocksTotalText {
			return fail(errRes("msg_blocks_too_long"))
		}
		if len(blockList) > 0 {
			c.blocks = normalizeBlocks(blockList)
		}
	}
	if p.has("attachments") && p.str("attachments") != "" {
		v, err := p.jsonArg("attachments")
		arr, isArr := v.([]any)
		if err != nil || !isArr {
			return fail(errRes("invalid_attachments"))
		}
		if len(arr) > MaxAttachments {
			return fail(errRes("too_many_attachments"))
		}
		if len(arr) > 0 {
			c.attachments, _ = json.Marshal(arr)
			c.hasAttachments = true
		}
	}
	if p.has("metadata") && p.str("metadata") != "" {
		v, err := p.jsonArg("metadata")
		if _, isObj := v.(map[string]any); err != nil || !isObj {
			return fail(errRes("invalid_metadata_format"))
		}
		c.metadata, _ = json.Marshal(v)
	}
	if runes(c.text) > MaxText && truncate {
		s.violateLocked("%s: text of %d characters truncated to %d", method, runes(c.text), MaxText)
		c.text, c.truncated = truncateRunes(c.text, MaxText), true
	} else if !truncate && runes(c.text) > MaxUpdateText {
		return fail(errRes("msg_too_long"))
	}
	if !c.hasText && c.blocks == nil && !c.hasAttachments && (!c.hasMarkdown || c.markdown == "") {
		return fail(errRes("no_text"))
	}
	if c.hasMarkdown {
		c.text = c.markdown
	}
	return c, nil
}

func (s *Server) botMsgLocked(ch *channelState) *msg {
	return &msg{channel: ch.ID, ts: s.newTS(), user: s.Opts.BotUserID, botID: s.Opts.BotID, appID: s.Opts.AppID}
}

// threadLocked attaches m to the thread named by threadTS: the parent of a
// reply's ts; unthreaded if the parent doesn't exist (or was deleted).
func (s *Server) threadLocked(ch *channelState, m *msg, threadTS string) {
	if threadTS == "" {
		return
	}
	root := ch.threadRoot(threadTS)
	if root == nil {
		s.logf("thread_ts %s in %s: no such message, posted unthreaded", threadTS, ch.ID)
		return
	}
	root.threadTS = root.ts
	m.threadTS = root.ts
	m.parentUser = root.user
	delete(s.statuses, ch.ID+"/"+root.ts) // the bot's reply clears the thread status
}

func (s *Server) apiPostMessage(p params) result {
	s.noUnfurlLocked("chat.postMessage", p)
	ch, code := s.postChannelLocked(p.str("channel"))
	if code != "" {
		return errRes(code)
	}
	c, fail := s.parseContentLocked("chat.postMessage", p, true)
	if fail != nil {
		return *fail
	}
	m := s.botMsgLocked(ch)
	m.text, m.markdown, m.blocks, m.attachments, m.metadata = c.text, c.markdown, c.blocks, c.attachments, c.metadata
	m.username = p.str("username")
	s.threadLocked(ch, m, p.str("thread_ts"))
	if m.threadTS != "" && p.boolean("reply_broadcast") {
		m.subtype = "thread_broadcast"
	}
	ch.add(m)
	s.echoNewLocked(ch, m)
	s.wroteLocked("chat.postMessage", m)
	return okRes(map[string]any{"channel": ch.ID, "ts": m.ts, "message": s.wireLocked(ch, m)})
}

// ownMessageLocked finds a message of the bot for update/delete/streams.
func (s *Server) ownMessageLocked(p params, tsArg string, notOwned string) (*channelState, *msg, string) {
	ch := s.channelLocked(p.str("channel"))
	if ch == nil || (ch.NotMember && ch.Type != "channel") {
		if u := p.str("channel"); strings.HasPrefix(u, "U") {
			ch = s.imChannelLocked(u)
		} else {
			return nil, nil, "channel_not_found"
		}
	}
	m := ch.get(p.str(tsArg))
	if m == nil {
		return ch, nil, "message_not_found"
	}
	if m.botID != s.Opts.BotID {
		return ch, m, notOwned
	}
	return ch, m, ""
}

func (s *Server) apiUpdate(p params) result {
	ch, m, code := s.ownMessageLocked(p, "ts", "cant_update_message")
	if code != "" {
		return errRes(code)
	}
	if ch.Archived {
		return errRes("is_inactive")
	}
	m.expireStream(time.Now())
	if m.streaming {
		return errRes("streaming_state_conflict")
	}
	c, fail := s.parseContentLocked("chat.update", p, false)
	if fail != nil {
		return *fail
	}
	prev := s.wireLocked(ch, m)
	switch {
	case c.hasMarkdown:
		m.markdown, m.text, m.blocks = c.markdown, c.markdown, nil
	default:
		if c.hasText {
			m.text = c.text
			m.markdown = ""
		}
		// Without blocks the old blocks stay (SLACK.md §7.6); blocks=[] clears them.
		if c.hasBlocks {
			m.blocks = c.blocks
		}
	}
	if c.hasAttachments {
		m.attachments = c.attachments
	}
	if c.metadata != nil {
		m.metadata = c.metadata
	}
	if !c.hasBlocks {
		m.editedBy, m.editedTS = s.Opts.BotUserID, s.newTS()
	}
	s.echoChangedLocked(ch, m, prev)
	s.wroteLocked("chat.update", m)
	return okRes(map[string]any{"channel": ch.ID, "ts": m.ts, "text": m.text, "message": s.wireLocked(ch, m)})
}

func (s *Server) apiDelete(p params) result {
	ch, m, code := s.ownMessageLocked(p, "ts", "cant_delete_message")
	if code != "" {
		return errRes(code)
	}
	prev := s.wireLocked(ch, m)
	m.deleted = true
	s.echoDeletedLocked(ch, m, prev)
	return okRes(map[string]any{"channel": ch.ID, "ts": m.ts})
}

func (s *Server) apiPostEphemeral(p params) result {
	ch, code := s.postChannelLocked(p.str("channel"))
	if code != "" {
		return errRes(code)
	}
	user := p.str("user")
	if _, ok := s.users[user]; !ok {
		return errRes("user_not_found")
	}
	if !ch.isMember(user) {
		return errRes("user_not_in_channel")
	}
	c, fail := s.parseContentLocked("chat.postEphemeral", p, false)
	if fail != nil {
		return *fail
	}
	m := s.botMsgLocked(ch)
	m.text, m.markdown, m.blocks, m.attachments = c.text, c.markdown, c.blocks, c.attachments
	m.ephemeralUser = user
	if tts := p.str("thread_ts"); tts != "" {
		if root := ch.threadRoot(tts); root != nil {
			m.threadTS = root.ts
		}
	}
	ch.ephemerals = append(ch.ephemerals, m)
	s.wroteLocked("chat.postEphemeral", m)
	return okRes(map[string]any{"message_ts": m.ts})
}

// --- streams ---

func (s *Server) streamChunksLocked(m *msg, p params) *result {
	if !p.has("chunks") || p.str("chunks") == "" {
		return nil
	}
	v, err := p.jsonArg("chunks")
	arr, ok := v.([]any)
	if err != nil || !ok {
		r := errRes("invalid_chunks")
		return &r
	}
	var texts []string
	var others []json.RawMessage
	for i, c := range arr {
		cm, ok := c.(map[string]any)
		if !ok {
			r := errMsgs("invalid_chunks", fmt.Sprintf("[ERROR] must provide an object [json-pointer:/chunks/%d]", i))
			return &r
		}
		switch cm["type"] {
		case "markdown_text":
			t := str(cm["text"])
			if runes(t) > MaxMarkdownText {
				r := errRes("msg_too_long")
				return &r
			}
			texts = append(texts, t)
		case "task_update":
			if str(cm["id"]) == "" || str(cm["title"]) == "" {
				r := errMsgs("invalid_chunks", fmt.Sprintf("[ERROR] missing required field: id/title [json-pointer:/chunks/%d]", i))
				return &r
			}
			b, _ := json.Marshal(cm)
			others = append(others, b)
		case "plan_update":
			b, _ := json.Marshal(cm)
			others = append(others, b)
		case "blocks":
			bl, _ := cm["blocks"].([]any)
			if len(bl) > MaxBlocks {
				r := errMsgs("invalid_chunks", fmt.Sprintf("[ERROR] no more than 50 items allowed [json-pointer:/chunks/%d/blocks]", i))
				return &r
			}
			b, _ := json.Marshal(cm)
			others = append(others, b)
		default:
			r := errMsgs("invalid_chunks", fmt.Sprintf("[ERROR] must be a valid enum value [json-pointer:/chunks/%d/type]", i))
			return &r
		}
	}
	for _, t := range texts {
		m.markdown += t
	}
	m.text = m.markdown
	m.chunks = append(m.chunks, others...)
	return nil
}

func (s *Server) apiStartStream(p params) result {
	if !s.Opts.Streaming {
		return errRes("feature_not_enabled")
	}
	ch, code := s.postChannelLocked(p.str("channel"))
	if code != "" {
		return errRes(code)
	}
	if p.str("thread_ts") == "" {
		return errMsgs("invalid_arguments", "[ERROR] missing required field: thread_ts")
	}
	if ch.Type != "im" {
		if p.str("recipient_user_id") == "" {
			return errRes("missing_recipient_user_id")
		}
		if p.str("recipient_team_id") == "" {
			return errRes("missing_recipient_team_id")
		}
	}
	md := p.str("markdown_text")
	if runes(md) > MaxMarkdownText {
		return errRes("msg_too_long")
	}
	m := s.botMsgLocked(ch)
	m.markdown, m.text = md, md
	if r := s.streamChunksLocked(m, p); r != nil {
		return *r
	}
	m.streaming, m.streamExpires = true, time.Now().Add(s.Opts.StreamLifetime)
	s.threadLocked(ch, m, p.str("thread_ts"))
	ch.add(m)
	s.echoNewLocked(ch, m)
	s.wroteLocked("chat.startStream", m)
	return okRes(map[string]any{"channel": ch.ID, "ts": m.ts})
}

func (s *Server) streamingMsgLocked(p params) (*channelState, *msg, *result) {
	if !s.Opts.Streaming {
		r := errRes("feature_not_enabled")
		return nil, nil, &r
	}
	ch, m, code := s.ownMessageLocked(p, "ts", "message_not_owned_by_app")
	if code != "" {
		r := errRes(code)
		return nil, nil, &r
	}
	m.expireStream(time.Now())
	if !m.streaming {
		r := errRes("message_not_in_streaming_state")
		if m.streamEnd == "user" {
			r = errRes("stopped_by_user")
		}
		return nil, nil, &r
	}
	if runes(p.str("markdown_text")) > MaxMarkdownText {
		r := errRes("msg_too_long")
		return nil, nil, &r
	}
	return ch, m, nil
}

func (s *Server) apiAppendStream(p params) result {
	ch, m, fail := s.streamingMsgLocked(p)
	if fail != nil {
		return *fail
	}
	if p.str("markdown_text") == "" && p.str("chunks") == "" {
		return errRes("no_text")
	}
	m.markdown += p.str("markdown_text")
	m.text = m.markdown
	if r := s.streamChunksLocked(m, p); r != nil {
		return *r
	}
	s.wroteLocked("chat.appendStream", m)
	return okRes(map[string]any{"channel": ch.ID, "ts": m.ts})
}

func (s *Server) apiStopStream(p params) result {
	ch, m, fail := s.streamingMsgLocked(p)
	if fail != nil {
		return *fail
	}
	var blocks json.RawMessage
	if p.str("blocks") != "" {
		v, err := p.jsonArg("blocks")
		arr, ok := v.([]any)
		if err != nil || !ok {
			return errRes("invalid_blocks_format")
		}
		chk := validateBlocks(arr, "/blocks")
		if len(chk.errs) > 0 {
			return errMsgs("invalid_blocks", chk.errs...)
		}
		if len(arr) > 0 {
			blocks = normalizeBlocks(arr)
		}
	}
	prev := s.wireLocked(ch, m)
	m.markdown += p.str("markdown_text")
	m.text = m.markdown
	if r := s.streamChunksLocked(m, p); r != nil {
		return *r
	}
	if blocks != nil {
		m.blocks = blocks
	}
	if p.str("metadata") != "" {
		if v, err := p.jsonArg("metadata"); err == nil {
			m.metadata, _ = json.Marshal(v)
		}
	}
	m.streaming, m.streamEnd = false, "stopped"
	s.echoChangedLocked(ch, m, prev)
	s.wroteLocked("chat.stopStream", m)
	return okRes(map[string]any{"channel": ch.ID, "ts": m.ts, "message": s.wireLocked(ch, m)})
}

// StopStreamByUser is the user pressing Stop on a streaming message: later
// appends answer stopped_by_user.
func (s *Server) StopStreamByUser(channel, ts string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channels[channel]
	if ch == nil || ch.get(ts) == nil || !ch.get(ts).streaming {
		return fmt.Errorf("fakeslack: no streaming message %s in %s", ts, channel)
	}
	m := ch.get(ts)
	m.streaming, m.streamEnd = false, "user"
	s.notifyLocked()
	return nil
}

// --- other methods ---

func (s *Server) apiGetPermalink(p params) result {
	ch := s.channelLocked(p.str("channel"))
	if ch == nil {
		return errRes("channel_not_found")
	}
	m := ch.get(p.str("message_ts"))
	if m == nil {
		return errRes("message_not_found")
	}
	return okRes(map[string]any{"channel": ch.ID, "permalink": s.permalink(ch.ID, m)})
}

func (s *Server) permalink(channel string, m *msg) string {
	link := fmt.Sprintf("https://%s.slack.com/archives/%s/p%s", s.Opts.TeamDomain, channel, strings.ReplaceAll(m.ts, ".", ""))
	if m.threadTS != "" && m.threadTS != m.ts {
		link += "?thread_ts=" + m.threadTS + "&cid=" + channel
	}
	return link
}

func (s *Server) apiSetStatus(p params) result {
	ch, code := s.readChannelLocked(p.str("channel_id"))
	if code != "" {
		return errRes(code)
	}
	tts := p.str("thread_ts")
	if tts == "" {
		return errMsgs("invalid_arguments", "[ERROR] missing required field: thread_ts")
	}
	key := ch.ID + "/" + tts
	if p.str("status") == "" {
		delete(s.statuses, key)
	} else {
		var loading []string
		if l := p.str("loading_messages"); l != "" {
			loading = strings.Split(l, ",")
		}
		s.statuses[key] = &statusState{status: p.str("status"), loading: loading, setAt: time.Now()}
	}
	return okRes(nil)
}

func (s *Server) apiAssistantNoop(p params) result {
	if _, code := s.readChannelLocked(p.str("channel_id")); code != "" {
		return errRes(code)
	}
	return okRes(nil)
}

func validEmojiName(n string) bool {
	if n == "" {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("_+-'", r)) {
			return false
		}
	}
	return true
}

func (s *Server) reactionTargetLocked(p params) (*msg, *result) {
	if p.str("timestamp") == "" && p.str("file") == "" {
		r := errRes("no_item_specified")
		return nil, &r
	}
	ch, code := s.readChannelLocked(p.str("channel"))
	if code != "" {
		r := errRes(code)
		return nil, &r
	}
	m := ch.get(p.str("timestamp"))
	if m == nil {
		r := errRes("message_not_found")
		return nil, &r
	}
	if !validEmojiName(p.str("name")) {
		r := errRes("invalid_name")
		return nil, &r
	}
	return m, nil
}

func (s *Server) apiReactionsAdd(p params) result {
	m, fail := s.reactionTargetLocked(p)
	if fail != nil {
		return *fail
	}
	if !m.addReaction(p.str("name"), s.Opts.BotUserID) {
		return errRes("already_reacted")
	}
	return okRes(nil)
}

func (s *Server) apiReactionsRemove(p params) result {
	m, fail := s.reactionTargetLocked(p)
	if fail != nil {
		return *fail
	}
	if !m.removeReaction(p.str("name"), s.Opts.BotUserID) {
		return errRes("no_reaction")
	}
	return okRes(nil)
}

func (m *msg) addReaction(name, user string) bool {
	for _, r := range m.reactions {
		if r.name == name {
			for _, u := range r.users {
				if u == user {
					return false
				}
			}
			r.users = append(r.users, user)
			return true
		}
	}
	m.reactions = append(m.reactions, &reaction{name: name, users: []string{user}})
	return true
}

func (m *msg) removeReaction(name, user string) bool {
	for i, r := range m.reactions {
		if r.name != name {
			continue
		}
		for j, u := range r.users {
			if u == user {
				r.users = append(r.users[:j], r.users[j+1:]...)
				if len(r.users) == 0 {
					m.reactions = append(m.reactions[:i], m.reactions[i+1:]...)
				}
				return true
			}
		}
	}
	return false
}

func (s *Server) apiUsersInfo(p params) result {
	u := s.users[p.str("user")]
	if u == nil {
		return errRes("user_not_found")
	}
	return okRes(map[string]any{"user": s.wireUser(u)})
}

func (s *Server) wireUser(u *User) map[string]any {
	profile := map[string]any{
		"real_name": u.RealName, "real_name_normalized": u.RealName,
		"display_name": u.Name, "display_name_normalized": u.Name,
		"team": s.Opts.TeamID, "image_48": "https://a.slack-edge.com/80588/img/avatars/ava_0001-48.png",
	}
	if u.Email != "" {
		profile["email"] = u.Email
	}
	if u.IsBot && u.ID == s.Opts.BotUserID {
		profile["bot_id"] = s.Opts.BotID
		profile["api_app_id"] = s.Opts.AppID
	}
	return map[string]any{
		"id": u.ID, "team_id": s.Opts.TeamID, "name": u.Name, "deleted": u.Deleted,
		"color": "9f69e7", "real_name": u.RealName, "tz": u.TZ, "tz_label": "Greenwich Mean Time", "tz_offset": 0,
		"profile": profile, "is_admin": false, "is_owner": false, "is_primary_owner": false,
		"is_restricted": false, "is_ultra_restricted": false, "is_bot": u.IsBot, "is_app_user": false,
		"updated": time.Now().Unix(), "is_email_confirmed": !u.IsBot,
	}
}

func (s *Server) apiConversationsInfo(p params) result {
	ch, code := s.readChannelLocked(p.str("channel"))
	if code != "" {
		return errRes(code)
	}
	return okRes(map[string]any{"channel": s.wireChannel(ch)})
}

func (s *Server) wireChannel(ch *channelState) map[string]any {
	if ch.Type == "im" {
		return map[string]any{
			"id": ch.ID, "created": ch.created, "is_im": true, "is_org_shared": false,
			"user": ch.User, "is_user_deleted": false, "priority": 0, "is_archived": ch.Archived,
		}
	}
	return map[string]any{
		"id": ch.ID, "name": ch.Name, "name_normalized": ch.Name,
		"is_channel": ch.Type == "channel", "is_group": ch.Type == "group", "is_im": false,
		"is_mpim": ch.Type == "mpim", "is_private": ch.Type != "channel", "created": ch.created,
		"is_archived": ch.Archived, "is_general": ch.Name == "general", "unlinked": 0,
		"is_shared": false, "is_org_shared": false, "is_ext_shared": false, "is_pending_ext_shared": false,
		"is_member": !ch.NotMember, "creator": "U0ALICE001", "num_members": len(ch.Members) + 1,
		"topic":   map[string]any{"value": "", "creator": "", "last_set": 0},
		"purpose": map[string]any{"value": "", "creator": "", "last_set": 0},
	}
}

func pageArgs(p params, def int) (offset, limit int) {
	limit = def
	if l, err := strconv.Atoi(p.str("limit")); err == nil && l > 0 {
		limit = min(l, 1000)
	}
	if c := p.str("cursor"); strings.HasPrefix(c, "offset:") {
		offset, _ = strconv.Atoi(strings.TrimPrefix(c, "offset:"))
	}
	return offset, limit
}

func inRange(ts string, p params) bool {
	incl := p.boolean("inclusive")
	if o := p.str("oldest"); o != "" && (ts < o || (!incl && ts == o)) {
		return false
	}
	if l := p.str("latest"); l != "" && (ts > l || (!incl && ts == l)) {
		return false
	}
	return true
}

func (s *Server) apiConversationsReplies(p params) result {
	ch, code := s.readChannelLocked(p.str("channel"))
	if code != "" {
		return errRes(code)
	}
	if ch.NotMember {
		return errRes("not_in_channel")
	}
	ts := p.str("ts")
	if ts == "" {
		return errMsgs("invalid_arguments", "[ERROR] missing required field: ts")
	}
	parentTS := ts
	if m := ch.msgs[ts]; m != nil && m.threadTS != "" {
		parentTS = m.threadTS
	}
	parent := ch.msgs[parentTS]
	replies := ch.replies(parentTS)
	if parent == nil || (parent.deleted && len(replies) == 0) {
		return errRes("thread_not_found")
	}
	var all []map[string]any
	if parent.deleted {
		all = append(all, map[string]any{
			"type": "message", "subtype": "tombstone", "text": "This message was deleted.", "user": "USLACKBOT",
			"hidden": true, "ts": parent.ts, "thread_ts": parent.ts, "reply_count": len(replies),
		})
	} else {
		all = append(all, s.wireLocked(ch, parent))
	}
	for _, r := range replies {
		if inRange(r.ts, p) {
			all = append(all, s.wireLocked(ch, r))
		}
	}
	offset, limit := pageArgs(p, 1000)
	return page(all, offset, limit)
}

func page(all []map[string]any, offset, limit int) result {
	if offset > len(all) {
		offset = len(all)
	}
	end := min(offset+limit, len(all))
	next := ""
	if end < len(all) {
		next = "offset:" + itoa(end)
	}
	msgs := all[offset:end]
	if msgs == nil {
		msgs = []map[string]any{}
	}
	return okRes(map[string]any{
		"messages": msgs, "has_more": next != "",
		"response_metadata": map[string]any{"next_cursor": next},
	})
}

func (s *Server) apiConversationsHistory(p params) result {
	ch, code := s.readChannelLocked(p.str("channel"))
	if code != "" {
		return errRes(code)
	}
	if ch.NotMember {
		return errRes("not_in_channel")
	}
	var all []map[string]any
	for i := len(ch.order) - 1; i >= 0; i-- {
		m := ch.msgs[ch.order[i]]
		if m.deleted || (m.threadTS != "" && m.threadTS != m.ts && m.subtype != "thread_broadcast") || !inRange(m.ts, p) {
			continue
		}
		all = append(all, s.wireLocked(ch, m))
	}
	offset, limit := pageArgs(p, 100)
	r := page(all, offset, limit)
	r.body["pin_count"] = 0
	return r
}

func (s *Server) apiConversationsOpen(p params) result {
	users := strings.Split(p.str("users"), ",")
	if p.str("users") == "" || len(users) != 1 {
		if ch := s.channels[p.str("channel")]; ch != nil {
			return okRes(map[string]any{"no_op": true, "already_open": true, "channel": map[string]any{"id": ch.ID}})
		}
		return errRes("users_list_not_supplied")
	}
	if _, ok := s.users[users[0]]; !ok {
		return errRes("user_not_found")
	}
	ch := s.imChannelLocked(users[0])
	return okRes(map[string]any{"no_op": false, "already_open": false, "channel": map[string]any{"id": ch.ID}})
}

// --- files ---

func (s *Server) apiGetUploadURL(p params) result {
	name := p.str("filename")
	length, err := strconv.Atoi(p.str("length"))
	if name == "" {
		return errMsgs("invalid_arguments", "[ERROR] missing required field: filename")
	}
	if err != nil || length <= 0 {
		return errMsgs("invalid_arguments", "[ERROR] missing required field: length")
	}
	f := &fileState{File: File{ID: "F0" + randID("", 9), Name: name, Title: name, Size: length}, user: s.Opts.BotUserID, created: time.Now().Unix()}
	s.files[f.ID] = f
	return okRes(map[string]any{"upload_url": s.URL + "/upload/v1/" + f.ID + "/" + randAlnum(20), "file_id": f.ID})
}

func (s *Server) apiCompleteUpload(p params) result {
	v, err := p.jsonArg("files")
	arr, ok := v.([]any)
	if err != nil || !ok || len(arr) == 0 {
		return errMsgs("invalid_arguments", "[ERROR] missing required field: files")
	}
	var fs []*fileState
	for _, e := range arr {
		em, _ := e.(map[string]any)
		f := s.files[str(em["id"])]
		if f == nil || !f.uploaded {
			return errRes("file_not_found")
		}
		if t := str(em["title"]); t != "" {
			f.Title = t
		}
		fs = append(fs, f)
	}
	var out []map[string]any
	for _, f := range fs {
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
	}
	chID := p.str("channel_id")
	if chID == "" {
		chID = strings.Split(p.str("channels"), ",")[0]
	}
	if chID == "" {
		return okRes(map[string]any{"files": out})
	}
	ch, code := s.postChannelLocked(chID)
	if code != "" {
		return errRes(code)
	}
	m := s.botMsgLocked(ch)
	m.text = p.str("initial_comment")
	if p.str("blocks") != "" && m.text == "" {
		v, err := p.jsonArg("blocks")
		bl, ok := v.([]any)
		if err != nil || !ok {
			return errRes("invalid_blocks_format")
		}
		if chk := validateBlocks(bl, "/blocks"); len(chk.errs) > 0 {
			return errMsgs("invalid_blocks", chk.errs...)
		}
		if len(bl) > 0 {
			m.blocks = normalizeBlocks(bl)
		}
	}
	m.files = fs
	s.threadLocked(ch, m, p.str("thread_ts"))
	for _, f := range fs {
		f.Channel, f.ThreadTS, f.MessageTS = ch.ID, m.threadTS, m.ts
	}
	ch.add(m)
	s.echoNewLocked(ch, m)
	return okRes(map[string]any{"files": out})
}

func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/upload/v1/"), "/")
	var content []byte
	var err error
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		if err = r.ParseMultipartForm(64 << 20); err == nil {
			if fh := r.MultipartForm.File["file"]; len(fh) > 0 {
				var f io.ReadCloser
				if f, err = fh[0].Open(); err == nil {
					content, err = io.ReadAll(f)
					f.Close()
				}
			} else {
				content = []byte(r.FormValue("file"))
			}
		}
	} else {
		content, err = io.ReadAll(r.Body)
	}
	s.mu.Lock()
	f := s.files[parts[0]]
	switch {
	case r.Method != http.MethodPost:
		s.violateLocked("upload URL called with %s", r.Method)
	case f == nil:
		s.violateLocked("upload to unknown upload URL %s", r.URL.Path)
	case err != nil:
		s.violateLocked("upload %s: unreadable body: %v", f.ID, err)
	case f.uploaded:
		s.violateLocked("upload URL of %s used twice", f.ID)
	default:
		f.Content, f.uploaded = content, true
		if len(content) != f.Size {
			s.violateLocked("upload %s: %d bytes uploaded, length %d declared to files.getUploadURLExternal", f.ID, len(content), f.Size)
		}
	}
	ok := f != nil && err == nil
	s.notifyLocked()
	s.mu.Unlock()
	if !ok {
		http.Error(w, "invalid upload", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "OK - %d", len(content))
}

func (s *Server) handleFileDownload(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/files-pri/"), "/")
	s.mu.Lock()
	var f *fileState
	if len(parts) > 0 {
		if i := strings.LastIndex(parts[0], "-"); i >= 0 {
			f = s.files[parts[0][i+1:]]
		}
	}
	authed := r.Header.Get("Authorization") == "Bearer "+s.Opts.BotToken
	var content []byte
	dl := FileDownload{Authorized: authed}
	if f != nil {
		content = append(content, f.Content...)
		dl.FileID = f.ID
	}
	s.downloads = append(s.downloads, dl)
	s.mu.Unlock()
	if f == nil || !authed {
		http.Error(w, "file not found or not authorized", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(content)
}
