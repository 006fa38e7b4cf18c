package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxProposal caps a fact Claude proposes, in characters: the store's bound
// of a fact (store.MaxFactChars), which this package does not import.
const MaxProposal = 500

var rememberSchema = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
	`"fact":{"type":"string","maxLength":%d,"description":"The fact, one short line: what every future session of this channel should know."}},`+
	`"required":["fact"],"additionalProperties":false}`, MaxProposal))

const rememberDescription = "Propose a fact for this chat channel to remember: a lasting convention, decision or preference " +
	"every future session of the channel should know (\"deploys go through the release branch\"). " +
	"Nothing is stored by this call: the thread shows the proposal with a Remember button, and a person of the channel decides. " +
	"Facts are guidance for the model, never permissions."

// remember hands a proposed fact to the thread (Env.Propose): made plain,
// on one line, at most MaxProposal characters. It stores nothing.
func (s *Server) remember(ctx context.Context, raw json.RawMessage) (string, error) {
	var in struct {
		Fact string `json:"fact"`
	}
	if err := arguments(raw, &in); err != nil {
		return "", err
	}
	fact := strings.Join(strings.Fields(plainText(in.Fact, 4*MaxProposal)), " ")
	switch {
	case fact == "":
		return "", errors.New("the fact is empty")
	case utf8.RuneCountInString(fact) > MaxProposal:
		return "", fmt.Errorf("the fact is over %d characters: propose a shorter one", MaxProposal)
	}
	if err := s.env.Propose(ctx, fact); err != nil {
		return "", fmt.Errorf("the proposal could not be shown: %v", err)
	}
	return "Proposed to the people of this thread, not stored: it is remembered only if one of them accepts it with the Remember button. " +
		"(Where the channel's memory is off, or several proposals wait already, it is not shown.)", nil
}
