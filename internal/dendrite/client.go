package dendrite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"image"
	_ "image/gif" // DecodeConfig reads image sizes for m.image info
	_ "image/jpeg"
	_ "image/png"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto/attachment"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// ClientOptions configure Server.Client.
type ClientOptions struct {
	// Crypto makes the client an E2EE device that sends encrypted in
	// encrypted rooms and decrypts what it receives. Needs -tags goolm and
	// a device that never had keys (each Register and Login logs in a new
	// one). The device is signed by its user's cross-signing identity, as a
	// session verified in Element is, unless Unverified.
	Crypto bool
	// Unverified leaves a crypto device unsigned: a session its owner never
	// verified (or someone else's login to the account).
	Unverified bool
}

// Client is a test user's Matrix client. It syncs in the background from
// its creation until the test ends and records what it sees. Its methods
// call Fatal on the test it was made for, so call them from that test's
// goroutine. Run at most one Client per User: two syncs of one device steal
// each other's to-device messages (room keys).
type Client struct {
	User   *User
	Matrix *mautrix.Client // for anything the helpers below do not cover

	t testing.TB
	timeline
}

// RoomOptions configure Client.CreateRoom.
type RoomOptions struct {
	Name      string
	Encrypted bool
	Invite    []id.UserID
}

// Client starts a client for u; it stops when the test ends.
func (s *Server) Client(t testing.TB, u *User, opts ClientOptions) *Client {
	t.Helper()
	cli, err := mautrix.NewClient(s.URL, u.ID, u.AccessToken)
	if err != nil {
		t.Fatalf("dendrite: client for %s: %v", u.ID, err)
	}
	cli.DeviceID = u.DeviceID
	c := &Client{User: u, Matrix: cli, t: t, timeline: newTimeline()}
	// Registered before the crypto helper's handlers, so the encrypted
	// original is recorded first and then replaced by its decryption.
	cli.Syncer.(*mautrix.DefaultSyncer).OnEvent(c.record)
	if opts.Crypto {
		setupCrypto(t, cli, u, opts.Unverified, c.logf) // registers its own cleanup, which runs after the sync stops
	}

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := cli.SyncWithContext(ctx); err != nil && !errors.Is(err, context.Canceled) {
			c.logf("dendrite: sync of %s stopped: %v", u.ID, err)
		}
	}()
	t.Cleanup(func() {
		c.mu.Lock()
		c.ended = true // the test is over: no more t.Logf from our goroutines
		c.mu.Unlock()
		cancel()
		<-stopped
	})
	return c
}

// logf logs from background goroutines while the test still runs.
func (c *Client) logf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended {
		c.t.Logf(format, args...)
	}
}

func (c *Client) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

// check fails the test on a request error, naming what was attempted.
func (c *Client) check(err error, what string, args ...any) {
	c.t.Helper()
	if err != nil {
		c.t.Fatalf("dendrite: %s: %s: %v", c.User.ID, fmt.Sprintf(what, args...), err)
	}
}

// CreateRoom creates a private room (Element's default preset) and returns
// its ID. Encrypted puts m.room.encryption into the initial state.
func (c *Client) CreateRoom(opts RoomOptions) id.RoomID {
	c.t.Helper()
	req := &mautrix.ReqCreateRoom{Name: opts.Name, Preset: "private_chat", Invite: opts.Invite}
	if opts.Encrypted {
		req.InitialState = []*event.Event{{
			Type:    event.StateEncryption,
			Content: event.Content{Parsed: &event.EncryptionEventContent{Algorithm: id.AlgorithmMegolmV1}},
		}}
	}
	ctx, cancel := c.ctx()
	defer cancel()
	resp, err := c.Matrix.CreateRoom(ctx, req)
	c.check(err, "creating room %q", opts.Name)
	if opts.Encrypted {
		c.setEncrypted(resp.RoomID) // do not wait for the sync to say so
	}
	return resp.RoomID
}

