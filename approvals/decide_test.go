package approvals

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"
)

// decideStep is one action in a decideCases sequence and what it must leave.
type decideStep struct {
	advance      time.Duration
	cancel       bool // Cancel by the request's request_id instead of deciding
	expire       bool // Expire() instead of deciding
	expireThread bool // ExpireThread(T1) instead of deciding
	id           string
	d            Decision
	wantErr      error  // a sentinel; nil for success
	wantBy       string // AlreadyDecidedError.By
	wantState    State  // the entry's state after the step
}

// decideAnswers is a valid answer to questionRequest's one question.
var decideAnswers = map[string]string{"Which color?": "Blue"}

// decideCases is TestDecide's table, at package level so the test stays
// short: each case is a request and the click sequence run against it.
var decideCases = []struct {
	name  string
	req   Request
	tout  time.Duration // registry timeout; 0 means the default
	steps []decideStep
}{
	{"non-decider refused then starter succeeds", toolRequest(), 0, []decideStep{
		{d: Decision{Choice: ChoiceAllow, By: other}, wantErr: ErrNotAllowed, wantState: StatePending},
		{d: Decision{Choice: ChoiceAllow, By: starter}, wantState: StateAllowed},
	}},
	{"admin succeeds", toolRequest(), 0, []decideStep{
		{d: Decision{Choice: ChoiceDeny, Reason: "Too risky", By: admin}, wantState: StateDenied},
	}},
	{"anonymous click refused", toolRequest(), 0, []decideStep{
		{d: Decision{Choice: ChoiceAllow, By: ""}, wantErr: ErrNotAllowed, wantState: StatePending},
	}},
	{"forged id", toolRequest(), 0, []decideStep{
		{id: "deadbeef", d: Decision{Choice: ChoiceAllow, By: starter}, wantErr: ErrUnknown, wantState: StatePending},
	}},
	{"repeated click names the first decider", toolRequest(), 0, []decideStep{
		{d: Decision{Choice: ChoiceAllowThread, By: starter}, wantState: StateAllowed},
		{d: Decision{Choice: ChoiceAllowThread, By: starter}, wantErr: ErrAlreadyDecided, wantBy: starter, wantState: StateAllowed},
		{d: Decision{Choice: ChoiceDeny, By: admin}, wantErr: ErrAlreadyDecided, wantBy: starter, wantState: StateAllowed},
		{d: Decision{Choice: ChoiceDeny, By: other}, wantErr: ErrNotAllowed, wantState: StateAllowed},
	}},
	{"late click after expiry", toolRequest(), 0, []decideStep{
		{advance: timeout + time.Second, d: Decision{Choice: ChoiceAllow, By: starter}, wantErr: ErrExpired, wantState: StateExpired},
		{d: Decision{Choice: ChoiceAllow, By: admin}, wantErr: ErrExpired, wantState: StateExpired},
		{advance: -time.Hour, d: Decision{Choice: ChoiceAllow, By: admin}, wantErr: ErrExpired, wantState: StateExpired},
	}},
	{"click exactly at expiry", toolRequest(), 0, []decideStep{
		{advance: timeout, d: Decision{Choice: ChoiceAllow, By: starter}, wantErr: ErrExpired, wantState: StateExpired},
	}},
	{"click just before expiry", toolRequest(), 0, []decideStep{
		{advance: timeout - time.Nanosecond, d: Decision{Choice: ChoiceAllow, By: starter}, wantState: StateAllowed},
	}},
	{"non-decider after expiry is refused, not told", toolRequest(), 0, []decideStep{
		{advance: timeout, d: Decision{Choice: ChoiceAllow, By: other}, wantErr: ErrNotAllowed, wantState: StatePending},
	}},
	{"no timeout never expires", toolRequest(), -1, []decideStep{
		{advance: 1000 * time.Hour, expire: true, wantState: StatePending},
		{d: Decision{Choice: ChoiceAllow, By: starter}, wantState: StateAllowed},
	}},
	{"cancel then decide", toolRequest(), 0, []decideStep{
		{cancel: true, wantState: StateCancelled},
		{d: Decision{Choice: ChoiceAllow, By: starter}, wantErr: ErrCancelled, wantState: StateCancelled},
		{d: Decision{Choice: ChoiceDeny, By: admin}, wantErr: ErrCancelled, wantState: StateCancelled},
	}},
	{"cancel after decision changes nothing", toolRequest(), 0, []decideStep{
		{d: Decision{Choice: ChoiceDeny, By: starter}, wantState: StateDenied},
		{cancel: true, wantState: StateDenied},
	}},
	{"expire sweep then click", toolRequest(), 0, []decideStep{
		{advance: timeout, expire: true, wantState: StateExpired},
		{d: Decision{Choice: ChoiceAllow, By: starter}, wantErr: ErrExpired, wantState: StateExpired},
	}},
	{"expire sweep before the deadline", toolRequest(), 0, []decideStep{
		{advance: time.Minute, expire: true, wantState: StatePending},
		{d: Decision{Choice: ChoiceAllow, By: starter}, wantState: StateAllowed},
	}},
	{"process died then click", toolRequest(), 0, []decideStep{
		{expireThread: true, wantState: StateExpired},
		{d: Decision{Choice: ChoiceAllow, By: starter}, wantErr: ErrExpired, wantState: StateExpired},
	}},
	{"expiry does not undo a decision", toolRequest(), 0, []decideStep{
		{d: Decision{Choice: ChoiceAllow, By: starter}, wantState: StateAllowed},
		{advance: time.Hour, expire: true, wantState: StateAllowed},
		{expireThread: true, wantState: StateAllowed},
	}},
	{"unknown choice refused, then a valid one", toolRequest(), 0, []decideStep{
		{d: Decision{Choice: "yes", By: starter}, wantErr: ErrInvalidDecision, wantState: StatePending},
		{d: Decision{Choice: "", By: starter}, wantErr: ErrInvalidDecision, wantState: StatePending},
		{d: Decision{Choice: ChoiceAllowAlways, By: starter}, wantErr: ErrAdminOnly, wantState: StatePending},
		{d: Decision{Choice: ChoiceAllowAlways, By: admin}, wantState: StateAllowed},
	}},
	{"folder grant by the starter", toolRequest(), 0, []decideStep{
		{d: Decision{Choice: ChoiceAllowFolder, By: starter}, wantState: StateAllowed},
	}},
	{"answers on a tool request", toolRequest(), 0, []decideStep{
		{d: Decision{Choice: ChoiceAllow, Answers: decideAnswers, By: starter}, wantErr: ErrInvalidDecision, wantState: StatePending},
	}},
	{"question answered", questionRequest(), 0, []decideStep{
		{d: Decision{Choice: ChoiceAllowThread, Answers: decideAnswers, By: starter}, wantErr: ErrInvalidDecision, wantState: StatePending},
		{d: Decision{Choice: ChoiceAllowAlways, Answers: decideAnswers, By: starter}, wantErr: ErrInvalidDecision, wantState: StatePending},
		{d: Decision{Choice: ChoiceAllow, By: starter}, wantErr: ErrInvalidDecision, wantState: StatePending},
		{d: Decision{Choice: ChoiceAllow, Answers: map[string]string{"Color": "Blue"}, By: starter}, wantErr: ErrInvalidDecision, wantState: StatePending},
		{d: Decision{Choice: ChoiceAllow, Answers: decideAnswers, By: other}, wantErr: ErrNotAllowed, wantState: StatePending},
		{d: Decision{Choice: ChoiceAllow, Answers: decideAnswers, By: starter}, wantState: StateAllowed},
		{d: Decision{Choice: ChoiceAllow, Answers: map[string]string{"Which color?": "Red"}, By: admin}, wantErr: ErrAlreadyDecided, wantBy: starter, wantState: StateAllowed},
	}},
	{"question declined", questionRequest(), 0, []decideStep{
		{d: Decision{Choice: ChoiceDeny, Reason: "skip", By: admin}, wantState: StateDenied},
	}},
	{"question expired", questionRequest(), 0, []decideStep{
		{advance: timeout, d: Decision{Choice: ChoiceAllow, Answers: decideAnswers, By: starter}, wantErr: ErrExpired, wantState: StateExpired},
	}},
}

