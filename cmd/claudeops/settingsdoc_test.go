package main

import (
	"os"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/mdtable"
	"github.com/claudeops/claudeops/settings"
)

// TestSettingsReference: docs/CONFIGURATION.md's table of the settings
// lists each setting of the schema once, in its order, with who may set it
// from chat and whether it is per thread as the schema says.
func TestSettingsReference(t *testing.T) {
	b, err := os.ReadFile("../../docs/CONFIGURATION.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := mdtable.Rows(string(b), "| setting | value | who may set it from chat | per thread | what it is |")
	specs := settings.Specs()
	if len(rows) != len(specs) {
		t.Fatalf("%d rows, %d settings", len(rows), len(specs))
	}
	who := map[settings.Who]string{settings.ChannelAdmins: "channel admins", settings.Tighten: "channel admins, tighter only", settings.BotAdmins: "bot admins"}
	for i, s := range specs {
		r := rows[i]
		thread := map[bool]string{true: "yes"}[s.Thread]
		if r[0] != "`"+string(s.Name)+"`" || r[2] != who[s.Who] || r[3] != thread {
			t.Errorf("row %d: %q, want `%s`, %q, per thread %q", i+1, r[:4], s.Name, who[s.Who], thread)
		}
		for _, v := range s.Values {
			if !strings.Contains(r[1], "`"+v+"`") {
				t.Errorf("%s: the row's values lack %q", s.Name, v)
			}
		}
	}
}
