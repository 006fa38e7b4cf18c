package console

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// TestConnStatus: connecting before Run; connected while Run reads (a line
// is delivered); disconnected, saying the input ended, once it has.
func TestConnStatus(t *testing.T) {
	in, w := io.Pipe()
	a := New(Options{In: in, Out: io.Discard})
	if st := a.ConnStatus(); st.State != adapters.Connecting || st.Via != "terminal" {
		t.Fatalf("before Run: %+v", st)
	}
	got := make(chan adapters.ConnStatus, 1)
	done := make(chan error, 1)
	go func() {
		done <- a.Run(context.Background(), func(context.Context, adapters.Event) error {
			got <- a.ConnStatus() // while Run reads
			return nil
		})
	}()
	if _, err := io.WriteString(w, "hello\n"); err != nil {
		t.Fatal(err)
	}
	if st := <-got; st.State != adapters.Connected || st.LastError != "" {
		t.Errorf("while reading: %+v", st)
	}
	w.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after its input ended")
	}
	if st := a.ConnStatus(); st.State != adapters.Disconnected || st.LastError != "console input ended" {
		t.Errorf("after the input ended: %+v", st)
	}
}