// Invite invites user into room.
func (c *Client) Invite(room id.RoomID, user id.UserID) {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	_, err := c.Matrix.InviteUser(ctx, room, &mautrix.ReqInviteUser{UserID: user})
	c.check(err, "inviting %s to %s", user, room)
}

// Join joins room.
func (c *Client) Join(room id.RoomID) {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	_, err := c.Matrix.JoinRoomByID(ctx, room)
	c.check(err, "joining %s", room)
}

// SendText sends a text message shaped like Element's: m.mentions always
// (empty without a mention); a mention as a pill, "name: text" in the plain
// body; in a thread when threadRoot is set. The mention's display name is
// taken to be its localpart, Dendrite's default.
func (c *Client) SendText(room id.RoomID, body string, mention id.UserID, threadRoot id.EventID) id.EventID {
	c.t.Helper()
	content := &event.MessageEventContent{MsgType: event.MsgText, Body: body, Mentions: &event.Mentions{}}
	if mention != "" {
		name := mention.Localpart()
		content.Mentions.UserIDs = []id.UserID{mention}
		content.Body = name + ": " + body
		content.Format = event.FormatHTML
		content.FormattedBody = fmt.Sprintf(`<a href="https://matrix.to/#/%s">%s</a>: %s`,
			mention, html.EscapeString(name), html.EscapeString(body))
	}
	if threadRoot != "" {
		content.RelatesTo = (&event.RelatesTo{}).SetThread(threadRoot, threadRoot)
	}
	return c.send(room, event.EventMessage, content)
}

// Edit replaces the text of original (the first event, never an edit) as
// Element does.
func (c *Client) Edit(room id.RoomID, original id.EventID, body string) id.EventID {
	c.t.Helper()
	content := &event.MessageEventContent{MsgType: event.MsgText, Body: body, Mentions: &event.Mentions{}}
	content.SetEdit(original)
	return c.send(room, event.EventMessage, content)
}

// SendRaw sends content as is, for shapes the other helpers do not make.
func (c *Client) SendRaw(room id.RoomID, evtType event.Type, content map[string]any) id.EventID {
	c.t.Helper()
	return c.send(room, evtType, content)
}

// Encrypted reports whether the client has seen room's encryption turned
// on (a crypto client sends encrypted there from then on).
func (c *Client) Encrypted(room id.RoomID) bool { return c.isEncrypted(room) }

// SendClear sends content unencrypted, also from a crypto client into an
// encrypted room (as a client without encryption, or a forger, would).
func (c *Client) SendClear(room id.RoomID, evtType event.Type, content any) id.EventID {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	resp, err := c.Matrix.SendMessageEvent(ctx, room, evtType, content, mautrix.ReqSendEvent{DontEncrypt: true})
	c.check(err, "sending %s to %s in clear", evtType.Type, room)
	return resp.EventID
}

// React annotates target with key, as clicking a reaction in Element does:
// from a crypto client in an encrypted room the reaction is encrypted, its
// relation left in clear (mautrix by itself sends every reaction in clear).
func (c *Client) React(room id.RoomID, target id.EventID, key string) id.EventID {
	c.t.Helper()
	content := &event.ReactionEventContent{RelatesTo: *(&event.RelatesTo{}).SetAnnotation(target, key)}
	if c.Matrix.Crypto == nil || !c.isEncrypted(room) {
		return c.send(room, event.EventReaction, content)
	}
	ctx, cancel := c.ctx()
	defer cancel()
	enc, err := c.Matrix.Crypto.Encrypt(ctx, room, event.EventReaction, content)
	c.check(err, "encrypting a reaction in %s", room)
	return c.send(room, event.EventEncrypted, enc)
}

// ReactInClear is React sent unencrypted whatever the room.
func (c *Client) ReactInClear(room id.RoomID, target id.EventID, key string) id.EventID {
	c.t.Helper()
	return c.SendClear(room, event.EventReaction, &event.ReactionEventContent{
		RelatesTo: *(&event.RelatesTo{}).SetAnnotation(target, key),
	})
}

