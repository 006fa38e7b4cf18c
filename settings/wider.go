package settings

// Wider is n's value at w without w's channel and thread: what applies
// there if the channel gave none. A limit (Spec.Who Tighten) a channel
// admin set is only as good as it is tighter than this: a reader of the
// limit holds it to that when what is wider changed after it was set.
func (r *Resolver) Wider(w Where, n Name) Value {
	scopes := w.Scopes()
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.getLocked(scopes[:indexOf(scopes, Scope{LevelChannel, w.ChannelKey()})], n)
}

// Tighter reports whether value is at least as tight a limit as wider
// (both canonical amounts or counts; 0 is no limit).
func Tighter(value, wider string) bool { return tighter(value, wider) }

// Values is the value of each of names at w, in order: Get's answers,
// the scopes worked out once (a part that reads several settings at every
// prompt).
func (r *Resolver) Values(w Where, names ...Name) []Value {
	scopes := w.Scopes()
	out := make([]Value, len(names))
	r.mu.RLock()
	defer r.mu.RUnlock()
	for i, n := range names {
		out[i] = r.getLocked(scopes, n)
	}
	return out
}
