package matrix

import (
	"context"
	"fmt"
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
	return tool.State != adapters.ToolRunning && utf8.RuneCountInString(tool.Output) > fileOutputRunes
}

// sendFile uploads data and posts it as an m.file in t's thread.
func (a *Adapter) sendFile(ctx context.Context, t adapters.ThreadRef, name, mime string, data []byte) error {
	room := id.RoomID(t.Channel)
	c := &event.MessageEventContent{
		MsgType: event.MsgFile, Body: name, FileName: name, Mentions: &event.Mentions{},
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
		return fmt.Errorf("upload %s: %w", name, err)
	}
	if ef != nil {
		c.File = &event.EncryptedFileInfo{EncryptedFile: *ef, URL: resp.ContentURI.CUString()}
	} else {
		c.URL = resp.ContentURI.CUString()
	}
	a.closeStatus(t)
	if _, err := a.send(ctx, room, threaded(c, t)); err != nil {
		return fmt.Errorf("post %s: %w", name, err)
	}
	return nil
}
