package workspace

import (
	"reflect"
	"testing"
)

// validRef agrees with git check-ref-format on names a remote might send
// as its default branch.
func TestValidRefMatchesGit(t *testing.T) {
	for _, name := range []string{
		"main", "trunk", "release/1.2", "feature/x-y_z", "a.b", "-x", "x/-y", ".x", "x/.y", "x.", "x.lock",
		"x/y.lock", "a..b", "a@{b", "@", "a b", "a~b", "a^b", "a:b", "a?b", "a*b", "a[b", `a\b`, "a//b",
		"a/", "/a", "", "a\x01b", "a\x7fb", "ü", "a@b", "{x}",
	} {
		ref := "refs/remotes/origin/" + name
		_, err := gitRun(t, nil, "check-ref-format", ref)
		if got, want := validRef(ref), err == nil; got != want && !(name == "-x" || name == "x/-y") {
			t.Errorf("validRef(%q) = %v, git says %v", ref, got, want)
		}
	}
	// Stricter than git on purpose: no component may start with "-".
	if validRef("refs/remotes/origin/-x") {
		t.Error("a component starting with - accepted")
	}
}

func TestParseNumstat(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want Stat
		bad  bool
	}{
		{name: "empty", in: "", want: Stat{}},
		{name: "plain", in: "3\t1\ta.txt\x00" + "0\t2\tdir/b c\x00",
			want: Stat{Files: []FileStat{{Path: "a.txt", Added: 3, Removed: 1}, {Path: "dir/b c", Removed: 2}}, Added: 3, Removed: 3}},
		{name: "binary", in: "-\t-\tx.bin\x00",
			want: Stat{Files: []FileStat{{Path: "x.bin", Binary: true}}}},
		{name: "rename", in: "1\t0\t\x00old\x00new\nname\x00",
			want: Stat{Files: []FileStat{{Path: "new\nname", OldPath: "old", Added: 1}}, Added: 1}},
		{name: "tab in name", in: "1\t1\ta\tb\x00",
			want: Stat{Files: []FileStat{{Path: "a\tb", Added: 1, Removed: 1}}, Added: 1, Removed: 1}},
		{name: "truncated rename", in: "1\t0\t\x00old\x00", bad: true},
		{name: "garbage", in: "x\ty\tz\x00", bad: true},
		{name: "no counts", in: "a.txt\x00", bad: true},
	} {
		got, err := parseNumstat([]byte(tt.in))
		if (err != nil) != tt.bad {
			t.Errorf("%s: err %v", tt.name, err)
			continue
		}
		if !tt.bad && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
