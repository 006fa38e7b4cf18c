//go:build goolm

package matrix_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"

	"maunium.net/go/mautrix/crypto/attachment"
	"maunium.net/go/mautrix/event"
)

// TestEncryptedFileIsDecryptedAndChecked: in an encrypted room a file is
// decrypted as it is read and saved; one whose ciphertext does not match
// its hash is not saved, and the sender is told.
func TestEncryptedFileIsDecryptedAndChecked(t *testing.T) {
	var meter mediaMeter
	o := metered(&meter)
	o.crypto = true
	h := newHarness(t, o)
	room := h.room(true)
	root := h.mention(h.alice, room, "secret files follow")
	h.waitBot(room, root, `ok: .*secret files follow`)

	h.alice.SendFile(room, root, "plan.txt", "text/plain", []byte("the secret plan\n"))
	h.waitBot(room, root, `ok: .*plan\.txt`)
	if b, err := os.ReadFile(attachedPath(h.dir, "plan.txt")); err != nil || string(b) != "the secret plan\n" {
		t.Errorf("plan.txt: %q %v, want the plaintext", b, err)
	}

	// The hash names other bytes than those uploaded.
	ef := attachment.NewEncryptedFile()
	cipher := ef.Encrypt([]byte("swapped content\n"))
	other := sha256.Sum256([]byte("what the sender meant"))
	ef.Hashes.SHA256 = base64.RawStdEncoding.EncodeToString(other[:])
	up, err := h.alice.Matrix.UploadBytes(t.Context(), cipher, "application/octet-stream")
	if err != nil {
		t.Fatal(err)
	}
	info := event.EncryptedFileInfo{EncryptedFile: *ef, URL: up.ContentURI.CUString()}
	raw, _ := json.Marshal(info)
	var file map[string]any
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	content := fileEvent("swapped.txt", "", len(cipher), root, "")
	delete(content, "url")
	content["file"] = file
	h.alice.SendRaw(room, event.EventMessage, content)
	h.waitBot(room, root, `swapped\.txt.*did not check out`)
	h.waitBot(room, root, `ok: .*not saved: .swapped\.txt`)
	if p := attachedPath(h.dir, "swapped.txt"); p != "" {
		t.Errorf("%s was saved though its hash does not match", p)
	}
	if n := meter.downloads.Load(); n != 2 {
		t.Errorf("%d media downloads, want 2", n)
	}
}
