package fakeslack

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// maxAckFrame: Slack silently drops Socket Mode ack/response frames of 20 KB
// or more.
const maxAckFrame = 20 * 1024

// maxConnections per app.
const maxConnections = 10

// Envelope is one delivery of a payload to the app: a Socket Mode envelope,
// or an HTTP request in HTTP mode.
type Envelope struct {
	ID           string // envelope_id ("" for HTTP)
	Type         string // events_api, interactive, slash_commands (or a raw Deliver type)
	EventID      string // events_api: the event_id (the same across retries)
	EventType    string // events_api: inner event type, "message/message_changed" for subtypes
	RetryAttempt int
	RetryReason  string
	Payload      json.RawMessage
	Via          string // "socket" or "http"
	Conn         int    // socket number (1-based, in connection order); 0 if none yet
	DeliveredAt  time.Time
	Acked        bool
	AckedAt      time.Time
	AckPayload   json.RawMessage // the ack's "payload" (slash commands), or the HTTP answer's body
	Status       int             // HTTP mode: the answer's status (0 if none)
	// GivenUp: the event waited for a socket longer than GiveUpAfter (or
	// GiveUp was called) and was dropped undelivered, as Slack does after
	// its retries.
	GivenUp bool
}

type envelope struct {
	Envelope
	accepts bool
	timer   *time.Timer
	form    map[string]string // HTTP slash commands
	resp    *responseURL      // where a slash command's ack payload goes
	what    string            // for violation messages
	raw     bool              // Deliver: no ack tracking beyond recording
	queued  time.Time         // when it first waited for a socket
}

// Envelopes returns every delivery so far, in order.
func (s *Server) Envelopes() []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Envelope, len(s.envelopes))
	for i, e := range s.envelopes {
		out[i] = e.Envelope
		out[i].Payload = cloneRaw(e.Payload)
	}
	return out
}

// deliverLocked sends e over Socket Mode (or HTTP if configured for its
// kind), queueing it while no socket is connected.
func (s *Server) deliverLocked(e *envelope) {
	if s.closed {
		return
	}
	switch e.Type {
	case "interactive":
		e.accepts = false
	case "slash_commands":
		e.accepts = true
	}
	s.envelopes = append(s.envelopes, e)
	if url := s.httpTargetLocked(e.Type); url != "" {
		e.Via = "http"
		s.wg.Add(1)
		go s.httpDeliver(e, url)
		s.notifyLocked()
		return
	}
	e.Via = "socket"
	e.ID = newUUID()
	s.envByID[e.ID] = e
	s.sendEnvelopeLocked(e)
	s.notifyLocked()
}

func (s *Server) httpTargetLocked(typ string) string {
	switch typ {
	case "events_api":
		return s.Opts.EventsURL
	case "interactive":
		return s.Opts.InteractivityURL
	case "slash_commands":
		return s.Opts.CommandsURL
	}
	return ""
}

type envelopeFrame struct {
	EnvelopeID             string          `json:"envelope_id"`
	Type                   string          `json:"type"`
	AcceptsResponsePayload bool            `json:"accepts_response_payload"`
	RetryAttempt           *int            `json:"retry_attempt,omitempty"`
	RetryReason            *string         `json:"retry_reason,omitempty"`
	Payload                json.RawMessage `json:"payload"`
}

func (s *Server) sendEnvelopeLocked(e *envelope) {
	c := s.pickConnLocked()
	if c == nil {
		if e.queued.IsZero() {
			e.queued = time.Now()
		}
		s.pending = append(s.pending, e)
		return
	}
	f := envelopeFrame{EnvelopeID: e.ID, Type: e.Type, AcceptsResponsePayload: e.accepts, Payload: e.Payload}
	if e.Type == "events_api" {
		f.RetryAttempt, f.RetryReason = &e.RetryAttempt, &e.RetryReason
	}
	frame, err := json.Marshal(f)
	if err != nil { // a raw Deliver payload that isn't JSON
		frame = []byte(`{"envelope_id":"` + e.ID + `","type":"` + e.Type + `","accepts_response_payload":false,"payload":` + string(e.Payload) + `}`)
	}
	c.send(frame)
	e.Conn, e.DeliveredAt = c.id, time.Now()
	if e.raw && e.Type != "events_api" {
		return
	}
	e.timer = time.AfterFunc(s.Opts.AckTimeout, func() { s.ackTimeout(e) })
}

func (s *Server) pickConnLocked() *wsConn {
	var open []*wsConn
	for _, c := range s.conns {
		if !c.draining {
			open = append(open, c)
		}
	}
	if len(open) == 0 {
		return nil
	}
	s.rr++
	return open[s.rr%len(open)]
}

