package claudeproc

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestRealCLINoToolRunsUnasked is the hostile test of the CLI range: the
// model asks for `touch <file>`; before the host has given any approval the
// file must not exist (oracle: the file system), and the host must be asked.
// Allowed, the file then appears: the command does make it, so the oracle
// can see a run. Both launches the host uses must hold: as the bot starts
// the CLI (the Guard, default mode) and with this package's defaults (no
// permission mode given). CLIs 2.1.285 … 2.1.301 start in their automatic
// mode when none is given and ran the command unasked.
func TestRealCLINoToolRunsUnasked(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Options)
	}{
		{"guarded", func(o *Options) { o.Guard = &Guard{} }},
		{"defaults", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const file = "unasked.txt"
			c := newCLI(t, bashScript("touch "+file))
			path := filepath.Join(c.dir, file)
			p, r := c.start(tc.mod)
			if err := p.SendText("make the file"); err != nil {
				t.Fatal(err)
			}
			ev, i := r.waitFor(0, "can_use_tool or result", func(ev Event) bool { return isCanUseTool(ev) || isResult(ev) })
			_, statErr := os.Stat(path)
			if !errors.Is(statErr, os.ErrNotExist) {
				t.Fatalf("`touch %s` ran before the host gave any approval (stat: %v); first %s; events:\n%s", file, statErr, describe(ev), r.dump())
			}
			req, ok := ev.(*ControlRequest)
			if !ok {
				t.Fatalf("the turn ended without asking the host: %s", describe(ev))
			}
			if err := p.Allow(req.RequestID, nil, nil); err != nil {
				t.Fatal(err)
			}
			r.waitFor(i+1, "result", isResult)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("allowed, the command made no file (%v): the oracle would not see a run", err)
			}
			for _, ev := range r.snapshot() {
				if si, ok := ev.(*SystemInit); ok && si.PermissionMode != "default" {
					t.Errorf("the session runs in mode %q, want default", si.PermissionMode)
				}
			}
		})
	}
}
