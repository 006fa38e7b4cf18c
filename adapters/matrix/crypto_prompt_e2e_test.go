//go:build goolm

package matrix_test

import "testing"

// TestLongDetailGoesUpEncrypted: in an encrypted room the whole detail
// goes up as an encrypted attachment, before the prompt.
func TestLongDetailGoesUpEncrypted(t *testing.T) {
	s := newSolo(t, soloOptions{crypto: true})
	checkLongDetailPrompt(t, s, s.room(s.alice, true), true)
}
