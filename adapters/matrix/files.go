package matrix

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"maunium.net/go/mautrix/crypto/attachment"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
)

// fileOutputRunes: a finished tool's output longer than this also goes up
// as a file in the thread (the status line shows only its first line).
const fileOutputRunes = 1500

// textMime is the type of the text files the bot attaches.
const textMime = "text/plain; charset=utf-8"

// uploadOutput attaches a long tool output to the thread as a text file,
// encrypted in encrypted rooms.
func (a *Adapter) uploadOutput(ctx context.Context, t adapters.ThreadRef, tool *adapters.Tool) {
	name := strings.ToLower(tool.Name) + "-output.txt"
	if err := a.sendFile(ctx, t, name, textMime, []byte(tool.Output)); err != nil {
		a.log.Warn("matrix: upload tool output", "tool", tool.Name, "err", err)
	}
}

// uploadInput attaches a tool's long input to the thread as a text file,
// before its status line (which shows its head) is posted. It reports
// whether it did.
func (a *Adapter) uploadInput(ctx context.Context, t adapters.ThreadRef, tool *adapters.Tool) bool {
	if err := a.sendFile(ctx, t, adapters.InputFileName(tool.Name), textMime, []byte(tool.Input)); err != nil {
		a.log.Warn("matrix: upload tool input", "tool", tool.Name, "err", err)
		return false
	}
	return true
}

func longOutput(tool *adapters.Tool) bool {
	return tool.State.Done() && utf8.RuneCountInString(tool.Output) > fileOutputRunes
}

// sendFile uploads data and posts it as an m.file in t's thread.
func (a *Adapter) sendFile(ctx context.Context, t adapters.ThreadRef, name, mime string, data []byte) error {
	_, err := a.sendFileEvent(ctx, t, name, mime, "", data)
	return err
}

// sendFileEvent uploads data and posts it as an m.file in t's thread, with
// caption (plain text) as its body when there is one.
func (a *Adapter) sendFileEvent(ctx context.Context, t adapters.ThreadRef, name, mime, caption string, data []byte) (id.EventID, error) {
	room := id.RoomID(t.Channel)
	body := name
	if caption != "" {
		body = caption // a body other than the filename is a caption
	}
	c := &event.MessageEventContent{
		MsgType: event.MsgFile, Body: body, FileName: name, Mentions: &event.Mentions{},
		Info: &event.FileInfo{MimeType: mime, Size: len(data)},
	}
	upload, uploadMime := data, mime
	var ef *attachment.EncryptedFile
	if a.cli.StateStore != nil {
		if enc, err := a.cli.StateStore.IsEncrypted(ctx, room); err == nil && enc {
			ef = attachment.NewEncryptedFile()
			upload, uploadMime = ef.Encrypt(data), "application/octet-stream"
		}
	}
	resp, err := a.cli.UploadBytes(ctx, upload, uploadMime)
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", name, err)
	}
	if ef != nil {
		c.File = &event.EncryptedFileInfo{EncryptedFile: *ef, URL: resp.ContentURI.CUString()}
	} else {
		c.URL = resp.ContentURI.CUString()
	}
	a.closeStatus(t)
	evID, err := a.sendInThread(ctx, t, c)
	if err != nil {
		return "", fmt.Errorf("post %s: %w", name, err)
	}
	return evID, nil
}

// attachment describes the file of an m.file, m.image, m.audio or m.video;
// nothing is downloaded until the bot calls its Open, after it has checked
// the sender.
func (a *Adapter) attachment(c *event.MessageEventContent) adapters.File {
	name := c.FileName
	if name == "" {
		name = c.Body
	}
	f := adapters.File{Name: name}
	if c.Info != nil {
		f.MimeType, f.Size = c.Info.MimeType, int64(c.Info.Size)
	}
	raw, enc := c.URL, c.File
	if enc != nil {
		raw = enc.URL
	}
	f.Open = func(ctx context.Context) (io.ReadCloser, error) { return a.openMedia(ctx, raw, enc) }
	return f
}

// openMedia starts a media download, decrypting as it is read in an
// encrypted room (the hash is checked by Close, once all is read). The
// caller decides how much to read: nothing is buffered here.
func (a *Adapter) openMedia(ctx context.Context, raw id.ContentURIString, enc *event.EncryptedFileInfo) (io.ReadCloser, error) {
	uri, err := raw.Parse()
	if err != nil {
		return nil, fmt.Errorf("attachment url %q: %w", raw, err)
	}
	if enc != nil {
		if err := enc.PrepareForDecryption(); err != nil {
			return nil, fmt.Errorf("decrypt: %w", err)
		}
	}
	resp, err := a.cli.Download(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", uri.CUString(), err)
	}
	if enc == nil {
		return resp.Body, nil
	}
	return enc.DecryptStream(resp.Body), nil
}
