package approvals

import (
	"errors"
	"fmt"
	"maps"
	"time"
)

// Errors of Decide. The caller tells the clicking person which one it was.
var (
	ErrUnknown         = errors.New("unknown approval")
	ErrNotAllowed      = errors.New("not allowed to decide this approval")
	ErrAdminOnly       = errors.New("only admins may allow always")
	ErrExpired         = errors.New("approval expired")
	ErrCancelled       = errors.New("approval cancelled")
	ErrAlreadyDecided  = errors.New("approval already decided")
	ErrInvalidDecision = errors.New("invalid decision")
)

// AlreadyDecidedError is returned by Decide for a request somebody already
// decided; it names them. errors.Is(err, ErrAlreadyDecided) holds.
type AlreadyDecidedError struct {
	By     string
	State  State
	Choice Choice
}

func (e *AlreadyDecidedError) Error() string {
	return fmt.Sprintf("already decided by %s (%s)", e.By, e.State)
}

// Is makes errors.Is(err, ErrAlreadyDecided) true.
func (e *AlreadyDecidedError) Is(target error) bool { return target == ErrAlreadyDecided }

// Decide records d for the request id. The checks run in this order, and
// only a decision that passes them all changes anything:
//
//  1. an unknown id: ErrUnknown;
//  2. d.By may not decide (MayDecide): ErrNotAllowed;
//  3. already allowed or denied: *AlreadyDecidedError naming who decided,
//     also for a repeated click by that same person; expired: ErrExpired;
//     cancelled: ErrCancelled;
//  4. now at or past ExpiresAt: the request becomes StateExpired and the
//     error is ErrExpired;
//  5. the decision must fit the request (ErrInvalidDecision): one of the five
//     choices; for a Question only ChoiceAllow with answers (each key one of
//     the question texts) or ChoiceDeny; answers only for a Question;
//  6. ChoiceAllowAlways (a channel rule) only from an admin of the
//     request's channel: ErrAdminOnly.
//
// Then the allow choices make it StateAllowed, deny
// StateDenied, and d is kept (d.At defaults to now). The first valid
// decision wins. The returned Pending is the entry after the call (zero for
// an unknown id).
func (r *Registry) Decide(id string, d Decision) (Pending, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byID[id]
	if !ok {
		return Pending{}, fmt.Errorf("approval %q: %w", id, ErrUnknown)
	}
	p := &e.p
	if !r.MayDecide(p.ChannelKey, d.By, p.Starter) {
		return p.clone(), fmt.Errorf("approval %s: %q: %w", id, d.By, ErrNotAllowed)
	}
	switch p.State {
	case StatePending:
	case StateAllowed, StateDenied:
		return p.clone(), &AlreadyDecidedError{By: p.Decision.By, State: p.State, Choice: p.Decision.Choice}
	case StateExpired:
		return p.clone(), fmt.Errorf("approval %s: %w", id, ErrExpired)
	case StateCancelled:
		return p.clone(), fmt.Errorf("approval %s: %w", id, ErrCancelled)
	default:
		return p.clone(), fmt.Errorf("approval %s: unknown state %q: %w", id, p.State, ErrInvalidDecision)
	}
	now := r.now()
	if expired(p, now) {
		p.State = StateExpired
		return p.clone(), fmt.Errorf("approval %s: %w", id, ErrExpired)
	}
	if err := checkDecision(p, d); err != nil {
		return p.clone(), fmt.Errorf("approval %s: %w", id, err)
	}
	if d.Choice == ChoiceAllowAlways && !r.IsAdmin(p.ChannelKey, d.By) {
		return p.clone(), fmt.Errorf("approval %s: %q: %w", id, d.By, ErrAdminOnly)
	}
	if d.At.IsZero() {
		d.At = now
	}
	d.Answers = maps.Clone(d.Answers)
	p.Decision = d
	p.State = StateDenied
	if d.Choice.Allows() {
		p.State = StateAllowed
	}
	return p.clone(), nil
}

func expired(p *Pending, now time.Time) bool {
	return !p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt)
}

func checkDecision(p *Pending, d Decision) error {
	if !d.Choice.valid() {
		return fmt.Errorf("%w: unknown choice %q", ErrInvalidDecision, d.Choice)
	}
	if !p.Question {
		if len(d.Answers) > 0 {
			return fmt.Errorf("%w: answers for a request that is not a question", ErrInvalidDecision)
		}
		return nil
	}
	switch d.Choice {
	case ChoiceDeny:
		return nil
	case ChoiceAllow:
		if len(d.Answers) == 0 {
			return fmt.Errorf("%w: a question is answered, not just allowed", ErrInvalidDecision)
		}
		if _, err := AnswerInput(p.Input, d.Answers); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidDecision, err)
		}
		return nil
	default:
		return fmt.Errorf("%w: %q does not apply to a question", ErrInvalidDecision, d.Choice)
	}
}
