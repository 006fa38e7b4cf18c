package health

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
)

// TestReadyzSettingsFile: a refused settings file is shown, with why and
// no secret, and leaves the bot ready (it works on the last good file);
// without a settings file nothing is shown.
func TestReadyzSettingsFile(t *testing.T) {
	at := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		file func() SettingsFile
		want string // the key's JSON, "" when absent
	}{
		{"none", nil, ""},
		{"in use", func() SettingsFile { return SettingsFile{InUse: "ab12", Since: at} },
			`{"in_use_sha256":"ab12","since":"2026-11-29T18:00:00Z"}`},
		{"refused", func() SettingsFile {
			return SettingsFile{InUse: "ab12", Since: at, Refused: "line 3: model: s3cret", RefusedAt: at.Add(time.Minute)}
		}, `{"in_use_sha256":"ab12","refused":"line 3: model: [redacted]","refused_at":"2026-11-29T18:01:00Z","since":"2026-11-29T18:00:00Z"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, New(Config{Adapters: []Conn{connected("console")}, Sessions: stubSessions{}, DB: openStore(t),
				CheckCLI: cliAt(fakeCLI(t, claudeproc.TestedVersion.String())), SettingsFile: tc.file, Secrets: []string{"s3cret"}}))
			code, body := get(t, srv, "/readyz")
			var d struct {
				Ready        *bool           `json:"ready"`
				SettingsFile json.RawMessage `json:"settings_file"`
			}
			if err := json.Unmarshal(body, &d); err != nil || d.Ready == nil {
				t.Fatalf("body %s: %v", body, err)
			}
			var got string
			if d.SettingsFile != nil {
				var v any
				_ = json.Unmarshal(d.SettingsFile, &v)
				b, _ := json.Marshal(v)
				got = string(b)
			}
			if code != http.StatusOK || !*d.Ready || got != tc.want {
				t.Errorf("%d ready=%v settings_file %s, want 200, ready and %s; body:\n%s", code, *d.Ready, got, tc.want, body)
			}
		})
	}
}
