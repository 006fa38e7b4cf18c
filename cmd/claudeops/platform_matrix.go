package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	matrixadapter "github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/store"
)

// matrixPlatform is Matrix: a homeserver's sync.
type matrixPlatform struct{ matrixadapter.Config }

func (p *matrixPlatform) configured() bool {
	return p.Homeserver != "" || p.AccessToken != "" || p.Password != ""
}

func (p *matrixPlatform) checks() []problem {
	return []problem{
		above0("CLAUDEOPS_MATRIX_EDIT_INTERVAL", p.EditInterval),
		httpURL("MATRIX_HOMESERVER", p.Homeserver),
	}
}

// matrixUserID is @localpart:server.
var matrixUserID = regexp.MustCompile(`^@[^:\s]+:[^\s]+$`)

func (p *matrixPlatform) startChecks(config) []problem {
	var bad []problem
	if p.Homeserver == "" {
		bad = append(bad, problem{want: "MATRIX_HOMESERVER is required with MATRIX_ACCESS_TOKEN or MATRIX_PASSWORD: want the homeserver's URL, such as https://matrix.example.org"})
	}
	switch {
	case p.UserID == "":
		bad = append(bad, problem{want: "MATRIX_USER_ID is required with MATRIX_HOMESERVER: want the bot's user id, such as @claudeops:example.org"})
	case !matrixUserID.MatchString(p.UserID):
		bad = append(bad, problem{name: "MATRIX_USER_ID", want: "is not a user id: want one such as @claudeops:example.org"})
	}
	if p.AccessToken == "" && p.Password == "" {
		bad = append(bad, problem{want: "MATRIX_HOMESERVER is set but neither MATRIX_ACCESS_TOKEN (with MATRIX_DEVICE_ID) nor MATRIX_PASSWORD is"})
	}
	return bad
}

// matrixFiles are the adapter's crypto store and recovery-key file, kept
// beside the database.
func matrixFiles(c config) (cryptoDB, recoveryKey string) {
	base := strings.TrimSuffix(c.DB, filepath.Ext(c.DB))
	return base + ".matrix-crypto.db", base + ".matrix-recovery-key"
}

func (p *matrixPlatform) stateFiles(c config) (databases, files []string) {
	crypto, key := matrixFiles(c)
	return []string{crypto}, []string{key}
}

// build makes the adapter: its login and sync position live in the bot's
// database (matrixstate.go), its crypto state in files beside it; it
// accepts the invites of those who may use the bot.
func (p *matrixPlatform) build(w wiring) (adapters.Adapter, error) {
	cfg := p.Config
	cfg.CryptoDB, cfg.RecoveryKeyFile = matrixFiles(w.cfg)
	cfg.PrivateDB = store.MakePrivate
	cfg.MayInvite = func(room, user string) bool { return w.b.MayUse(matrixadapter.Platform, room, user) }
	cfg.State = matrixState{w.st}
	cfg.Logger = w.log
	mx, err := matrixadapter.New(cfg)
	if err != nil {
		return nil, settingsError{fmt.Errorf("matrix configuration: %w", err)}
	}
	return mx, nil
}
