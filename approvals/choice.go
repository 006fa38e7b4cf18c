package approvals

import "strings"

// Choice is what a person picked on an approval prompt, in the order every
// platform shows them.
type Choice string

// Choices.
const (
	ChoiceAllow       Choice = "allow"        // this request
	ChoiceAllowThread Choice = "allow_thread" // the same call for the rest of the thread (a file: that file)
	ChoiceAllowFolder Choice = "allow_folder" // a file's folder for the rest of the thread
	ChoiceAllowAlways Choice = "allow_always" // a persisted channel rule: admins only
	ChoiceDeny        Choice = "deny"         // with an optional reason
)

// Allows reports whether the choice lets the tool run.
func (c Choice) Allows() bool {
	return c == ChoiceAllow || c == ChoiceAllowThread || c == ChoiceAllowFolder || c == ChoiceAllowAlways
}

func (c Choice) valid() bool { return c.Allows() || c == ChoiceDeny }

// Typed is a decision typed as a reply.
type Typed struct {
	Choice Choice
	// Ref names the prompt: "2" (its number in the thread) or a prefix of
	// its id of at least 4 hex digits; "" when none was given.
	Ref string
	// Reason is a deny's reason, original case kept.
	Reason string
	// RefOrReason is set when a deny's first word may be either a hex id
	// or the first word of a reason ("deny cafe is closed"): the caller
	// reads it as Ref when it names an open prompt, else the whole text
	// after "deny" is the reason (in Reason with Ref "").
	RefOrReason bool
}

// ParseTyped reads a typed decision: "allow", "allow thread", "allow
// folder", "allow always", each with an optional prompt reference, or
// "deny [ref] [reason…]". A reference is "2", "#2" or an id prefix of at
// least 4 hex digits. Case-insensitive, any blanks between words. Anything
// else is not a decision (ok false).
func ParseTyped(text string) (Typed, bool) {
	t := strings.TrimSpace(text)
	words := strings.Fields(t)
	if len(words) == 0 {
		return Typed{}, false
	}
	switch strings.ToLower(words[0]) {
	case "allow":
		c, rest := ChoiceAllow, words[1:]
		if len(rest) > 0 {
			switch strings.ToLower(rest[0]) {
			case "thread":
				c, rest = ChoiceAllowThread, rest[1:]
			case "folder":
				c, rest = ChoiceAllowFolder, rest[1:]
			case "always":
				c, rest = ChoiceAllowAlways, rest[1:]
			}
		}
		switch {
		case len(rest) == 0:
			return Typed{Choice: c}, true
		case len(rest) == 1 && numberRef(rest[0]) != "":
			return Typed{Choice: c, Ref: numberRef(rest[0])}, true
		case len(rest) == 1 && hexRef(rest[0]):
			return Typed{Choice: c, Ref: strings.ToLower(rest[0])}, true
		}
		return Typed{}, false
	case "deny":
		reason := strings.TrimSpace(t[len(words[0]):])
		if len(words) == 1 {
			return Typed{Choice: ChoiceDeny}, true
		}
		first := words[1]
		after := strings.TrimSpace(reason[len(first):])
		if n := numberRef(first); n != "" {
			return Typed{Choice: ChoiceDeny, Ref: n, Reason: after}, true
		}
		if hexRef(first) {
			return Typed{Choice: ChoiceDeny, Ref: strings.ToLower(first), Reason: after, RefOrReason: true}, true
		}
		return Typed{Choice: ChoiceDeny, Reason: reason}, true
	}
	return Typed{}, false
}

// numberRef returns N for "N" or "#N", else "".
func numberRef(w string) string {
	w = strings.TrimPrefix(w, "#")
	if w == "" || len(w) > 6 {
		return ""
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return ""
		}
	}
	return w
}

func hexRef(w string) bool {
	if len(w) < 4 || len(w) > 32 {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i] | 0x20
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