// ackTimeout redelivers an unacked events_api envelope (up to 3 retries) or
// records that an interactive/slash envelope went unanswered.
func (s *Server) ackTimeout(e *envelope) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || e.Acked {
		return
	}
	if e.Type != "events_api" {
		s.violateLocked("%s envelope %s (%s) not acked within %v: the user sees an error", e.Type, e.ID, e.what, s.Opts.AckTimeout)
		return
	}
	if e.RetryAttempt >= 3 {
		s.violateLocked("event %s (%s) never acked: %d deliveries, the last at %s", e.EventID, e.EventType, e.RetryAttempt+1, e.DeliveredAt.Format(time.StampMilli))
		return
	}
	retry := &envelope{Envelope: Envelope{
		Type: e.Type, EventID: e.EventID, EventType: e.EventType, Payload: e.Payload,
		RetryAttempt: e.RetryAttempt + 1, RetryReason: "timeout",
	}, raw: e.raw}
	s.deliverLocked(retry)
}

// ackLocked handles {"envelope_id":…,"payload":…} from the app.
func (s *Server) ackLocked(c *wsConn, frame []byte) {
	var ack struct {
		EnvelopeID string          `json:"envelope_id"`
		Payload    json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(frame, &ack); err != nil || ack.EnvelopeID == "" {
		s.violateLocked("socket %d: frame from the app is not an ack: %.200s", c.id, frame)
		return
	}
	e := s.envByID[ack.EnvelopeID]
	switch {
	case len(frame) >= maxAckFrame:
		s.violateLocked("ack of %s is %d bytes (≥ 20 KB): Slack silently drops it", ack.EnvelopeID, len(frame))
		return
	case e == nil:
		s.violateLocked("ack for unknown envelope_id %s", ack.EnvelopeID)
		return
	case e.Acked:
		s.violateLocked("envelope %s acked twice", ack.EnvelopeID)
		return
	}
	now := time.Now()
	if !e.DeliveredAt.IsZero() && now.Sub(e.DeliveredAt) > s.Opts.AckTimeout && e.Type != "events_api" {
		s.violateLocked("%s envelope %s (%s) acked after %v (limit %v)", e.Type, e.ID, e.what, now.Sub(e.DeliveredAt).Round(time.Millisecond), s.Opts.AckTimeout)
	}
	e.Acked, e.AckedAt = true, now
	if e.timer != nil {
		e.timer.Stop()
	}
	hasPayload := len(ack.Payload) > 0 && string(ack.Payload) != "null"
	if hasPayload {
		e.AckPayload = cloneRaw(ack.Payload)
		if !e.accepts {
			s.violateLocked("ack of %s envelope %s carries a payload but accepts_response_payload is false", e.Type, e.ID)
		} else if e.resp != nil {
			var body map[string]any
			if json.Unmarshal(ack.Payload, &body) == nil {
				if _, errCode := s.respondLocked(e.resp, body); errCode != "" {
					s.violateLocked("ack payload of %s rejected: %s", e.ID, errCode)
				}
			} else {
				s.violateLocked("ack payload of %s is not a JSON object", e.ID)
			}
		}
	}
	s.logf("socket %d: ack %s", c.id, ack.EnvelopeID)
	s.notifyLocked()
}

// --- WebSocket connections ---

type wsConn struct {
	id       int
	ws       *websocket.Conn
	draining bool // sent a disconnect: no new envelopes

	mu     sync.Mutex
	queue  [][]byte
	signal chan struct{}
	done   chan struct{}
	once   sync.Once
}

func (c *wsConn) send(frame []byte) {
	c.mu.Lock()
	c.queue = append(c.queue, frame)
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

func (c *wsConn) closeNow() {
	c.once.Do(func() {
		close(c.done)
		_ = c.ws.Close()
	})
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) handleSocket(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	_, valid := s.tickets[ticket]
	delete(s.tickets, ticket)
	if !valid {
		s.violateLocked("WebSocket connect with an unknown or already used ticket %q (apps.connections.open URLs are single-use)", ticket)
	}
	closed, offline := s.closed, s.offline
	s.mu.Unlock()
	if !valid || closed {
		http.Error(w, "invalid ticket", http.StatusUnauthorized)
		return
	}
	if offline {
		http.Error(w, "socket mode is unavailable", http.StatusServiceUnavailable)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		s.violatef("WebSocket upgrade failed: %v", err)
		return
	}
	c := &wsConn{ws: ws, signal: make(chan struct{}, 1), done: make(chan struct{})}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.closeNow()
		return
	}
	s.connSeq++
	c.id = s.connSeq
	s.conns = append(s.conns, c)
	if len(s.conns) > maxConnections {
		s.violateLocked("%d simultaneous Socket Mode connections (Slack allows %d)", len(s.conns), maxConnections)
	}
	hello, _ := json.Marshal(map[string]any{
		"type":            "hello",
		"num_connections": len(s.conns),
		"debug_info": map[string]any{
			"host":                        "applink-fakeslack-" + itoa(c.id),
			"build_number":                118,
			"approximate_connection_time": 18060,
		},
		"connection_info": map[string]any{"app_id": s.Opts.AppID},
	})
	c.send(hello)
	pending := s.pending
	s.pending = nil
	for _, e := range pending {
		if e.Type == "events_api" && time.Since(e.queued) > s.Opts.GiveUpAfter {
			s.giveUpLocked(e)
			continue
		}
		s.sendEnvelopeLocked(e)
	}
	s.logf("socket %d connected (%d open)", c.id, len(s.conns))
	s.notifyLocked()
	s.wg.Add(3)
	s.mu.Unlock()

	go s.writeLoop(c)
	go s.pingLoop(c)
	go s.readLoop(c)
}

func (s *Server) writeLoop(c *wsConn) {
	defer s.wg.Done()
	defer c.closeNow()
	for {
		c.mu.Lock()
		q := c.queue
		c.queue = nil
		c.mu.Unlock()
		for _, frame := range q {
			s.logf("socket %d ← %s", c.id, frame)
			_ = c.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if err := c.ws.WriteMessage(websocket.TextMessage, frame); err != nil {
				return
			}
		}
		select {
		case <-c.signal:
		case <-c.done:
			return
		}
	}
}

func (s *Server) pingLoop(c *wsConn) {
	defer s.wg.Done()
	t := time.NewTicker(s.Opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second)); err != nil {
				c.closeNow()
				return
			}
		case <-c.done:
			return
		}
	}
}

