package bot

import (
	"context"
	"fmt"
	"github.com/claudeops/claudeops/internal/testkit"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// slotsEpoch is where the slots tests' clocks start.
var slotsEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// hold makes key take a slot for user (as a chat message does), marked
// busy or idle; evicted records the keys asked to give their slot back.
func hold(t *testing.T, s *slots, clk *testkit.Clock, key, user string, limited bool, limit int, busy bool, evicted chan<- string) {
	t.Helper()
	if !s.admit(key, user, limited, limit) {
		t.Fatalf("%s for %s: not admitted", key, user)
	}
	if err := s.acquire(context.Background(), key, func() { evicted <- key }, nil); err != nil {
		t.Fatal(err)
	}
	s.setBusy(key, busy)
	clk.Advance(time.Second) // distinct lastUsed: LRU order is the order taken
}

// admit: the per-user limit counts held and waiting threads; a user at the
// limit gives back their own least recently used idle session (nobody
// else's); with none idle the message is refused; admins are not limited.
func TestSlotsAdmit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   [][4]string // key, user, "busy"|"idle", "admin"|""
		key     string
		user    string
		admin   bool
		limit   int
		want    bool
		evicted string // "" none
		counted int    // user's threads after admit (the new one included if admitted)
	}{
		{name: "under the limit", setup: [][4]string{{"a", "bob", "busy"}}, key: "b", user: "bob", limit: 2, want: true, counted: 2},
		{name: "own idle evicted, LRU first", setup: [][4]string{{"a", "bob", "idle"}, {"b", "bob", "idle"}}, key: "c", user: "bob", limit: 2, want: true, evicted: "a", counted: 2},
		{name: "busy ones skipped", setup: [][4]string{{"a", "bob", "busy"}, {"b", "bob", "idle"}}, key: "c", user: "bob", limit: 2, want: true, evicted: "b", counted: 2},
		{name: "none idle: refused", setup: [][4]string{{"a", "bob", "busy"}, {"b", "bob", "busy"}}, key: "c", user: "bob", limit: 2, want: false, counted: 2},
		{name: "others' idle sessions are not bob's to give", setup: [][4]string{{"a", "bob", "busy"}, {"x", "carol", "idle"}}, key: "c", user: "bob", limit: 1, want: false, counted: 1},
		{name: "admin sessions do not count", setup: [][4]string{{"a", "bob", "busy", "admin"}, {"b", "bob", "busy", "admin"}}, key: "c", user: "bob", limit: 1, want: true, counted: 1},
		{name: "admin not limited", setup: [][4]string{{"a", "op", "busy", "admin"}, {"b", "op", "busy", "admin"}}, key: "c", user: "op", admin: true, limit: 1, want: true, counted: 0},
		{name: "a thread already holding passes", setup: [][4]string{{"a", "bob", "busy"}}, key: "a", user: "bob", limit: 1, want: true, counted: 1},
		{name: "no limit", setup: [][4]string{{"a", "bob", "busy"}, {"b", "bob", "busy"}}, key: "c", user: "bob", limit: 0, want: true, counted: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testkit.NewClock(slotsEpoch)
			s := newSlots(8, clk.Now)
			evicted := make(chan string, 8)
			for _, h := range tc.setup {
				hold(t, s, clk, h[0], h[1], h[3] != "admin", 100, h[2] == "busy", evicted)
			}
			limited := !tc.admin
			if got := s.admit(tc.key, tc.user, limited, tc.limit); got != tc.want {
				t.Fatalf("admit = %v, want %v", got, tc.want)
			}
			select {
			case k := <-evicted:
				if k != tc.evicted {
					t.Errorf("evicted %s, want %q", k, tc.evicted)
				}
			case <-time.After(200 * time.Millisecond):
				if tc.evicted != "" {
					t.Errorf("nothing evicted, want %s", tc.evicted)
				}
			}
			if n := s.userThreads(tc.user); n != tc.counted {
				t.Errorf("%s counts %d threads, want %d", tc.user, n, tc.counted)
			}
		})
	}
}

// An admitted message's place lapses if it never reaches acquire.
func TestSlotsIntentLapses(t *testing.T) {
	clk := testkit.NewClock(slotsEpoch)
	s := newSlots(8, clk.Now)
	if !s.admit("a", "bob", true, 1) {
		t.Fatal("not admitted")
	}
	if s.admit("b", "bob", true, 1) {
		t.Fatal("second thread admitted over the limit of 1")
	}
	clk.Advance(intentTTL + time.Second)
	if !s.admit("b", "bob", true, 1) {
		t.Fatal("the lapsed place still counts")
	}
}

