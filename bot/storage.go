package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/claudeops/claudeops/adapters/outbox"
	"github.com/claudeops/claudeops/store"
)

// storageWatch turns the storage failing into one line of log per cause
// (store.Faults) and one plain notice per thread and outage, instead of
// an error per refused message.
type storageWatch struct {
	faults *store.Faults
	told   *outbox.Registry[string, struct{}] // thread|outage start: told
}

func newStorageWatch(f *store.Faults, now func() time.Time) *storageWatch {
	return &storageWatch{faults: f, told: outbox.NewRegistry[string, struct{}](4096, 24*time.Hour, now)}
}

// refused reports err, met while doing what for the thread of d: when it
// is the storage failing, the log has it (once per cause), the thread is
// told plainly (once per outage), and it returns true; otherwise nothing
// is said and it returns false.
func (s *storageWatch) refused(ctx context.Context, d deps, what string, err error) bool {
	f, ok := s.faults.Failed(what, err)
	if !ok {
		return false
	}
	k := fmt.Sprintf("%s|%d", d.key, f.Since.UnixNano())
	if _, told := s.told.Get(k); told {
		return true
	}
	s.told.Put(k, struct{}{})
	d.notice(ctx, storageText(f), true)
	return true
}

// worked says a write was taken: storage works (again).
func (s *storageWatch) worked() { s.faults.Worked() }

func storageText(f store.Fault) string {
	return fmt.Sprintf("The bot cannot record messages now: its storage is failing (%s, since %s UTC). "+
		"This message was not taken, nor will others be until it works again; the operator has the cause in the bot's log. "+
		// Slack and Matrix may deliver it again once storage works; the console never does.
		"If it gets no answer once the bot works again, send it again.", f.Cause, f.Since.UTC().Format("15:04:05"))
}
