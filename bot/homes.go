package bot

import (
	"context"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/claudeproc"
)

// homeRemover is a runner that keeps the CLI's state (the shell snapshot,
// the transcripts --resume replays) in a home per thread. RemoveHome
// removes s's home with all in it, so that a later --resume of its
// sessions finds nothing; a home not there is no error. The bot calls it
// only once no process of s runs, when the thread's session has ended for
// good (`new`): homes do not pile up with the sessions people end.
type homeRemover interface {
	RemoveHome(ctx context.Context, s claudeproc.Session) error
}

// sessionOf is how the runner knows the thread ref.
func sessionOf(ref adapters.ThreadRef) claudeproc.Session {
	return claudeproc.Session{Channel: ref.ChannelKey(), Thread: string(ref.Key())}
}

// removeHome removes the thread's CLI home: its session has ended for
// good and its process is gone. A failure is logged: the next session
// starts fresh all the same, as it resumes nothing.
func (w *worker) removeHome(ctx context.Context) {
	h, ok := w.cfg.Runner.(homeRemover)
	if !ok || w.sess.live() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := h.RemoveHome(ctx, sessionOf(w.ref)); err != nil {
		w.log.Warn("remove the thread's CLI home", "err", err)
	}
}
