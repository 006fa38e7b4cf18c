package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestEverySecretHasAFileTwin: each secret variable of the configuration
// (tagged unset, nested structs too) has a <NAME>_FILE twin, and the
// secrets docs/CONFIGURATION.md names are among them.
func TestEverySecretHasAFileTwin(t *testing.T) {
	names := secretNames()
	for _, want := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "MATRIX_ACCESS_TOKEN", "MATRIX_PASSWORD"} {
		if !slices.Contains(names, want) || !slices.Contains(names, want+"_FILE") {
			t.Errorf("%s or its _FILE twin is not a secret variable: %v", want, names)
		}
	}
	for _, n := range names {
		if !strings.HasSuffix(n, "_FILE") && !slices.Contains(names, n+"_FILE") {
			t.Errorf("secret %s has no _FILE twin", n)
		}
	}
	// Every field whose tag says unset is a string the pairing can fill.
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		for i := range ty.NumField() {
			f := ty.Field(i)
			if f.Type.Kind() == reflect.Struct && f.Tag.Get("env") == "" {
				walk(f.Type)
				continue
			}
			if strings.Contains(f.Tag.Get("env"), ",unset") && f.Type.Kind() != reflect.String {
				t.Errorf("secret field %s is not a string", f.Name)
			}
		}
	}
	walk(reflect.TypeFor[config]())
}

func TestSecretFiles(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		env  []string
		want config // the secret fields only
		errs []string
	}{
		{"from files, line ends trimmed", []string{
			"SLACK_BOT_TOKEN_FILE=" + file("bot", "xoxb-1\n"),
			"SLACK_APP_TOKEN_FILE=" + file("app", "xapp-1\r\n"),
			"SLACK_SIGNING_SECRET_FILE=" + file("sign", "s3cret"),
			"MATRIX_ACCESS_TOKEN_FILE=" + file("mat", "syt_x\n\n"),
			"MATRIX_PASSWORD_FILE=" + file("pw", " pass word \n"),
		}, secretsOf("xoxb-1", "xapp-1", "s3cret", "syt_x", " pass word "), nil},
		{"from the environment", []string{"SLACK_BOT_TOKEN=xoxb-2", "MATRIX_PASSWORD=pw"},
			secretsOf("xoxb-2", "", "", "", "pw"), nil},
		{"both set", []string{"SLACK_BOT_TOKEN=xoxb-3", "SLACK_BOT_TOKEN_FILE=" + file("bot3", "xoxb-3"),
			"MATRIX_PASSWORD=a", "MATRIX_PASSWORD_FILE=" + file("pw3", "b")},
			config{}, []string{"SLACK_BOT_TOKEN and SLACK_BOT_TOKEN_FILE are both set", "MATRIX_PASSWORD and MATRIX_PASSWORD_FILE are both set"}},
		{"an empty file", []string{"SLACK_APP_TOKEN_FILE=" + file("empty", "\n")},
			config{}, []string{"SLACK_APP_TOKEN_FILE: the file " + dir + "/empty is empty"}},
		{"a missing file", []string{"SLACK_SIGNING_SECRET_FILE=" + dir + "/none"},
			config{}, []string{"SLACK_SIGNING_SECRET_FILE", dir + "/none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadConfig(append(tt.env, "HOME="+t.TempDir(), "CLAUDEOPS_WORKDIR="+t.TempDir()))
			if len(tt.errs) > 0 {
				for _, e := range tt.errs {
					if err == nil || !strings.Contains(err.Error(), e) {
						t.Errorf("error %v lacks %q", err, e)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sl, mx := c.Platforms.Slack, c.Platforms.Matrix
			got := secretsOf(sl.BotToken, sl.AppToken, sl.SigningSecret, mx.AccessToken, mx.Password)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("secrets %+v, want %+v", got, tt.want)
			}
			if c.SecretFiles != (secretFiles{}) {
				t.Errorf("the files' contents linger in SecretFiles: %+v", c.SecretFiles)
			}
		})
	}
}

// TestReceiveSecretsTakesOnlySecrets: what comes through the descriptor
// can only set secret variables.
func TestReceiveSecretsTakesOnlySecrets(t *testing.T) {
	for _, tt := range []struct {
		payload string
		ok      bool
	}{
		{"SLACK_BOT_TOKEN=xoxb-1\x00MATRIX_PASSWORD_FILE=/run/secrets/pw", true},
		{"SLACK_BOT_TOKEN=xoxb-1\x00CLAUDEOPS_WORKDIR=/", false},
		{"PATH=/evil", false},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteString(tt.payload); err != nil {
			t.Fatal(err)
		}
		w.Close()
		fd, err := syscall.Dup(int(r.Fd())) // receiveSecrets closes what it is given
		if err != nil {
			t.Fatal(err)
		}
		env, err := receiveSecrets([]string{"PATH=/bin", secretsFDVar + "=x"}, strconv.Itoa(fd))
		if (err == nil) != tt.ok {
			t.Errorf("%q: err %v", tt.payload, err)
		}
		if tt.ok && (slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, secretsFDVar) }) || !slices.Contains(env, "SLACK_BOT_TOKEN=xoxb-1")) {
			t.Errorf("environment after the handover: %v", env)
		}
		r.Close()
	}
}

// secretsOf is a configuration holding these secrets alone.
func secretsOf(slackBot, slackApp, slackSigning, matrixToken, matrixPassword string) config {
	var c config
	sl, mx := &c.Platforms.Slack, &c.Platforms.Matrix
	sl.BotToken, sl.AppToken, sl.SigningSecret = slackBot, slackApp, slackSigning
	mx.AccessToken, mx.Password = matrixToken, matrixPassword
	return c
}
