package slack_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

func toolMsg(t adapters.Tool) adapters.Message {
	return adapters.Message{Kind: adapters.KindTool, Tool: &t}
}

// TestToolInputShownWhole: a command of several lines shows every line in
// a code block under the tool's line, as it runs and once it is done.
func TestToolInputShownWhole(t *testing.T) {
	s := newSolo(t)
	th := s.thread()
	run := adapters.Tool{Name: "Bash", Input: "cd /src &&\n  make test &&\n  make deploy @here", State: adapters.ToolRunning}
	ref, err := s.ad.Direct().Post(t.Context(), th, toolMsg(run))
	if err != nil {
		t.Fatal(err)
	}
	want := "```\ncd /src &amp;&amp;\n  make test &amp;&amp;\n  make deploy @\u200bhere\n```"
	m, _ := s.fs.Message(general, ref.ID)
	if secs := sections(m); len(secs) != 1 || secs[0] != want {
		t.Errorf("running: sections %q, want %q", secs, want)
	}
	done := run
	done.State, done.Elapsed, done.Preview = adapters.ToolOK, time.Second, "ok"
	if err := s.ad.Direct().Edit(t.Context(), ref, toolMsg(done)); err != nil {
		t.Fatal(err)
	}
	m = s.waitMessage(general, ref.ID, "✓ *Bash* · 1s — ok")
	if secs := sections(m); len(secs) != 1 || secs[0] != want {
		t.Errorf("done: sections %q", secs)
	}
	// A short one-line input stays in the line.
	ref, err = s.ad.Direct().Post(t.Context(), th, toolMsg(adapters.Tool{Name: "Bash", Input: "ls -la", State: adapters.ToolRunning}))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := s.fs.Message(general, ref.ID); len(sections(m)) != 0 || !strings.Contains(m.VisibleText(), "⚙ *Bash* `ls -la`") {
		t.Errorf("one-line input: %q", m.VisibleText())
	}
	s.noViolations()
}

// TestLongToolInputUploadedOnce: an input too long for the tool's message
// goes up whole as a file before the line, once however often the line is
// edited; the line shows its head and says where the rest is.
func TestLongToolInputUploadedOnce(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&b, "printf 'step %03d of a long script'\n", i)
	}
	input := b.String() + "echo the end"
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("upload fails=%v", fail), func(t *testing.T) {
			s := newSolo(t)
			th := s.thread()
			if fail {
				s.fs.Fail("files.getUploadURLExternal", fakeslack.Fault{Error: "internal_error"})
			}
			run := adapters.Tool{Name: "Bash", Input: input, State: adapters.ToolRunning}
			ref, err := s.ad.Direct().Post(t.Context(), th, toolMsg(run))
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 3; i++ {
				run.Elapsed = time.Duration(i) * time.Second
				if err := s.ad.Direct().Edit(t.Context(), ref, toolMsg(run)); err != nil {
					t.Fatal(err)
				}
			}
			run.State, run.Preview = adapters.ToolOK, "done"
			if err := s.ad.Direct().Edit(t.Context(), ref, toolMsg(run)); err != nil {
				t.Fatal(err)
			}
			m := s.waitMessage(general, ref.ID, "— done")
			where := "the whole input is in the file above"
			if fail {
				where = "the whole input could not be uploaded"
			}
			code := sections(m)[0]
			if !strings.HasPrefix(code, "```\nprintf 'step 001 of a long script'\n") || !strings.HasSuffix(code, where+"._") || strings.Contains(code, "the end") {
				t.Errorf("the tool's input block:\n%s", code)
			}
			msgs := s.botMessages(th)
			files := 0
			for _, m := range msgs {
				for _, f := range m.Files {
					files++
					if f.Name != "bash-input.txt" || string(f.Content) != input {
						t.Errorf("file %s: %d bytes", f.Name, len(f.Content))
					}
				}
			}
			if want := map[bool]int{false: 1, true: 0}[fail]; files != want || len(s.fs.Calls("files.getUploadURLExternal")) != 1 {
				t.Errorf("%d input files, %d upload attempts; want %d, 1", files, len(s.fs.Calls("files.getUploadURLExternal")), want)
			}
			if !fail && (len(msgs) != 2 || len(msgs[0].Files) != 1 || msgs[1].TS != ref.ID) {
				t.Errorf("want the file, then the tool's line: %d messages", len(msgs))
			}
			s.noViolations()
		})
	}
}
