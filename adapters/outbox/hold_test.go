package outbox

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

const hold = 40 * time.Millisecond

// TestEditorHold: a held final edit is sent once, by whatever releases it
// first, and never lost. The time is synctest's: "at once" means before
// the bubble's clock moved, "at the deadline" exactly Config.Hold later.
func TestEditorHold(t *testing.T) {
	cases := []struct {
		name string
		// release acts on the editor once the final edit is held; it
		// returns what the adapter itself sent of it (TakeHeld), if any.
		release func(t *testing.T, e *Editor[string]) []sent
		want    []sent        // what the editor sent, in order
		after   time.Duration // when the last of them was sent
	}{
		{"released by the result: the adapter takes it", func(t *testing.T, e *Editor[string]) []sent {
			id, c, ok, err := e.TakeHeld(context.Background(), "a")
			if !ok || err != nil {
				t.Fatalf("TakeHeld: %q %q %v %v", id, c, ok, err)
			}
			return []sent{{id, c + " + footer"}}
		}, nil, 0},
		{"released by the deadline", func(*testing.T, *Editor[string]) []sent { return nil },
			[]sent{{"a1", "final"}}, hold},
		{"released by a next post", func(t *testing.T, e *Editor[string]) []sent {
			if err := e.FlushThread(context.Background(), "a", false); err != nil {
				t.Fatal(err)
			}
			return nil
		}, []sent{{"a1", "final"}}, 0},
		{"released by another message's final edit in the thread", func(t *testing.T, e *Editor[string]) []sent {
			e.Hold("a", "a2", "second")
			return nil
		}, []sent{{"a1", "final"}, {"a2", "second"}}, hold},
		{"released by stop (Close)", func(t *testing.T, e *Editor[string]) []sent {
			e.Close()
			return nil
		}, []sent{{"a1", "final"}}, 0},
		{"a newer edit supersedes the hold", func(t *testing.T, e *Editor[string]) []sent {
			e.Set("a", "a1", "newer", true)
			return nil
		}, []sent{{"a1", "newer"}}, 0},
		{"another thread's post leaves it held", func(t *testing.T, e *Editor[string]) []sent {
			if err := e.FlushThread(context.Background(), "b", false); err != nil {
				t.Fatal(err)
			}
			return nil
		}, []sent{{"a1", "final"}}, hold},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRecorder()
				e := NewEditor(Config{Interval: interval, Hold: hold}, r.send)
				defer e.Close()
				start := time.Now()
				e.Hold("a", "a1", "final")
				synctest.Wait()
				if got := r.got(); len(got) != 0 {
					t.Fatalf("sent while held: %v", got)
				}
				took := c.release(t, e)
				// The bubble's clock moves only when every goroutine waits:
				// when the sends first match is when the last was made.
				for synctest.Wait(); !slices.Equal(r.got(), c.want) && time.Since(start) < time.Second; synctest.Wait() {
					time.Sleep(time.Millisecond)
				}
				if got := r.got(); !slices.Equal(got, c.want) {
					t.Fatalf("sent %v, want %v", got, c.want)
				}
				if d := time.Since(start); d != c.after {
					t.Errorf("the last send %v after the hold, want %v", d, c.after)
				}
				if c.want == nil && len(took) != 1 {
					t.Errorf("neither sent nor taken: %v", took)
				}
				time.Sleep(time.Second) // nothing more comes later
				synctest.Wait()
				if got := r.got(); !slices.Equal(got, c.want) {
					t.Errorf("later sent %v, want %v", got, c.want)
				}
			})
		})
	}
}

// TestEditorTakeHeldAfterSendInFlight: the adapter's own send of a held
// edit comes after the message's send in flight; when it cannot wait for
// it (the turn is cut, its context ends) the held edit stays in the
// editor and still lands.
func TestEditorTakeHeldAfterSendInFlight(t *testing.T) {
	cases := []struct {
		name    string
		wait    time.Duration // how long TakeHeld may wait
		taken   bool
		want    []sent
		wantErr bool
	}{
		{"taken once the live edit landed", time.Second, true, []sent{{"a1", "live"}}, false},
		{"the context ends: left to the editor", 10 * time.Millisecond, false, []sent{{"a1", "live"}, {"a1", "final"}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRecorder()
				gate := make(chan struct{})
				r.gate = gate
				e := NewEditor(Config{Interval: interval, Hold: hold}, r.send)
				defer e.Close()
				e.Set("a", "a1", "live", false)
				synctest.Wait() // the live edit is in flight, held at the gate
				e.Hold("a", "a1", "final")
				go func() {
					time.Sleep(20 * time.Millisecond)
					close(gate)
				}()
				ctx, cancel := context.WithTimeout(context.Background(), c.wait)
				defer cancel()
				_, got, ok, err := e.TakeHeld(ctx, "a")
				if ok != c.taken || (err != nil) != c.wantErr || ok && got != "final" {
					t.Fatalf("TakeHeld: %q %v %v", got, ok, err)
				}
				if ok && len(r.got()) != 1 {
					t.Errorf("taken before the send in flight ended: %v", r.got())
				}
				time.Sleep(time.Second)
				synctest.Wait()
				if s := r.got(); !slices.Equal(s, c.want) {
					t.Errorf("sent %v, want %v", s, c.want)
				}
			})
		})
	}
}
