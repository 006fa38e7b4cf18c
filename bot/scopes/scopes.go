package scopes

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// Store keeps the settings given in chat; *store.Store is one.
// SaveScopeSetting stores v in place of the value v's setting had at v's
// scope; DeleteScopeSetting removes the value name has at a scope (none is
// not an error). Either returns an error only when nothing was changed.
type Store interface {
	SaveScopeSetting(ctx context.Context, v store.ScopeSetting) error
	DeleteScopeSetting(ctx context.Context, level int, scopeKey, name string) error
}

// Extension is the settings commands. Build it with New.
type Extension struct {
	st Store
	h  thread.Host
	// mu makes each change's check, row and resolver one step: threads'
	// workers run at once, and two changes of one scope must leave the
	// store and the resolver with the same last value.
	mu sync.Mutex
	// told is the settings file's problem each bot admin was told last
	// (warn.go), under mu.
	told map[string]string
}

// New makes the extension over st, where it keeps what chat sets.
func New(st Store) *Extension { return &Extension{st: st} }

// Name implements thread.Extension.
func (e *Extension) Name() string { return "scopes" }

// Init implements thread.Extension.
func (e *Extension) Init(h thread.Host) { e.h = h }

// Attach implements thread.Extension: every thread gets a part, which runs
// the commands there.
func (e *Extension) Attach(t thread.Thread) any { return &part{ext: e, t: t} }

// part is the extension in one thread.
type part struct {
	ext *Extension
	t   thread.Thread
}

// ChatLayer is the Resolver's chat layer (settings.Resolver.LoadChat) of
// the rows the store keeps. A row the schema no longer takes (an unknown
// setting, a per-thread scope, a value its setting refuses) is left out,
// and the error names each; the layer holds the others.
func ChatLayer(rows []store.ScopeSetting) (settings.Layer, error) {
	var l settings.Layer
	var errs []error
	for _, r := range rows {
		v, err := chatValue(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("the setting %s of %s, set in chat, is left out: %w", r.Name, r.ScopeKey, err))
			continue
		}
		l.Put(v.Name, v)
	}
	return l, errors.Join(errs...)
}

func chatValue(r store.ScopeSetting) (settings.Value, error) {
	spec, ok := settings.Lookup(settings.Name(r.Name))
	if !ok {
		return settings.Value{}, errors.New("no such setting")
	}
	level := settings.Level(r.Level)
	if level < settings.LevelBot || level >= settings.LevelThread || (level == settings.LevelBot) != (r.ScopeKey == "") {
		return settings.Value{}, fmt.Errorf("no scope of level %d may be set in chat", r.Level)
	}
	text, err := spec.Parse(r.Value)
	if err != nil || text == "" {
		return settings.Value{}, fmt.Errorf("the value is not one it takes: %v", err)
	}
	return settings.Value{Name: spec.Name, Text: text, Source: settings.Source{
		Scope: settings.Scope{Level: level, Key: r.ScopeKey}, Origin: settings.FromChat, By: r.SetBy, At: r.SetAt,
	}}, nil
}

// Lister lists the settings given in chat; *store.Store is one.
type Lister interface {
	ScopeSettings(ctx context.Context) ([]store.ScopeSetting, error)
}

// LoadChat puts the settings st keeps from chat in r (at start). An error
// reading them leaves r as it was; a row left out (ChatLayer) is said in
// the error, the others are in place.
func LoadChat(ctx context.Context, st Lister, r *settings.Resolver) error {
	rows, err := st.ScopeSettings(ctx)
	if err != nil {
		return fmt.Errorf("load the settings set in chat: %w", err)
	}
	l, err := ChatLayer(rows)
	r.LoadChat(l)
	return err
}
