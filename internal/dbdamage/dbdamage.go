// Package dbdamage damages a real SQLite database file the way a failing
// disk does, for the tests of what the bot does with it: an interior page
// of a table's b-tree overwritten, so that SQLite's own quick_check finds
// it and reads through it fail with "database disk image is malformed".
// It knows SQLite's file format, not the bot's code.
package dbdamage

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" driver
)

// Interior overwrites the cells of the root page of table in the
// database file db, which must be an interior b-tree page (the table
// holds more than one page of rows), and checks that quick_check now
// reports the damage. It returns the page's number. The page must be in
// the main file (not newer in the -wal): a database closed, or
// checkpointed, since the table was last written.
func Interior(t testing.TB, db, table string) int {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var pageSize, root int
	err = conn.QueryRow("PRAGMA page_size").Scan(&pageSize)
	if err == nil {
		err = conn.QueryRow("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&root)
	}
	conn.Close()
	if err != nil {
		t.Fatalf("find table %s's root page in %s: %v", table, db, err)
	}
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	off := int64(root-1) * int64(pageSize)
	head := make([]byte, 12)
	if _, err := f.ReadAt(head, off); err != nil {
		t.Fatal(err)
	}
	// 0x05: an interior table b-tree page; 0x02: an interior index page.
	if head[0] != 0x05 && head[0] != 0x02 {
		t.Fatalf("table %s's root page %d is of type %#x, not interior: give it more rows", table, root, head[0])
	}
	cells := int(binary.BigEndian.Uint16(head[3:5]))
	// The right-most child pointer (bytes 8-11, which an append follows)
	// and the cell pointers (after them) point past the file's end and
	// the page's: every child is lost.
	junk := make([]byte, 4+2*cells)
	for i := range junk {
		junk[i] = 0xff
	}
	junk[0] = 0x7f // a page number is a positive 32-bit integer
	if _, err := f.WriteAt(junk, off+8); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if res := QuickCheck(t, db); res == "ok" {
		t.Fatalf("page %d of %s overwritten, yet quick_check says ok", root, db)
	}
	return root
}

// QuickCheck is SQLite's PRAGMA quick_check of the file db on a
// connection of its own: "ok", or its first finding (or the error that
// stopped it).
func QuickCheck(t testing.TB, db string) string {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var res string
	if err := conn.QueryRow("PRAGMA quick_check").Scan(&res); err != nil {
		return fmt.Sprintf("error: %v", err)
	}
	return res
}

// Filled makes a new SQLite file at path holding table "rows" with rows
// enough to span pages (its root an interior page), for a test that needs
// a sound file to damage, without the bot's schema.
func Filled(t testing.TB, path string) {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.Exec(`CREATE TABLE rows (id INTEGER PRIMARY KEY, text TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
INSERT INTO rows (text) SELECT printf('%.200c', 'x') || i FROM n;`)
	if err != nil {
		t.Fatal(err)
	}
}
