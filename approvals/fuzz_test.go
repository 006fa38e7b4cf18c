package approvals

import (
	"strings"
	"testing"
)

// FuzzBashSplit checks the splitter never panics and that an allow match is
// backed by the split: every simple command starts with the rule's prefix,
// nothing marked the command complex, and the matching deny rule agrees.
func FuzzBashSplit(f *testing.F) {
	for _, seed := range []string{
		"git status",
		"git status && rm -rf /",
		"git log | head; echo 'a && b' \"c; d\" \\; e",
		"git log $(rm -rf /) `x` <(y) >(z)",
		"git log $'\\''\nrm -rf /\necho '",
		"git log #'\nrm -rf /\n#'",
		"cat <<EOF\ncat '\nEOF\nrm -rf /\necho '",
		"git () ( rm -rf / ); git status",
		"echo \\>& rm -rf /",
		"git log 2>&1 >| x &> y |& z",
		"FOO=1 BAR='a b' git push",
		"echo ${x:-a #}; rm -rf /",
		"$($($($($(",
		"git log \\\n&& rm",
		"\"unterminated",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		sc := scanBash(cmd)
		for _, p := range sc.parts {
			if p == "" || p != strings.Trim(p, " \t") {
				t.Fatalf("part %q not trimmed or empty", p)
			}
		}
		_ = deriveBash(cmd)
		_ = stripAssignments(cmd)

		prefixes := []string{"git", "echo", "cat", "rm"}
		if w, _, _ := strings.Cut(trimCommand(cmd), " "); plainWord(w) {
			prefixes = append(prefixes, w)
		}
		for _, prefix := range prefixes {
			pattern := prefix + ":*"
			if !matchBash(pattern, cmd, false) {
				continue
			}
			if sc.err != nil || sc.complex != "" || len(sc.parts) == 0 {
				t.Fatalf("allow %s matched %q: err=%v complex=%q parts=%q", pattern, cmd, sc.err, sc.complex, sc.parts)
			}
			for _, p := range sc.parts {
				if p != prefix && !strings.HasPrefix(p, prefix+" ") && !strings.HasPrefix(p, prefix+"\t") {
					t.Fatalf("allow %s matched %q but part %q does not start with the prefix", pattern, cmd, p)
				}
			}
			if !matchBash(pattern, cmd, true) {
				t.Fatalf("allow %s matched %q but the deny rule does not", pattern, cmd)
			}
		}

		// A derived pattern matches the command it came from.
		if d := deriveBash(cmd); d != "" && !matchBash(d, cmd, false) {
			t.Fatalf("derived %q does not match %q", d, cmd)
		}
	})
}
