package store

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"
)

// approvalInput and fullApproval are shared by the approval subtests so that
// each table states only what differs from one fully populated record.
const approvalInput = `{"command":"go test ./..."}`

var fullApproval = Approval{
	ID: "ap-1", RequestID: "req-1", ThreadKey: "th", ChannelKey: "ch", SessionID: "sess",
	Tool: "Bash", Input: approvalInput, AskedBy: "U1", Kind: "tool", State: "pending",
	PromptRef: "slack/C1/1.5", CreatedAt: tNs, ExpiresAt: t3,
}

// normApproval is what a saved approval reads back as: its times normalised
// the way the store stores them.
func normApproval(a Approval) Approval {
	a.CreatedAt, a.ExpiresAt, a.DecidedAt = ms(a.CreatedAt), ms(a.ExpiresAt), ms(a.DecidedAt)
	return a
}

// withDigest returns a copy of a with its input digest set to d.
func withDigest(a Approval, d string) Approval { a.InputDigest = d; return a }

func TestApprovals(t *testing.T) {
	t.Run("round trip", testApprovalsRoundTrip)
	t.Run("InputDigest is sha256 hex", func(t *testing.T) {
		if got := InputDigest(""); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
			t.Errorf("InputDigest(\"\") = %s", got)
		}
	})
	t.Run("pending, oldest first", testApprovalsPendingOldestFirst)
	t.Run("decide", testApprovalsDecide)
	t.Run("concurrent deciders, exactly one wins", testApprovalsConcurrentDeciders)
	t.Run("prompt ref does not undo a decision", testApprovalsPromptRefKeepsDecision)
}

// approvalRoundTripCases are sequences of saves and the record the last one
// must read back as.
var approvalRoundTripCases = []struct {
	name  string
	saves []Approval
	want  Approval
}{
	{"digest computed", []Approval{fullApproval}, normApproval(withDigest(fullApproval, InputDigest(approvalInput)))},
	{"digest given is kept", []Approval{withDigest(fullApproval, "given")}, normApproval(withDigest(fullApproval, "given"))},
	{"question, decided", []Approval{{ID: "q-1", Kind: "question", State: "allowed", Input: "{}",
		DecidedBy: "U2", Choice: "2,3", Scope: "once", Reason: "ok", CreatedAt: t1, DecidedAt: t2}},
		Approval{ID: "q-1", Kind: "question", State: "allowed", Input: "{}", InputDigest: InputDigest("{}"),
			DecidedBy: "U2", Choice: "2,3", Scope: "once", Reason: "ok", CreatedAt: t1, DecidedAt: t2}},
	{"upsert replaces every field", []Approval{fullApproval, {ID: "ap-1", State: "expired", Input: "x"}},
		Approval{ID: "ap-1", State: "expired", Input: "x", InputDigest: InputDigest("x")}},
}

func testApprovalsRoundTrip(t *testing.T) {
	ctx := t.Context()
	for _, tc := range approvalRoundTripCases {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t)
			for _, a := range tc.saves {
				if err := s.SaveApproval(ctx, a); err != nil {
					t.Fatal(err)
				}
			}
			got, ok, err := s.GetApproval(ctx, tc.want.ID)
			if err != nil || !ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v, %v, %v\nwant %+v", got, ok, err, tc.want)
			}
		})
	}
}