// Redact redacts evt (taking back a reaction, deleting a message).
func (c *Client) Redact(room id.RoomID, evt id.EventID) {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	_, err := c.Matrix.RedactEvent(ctx, room, evt)
	c.check(err, "redacting %s in %s", evt, room)
}

// VotePoll answers an MSC3381 poll with the unstable event type Element
// Web sends.
func (c *Client) VotePoll(room id.RoomID, poll id.EventID, answerIDs ...string) id.EventID {
	c.t.Helper()
	return c.send(room, event.EventUnstablePollResponse, pollVote(poll, answerIDs))
}

// VotePollInClear is VotePoll sent unencrypted whatever the room.
func (c *Client) VotePollInClear(room id.RoomID, poll id.EventID, answerIDs ...string) id.EventID {
	c.t.Helper()
	return c.SendClear(room, event.EventUnstablePollResponse, pollVote(poll, answerIDs))
}

func pollVote(poll id.EventID, answerIDs []string) map[string]any {
	return map[string]any{
		"m.relates_to":                     map[string]any{"rel_type": "m.reference", "event_id": poll},
		"org.matrix.msc3381.poll.response": map[string]any{"answers": append([]string{}, answerIDs...)},
	}
}

// SendImage uploads data and posts it as m.image (in threadRoot's thread if
// set); in an encrypted room the file is encrypted and referenced by "file"
// instead of "url", as Element does.
func (c *Client) SendImage(room id.RoomID, threadRoot id.EventID, name, mime string, data []byte) id.EventID {
	c.t.Helper()
	return c.sendMedia(room, threadRoot, event.MsgImage, name, mime, data)
}

// SendFile is SendImage for m.file.
func (c *Client) SendFile(room id.RoomID, threadRoot id.EventID, name, mime string, data []byte) id.EventID {
	c.t.Helper()
	return c.sendMedia(room, threadRoot, event.MsgFile, name, mime, data)
}

func (c *Client) sendMedia(room id.RoomID, threadRoot id.EventID, msgType event.MessageType, name, mime string, data []byte) id.EventID {
	c.t.Helper()
	content := &event.MessageEventContent{
		MsgType: msgType, Body: name, FileName: name, Mentions: &event.Mentions{},
		Info: &event.FileInfo{MimeType: mime, Size: len(data)},
	}
	if msgType == event.MsgImage {
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil {
			content.Info.Width, content.Info.Height = cfg.Width, cfg.Height
		}
	}
	upload, uploadMime := data, mime
	var file *attachment.EncryptedFile
	if c.isEncrypted(room) {
		file = attachment.NewEncryptedFile()
		upload = bytes.Clone(data)
		file.EncryptInPlace(upload)
		uploadMime = "application/octet-stream" // the server must not learn the type either
	}
	ctx, cancel := c.ctx()
	defer cancel()
	resp, err := c.Matrix.UploadMedia(ctx, mautrix.ReqUploadMedia{ContentBytes: upload, ContentType: uploadMime, FileName: name})
	c.check(err, "uploading %s", name)
	if file != nil {
		content.File = &event.EncryptedFileInfo{EncryptedFile: *file, URL: resp.ContentURI.CUString()}
	} else {
		content.URL = resp.ContentURI.CUString()
	}
	if threadRoot != "" {
		content.RelatesTo = (&event.RelatesTo{}).SetThread(threadRoot, threadRoot)
	}
	return c.send(room, event.EventMessage, content)
}

// send sends a room event; a crypto client encrypts it in encrypted rooms.
func (c *Client) send(room id.RoomID, evtType event.Type, content any) id.EventID {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	resp, err := c.Matrix.SendMessageEvent(ctx, room, evtType, content)
	c.check(err, "sending %s to %s", evtType.Type, room)
	return resp.EventID
}

// WaitFor polls cond until it holds or timeout passes, and reports whether
// it held.
func (c *Client) WaitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