// TestDecide runs click sequences against one request: forged, late,
// duplicate and concurrent-in-spirit clicks, cancellations and expiry.
func TestDecide(t *testing.T) {
	for _, tt := range decideCases {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			tout := timeout
			if tt.tout < 0 {
				tout = 0
			}
			r := NewRegistry([]string{admin}, tout, c.Now)
			p := r.Add(tt.req)
			var decided *Decision
			for i, s := range tt.steps {
				c.Advance(s.advance)
				switch {
				case s.cancel:
					r.Cancel(tt.req.RequestID)
				case s.expire:
					r.Expire()
				case s.expireThread:
					r.ExpireThread(tt.req.ThreadKey)
				default:
					id := p.ID
					if s.id != "" {
						id = s.id
					}
					got, err := r.Decide(id, s.d)
					if !errors.Is(err, s.wantErr) || (s.wantErr == nil) != (err == nil) {
						t.Fatalf("step %d: Decide(%+v) err = %v, want %v", i, s.d, err, s.wantErr)
					}
					if s.wantBy != "" {
						var ade *AlreadyDecidedError
						if !errors.As(err, &ade) || ade.By != s.wantBy {
							t.Fatalf("step %d: err = %v, want AlreadyDecidedError by %s", i, err, s.wantBy)
						}
					}
					if err == nil {
						if got.State != s.wantState || got.Decision.By != s.d.By || got.Decision.Choice != s.d.Choice || got.Decision.Reason != s.d.Reason {
							t.Fatalf("step %d: Decide returned %+v", i, got)
						}
						if !got.Decision.At.Equal(c.Now()) {
							t.Fatalf("step %d: Decision.At = %v, want %v", i, got.Decision.At, c.Now())
						}
						d := got.Decision
						decided = &d
					}
				}
				now, ok := r.Get(p.ID)
				if !ok || now.State != s.wantState {
					t.Fatalf("step %d: state = %q, want %q", i, now.State, s.wantState)
				}
				if decided != nil && (now.Decision.By != decided.By || now.Decision.Choice != decided.Choice) {
					t.Fatalf("step %d: decision changed from %+v to %+v", i, *decided, now.Decision)
				}
			}
		})
	}
}