// Many threads of one user waiting make one notice; another user's, one
// more; unattributed waiters (scheduled runs) one each. Once none of a
// user's threads waits, a later wait is told again.
func TestSlotsOneNoticePerUser(t *testing.T) {
	// In a bubble: once every goroutine waits, every notice that will be
	// told has been told, so the counts are exact.
	synctest.Test(t, func(t *testing.T) {
		clk := testkit.NewClock(slotsEpoch)
		s := newSlots(1, clk.Now)
		evicted := make(chan string, 1)
		hold(t, s, clk, "busy", "op", false, 0, true, evicted)

		var notices sync.Map // user → *atomic.Int32
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wait := func(ctx context.Context, key, user string) {
			if user != "" && !s.admit(key, user, true, 1000) {
				t.Errorf("%s not admitted", key)
				return
			}
			wg.Go(func() {
				_ = s.acquire(ctx, key, func() {}, func(int) {
					n, _ := notices.LoadOrStore(user, new(atomic.Int32))
					n.(*atomic.Int32).Add(1)
				})
			})
		}
		count := func(user string) int32 {
			n, ok := notices.Load(user)
			if !ok {
				return 0
			}
			return n.(*atomic.Int32).Load()
		}
		for i := range 100 {
			wait(ctx, fmt.Sprintf("bob%d", i), "bob")
		}
		for i := range 3 {
			wait(ctx, fmt.Sprintf("carol%d", i), "carol")
			wait(ctx, fmt.Sprintf("sched%d", i), "")
		}
		synctest.Wait()
		if q, b, c, u := s.queued(), count("bob"), count("carol"), count(""); q != 106 || b != 1 || c != 1 || u != 3 {
			t.Errorf("queued %d; notices: bob %d, carol %d, unattributed %d; want 106; 1, 1, 3", q, b, c, u)
		}
		cancel()
		wg.Wait()
		if n := s.queued(); n != 0 {
			t.Fatalf("%d still queued", n)
		}

		// Nothing of bob's waits any more: his next wait is told.
		ctx2, cancel2 := context.WithCancel(context.Background())
		defer cancel2()
		wait(ctx2, "bob-again", "bob")
		synctest.Wait()
		if n := count("bob"); n != 2 {
			t.Errorf("bob told %d times, want 2: his later wait was not told", n)
		}
		cancel2()
		wg.Wait()
	})
}

// A refused user is told at most once a minute.
func TestSlotsTellRefusal(t *testing.T) {
	clk := testkit.NewClock(slotsEpoch)
	s := newSlots(1, clk.Now)
	for i, tc := range []struct {
		user    string
		advance time.Duration
		want    bool
	}{
		{"bob", 0, true},
		{"bob", time.Second, false},
		{"carol", 0, true},
		{"bob", 58 * time.Second, false},
		{"bob", 2 * time.Second, true},
		{"bob", 0, false},
	} {
		clk.Advance(tc.advance)
		if got := s.tellRefusal(tc.user); got != tc.want {
			t.Errorf("step %d (%s): tell %v, want %v", i, tc.user, got, tc.want)
		}
	}
}

// queueWaiters starts an acquire for each key, each queued before the
// next; tell gets the place a waiter is told, and got[key] is closed when
// key gets its slot.
func queueWaiters(t *testing.T, ctx context.Context, s *slots, wg *sync.WaitGroup, keys []string, tell func(key string, pos int)) map[string]chan struct{} {
	t.Helper()
	got := map[string]chan struct{}{}
	for i, key := range keys {
		got[key] = make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.acquire(ctx, key, func() {}, func(pos int) { tell(key, pos) })
			if err == nil {
				close(got[key])
			}
		}()
		testkit.WaitFor(t, waitTimeout, key+" to queue", func() bool { return s.queued() == i+1 })
	}
	return got
}

