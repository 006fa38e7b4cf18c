package slack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack/slackmd"
)

// The optional capabilities the send_file and read_thread tools use.
var (
	_ adapters.FilePoster   = (*Adapter)(nil)
	_ adapters.ThreadReader = (*Adapter)(nil)
)

// maxFileBytes is the largest file PostFile posts. Slack itself takes up
// to 1 GB, but a file is held whole in memory on its way (OutFile.Data),
// and what Claude hands a thread is a report or a patch, not a disk
// image: the cap keeps one send_file from costing the bot a gigabyte.
const maxFileBytes = 100 << 20

// commentRunes bounds a file's comment: initial_comment is message text,
// best kept under Slack's recommended 4,000.
const commentRunes = 3000

// MaxFileBytes implements adapters.FilePoster: the adapter's own cap
// (maxFileBytes), far under Slack's 1 GB.
func (*direct) MaxFileBytes(context.Context) int64 { return maxFileBytes }

// PostFile implements adapters.FilePoster with Slack's files upload v2:
// files.getUploadURLExternal, the bytes to the upload URL, then
// files.completeUploadExternal sharing it into the thread (channel_id,
// thread_ts). Name and title are the file's safe name (fileName), which
// Slack shows as plain text; the comment is initial_comment made literal
// (slackmd.Text: no markup, no mention, no link syntax). The thread's
// pending final edits land first. The ref's ID is the file's id (the share
// message's ts is not returned): it cannot be edited.
func (d *direct) PostFile(ctx context.Context, t adapters.ThreadRef, f adapters.OutFile) (adapters.MessageRef, error) {
	a := (*Adapter)(d)
	switch n := len(f.Data); {
	case n > maxFileBytes:
		return adapters.MessageRef{}, fmt.Errorf("slack: file of %d bytes refused: the limit is %d bytes", n, maxFileBytes)
	case n == 0:
		// Slack refuses a length of 0 (files.getUploadURLExternal).
		return adapters.MessageRef{}, errors.New("slack: an empty file cannot be posted")
	}
	name := adapters.FileName(f.Name)
	a.flushThread(ctx, t)
	// A spare Stop control left above the file would show a dead button
	// mid-thread (see reply).
	a.deleteMessage(ctx, t.Channel, a.takeSpare(t.Channel, t.Thread))
	id, err := a.uploadFile(ctx, t, name, fileComment(f.Comment), f.Data)
	if err != nil {
		return adapters.MessageRef{}, fmt.Errorf("slack: post file %q: %w", name, err)
	}
	return adapters.MessageRef{Thread: t, ID: id}, nil
}

// uploadFile runs the three steps of an upload, each Web API call under
// its own budget (a 429 repeats only that step), and returns the file id.
func (a *Adapter) uploadFile(ctx context.Context, t adapters.ThreadRef, name, comment string, data []byte) (string, error) {
	var u *slack.GetUploadURLExternalResponse
	err := a.call(ctx, "files.getUploadURLExternal", t.Channel, func(ctx context.Context) error {
		var err error
		u, err = a.api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: name, FileSize: len(data)})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("files.getUploadURLExternal: %w", err)
	}
	err = a.api.UploadToURL(ctx, slack.UploadToURLParameters{UploadURL: u.UploadURL, Reader: bytes.NewReader(data), Filename: name})
	if err != nil {
		return "", fmt.Errorf("upload the bytes: %w", err)
	}
	err = a.call(ctx, "files.completeUploadExternal", t.Channel, func(ctx context.Context) error {
		_, err := a.api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
			Files: []slack.FileSummary{{ID: u.FileID, Title: name}}, Channel: t.Channel,
			ThreadTimestamp: t.Thread, InitialComment: comment,
		})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("files.completeUploadExternal: %w", err)
	}
	return u.FileID, nil
}

// fileComment is a file's comment as initial_comment: literal text, its
// hidden characters shown as escapes, cut to commentRunes.
func fileComment(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return slackmd.Text(adapters.Cut(adapters.Visible(s), commentRunes))
}
