package bot

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/console"
)

// TestAttachedFiles: files that come with a prompt are saved in the
// session's working directory, the prompt says where, and images also go to
// Claude as image content.
func TestAttachedFiles(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var pngData bytes.Buffer
	if err := png.Encode(&pngData, img); err != nil {
		t.Fatal(err)
	}
	err := h.b.Deliver(context.Background(), adapters.Event{
		Kind: adapters.EventMessage, Thread: console.Thread("main"), MessageID: "files-1",
		User: adapters.User{ID: console.OperatorID}, Text: "look at these", Mentioned: true,
		Files: []adapters.File{
			{Name: "notes.txt", MimeType: "text/plain", Data: []byte("remember the milk\n")},
			{Name: "../../escape.png", MimeType: "image/png", Data: pngData.Bytes()},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.expect(`claude: ok: look at these`)
	dir := filepath.Join(h.workdir, "attachments")
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "remember the milk\n" {
		t.Errorf("notes.txt: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "escape.png")); err != nil {
		t.Errorf("image not saved inside attachments/: %v", err)
	}
	reqs := h.api.Requests()
	last := reqs[len(reqs)-1]
	text := last.LastUserText()
	if !bytes.Contains([]byte(text), []byte(filepath.Join(dir, "notes.txt"))) {
		t.Errorf("prompt does not say where the files are: %q", text)
	}
	images := 0
	for _, m := range last.Messages {
		for _, b := range m.Content {
			if b.Type == "image" {
				images++
			}
		}
	}
	if images != 1 {
		t.Errorf("%d image blocks reached the model, want 1", images)
	}
}
