package bot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/smallfs"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/store"
)

// turnRow is a turn as the SQLite file holds it, read outside the store.
type turnRow struct {
	prompt  string
	ended   bool
	subtype string
	cost    float64
}

func turnRows(t *testing.T, db string) []turnRow {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(`SELECT prompt, ended_at IS NOT NULL, result_subtype, cost_usd FROM turns ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []turnRow
	for rows.Next() {
		var r turnRow
		if err := rows.Scan(&r.prompt, &r.ended, &r.subtype, &r.cost); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// emptyWAL checkpoints db's write-ahead log and truncates it, so that the
// next write must grow a file: frames of a log already checkpointed are
// written over in place, and a disk filled behind a long log would then
// not be full for the bot (how long it is depends on the schema's
// migrations, not on what the test means).
func emptyWAL(t *testing.T, db string) {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var busy, frames, done int
	if err := conn.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &done); err != nil || busy != 0 {
		t.Fatalf("checkpoint the database's log: busy %d, %v", busy, err)
	}
	if fi, err := os.Stat(db + "-wal"); err != nil || fi.Size() != 0 {
		t.Fatalf("the log after the checkpoint: %v, %v", fi, err)
	}
}

// TestTurnShownOnAFullDiskIsRecorded: the disk under the bot's database
// fills up while Claude writes a turn's answer. The answer and its footer
// are shown whatever the disk, and what the SQLite file holds and what the
// next start tells agree with what was shown:
//   - with the reserve the bot keeps beside its database, the turn's end is
//     written at once, in the space the reserve gives back;
//   - without one, it is owed and written once space is freed;
//   - without one and with the bot stopped while the disk is full, the
//     next start cannot know how the turn ended, and says so: nothing says
//     "cut off".
func TestTurnShownOnAFullDiskIsRecorded(t *testing.T) {
	for _, c := range []struct {
		name    string
		reserve bool
		stopped bool // the bot stops before the space is freed
	}{
		{name: "the reserve given back", reserve: true},
		{name: "space freed while the bot runs"},
		{name: "the bot stopped while the disk is full", stopped: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := smallfs.Mount(t, 32<<20)
			db := filepath.Join(dir, "claudeops.db")
			held, hold := make(chan struct{}), make(chan struct{})
			var once sync.Once
			base := script(nil)
			h := newHarnessAt(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
				if strings.HasSuffix(req.LastUserText(), "write the report") {
					once.Do(func() { close(held) })
					return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("the report: all green")}, Hold: hold, ChunkSize: 4}
				}
				return base(ctx, req)
			}, nil, nil, db)
			if c.reserve {
				if err := h.st.KeepReserve(); err != nil {
					t.Fatal(err)
				}
			}
			h.say("write the report")
			<-held
			emptyWAL(t, db)
			filler := smallfs.Fill(t, dir, 0)
			close(hold)
			h.expect(`^\[main\] claude: the report: all green$`)
			h.expect(`^\[main\] — ✓ .*\$0\.\d+`)
			free := func() {
				if err := os.Remove(filler); err != nil {
					t.Fatal(err)
				}
			}
			if c.stopped {
				h.stopBot()
				free()
				h.startBot()
			} else {
				// Before the footer was shown, with a reserve; not at all
				// without one, until space is freed.
				if rows := turnRows(t, db); len(rows) != 1 || rows[0].ended != c.reserve {
					t.Fatalf("turns in the file as the footer shows (reserve %v): %+v", c.reserve, rows)
				}
				if _, err := os.Stat(store.ReservePath(db)); c.reserve && !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the reserve is still there (%v): the turn's end was written without it?", err)
				}
				free()
			}
			var rows []turnRow
			testkit.WaitForf(t, 30*time.Second, func() bool {
				rows = turnRows(t, db)
				return len(rows) == 1 && (rows[0].ended || c.stopped)
			}, func() string { return fmt.Sprintf("turns in the file: %+v", rows) })
			if !c.stopped && (rows[0].subtype != "success" || rows[0].cost <= 0) {
				t.Errorf("recorded %+v; want the turn's success and its cost", rows[0])
			}
			from := len(h.out.Lines())
			if !c.stopped {
				h.restart()
			}
			h.say("status")
			if c.stopped {
				h.expect(`^\[main\] \* The bot restarted during Claude's turn on “write the report”, started .*, before that turn's end was recorded, so the bot cannot tell whether it finished: if Claude's answer above ends with its footer, it did;`)
				h.expect(`Cost so far: \$0\.0+ over 1 turn \(1 whose end a restart of the bot left unrecorded, cost unknown\)$`)
			} else {
				h.expect(`Cost so far: \$0\.\d*[1-9]\d* over 1 turn$`)
				h.absent(from, `restarted`)
			}
			h.absent(0, `cut off`)
		})
	}
}
