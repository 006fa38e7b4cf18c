package fakeslack

import (
	"context"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// TestFileShareMentions: a file shared into a thread with an
// initial_comment lands there, bytes and title as sent, and with
// ForbidMentions a comment showing a live mention is caught like any
// other bot write; an inert one is not.
func TestFileShareMentions(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{NoBotEcho: true, ForbidMentions: true})
	api := newAPI(srv)
	ctx := context.Background()
	parent := srv.Post(alice, general, "a thread")
	share := func(comment string) *slack.FileSummary {
		t.Helper()
		f, err := api.UploadFileContext(ctx, slack.UploadFileParameters{
			Reader: strings.NewReader("data"), FileSize: 4, Filename: "a.txt", Title: "A <!here>",
			Channel: general, ThreadTimestamp: parent, InitialComment: comment,
		})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	share("&lt;!channel&gt; is inert")
	if v := srv.Violations(); len(v) != 0 {
		t.Fatalf("an inert comment or a title counted as a mention: %q", v)
	}
	f := share("hey <!channel>")
	v := srv.Violations()
	if len(v) != 1 || !strings.Contains(v[0], "files.completeUploadExternal") || !strings.Contains(v[0], "<!channel>") {
		t.Fatalf("a live mention in initial_comment: violations %q", v)
	}
	th := srv.Thread(general, parent)
	last := th[len(th)-1]
	if len(last.Files) != 1 || last.Files[0].ID != f.ID || string(last.Files[0].Content) != "data" ||
		last.Files[0].Title != "A <!here>" || last.ThreadTS != parent {
		t.Errorf("the thread ends with %+v, want the file %s", last, f.ID)
	}
	if got := strings.Join(last.LiveMentions(), ","); got != "<!channel>" {
		t.Errorf("the share shows live mentions %q, want <!channel>", got)
	}
}
