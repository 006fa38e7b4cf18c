package bashoracle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// Case is one line of a corpus of allow rules and commands
// (approvals/testdata/bash-allow-corpus.jsonl): a rule, or several, a
// command, and whether a person who wrote the rule approved that command.
type Case struct {
	Rule  string   `json:"rule"`
	Rules []string `json:"rules"` // instead of rule or besides it: allowed if any one allows
	Cmd   string   `json:"cmd"`
	Want  string   `json:"want"` // "allow" or "prompt" (a person must be asked)
	Why   string   `json:"why"`
}

// AllRules is Rule, if any, then Rules.
func (c Case) AllRules() []string {
	if c.Rule != "" {
		return append([]string{c.Rule}, c.Rules...)
	}
	return c.Rules
}

// LoadCorpus reads a corpus, one JSON Case a line; blank lines are
// skipped. Every case needs a rule, a command, a want of allow or prompt
// and a why; an unknown field is an error, so that a typo is not a case
// silently read another way.
func LoadCorpus(name string) ([]Case, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open corpus: %w", err)
	}
	defer f.Close()
	var cases []Case
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var c Case
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("corpus %s line %d: %w", name, n, err)
		}
		if len(c.AllRules()) == 0 || c.Cmd == "" || (c.Want != "allow" && c.Want != "prompt") || c.Why == "" {
			return nil, fmt.Errorf("corpus %s line %d: want rule(s), cmd, want allow|prompt and why: %+v", name, n, c)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read corpus %s: %w", name, err)
	}
	return cases, nil
}
