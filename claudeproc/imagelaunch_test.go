package claudeproc

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImageLauncherHostile: the launcher of the runners in images, run by
// real dash (the session image's /bin/sh), gives the CLI the operator's
// configuration on descriptor 3 byte for byte, from a pipe, whatever
// shell text its values hold: none of it runs (the marks stay absent),
// no file is made for it, and the CLI reads the rest of its stdin
// untouched. With no servers the line is "go": the CLI runs without a
// descriptor 3.
func TestImageLauncherHostile(t *testing.T) {
	dash, err := exec.LookPath("dash")
	if err != nil {
		t.Skip("no dash here: " + err.Error())
	}
	dir, tmp := t.TempDir(), t.TempDir()
	mark := func(n string) string { return filepath.Join(dir, "ran-"+n) }
	hostile := []string{
		"$(touch " + mark("subst") + ")", "`touch " + mark("backtick") + "`",
		`\$(touch ` + mark("escaped") + `)`, `back\slash \\ \n \` + "`", "${HOME} $0 $@ $((6*7))",
		"\nEOF\ntouch " + mark("eof") + "\nEOF\n", `'quoted' "double"`, "ünï\u2028cøde\x01",
		strings.Repeat("big ", 40000), // past a pipe's buffer: dash forks a writer
	}
	env := map[string]string{}
	for i, v := range hostile {
		env[string(rune('A'+i))] = v
	}
	srv, _ := json.Marshal(map[string]any{"command": "/bin/mcp", "env": env})
	// The CLI stand-in: what it reads at descriptor 3, where that comes
	// from, and the rest of its stdin.
	const cli = `cat /dev/fd/3 > "$1/fd3"; readlink /proc/self/fd/3 > "$1/link"; cat > "$1/stdin"`
	for _, tt := range []struct {
		name    string
		servers map[string]json.RawMessage
	}{
		{"servers", map[string]json.RawMessage{"ops": srv}},
		{"none", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			o := Options{MCPServers: tt.servers}
			pipe, err := o.mcpConfigPipe(Local{})
			if err != nil {
				t.Fatal(err)
			}
			line, err := LauncherLine(Spec{MCPConfig: pipe})
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
				t.Fatalf("the line is not one line: %q", line)
			}
			cmd := exec.Command(dash, "-c", ImageLauncher, "/bin/sh", "-c", cli, "cli", out)
			cmd.Dir, cmd.Env = dir, []string{"TMPDIR=" + tmp, "PATH=/usr/bin:/bin", "HOME=" + dir}
			cmd.Stdin = strings.NewReader(string(line) + "the conversation\n")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("launcher: %v\n%s", err, b)
			}
			got := func(n string) string { b, _ := os.ReadFile(filepath.Join(out, n)); return string(b) }
			if got("stdin") != "the conversation\n" {
				t.Errorf("the CLI's stdin gave %q", got("stdin"))
			}
			if tt.servers == nil {
				if line := string(line); line != "go\n" || got("fd3") != "" {
					t.Errorf("line %q; descriptor 3 gave %q", line, got("fd3"))
				}
				return
			}
			want, _ := o.operatorMCPConfig()
			if fd3 := strings.TrimSuffix(got("fd3"), "\n"); fd3 != string(want) {
				t.Errorf("descriptor 3 gave %d bytes, want the %d of the configuration (first difference at %d)", len(fd3), len(want), firstDiff(fd3, string(want)))
			}
			if !strings.HasPrefix(got("link"), "pipe:") {
				t.Errorf("descriptor 3 is %q, want a pipe", got("link"))
			}
			for _, d := range []string{dir, tmp} {
				if ents, _ := os.ReadDir(d); len(ents) > 0 {
					t.Errorf("%s holds %v: something ran or was written", d, ents)
				}
			}
		})
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
