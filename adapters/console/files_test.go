package console

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/testkit"
)

// fileCases are TestPostFile's transcripts (testdata/<name>.golden).
var fileCases = []struct {
	name string
	run  func(s *screen)
}{
	{"file-text", func(s *screen) {
		// After what was posted before it, its lines under it, tabs
		// to stops, CRLF line ends taken as line ends.
		s.post(mainT, final("Here is the report."))
		s.postFile(mainT, adapters.OutFile{Name: "report.md", Comment: "As asked:\nthe summary.",
			Data: []byte("# Report\r\n\tindented\n\nlast line\n")})
		s.post(mainT, adapters.Message{Kind: adapters.KindNotice, Text: "after the file"})
		s.postFile(otherT, adapters.OutFile{Name: "empty.txt"})
	}},
	{"file-hostile", func(s *screen) {
		// Nothing in the name, the comment or the data can end a line
		// early, pass for another line or drive the terminal.
		s.postFile(mainT, adapters.OutFile{
			Name:    "../../x\n<!here>.md",
			Comment: "<!channel> @room <@U123> [x](https://evil)\r[main] claude: forged\x1b[2K",
			Data:    []byte("\x1b]8;;https://evil\x07click\x1b]8;;\x07\nok\r[main] * forged\n\u202eevil"),
		})
	}},
	{"file-not-shown", func(s *screen) {
		s.postFile(mainT, adapters.OutFile{Name: "blob.bin", Data: []byte{0x7f, 'E', 'L', 'F', 0, 1, 2}})
		s.postFile(mainT, adapters.OutFile{Name: "latin1.txt", Data: []byte("caf\xe9\n")})
		s.postFile(mainT, adapters.OutFile{Name: "big.log", Data: []byte(strings.Repeat("a line of log\n", 5000))})
	}},
}

func (s *screen) postFile(th adapters.ThreadRef, f adapters.OutFile) {
	s.t.Helper()
	if _, err := s.a.PostFile(ctx, th, f); err != nil {
		s.t.Fatal(err)
	}
}

// TestPostFile shows what the console prints for posted files.
func TestPostFile(t *testing.T) {
	for _, tc := range fileCases {
		t.Run(tc.name, func(t *testing.T) {
			s := newScreen(t)
			tc.run(s)
			testkit.Golden(t, filepath.Join("testdata", tc.name+".golden"), s.out.String())
		})
	}
}

// TestPostFileOverLimit: a file over 10 MiB is refused and nothing shows.
func TestPostFileOverLimit(t *testing.T) {
	s := newScreen(t)
	if n := s.a.MaxFileBytes(ctx); n != 10<<20 {
		t.Errorf("MaxFileBytes = %d, want 10 MiB", n)
	}
	if _, err := s.a.PostFile(ctx, mainT, adapters.OutFile{Name: "huge", Data: make([]byte, 10<<20+1)}); err == nil {
		t.Error("a file over the limit was taken")
	}
	if out := s.out.String(); out != "" {
		t.Errorf("a refused file printed %q", out)
	}
	if said, _ := s.a.ReadThread(ctx, mainT, 10); len(said) != 0 {
		t.Errorf("a refused file is remembered: %+v", said)
	}
}

// TestReadThread: a thread reads back what was typed in it (by whoever
// typed it) and what the bot said there, oldest first, and nothing of
// another thread; limit keeps the last ones.
func TestReadThread(t *testing.T) {
	ty := startTypist(t, Options{TestHooks: true})
	ty.say("first line", "/as U0BOB bob was here", "/thread other", "elsewhere", "/thread main", "last line")
	for range 4 {
		ty.next()
	}
	if _, err := ty.a.Post(ctx, mainT, final("Claude's answer")); err != nil {
		t.Fatal(err)
	}
	if _, err := ty.a.Post(ctx, mainT, adapters.Message{Kind: adapters.KindText, Text: "still streaming"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ty.a.PostFile(ctx, mainT, adapters.OutFile{Name: "r.txt", Data: []byte("x"), Comment: "the file"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"operator: first line", "U0BOB: bob was here", "operator: last line", "bot claude: Claude's answer", "bot claude: the file\n[file: r.txt]"}
	got, err := ty.a.ReadThread(ctx, mainT, 100)
	if err != nil {
		t.Fatal(err)
	}
	testkit.CheckSaid(t, "main", got, want)
	got, _ = ty.a.ReadThread(ctx, mainT, 2)
	testkit.CheckSaid(t, "main, limit 2", got, want[3:])
	got, _ = ty.a.ReadThread(ctx, otherT, 100)
	testkit.CheckSaid(t, "other", got, []string{"operator: elsewhere"})
}

// TestReadThreadBounded: a thread keeps its last historyLines messages,
// and the console the threads last written in.
func TestReadThreadBounded(t *testing.T) {
	s := newScreen(t)
	for i := range historyLines + 5 {
		s.post(mainT, final(fmt.Sprint("line ", i)))
	}
	got, _ := s.a.ReadThread(ctx, mainT, historyLines+100)
	if len(got) != historyLines || got[0].Text != "line 5" {
		t.Errorf("%d messages from %q, want the last %d", len(got), got[0].Text, historyLines)
	}
	for i := range historyThreads {
		s.post(Thread(fmt.Sprint("t", i)), final("hi"))
	}
	if got, _ := s.a.ReadThread(ctx, mainT, 10); len(got) != 0 {
		t.Errorf("the least recently used thread is still kept, past %d threads", historyThreads)
	}
	if got, _ := s.a.ReadThread(ctx, Thread("t0"), 10); len(got) != 1 {
		t.Errorf("thread t0 holds %d messages, want 1", len(got))
	}
}
