package settings

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Value is a setting's value at a place, and where it came from.
type Value struct {
	Name Name
	// Text is the value, canonical (Spec.Parse); "" where nobody gave one.
	Text   string
	Source Source
}

// Set reports whether someone gave the value (not the default).
func (v Value) Set() bool { return v.Source.Origin != FromDefault }

// List is a list setting's entries.
func (v Value) List() []string {
	if v.Text == "" {
		return nil
	}
	return strings.Split(v.Text, ",")
}

// Float is an amount's value (0: none, or not set).
func (v Value) Float() float64 { f, _ := strconv.ParseFloat(v.Text, 64); return f }

// Int is a count's value (0: none, or not set).
func (v Value) Int() int { n, _ := strconv.Atoi(v.Text); return n }

// Layer holds the values of one origin, by scope. Build one with Put.
type Layer struct {
	values map[Scope]map[Name]Value
}

// Put gives n the value v (canonical) at the scope v.Source names.
func (l *Layer) Put(n Name, v Value) {
	if l.values == nil {
		l.values = map[Scope]map[Name]Value{}
	}
	at := l.values[v.Source.Scope]
	if at == nil {
		at = map[Name]Value{}
		l.values[v.Source.Scope] = at
	}
	v.Name = n
	l.values[v.Source.Scope][n] = v
}

func (l *Layer) get(s Scope, n Name) (Value, bool) {
	v, ok := l.values[s][n]
	return v, ok
}

// Resolver answers which value applies where. Its methods are safe from
// any goroutine; what it answers is a copy.
type Resolver struct {
	botAdmins []string

	mu      sync.RWMutex
	config  Layer
	file    Layer
	chat    Layer
	fileErr error

	checks checks
}

// New makes a resolver from the bot's configuration (fixed for its life)
// and its admins, who are admins everywhere.
func New(config Layer, botAdmins []string) *Resolver {
	return &Resolver{config: config, botAdmins: botAdmins}
}

// SetFile puts the values of a settings file that was read whole and
// found good in place of the last; the file's problem, if any, is
// forgotten.
func (r *Resolver) SetFile(l Layer) {
	r.mu.Lock()
	r.file, r.fileErr = l, nil
	r.mu.Unlock()
}

// FileRefused records that the settings file could not be used (err says
// why): the last good values stay.
func (r *Resolver) FileRefused(err error) {
	r.mu.Lock()
	r.fileErr = err
	r.mu.Unlock()
}

// FileProblem is why the settings file in use is not the one on disk, or nil.
func (r *Resolver) FileProblem() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.fileErr
}

// Get is n's value at w: the narrowest scope that gives one wins; at one
// scope the file over chat over the configuration.
func (r *Resolver) Get(w Where, n Name) Value {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.getLocked(w.Scopes(), n)
}

func (r *Resolver) getLocked(scopes []Scope, n Name) Value {
	for i := len(scopes) - 1; i >= 0; i-- {
		for _, l := range []*Layer{&r.file, &r.chat, &r.config} {
			if v, ok := l.get(scopes[i], n); ok {
				return v
			}
		}
	}
	if s, ok := Lookup(n); ok && s.Kind == KindEnum {
		return Value{Name: n, Text: s.Values[0]}
	}
	return Value{Name: n}
}

// All is every setting's value at w, in Specs order.
func (r *Resolver) All(w Where) []Value {
	r.mu.RLock()
	defer r.mu.RUnlock()
	scopes := w.Scopes()
	out := make([]Value, 0, len(specs))
	for _, s := range specs {
		out = append(out, r.getLocked(scopes, s.Name))
	}
	return out
}

// IsBotAdmin: user is one of the bot's admins.
func (r *Resolver) IsBotAdmin(user string) bool { return MatchUser(r.botAdmins, user) }

// IsAdmin: user administers w's channel — a bot admin, or named by the
// channel's admins setting.
func (r *Resolver) IsAdmin(w Where, user string) bool {
	return r.IsBotAdmin(user) || MatchUser(r.Get(w, Admins).List(), user)
}

// MayUse: user may use the bot at w — an admin of it, or named by its
// users setting.
func (r *Resolver) MayUse(w Where, user string) bool {
	return r.IsAdmin(w, user) || MatchUser(r.Get(w, Users).List(), user)
}

// ErrManaged: the settings file gives the setting at that scope.
var ErrManaged = errors.New("managed by the settings file")

// CheckChat says whether user may set n to value (canonical; "" to unset)
// at scope, where w is the place they ask from: nil, or why not. A
// channel's admins set at their channel's scope only; wider scopes are
// the bot admins'.
func (r *Resolver) CheckChat(w Where, scope Scope, n Name, value, user string) error {
	spec, ok := Lookup(n)
	if !ok {
		return fmt.Errorf("no setting %q", n)
	}
	if scope.Level == LevelThread {
		return fmt.Errorf("%s is not set per thread here", n)
	}
	if err := r.mayChat(w, scope, spec, value, user); err != nil {
		return err
	}
	return r.checkValue(n, value)
}

// mayChat says whether user may set spec at scope from chat: nil, or why
// not (who may, before what the value is).
func (r *Resolver) mayChat(w Where, scope Scope, spec Spec, value, user string) error {
	n := spec.Name
	r.mu.RLock()
	defer r.mu.RUnlock()
	if v, ok := r.file.get(scope, n); ok {
		return fmt.Errorf("%s at %s is %w, line %d: change it there", n, scope, ErrManaged, v.Source.Line)
	}
	if MatchUser(r.botAdmins, user) {
		return nil
	}
	channel := Scope{LevelChannel, w.ChannelKey()}
	switch {
	case scope != channel:
		return fmt.Errorf("only bot admins set %s at %s", n, scope)
	case spec.Who == BotAdmins:
		return fmt.Errorf("only bot admins set %s: it widens what sessions reach or who may use the bot", n)
	case !MatchUser(r.getLocked(w.Scopes(), Admins).List(), user):
		return fmt.Errorf("only the channel's admins set its %s", n)
	case spec.Who == Tighten:
		wider := r.getLocked(w.Scopes()[:indexOf(w.Scopes(), channel)], n)
		if value == "" && wider.Text != "" && wider.Text != "0" {
			return nil // unsetting falls back to the wider limit
		}
		if value == "" || !tighter(value, wider.Text) {
			return fmt.Errorf("a channel admin may only tighten %s (at most %s here, %s)", n, orNone(wider.Text), wider.Source)
		}
	}
	return nil
}

func indexOf(scopes []Scope, s Scope) int {
	for i, x := range scopes {
		if x == s {
			return i
		}
	}
	return len(scopes)
}

func orNone(s string) string {
	if s == "" || s == "0" {
		return "none"
	}
	return s
}

// SetChat gives n the value text (canonical) at scope, from chat; it
// returns the value that applied at w before. "" unsets it.
func (r *Resolver) SetChat(w Where, scope Scope, n Name, text, by string, at time.Time) Value {
	r.mu.Lock()
	defer r.mu.Unlock()
	before := r.getLocked(w.Scopes(), n)
	if text == "" {
		delete(r.chat.values[scope], n)
		return before
	}
	r.chat.Put(n, Value{Text: text, Source: Source{Scope: scope, Origin: FromChat, By: by, At: at}})
	return before
}

// LoadChat puts l in place of the values set in chat (read from the
// store at start).
func (r *Resolver) LoadChat(l Layer) {
	r.mu.Lock()
	r.chat = l
	r.mu.Unlock()
}

// fileGives reports whether the settings file in use gives any value.
func (r *Resolver) fileGives() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.file.values) > 0
}