func testApprovalsPendingOldestFirst(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	for _, a := range []Approval{
		{ID: "c", State: "pending", CreatedAt: t3},
		{ID: "x", State: "allowed", CreatedAt: t1},
		{ID: "b", State: "pending", CreatedAt: t1},
		{ID: "a", State: "pending", CreatedAt: t2},
		{ID: "y", State: "expired", CreatedAt: t1},
		{ID: "d", State: "pending", CreatedAt: t1},
	} {
		if err := s.SaveApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	as, err := s.PendingApprovals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range as {
		ids = append(ids, a.ID)
	}
	if want := []string{"b", "d", "a", "c"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("pending %v, want %v", ids, want)
	}
}

func testApprovalsDecide(t *testing.T) {
	ctx := t.Context()
	decision := Approval{State: "allowed", DecidedBy: "U1", Choice: "allow", Scope: "thread", Reason: "fine",
		DecidedAt: tNs, ID: "ignored", Tool: "ignored", PromptRef: "ignored"}
	decided := fullApproval
	decided.InputDigest = InputDigest(approvalInput)
	decided.State, decided.DecidedBy, decided.Choice, decided.Scope, decided.Reason, decided.DecidedAt =
		"allowed", "U1", "allow", "thread", "fine", tNs
	for _, tc := range []struct {
		name      string
		id, from  string
		wantWon   bool
		wantErr   error
		wantAfter Approval
	}{
		{"from the current state wins", "ap-1", "pending", true, nil, normApproval(decided)},
		{"from another state loses, changes nothing", "ap-1", "expired", false, nil, normApproval(withDigest(fullApproval, InputDigest(approvalInput)))},
		{"missing", "nope", "pending", false, ErrNotFound, Approval{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t)
			if err := s.SaveApproval(ctx, fullApproval); err != nil {
				t.Fatal(err)
			}
			won, err := s.DecideApproval(ctx, tc.id, tc.from, decision)
			if won != tc.wantWon || !errors.Is(err, tc.wantErr) {
				t.Fatalf("DecideApproval = %v, %v; want %v, %v", won, err, tc.wantWon, tc.wantErr)
			}
			got, _, _ := s.GetApproval(ctx, tc.id)
			if !reflect.DeepEqual(got, tc.wantAfter) {
				t.Errorf("after: %+v\nwant   %+v", got, tc.wantAfter)
			}
		})
	}
}

func testApprovalsConcurrentDeciders(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	const approvals = 30
	for _, deciders := range []int{2, 8} {
		for i := range approvals {
			id := fmt.Sprintf("ap-%d-%d", deciders, i)
			if err := s.SaveApproval(ctx, Approval{ID: id, State: "pending", CreatedAt: t1}); err != nil {
				t.Fatal(err)
			}
			ws := raceDeciders(t, s, id, deciders)
			if len(ws) != 1 {
				t.Fatalf("%s: winners %v, want exactly one", id, ws)
			}
			got, _, err := s.GetApproval(ctx, id)
			if err != nil || got.DecidedBy != ws[0] {
				t.Errorf("%s: stored decision by %q, winner %q (%v)", id, got.DecidedBy, ws[0], err)
			}
		}
	}
}

// raceDeciders releases n deciders on the pending approval id at once,
// alternating allow and deny, and returns who reported winning.
func raceDeciders(t *testing.T, s *Store, id string, deciders int) []string {
	ctx := t.Context()
	var wg sync.WaitGroup
	winners := make(chan string, deciders)
	start := make(chan struct{})
	for d := range deciders {
		who := "U" + strconv.Itoa(d)
		state := []string{"allowed", "denied"}[d%2]
		wg.Go(func() {
			<-start
			won, err := s.DecideApproval(ctx, id, "pending", Approval{State: state, DecidedBy: who, DecidedAt: t2})
			if err != nil {
				t.Error(err)
			}
			if won {
				winners <- who
			}
		})
	}
	close(start)
	wg.Wait()
	close(winners)
	var ws []string
	for w := range winners {
		ws = append(ws, w)
	}
	return ws
}

func testApprovalsPromptRefKeepsDecision(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	if err := s.SaveApproval(ctx, Approval{ID: "p", State: "pending"}); err != nil {
		t.Fatal(err)
	}
	if won, err := s.DecideApproval(ctx, "p", "pending", Approval{State: "denied", DecidedBy: "U1"}); !won || err != nil {
		t.Fatal(won, err)
	}
	// Where it is shown: the prompt's ref and the tool line's, kept
	// whatever the decision.
	if err := s.SetApprovalShown(ctx, "p", "matrix/$ev", "slack/T/C/1.2#3.4", 1); err != nil {
		t.Fatal(err)
	}
	got, _, _ := s.GetApproval(ctx, "p")
	if got.State != "denied" || got.DecidedBy != "U1" || got.PromptRef != "matrix/$ev" || got.ToolRef != "slack/T/C/1.2#3.4" || got.ToolDepth != 1 {
		t.Errorf("after SetApprovalShown: %+v", got)
	}
	if err := s.SetApprovalShown(ctx, "nope", "x", "", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetApprovalShown(missing) = %v, want ErrNotFound", err)
	}
}
