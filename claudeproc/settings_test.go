package claudeproc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func testHost(t *testing.T) Host {
	state := t.TempDir()
	return Host{
		HomeBase:  func(name string) string { return filepath.Join(state, name) },
		Workdir:   t.TempDir(),
		Private:   []string{filepath.Join(state, "claudeops.db")},
		Placeable: func(dir string) string { return "" },
	}
}

// TestRunnerSettingsHomes: the local and sandbox runners keep their homes
// where the host says (the sandbox's where CLAUDEOPS_SANDBOX_HOMES says),
// name them as theirs whichever runner is in use, and build on them.
func TestRunnerSettingsHomes(t *testing.T) {
	h := testHost(t)
	other := t.TempDir()
	tests := []struct {
		name  string
		own   func(inUse bool) []string
		build func() string // the built runner's home base
		want  string
	}{
		{"local", func(u bool) []string { return LocalSettings{}.OwnDirs(h, u) },
			func() string { r, _, _ := LocalSettings{}.Build(t.Context(), h); return r.(Local).HomeBase }, h.HomeBase("claude-homes")},
		{"sandbox", func(u bool) []string { return SandboxSettings{}.OwnDirs(h, u) },
			func() string { return SandboxSettings{}.Sandbox(h).HomeBase }, h.HomeBase("sandbox-homes")},
		{"sandbox, homes set", func(u bool) []string { return SandboxSettings{Homes: other}.OwnDirs(h, u) },
			func() string { return SandboxSettings{Homes: other}.Sandbox(h).HomeBase }, other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, inUse := range []bool{true, false} {
				if got := tt.own(inUse); !slices.Equal(got, []string{tt.want}) {
					t.Errorf("own dirs (in use %v) %q, want %s", inUse, got, tt.want)
				}
			}
			if got := tt.build(); got != tt.want {
				t.Errorf("built on %s, want %s", got, tt.want)
			}
		})
	}
}

// TestSandboxSettings: what the sandbox hides, and what the host's check
// finds missing, every problem at once.
func TestSandboxSettings(t *testing.T) {
	h := testHost(t)
	home, _ := os.UserHomeDir()
	sb := SandboxSettings{Bwrap: "bwrap", Hide: []string{"/etc/claudeops.env"}}.Sandbox(h)
	for _, p := range append(h.Private, "/etc/claudeops.env", filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json")) {
		if !slices.Contains(sb.Hide, p) {
			t.Errorf("%s is not hidden: %q", p, sb.Hide)
		}
	}

	tests := []struct {
		name string
		s    SandboxSettings
		h    func(h Host) Host
		want []string // one substring per problem, in order
	}{
		{"no bwrap", SandboxSettings{Bwrap: filepath.Join(h.Workdir, "none")}, nil, []string{"CLAUDEOPS_SANDBOX_BWRAP not found"}},
		{"homes not placeable", SandboxSettings{Bwrap: "sh"}, func(h Host) Host {
			h.Placeable = func(dir string) string { return dir + " is read-only" }
			return h
		}, []string{"CLAUDEOPS_SANDBOX_HOMES read-only"}},
		{"homes where sessions work", SandboxSettings{Bwrap: filepath.Join(h.Workdir, "none"), Homes: filepath.Join(h.Workdir, "homes")}, nil, []string{"CLAUDEOPS_SANDBOX_BWRAP not found", "CLAUDEOPS_SANDBOX_HOMES lies inside CLAUDEOPS_WORKDIR"}},
		{"all well", SandboxSettings{Bwrap: "sh"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hh := h
			if tt.h != nil {
				hh = tt.h(h)
			}
			got := tt.s.HostCheck(hh)
			if len(got) != len(tt.want) {
				t.Fatalf("problems %+v, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				name, want, _ := strings.Cut(w, " ")
				if got[i].Var != name || !strings.Contains(got[i].Want, want) {
					t.Errorf("problem %d %+v, want %s saying %q", i, got[i], name, want)
				}
			}
		})
	}
}
