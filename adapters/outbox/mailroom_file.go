package outbox

import (
	"context"
	"errors"

	"github.com/claudeops/claudeops/adapters"
)

// MaxFileBytes is the adapter's file limit; 0 when it cannot post files.
func (mr *Mailroom) MaxFileBytes(ctx context.Context) int64 {
	fp, ok := mr.pl.(adapters.FilePoster)
	if !ok {
		return 0
	}
	return fp.MaxFileBytes(ctx)
}

// PostFile posts f after what is queued before it in the thread, like Ask,
// and waits for the platform's answer at most until ctx ends.
func (mr *Mailroom) PostFile(ctx context.Context, t adapters.ThreadRef, f adapters.OutFile) (adapters.MessageRef, error) {
	if _, ok := mr.pl.(adapters.FilePoster); !ok {
		return adapters.MessageRef{}, errors.New("outbox: the platform cannot post files")
	}
	return mr.await(ctx, &job{kind: jobFile, thread: t, file: f, ctx: ctx})
}

func (mr *Mailroom) postFile(j *job) askResult {
	if err := j.ctx.Err(); err != nil {
		return askResult{err: err} // nobody waits for it any more
	}
	ref, err := mr.pl.(adapters.FilePoster).PostFile(j.ctx, j.thread, j.file)
	return askResult{ref: ref, err: err}
}