func (s *Server) readLoop(c *wsConn) {
	defer s.wg.Done()
	defer func() {
		c.closeNow()
		s.mu.Lock()
		for i, cc := range s.conns {
			if cc == c {
				s.conns = append(s.conns[:i], s.conns[i+1:]...)
				break
			}
		}
		s.logf("socket %d closed (%d open)", c.id, len(s.conns))
		s.notifyLocked()
		s.mu.Unlock()
	}()
	for {
		typ, frame, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		s.logf("socket %d → %s", c.id, frame)
		s.mu.Lock()
		if typ != websocket.TextMessage {
			s.violateLocked("socket %d: non-text frame from the app", c.id)
		} else {
			s.ackLocked(c, frame)
		}
		s.mu.Unlock()
	}
}

// Connections is the number of open Socket Mode connections.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// WaitConnections waits until exactly n sockets are open (and not asked to
// disconnect).
func (s *Server) WaitConnections(n int, timeout time.Duration) bool {
	return s.WaitFor(timeout, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		live := 0
		for _, c := range s.conns {
			if !c.draining {
				live++
			}
		}
		return live == n
	})
}

// Disconnect sends {"type":"disconnect","reason":reason} on every open socket
// (reason: "refresh_requested", "warning" or "link_disabled"). No new
// envelopes go to those sockets; the server closes them after
// DisconnectGrace if the app doesn't (slack-go closes and reconnects at once).
func (s *Server) Disconnect(reason string) {
	frame, _ := json.Marshal(map[string]any{
		"type": "disconnect", "reason": reason,
		"debug_info": map[string]any{"host": "applink-fakeslack"},
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		if c.draining {
			continue
		}
		c.draining = true
		c.send(frame)
		time.AfterFunc(s.Opts.DisconnectGrace, c.closeNow)
	}
	s.notifyLocked()
}

// DropSockets closes every socket abruptly, without a disconnect message.
func (s *Server) DropSockets() {
	s.mu.Lock()
	conns := append([]*wsConn(nil), s.conns...)
	s.mu.Unlock()
	for _, c := range conns {
		if nc := c.ws.NetConn(); nc != nil {
			_ = nc.Close()
		}
		c.closeNow()
	}
}

// Deliver sends a raw envelope of envelopeType with payload as is (for
// malformed-payload tests). An events_api envelope is redelivered like any
// other when not acked.
func (s *Server) Deliver(envelopeType string, payload json.RawMessage) (envelopeID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := &envelope{Envelope: Envelope{Type: envelopeType, Payload: cloneRaw(payload)}, raw: true, what: "raw"}
	if envelopeType == "slash_commands" {
		e.accepts = true
	}
	s.envelopes = append(s.envelopes, e)
	e.Via = "socket"
	e.ID = newUUID()
	s.envByID[e.ID] = e
	s.sendEnvelopeLocked(e)
	s.notifyLocked()
	return e.ID
}

// DeliverFrame writes frame as is to one open socket (false if none).
func (s *Server) DeliverFrame(frame []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.pickConnLocked()
	if c == nil {
		return false
	}
	c.send(append([]byte(nil), frame...))
	return true
}
