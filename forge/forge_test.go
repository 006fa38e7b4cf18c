package forge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTokenNeverPrints: the token's value shows in no format, log or JSON.
func TestTokenNeverPrints(t *testing.T) {
	const secret = "s3cret-forge-token"
	tok := NewToken(secret + "\n")
	if tok.value() != secret {
		t.Fatalf("value %q: the line end should be dropped", tok.value())
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("x", "token", tok, "cfg", GiteaConfig{Token: tok}, "gh", GitHubConfig{Token: tok})
	js, err := json.Marshal(struct{ T Token }{tok})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s %q", tok, tok, tok, tok, tok),
		fmt.Sprintf("%+v %#v", GiteaConfig{Token: tok}, GiteaConfig{Token: tok}),
		fmt.Sprintf("%+v %#v", GitHubConfig{Token: tok}, GitHubConfig{Token: tok}),
		logged.String(), string(js),
	} {
		if strings.Contains(s, secret) {
			t.Errorf("the token shows in %q", s)
		}
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, want, err string
	}{
		{"trailing line end dropped", write("ok", "abc\r\n"), "abc", ""},
		{"empty", write("empty", "\n"), "", "is empty"},
		{"missing", filepath.Join(dir, "none"), "", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, err := ReadToken(tt.path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil || tok.value() != tt.want {
				t.Fatalf("ReadToken: %q, %v; want %q", tok.value(), err, tt.want)
			}
		})
	}
}
