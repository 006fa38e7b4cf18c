//go:build goolm

package matrix_test

import "testing"

// TestReadThreadEncrypted: checkReadThread in an encrypted room, every
// message, edit and poll decrypted by the bot's crypto machine.
func TestReadThreadEncrypted(t *testing.T) { checkReadThread(t, true) }
