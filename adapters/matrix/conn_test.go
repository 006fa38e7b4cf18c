package matrix

import (
	"context"
	"errors"
	"testing"

	"maunium.net/go/mautrix"

	"github.com/claudeops/claudeops/adapters"
)

// TestConnStatusFollowsSync: the sync loop's news as mautrix gives it to
// the syncer: connecting until a response; a failed sync is disconnected
// with its error; the next response connected again, the error kept; a
// Run whose login fails is disconnected with that failure. (cmd/claudeops's TestReadyzMatrixOutage
// holds the same with a real homeserver cut off and back.)
func TestConnStatusFollowsSync(t *testing.T) {
	a := testAdapter(t)
	s := &trackingSyncer{DefaultSyncer: mautrix.NewDefaultSyncer(), cur: a.cur, conn: a.conn}
	if st := a.ConnStatus(); st.State != adapters.Connecting || st.Via != "sync" {
		t.Fatalf("new: %+v", st)
	}
	if _, err := s.OnFailedSync(nil, errors.New("dial tcp 127.0.0.1:1: connection refused")); err != nil {
		t.Fatal(err)
	}
	down := a.ConnStatus()
	if down.State != adapters.Disconnected || down.LastError != "dial tcp 127.0.0.1:1: connection refused" {
		t.Fatalf("after a failed sync: %+v", down)
	}
	// As mautrix does: the batch token is saved, then the response processed.
	if err := a.cur.SaveNextBatch(t.Context(), me, "s1"); err != nil {
		t.Fatal(err)
	}
	if err := s.ProcessResponse(t.Context(), &mautrix.RespSync{NextBatch: "s1"}, ""); err != nil {
		t.Fatal(err)
	}
	up := a.ConnStatus()
	if up.State != adapters.Connected || up.Since.Before(down.Since) || up.LastError != down.LastError {
		t.Errorf("after a response: %+v (down: %+v)", up, down)
	}
	// The login cannot even start: the context has ended.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := a.Run(ctx, nil)
	if st := a.ConnStatus(); err == nil || st.State != adapters.Disconnected || st.LastError == down.LastError {
		t.Errorf("after a failed Run (%v): %+v", err, st)
	}
}