// slotsDecided is, under the lock, which of the holders give their slot
// back and where each waiter that is stuck (waits on busy sessions) stands.
func slotsDecided(s *slots, holders []string) (evicting []string, stuck map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range holders {
		if sl := s.held[k]; sl != nil && sl.evicting {
			evicting = append(evicting, k)
		}
	}
	stuck = map[string]int{}
	for _, w := range s.waiting {
		select {
		case <-w.stuck:
			stuck[w.key] = w.pos
		default:
		}
	}
	return evicting, stuck
}

// The queue notice is for waiting on busy sessions only: a waiter whose
// slot an idle holder is giving back is told nothing; one that no
// eviction covers is told its place, also when an eviction it counted on
// is refused (keep). Waiters are unattributed (each would be announced).
func TestSlotsNoticeOnlyWhenBusy(t *testing.T) {
	type holder struct {
		key  string
		busy bool
	}
	for _, tc := range []struct {
		name     string
		holders  []holder
		waiters  []string
		action   func(s *slots)
		evicting []string       // holders asked to give their slot back, at the end
		told     map[string]int // waiter: place it is told; absent: told nothing
	}{
		{name: "an idle holder: its slot is on the way, nothing said",
			holders: []holder{{"a", false}}, waiters: []string{"w1"},
			evicting: []string{"a"}, told: map[string]int{}},
		{name: "every holder busy: told its place",
			holders: []holder{{"a", true}}, waiters: []string{"w1"},
			told: map[string]int{"w1": 1}},
		{name: "one idle, one busy, two wait: the second is told",
			holders: []holder{{"a", false}, {"b", true}}, waiters: []string{"w1", "w2"},
			evicting: []string{"a"}, told: map[string]int{"w2": 2}},
		{name: "two idle, two wait: neither is told",
			holders: []holder{{"a", false}, {"b", false}}, waiters: []string{"w1", "w2"},
			evicting: []string{"a", "b"}, told: map[string]int{}},
		{name: "the idle holder keeps its slot: the waiter is told",
			holders: []holder{{"a", false}}, waiters: []string{"w1"},
			action: func(s *slots) { s.keep("a") },
			told:   map[string]int{"w1": 1}},
		{name: "the LRU idle holder keeps its slot, another gives: nothing said",
			holders: []holder{{"a", false}, {"b", false}}, waiters: []string{"w1"},
			action:   func(s *slots) { s.keep("a") },
			evicting: []string{"b"}, told: map[string]int{}},
		{name: "a busy holder goes idle: the told waiter gets its slot",
			holders: []holder{{"a", true}}, waiters: []string{"w1"},
			action:   func(s *slots) { s.setBusy("a", false) },
			evicting: []string{"a"}, told: map[string]int{"w1": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testkit.NewClock(slotsEpoch)
			s := newSlots(len(tc.holders), clk.Now)
			asked := make(chan string, 8)
			for i, h := range tc.holders {
				hold(t, s, clk, h.key, fmt.Sprintf("user%d", i), false, 0, h.busy, asked)
			}
			var mu sync.Mutex
			told := map[string]int{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var wg sync.WaitGroup
			got := queueWaiters(t, ctx, s, &wg, tc.waiters, func(key string, pos int) {
				mu.Lock()
				told[key] = pos
				mu.Unlock()
			})
			if tc.action != nil {
				tc.action(s)
			}

			// Decided under the lock: who gives a slot back, who is stuck.
			var keys []string
			for _, h := range tc.holders {
				keys = append(keys, h.key)
			}
			evicting, stuck := slotsDecided(s, keys)
			if fmt.Sprint(evicting) != fmt.Sprint(tc.evicting) {
				t.Errorf("evicting %v, want %v", evicting, tc.evicting)
			}
			if fmt.Sprint(stuck) != fmt.Sprint(tc.told) {
				t.Errorf("stuck %v, want %v", stuck, tc.told)
			}
			testkit.WaitFor(t, waitTimeout, "the notices", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(told) >= len(tc.told)
			})

			// The slots given back reach the first waiters, which then
			// have heard exactly what was decided.
			for _, k := range evicting {
				s.release(k)
			}
			for _, key := range tc.waiters[:len(evicting)] {
				select {
				case <-got[key]:
				case <-time.After(waitTimeout):
					t.Fatalf("%s did not get the slot given back", key)
				}
			}
			mu.Lock()
			if fmt.Sprint(told) != fmt.Sprint(tc.told) {
				t.Errorf("told %v, want %v", told, tc.told)
			}
			mu.Unlock()
			cancel()
			wg.Wait()
		})
	}
}
