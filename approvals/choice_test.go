package approvals

import "testing"

// TestParseChoice: typed decisions without a prompt reference.
func TestParseChoice(t *testing.T) {
	tests := []struct {
		in     string
		choice Choice
		reason string
		ok     bool
	}{
		{"allow", ChoiceAllow, "", true},
		{"  ALLOW \n", ChoiceAllow, "", true},
		{"Allow Thread", ChoiceAllowThread, "", true},
		{"allow   thread", ChoiceAllowThread, "", true},
		{"allow always", ChoiceAllowAlways, "", true},
		{"ALLOW ALWAYS", ChoiceAllowAlways, "", true},
		{"deny", ChoiceDeny, "", true},
		{"Deny", ChoiceDeny, "", true},
		{"deny Not Today, please", ChoiceDeny, "Not Today, please", true},
		{"DENY   use the staging DB\n", ChoiceDeny, "use the staging DB", true},
		{"deny\tWhy", ChoiceDeny, "Why", true},
		{"", "", "", false},
		{"   ", "", "", false},
		{"approve", "", "", false},
		{"yes", "", "", false},
		{"allow foo", "", "", false},
		{"allow thread now", "", "", false},
		{"allowthread", "", "", false},
		{"allow_thread", "", "", false},
		{"denied", "", "", false},
		{"please allow", "", "", false},
	}
	for _, tt := range tests {
		got, ok := ParseTyped(tt.in)
		if got.Choice != tt.choice || got.Reason != tt.reason || ok != tt.ok || got.Ref != "" {
			t.Errorf("ParseTyped(%q) = %+v, %v; want %q, %q, %v", tt.in, got, ok, tt.choice, tt.reason, tt.ok)
		}
	}
}
