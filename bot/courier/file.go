package courier

import (
	"context"
	"fmt"

	"github.com/claudeops/claudeops/adapters"
)

// MaxFileBytes is the adapter's file limit; 0 when it cannot post files.
func (c *Courier) MaxFileBytes(ctx context.Context) int64 {
	fp, ok := c.ad.(adapters.FilePoster)
	if !ok {
		return 0
	}
	return fp.MaxFileBytes(ctx)
}

// PostFile posts f after what is queued before it in the thread, like Ask,
// and waits for the platform's answer at most until ctx ends.
func (c *Courier) PostFile(ctx context.Context, t adapters.ThreadRef, f adapters.OutFile) (adapters.MessageRef, error) {
	if _, ok := c.ad.(adapters.FilePoster); !ok {
		return adapters.MessageRef{}, fmt.Errorf("%s cannot post files", c.ad.Name())
	}
	return c.await(ctx, &job{kind: jobFile, thread: t, file: f, ctx: ctx})
}

func (c *Courier) postFile(j *job) askResult {
	if err := j.ctx.Err(); err != nil {
		return askResult{err: err} // nobody waits for it any more
	}
	ref, err := c.ad.(adapters.FilePoster).PostFile(j.ctx, j.thread, j.file)
	return askResult{ref: ref, err: err}
}
