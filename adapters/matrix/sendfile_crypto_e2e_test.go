//go:build goolm

package matrix_test

import "testing"

// TestPostFileEncrypted: in an encrypted room the file goes up encrypted
// (referenced by "file", never by a clear "url"), in the thread after the
// text before it, and alice's client decrypts exactly the bytes sent.
func TestPostFileEncrypted(t *testing.T) {
	s := newSolo(t, soloOptions{crypto: true})
	room := s.room(s.alice, true)
	_, m := checkPostFile(t, s, room)
	if m.Raw["file"] == nil || m.Raw["url"] != nil {
		t.Errorf("not an encrypted attachment: %v", m.Raw)
	}
}
