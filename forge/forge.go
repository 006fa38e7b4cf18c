package forge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// Forge is what the bot asks of a forge.
//
// OpenOrUpdatePR opens a pull request from the branch head to base in
// repo, or, when one from head is open already, updates that one (title,
// body, base, draft) rather than opening a second. A draft is one a
// reviewer is told is not ready; a forge whose API cannot change that
// after opening (GitHub's REST API) leaves it as it was on an update. It
// returns the pull request as it now is, its Draft included.
//
// PRFor finds the open pull request from head in repo; found is false
// when there is none (no error).
//
// Comment adds body to the conversation of repo's pull request number.
//
// Self is the login of the account the bot's token is for: what the bot
// itself writes on the forge is its (a review trigger ignores it).
type Forge interface {
	OpenOrUpdatePR(ctx context.Context, repo Repo, head, base, title, body string, draft bool) (PR, error)
	PRFor(ctx context.Context, repo Repo, head string) (pr PR, found bool, err error)
	Comment(ctx context.Context, repo Repo, number int64, body string) error
	Self(ctx context.Context) (login string, err error)
}

// Repo names a repository on a forge.
type Repo struct {
	Owner, Name string
}

func (r Repo) String() string { return r.Owner + "/" + r.Name }

// PR is a pull request as the forge shows it.
type PR struct {
	Number int64
	URL    string // the page people open
	State  string // open, closed, merged
	Draft  bool
	Head   string // the branch it is from
	Base   string // the branch it is into
}

// Token is a forge's API token. It never prints (fmt, slog, JSON): only
// the client that sends it sees its value.
type Token struct{ v string }

// NewToken wraps a token given in the configuration itself.
func NewToken(s string) Token { return Token{v: strings.TrimRight(s, "\r\n")} }

// ReadToken reads a token from a file (a Docker or Kubernetes secret);
// trailing line ends are dropped, and an empty one is an error.
func ReadToken(path string) (Token, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Token{}, fmt.Errorf("reading the forge token: %w", err)
	}
	t := NewToken(string(b))
	if t.Empty() {
		return Token{}, fmt.Errorf("reading the forge token: %s is empty", path)
	}
	return t, nil
}

// Empty reports whether there is no token.
func (t Token) Empty() bool { return t.v == "" }

func (Token) String() string               { return "[redacted]" }
func (Token) GoString() string             { return "forge.Token{[redacted]}" }
func (Token) LogValue() slog.Value         { return slog.StringValue("[redacted]") }
func (Token) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }
func (t Token) value() string              { return t.v }

var _ slog.LogValuer = Token{}

// errNoRepo is returned for a Repo without owner or name.
var errNoRepo = errors.New("repository without owner or name")

func (r Repo) check() error {
	if r.Owner == "" || r.Name == "" {
		return errNoRepo
	}
	return nil
}
