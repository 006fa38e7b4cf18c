package fakeslack

import (
	"encoding/json"
	"strconv"
)

func normalizeBlocks(blocks []any) json.RawMessage {
	for _, b := range blocks {
		m, ok := b.(map[string]any)
		if !ok {
			continue
		}
		if m["type"] == "markdown" {
			delete(m, "block_id")
		} else if _, ok := m["block_id"]; !ok {
			m["block_id"] = randAlnum(5)
		}
		for _, el := range elementsOf(m) {
			if _, ok := el["action_id"]; !ok && interactiveTypes[str(el["type"])] {
				el["action_id"] = randAlnum(4)
			}
		}
		normalizeTexts(m)
	}
	out, _ := json.Marshal(blocks)
	return out
}

func normalizeTexts(v any) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			normalizeTexts(e)
		}
	case map[string]any:
		if _, ok := x["text"].(string); ok {
			switch x["type"] {
			case "plain_text":
				if _, ok := x["emoji"]; !ok {
					x["emoji"] = true
				}
			case "mrkdwn":
				if _, ok := x["verbatim"]; !ok {
					x["verbatim"] = false
				}
			}
		}
		for _, e := range x {
			normalizeTexts(e)
		}
	}
}

func str(v any) string { s, _ := v.(string); return s }

// elementsOf returns the interactive-element holders of a block.
func elementsOf(b map[string]any) []map[string]any {
	var out []map[string]any
	switch b["type"] {
	case "actions", "context_actions":
		els, _ := b["elements"].([]any)
		for _, e := range els {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
	case "section":
		if m, ok := b["accessory"].(map[string]any); ok {
			out = append(out, m)
		}
	case "input":
		if m, ok := b["element"].(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

type elementRef struct {
	blockID, actionID, typ string
	el                     map[string]any
}

func interactiveElements(blocks []any) []elementRef {
	var out []elementRef
	for _, b := range blocks {
		m, ok := b.(map[string]any)
		if !ok {
			continue
		}
		for _, el := range elementsOf(m) {
			typ := str(el["type"])
			if !interactiveTypes[typ] {
				continue
			}
			out = append(out, elementRef{blockID: str(m["block_id"]), actionID: str(el["action_id"]), typ: typ, el: el})
		}
	}
	return out
}

// findElement finds the interactive element with actionID in stored blocks.
func findElement(blocks json.RawMessage, actionID string) (elementRef, bool) {
	var bs []any
	if json.Unmarshal(blocks, &bs) != nil {
		return elementRef{}, false
	}
	for _, e := range interactiveElements(bs) {
		if e.actionID == actionID {
			return e, true
		}
	}
	return elementRef{}, false
}

// optionsOf lists an element's options (flattening option_groups).
func optionsOf(el map[string]any) []map[string]any {
	var out []map[string]any
	add := func(list any) {
		arr, _ := list.([]any)
		for _, o := range arr {
			if m, ok := o.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	add(el["options"])
	groups, _ := el["option_groups"].([]any)
	for _, g := range groups {
		if gm, ok := g.(map[string]any); ok {
			add(gm["options"])
		}
	}
	return out
}

// truncateRunes cuts s to n characters.
func truncateRunes(s string, n int) string {
	if runes(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }
