package matrix

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"maunium.net/go/mautrix"

	"github.com/claudeops/claudeops/adapters"
)

// The optional capabilities the send_file and read_thread tools use.
var (
	_ adapters.FilePoster   = (*Adapter)(nil)
	_ adapters.ThreadReader = (*Adapter)(nil)
)

// defaultMaxFileBytes is the upload limit assumed when the homeserver
// states none (or cannot be asked): Synapse's default max_upload_size, the
// most common limit in the wild.
const defaultMaxFileBytes = 50 << 20

// mediaConfigTTL is how long the homeserver's stated limit is trusted
// before it is asked again (an admin may change it while the bot runs).
const mediaConfigTTL = time.Hour

// captionRunes bounds a file's comment (its caption).
const captionRunes = 3000

// uploadLimit is the homeserver's upload limit as last asked.
type uploadLimit struct {
	mu    sync.Mutex
	bytes int64
	at    time.Time
}

// MaxFileBytes implements adapters.FilePoster: the homeserver's m.upload.size
// (the authenticated media config, else the legacy one), cached for
// mediaConfigTTL; defaultMaxFileBytes when the server states none. A
// failed request is not cached: the default stands in until it answers.
func (d *direct) MaxFileBytes(ctx context.Context) int64 {
	a := (*Adapter)(d)
	l := &a.upload
	l.mu.Lock()
	defer l.mu.Unlock() // one request at a time: the others want its answer
	if l.bytes > 0 && a.cfg.Now().Sub(l.at) < mediaConfigTTL {
		return l.bytes
	}
	n, err := a.mediaUploadSize(ctx)
	if err != nil {
		a.log.Warn("matrix: ask the homeserver's upload limit; assuming the default", "default", defaultMaxFileBytes, "err", err)
		return defaultMaxFileBytes
	}
	if n <= 0 {
		n = defaultMaxFileBytes
	}
	l.bytes, l.at = n, a.cfg.Now()
	return n
}

// mediaUploadSize asks the homeserver's m.upload.size (0: it states none).
func (a *Adapter) mediaUploadSize(ctx context.Context) (int64, error) {
	select {
	case <-a.ready:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	resp, err := a.cli.GetMediaConfig(ctx)
	if err == nil {
		return resp.UploadSize, nil
	}
	// Servers from before authenticated media (spec v1.11) serve only
	// the legacy endpoint.
	var legacy mautrix.RespMediaConfig
	if _, lerr := a.cli.MakeRequest(ctx, http.MethodGet, a.cli.BuildURL(mautrix.MediaURLPath{"v3", "config"}), nil, &legacy); lerr != nil {
		return 0, fmt.Errorf("media config: %w; legacy media config: %w", err, lerr)
	}
	return legacy.UploadSize, nil
}

// PostFile implements adapters.FilePoster: an m.file in t's thread (an
// m.thread relation, after the thread's pending final edits), encrypted in
// an encrypted room. The name shows as body and filename, made safe
// (fileName); a comment is the file's caption (the body; plain text, no
// formatted_body), @room made inert; m.mentions is empty. A file over
// MaxFileBytes is refused before anything is uploaded.
func (d *direct) PostFile(ctx context.Context, t adapters.ThreadRef, f adapters.OutFile) (adapters.MessageRef, error) {
	a := (*Adapter)(d)
	if max := d.MaxFileBytes(ctx); int64(len(f.Data)) > max {
		return adapters.MessageRef{}, fmt.Errorf("matrix: file of %d bytes refused: the homeserver takes at most %d bytes", len(f.Data), max)
	}
	name := adapters.FileName(f.Name)
	caption := ""
	if c := strings.TrimSpace(f.Comment); c != "" {
		caption = neutralize(adapters.Cut(adapters.Visible(c), captionRunes))
	}
	evID, err := a.sendFileEvent(ctx, t, name, http.DetectContentType(f.Data), caption, f.Data)
	if err != nil {
		return adapters.MessageRef{}, fmt.Errorf("matrix: post file: %w", err)
	}
	return adapters.MessageRef{Thread: t, ID: evID.String()}, nil
}
