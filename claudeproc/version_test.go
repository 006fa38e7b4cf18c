package claudeproc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// below and above are the neighbours of a version, for cases that must
// follow MinVersion and TestedVersion when they move.
func below(v Version) Version {
	switch {
	case v.Patch > 0:
		return Version{v.Major, v.Minor, v.Patch - 1}
	case v.Minor > 0:
		return Version{v.Major, v.Minor - 1, 999}
	}
	return Version{v.Major - 1, 999, 999}
}

func above(v Version) Version { return Version{v.Major, v.Minor, v.Patch + 1} }

func TestVersionRangeIsSound(t *testing.T) {
	if MinVersion.Compare(TestedVersion) > 0 {
		t.Fatalf("MinVersion %s is newer than TestedVersion %s", MinVersion, TestedVersion)
	}
}

func TestParseVersionAndClassify(t *testing.T) {
	tests := []struct {
		out   string
		want  Version
		level Compatibility
		err   bool
	}{
		{TestedVersion.String() + " (Claude Code)\n", TestedVersion, CompatFull, false},
		{MinVersion.String() + " (Claude Code)", MinVersion, CompatFull, false},
		{below(MinVersion).String() + " (Claude Code)", below(MinVersion), CompatIncompatible, false},
		{above(TestedVersion).String() + " (Claude Code)", above(TestedVersion), CompatLikely, false},
		{"claude v1.0.22 (anthropic-2024-12-01)", Version{1, 0, 22}, CompatIncompatible, false},
		{"2.0.99 (Claude Code)", Version{2, 0, 99}, CompatIncompatible, false},
		{"3.0.0 (Claude Code)", Version{3, 0, 0}, CompatLikely, false},
		{"Claude Code", Version{}, 0, true},
		{"", Version{}, 0, true},
	}
	for _, tt := range tests {
		v, err := ParseVersion(tt.out)
		if (err != nil) != tt.err {
			t.Errorf("%q: err %v", tt.out, err)
			continue
		}
		if tt.err {
			continue
		}
		if v != tt.want || Classify(v) != tt.level {
			t.Errorf("%q: %v %v, want %v %v", tt.out, v, Classify(v), tt.want, tt.level)
		}
	}
}

// TestCompatibilityNames: the levels' names are the seed's (Version
// Compatibility Layer), which /readyz and `claudeops version` show.
func TestCompatibilityNames(t *testing.T) {
	for c, want := range map[Compatibility]string{
		CompatUnknown:      "unknown",
		CompatFull:         "compatible",
		CompatLikely:       "likely compatible",
		CompatDegraded:     "degraded",
		CompatIncompatible: "incompatible",
		CompatNotFound:     "not found",
	} {
		if got := c.String(); got != want {
			t.Errorf("Compatibility(%d) = %q, want %q", int(c), got, want)
		}
	}
}

// fakeVersionBin writes a script that prints out for --version.
func fakeVersionBin(t *testing.T, out string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+out+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckVersion(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		bin   string
		level Compatibility
		err   error
	}{
		{"tested", fakeVersionBin(t, TestedVersion.String()+" (Claude Code)"), CompatFull, nil},
		{"minimum", fakeVersionBin(t, MinVersion.String()+" (Claude Code)"), CompatFull, nil},
		{"newer", fakeVersionBin(t, above(TestedVersion).String()+" (Claude Code)"), CompatLikely, nil},
		{"older", fakeVersionBin(t, below(MinVersion).String()+" (Claude Code)"), CompatIncompatible, ErrIncompatible},
		{"unparseable", fakeVersionBin(t, "who knows"), CompatDegraded, nil},
		{"missing", filepath.Join(t.TempDir(), "nope"), CompatNotFound, ErrNotFound},
		{"not on PATH", "claude-definitely-not-installed", CompatNotFound, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := CheckVersion(ctx, tt.bin)
			if info.Level != tt.level || !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
				t.Errorf("level %v err %v, want %v %v", info.Level, err, tt.level, tt.err)
			}
			if info.Message == "" {
				t.Error("no message")
			}
		})
	}
}