func TestAlreadyDecidedError(t *testing.T) {
	err := error(&AlreadyDecidedError{By: "X", State: StateAllowed, Choice: ChoiceAllow})
	if got, want := err.Error(), "already decided by X (allowed)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, ErrAlreadyDecided) || errors.Is(err, ErrExpired) {
		t.Error("errors.Is mismatch")
	}
}

func TestDecideConcurrent(t *testing.T) {
	for round := range 20 {
		r, _ := newTestRegistry()
		p := r.Add(toolRequest())
		const n = 16
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			errs  = make([]error, n)
			got   = make([]Pending, n)
		)
		for i := range n {
			by := starter
			if i%2 == 1 {
				by = admin
			}
			choice := []Choice{ChoiceAllow, ChoiceAllowAlways, ChoiceAllowFolder, ChoiceDeny}[i%4] // always: odd i, an admin
			wg.Go(func() {
				<-start
				got[i], errs[i] = r.Decide(p.ID, Decision{Choice: choice, By: by})
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			if err == nil {
				if winner >= 0 {
					t.Fatalf("round %d: two successes: %d and %d", round, winner, i)
				}
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no success: %v", round, errs)
		}
		final, _ := r.Get(p.ID)
		if !reflect.DeepEqual(final.Decision, got[winner].Decision) {
			t.Fatalf("round %d: stored %+v, winner got %+v", round, final.Decision, got[winner].Decision)
		}
		for i, err := range errs {
			if i == winner {
				continue
			}
			var ade *AlreadyDecidedError
			if !errors.As(err, &ade) || ade.By != final.Decision.By || ade.State != final.State || ade.Choice != final.Decision.Choice {
				t.Fatalf("round %d: loser %d: %v, want already decided by %s", round, i, err, final.Decision.By)
			}
		}
	}
}
