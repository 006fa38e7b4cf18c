package fakeslack

import (
	"fmt"
	"unicode/utf8"
)

// Limits from Slack's reference (its "Blocks", "<block> block", "<element>
// element" and "Composition objects" pages).
const (
	MaxText            = 40000 // chat.postMessage truncates text past this
	MaxUpdateText      = 4000  // chat.update / chat.postEphemeral: msg_too_long past this (the chat.update reference: "cannot exceed 4,000 characters")
	MaxMarkdownText    = 12000 // markdown_text argument, and all markdown blocks of a payload together
	MaxBlocks          = 50
	MaxSectionText     = 3000
	MaxSectionFields   = 10
	MaxFieldText       = 2000
	MaxHeaderText      = 150
	MaxContextElements = 10
	MaxActionsElements = 25
	MaxButtonText      = 75
	MaxButtonValue     = 2000
	MaxURL             = 3000
	MaxActionID        = 255
	MaxBlockID         = 255
	MaxSelectOptions   = 100
	MaxOptionText      = 75
	MaxOptionValue     = 150
	MaxOverflowOptions = 5
	MaxCheckboxOptions = 10
	MaxRadioOptions    = 10
	MaxPlaceholder     = 150
	MaxTableRows       = 100
	MaxTableCells      = 20
	MaxAttachments     = 100
	// MaxBlocksTotalText: msg_blocks_too_long past this many characters of
	// text across all blocks, below every per-block limit (observed ~13.2k,
	// bolt-js issue #2509).
	MaxBlocksTotalText = 13200
)

// Agent-UI blocks: chat.postMessage rejects them; only stream chunks carry them.
var agentUIBlocks = map[string]bool{"alert": true, "card": true, "carousel": true, "task_card": true, "plan": true}

var messageBlocks = map[string]bool{
	"section": true, "header": true, "context": true, "actions": true, "divider": true,
	"markdown": true, "image": true, "rich_text": true, "table": true, "input": true,
	"file": true, "video": true, "call": true, "context_actions": true,
}

var interactiveTypes = map[string]bool{
	"button": true, "static_select": true, "multi_static_select": true, "external_select": true,
	"multi_external_select": true, "users_select": true, "multi_users_select": true,
	"conversations_select": true, "multi_conversations_select": true, "channels_select": true,
	"multi_channels_select": true, "overflow": true, "checkboxes": true, "radio_buttons": true,
	"datepicker": true, "timepicker": true, "datetimepicker": true, "plain_text_input": true,
	"rich_text_input": true, "email_text_input": true, "number_input": true, "url_text_input": true,
	"workflow_button": true, "feedback_buttons": true, "icon_button": true,
}

// blockCheck collects Slack-style validation messages, e.g.
// "[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/text/text]".
type blockCheck struct {
	errs      []string
	totalText int
	markdown  int
	tables    int
	blockIDs  map[string]bool
}

func (c *blockCheck) add(ptr, msg string) {
	c.errs = append(c.errs, fmt.Sprintf("[ERROR] %s [json-pointer:%s]", msg, ptr))
}

func runes(s string) int { return utf8.RuneCountInString(s) }

func (c *blockCheck) maxLen(ptr, s string, max int) {
	if runes(s) > max {
		c.add(ptr, fmt.Sprintf("must be less than %d characters", max+1))
	}
}

func (c *blockCheck) maxItems(ptr string, n, max int) {
	if n > max {
		c.add(ptr, fmt.Sprintf("no more than %d items allowed", max))
	}
}

func (c *blockCheck) minItems(ptr string, n int) {
	if n < 1 {
		c.add(ptr, "must provide at least 1 items")
	}
}

// validateBlocks checks a blocks array as Slack does for messages; ptr is
// its JSON pointer ("/blocks").
func validateBlocks(blocks []any, ptr string) *blockCheck {
	c := &blockCheck{blockIDs: map[string]bool{}}
	c.maxItems(ptr, len(blocks), MaxBlocks)
	for i, b := range blocks {
		c.block(fmt.Sprintf("%s/%d", ptr, i), b)
	}
	if c.markdown > MaxMarkdownText {
		c.add(ptr, fmt.Sprintf("total length of markdown blocks must be less than %d characters", MaxMarkdownText+1))
	}
	return c
}

func (c *blockCheck) block(ptr string, v any) {
	b, ok := v.(map[string]any)
	if !ok {
		c.add(ptr, "must provide an object")
		return
	}
	typ, _ := b["type"].(string)
	if typ == "" {
		c.add(ptr, "missing required field: type")
		return
	}
	if agentUIBlocks[typ] || !messageBlocks[typ] {
		c.add(ptr+"/type", "unsupported block type: "+typ)
		return
	}
	if id, present := b["block_id"]; present && typ != "markdown" {
		sid, ok := id.(string)
		switch {
		case !ok:
			c.add(ptr+"/block_id", "must be a string")
		case sid == "":
			c.add(ptr+"/block_id", "must be more than 0 characters")
		default:
			c.maxLen(ptr+"/block_id", sid, MaxBlockID)
			if c.blockIDs[sid] {
				c.add(ptr+"/block_id", "duplicate block_id: "+sid)
			}
			c.blockIDs[sid] = true
		}
	}
	switch typ {
	case "section":
		c.sectionBlock(ptr, b)
	case "header":
		c.textObj(ptr+"/text", b["text"], false, MaxHeaderText)
	case "context":
		c.contextBlock(ptr, b)
	case "actions", "context_actions":
		c.actionsBlock(ptr, b)
	case "markdown":
		c.markdownBlock(ptr, b)
	case "image":
		c.image(ptr, b)
		if title, ok := b["title"]; ok {
			c.textObj(ptr+"/title", title, false, 2000)
		}
	case "table":
		c.tableBlock(ptr, b)
	case "input":
		if el, ok := b["element"]; ok {
			c.element(ptr+"/element", el, nil)
		} else {
			c.add(ptr, "missing required field: element")
		}
		c.textObj(ptr+"/label", b["label"], false, 2000)
	case "rich_text":
		c.richTextBlock(ptr, b)
	}
}

func (c *blockCheck) sectionBlock(ptr string, b map[string]any) {
	_, hasText := b["text"]
	fields, hasFields := b["fields"]
	if !hasText && !hasFields {
		c.add(ptr, "missing required field: text")
	}
	if hasText {
		c.textObj(ptr+"/text", b["text"], true, MaxSectionText)
	}
	if hasFields {
		arr, ok := fields.([]any)
		if !ok {
			c.add(ptr+"/fields", "must provide an array")
		} else {
			c.maxItems(ptr+"/fields", len(arr), MaxSectionFields)
			for j, f := range arr {
				c.textObj(fmt.Sprintf("%s/fields/%d", ptr, j), f, true, MaxFieldText)
			}
		}
	}
	if acc, ok := b["accessory"]; ok {
		c.element(ptr+"/accessory", acc, nil)
	}
}

func (c *blockCheck) contextBlock(ptr string, b map[string]any) {
	els, ok := b["elements"].([]any)
	if !ok {
		c.add(ptr, "missing required field: elements")
		return
	}
	c.minItems(ptr+"/elements", len(els))
	c.maxItems(ptr+"/elements", len(els), MaxContextElements)
	for j, e := range els {
		ep := fmt.Sprintf("%s/elements/%d", ptr, j)
		m, ok := e.(map[string]any)
		if !ok {
			c.add(ep, "must provide an object")
			continue
		}
		switch m["type"] {
		case "plain_text", "mrkdwn":
			c.textObj(ep, m, true, MaxSectionText)
		case "image":
			c.image(ep, m)
		default:
			c.add(ep+"/type", "must be a valid enum value")
		}
	}
}

func (c *blockCheck) actionsBlock(ptr string, b map[string]any) {
	els, ok := b["elements"].([]any)
	if !ok {
		c.add(ptr, "missing required field: elements")
		return
	}
	c.minItems(ptr+"/elements", len(els))
	c.maxItems(ptr+"/elements", len(els), MaxActionsElements)
	seen := map[string]bool{}
	for j, e := range els {
		c.element(fmt.Sprintf("%s/elements/%d", ptr, j), e, seen)
	}
}

func (c *blockCheck) markdownBlock(ptr string, b map[string]any) {
	t, ok := b["text"].(string)
	if !ok {
		c.add(ptr, "missing required field: text")
		return
	}
	if t == "" {
		c.add(ptr+"/text", "must be more than 0 characters")
	}
	c.maxLen(ptr+"/text", t, MaxMarkdownText)
	c.markdown += runes(t)
	c.totalText += runes(t)
}

func (c *blockCheck) tableBlock(ptr string, b map[string]any) {
	c.tables++
	if c.tables > 1 {
		c.add(ptr, "only one table block is allowed per message")
	}
	rows, ok := b["rows"].([]any)
	if !ok {
		c.add(ptr, "missing required field: rows")
		return
	}
	c.maxItems(ptr+"/rows", len(rows), MaxTableRows)
	for j, r := range rows {
		cells, ok := r.([]any)
		if !ok {
			c.add(fmt.Sprintf("%s/rows/%d", ptr, j), "must provide an array")
			continue
		}
		c.maxItems(fmt.Sprintf("%s/rows/%d", ptr, j), len(cells), MaxTableCells)
		for _, cell := range cells {
			var texts []string
			collectTexts(cell, &texts)
			for _, t := range texts {
				c.totalText += runes(t)
			}
		}
	}
}

func (c *blockCheck) richTextBlock(ptr string, b map[string]any) {
	if _, ok := b["elements"].([]any); !ok {
		c.add(ptr, "missing required field: elements")
	}
	var texts []string
	collectTexts(b["elements"], &texts)
	for _, t := range texts {
		c.totalText += runes(t)
	}
}

// textObj checks a text composition object and returns its text.
func (c *blockCheck) textObj(ptr string, v any, mrkdwnOK bool, max int) string {
	if v == nil {
		c.add(ptr[:lastSlash(ptr)], "missing required field: "+ptr[lastSlash(ptr)+1:])
		return ""
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.add(ptr, "must provide an object")
		return ""
	}
	typ, _ := m["type"].(string)
	switch {
	case typ == "plain_text":
	case typ == "mrkdwn" && mrkdwnOK:
	default:
		c.add(ptr+"/type", "must be a valid enum value")
	}
	t, ok := m["text"].(string)
	if !ok {
		c.add(ptr, "missing required field: text")
		return ""
	}
	if t == "" {
		c.add(ptr+"/text", "must be more than 0 characters")
	}
	c.maxLen(ptr+"/text", t, max)
	c.totalText += runes(t)
	return t
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return 0
}

func (c *blockCheck) image(ptr string, m map[string]any) {
	_, url := m["image_url"].(string)
	_, file := m["slack_file"].(map[string]any)
	if !url && !file {
		c.add(ptr, "missing required field: image_url")
	}
	if u, ok := m["image_url"].(string); ok {
		c.maxLen(ptr+"/image_url", u, MaxURL)
	}
	alt, ok := m["alt_text"].(string)
	if !ok {
		c.add(ptr, "missing required field: alt_text")
	} else {
		c.maxLen(ptr+"/alt_text", alt, 2000)
	}
}

// element checks an interactive element. seen collects action_ids that must
// be unique (within an actions block).
func (c *blockCheck) element(ptr string, v any, seen map[string]bool) {
	m, ok := v.(map[string]any)
	if !ok {
		c.add(ptr, "must provide an object")
		return
	}
	typ, _ := m["type"].(string)
	if typ == "image" {
		c.image(ptr, m)
		return
	}
	if !interactiveTypes[typ] {
		c.add(ptr+"/type", "must be a valid enum value")
		return
	}
	if id, present := m["action_id"]; present {
		sid, ok := id.(string)
		if !ok || sid == "" {
			c.add(ptr+"/action_id", "must be more than 0 characters")
		} else {
			c.maxLen(ptr+"/action_id", sid, MaxActionID)
			if seen != nil {
				if seen[sid] {
					c.add(ptr+"/action_id", "duplicate action_id: "+sid)
				}
				seen[sid] = true
			}
		}
	}
	if conf, ok := m["confirm"]; ok {
		c.confirm(ptr+"/confirm", conf)
	}
	if ph, ok := m["placeholder"]; ok {
		c.textObj(ptr+"/placeholder", ph, false, MaxPlaceholder)
	}
	switch typ {
	case "button":
		c.textObj(ptr+"/text", m["text"], false, MaxButtonText)
		if val, ok := m["value"].(string); ok {
			c.maxLen(ptr+"/value", val, MaxButtonValue)
		}
		if u, ok := m["url"].(string); ok {
			c.maxLen(ptr+"/url", u, MaxURL)
		}
		if st, ok := m["style"]; ok && st != "primary" && st != "danger" {
			c.add(ptr+"/style", "must be a valid enum value")
		}
		if al, ok := m["accessibility_label"].(string); ok {
			c.maxLen(ptr+"/accessibility_label", al, MaxButtonText)
		}
	case "static_select", "multi_static_select":
		opts, hasOpts := m["options"].([]any)
		groups, hasGroups := m["option_groups"].([]any)
		switch {
		case hasOpts:
			c.minItems(ptr+"/options", len(opts))
			c.maxItems(ptr+"/options", len(opts), MaxSelectOptions)
			c.options(ptr+"/options", opts, false)
		case hasGroups:
			c.maxItems(ptr+"/option_groups", len(groups), MaxSelectOptions)
			for j, g := range groups {
				gp := fmt.Sprintf("%s/option_groups/%d", ptr, j)
				gm, ok := g.(map[string]any)
				if !ok {
					c.add(gp, "must provide an object")
					continue
				}
				c.textObj(gp+"/label", gm["label"], false, MaxOptionText)
				gopts, _ := gm["options"].([]any)
				c.maxItems(gp+"/options", len(gopts), MaxSelectOptions)
				c.options(gp+"/options", gopts, false)
			}
		default:
			c.add(ptr, "missing required field: options")
		}
		if io, ok := m["initial_option"]; ok {
			c.option(ptr+"/initial_option", io, false)
		}
	case "overflow", "checkboxes", "radio_buttons":
		opts, ok := m["options"].([]any)
		if !ok {
			c.add(ptr, "missing required field: options")
			return
		}
		max := map[string]int{"overflow": MaxOverflowOptions, "checkboxes": MaxCheckboxOptions, "radio_buttons": MaxRadioOptions}[typ]
		c.minItems(ptr+"/options", len(opts))
		c.maxItems(ptr+"/options", len(opts), max)
		c.options(ptr+"/options", opts, typ != "overflow")
	}
}

func (c *blockCheck) options(ptr string, opts []any, mrkdwnOK bool) {
	for j, o := range opts {
		c.option(fmt.Sprintf("%s/%d", ptr, j), o, mrkdwnOK)
	}
}

func (c *blockCheck) option(ptr string, o any, mrkdwnOK bool) {
	m, ok := o.(map[string]any)
	if !ok {
		c.add(ptr, "must provide an object")
		return
	}
	c.textObj(ptr+"/text", m["text"], mrkdwnOK, MaxOptionText)
	val, ok := m["value"].(string)
	if !ok {
		if _, isURL := m["url"]; !isURL {
			c.add(ptr, "missing required field: value")
		}
	} else {
		c.maxLen(ptr+"/value", val, MaxOptionValue)
	}
	if d, ok := m["description"]; ok {
		c.textObj(ptr+"/description", d, mrkdwnOK, MaxOptionText)
	}
}

func (c *blockCheck) confirm(ptr string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		c.add(ptr, "must provide an object")
		return
	}
	c.textObj(ptr+"/title", m["title"], false, 100)
	c.textObj(ptr+"/text", m["text"], true, 300)
	c.textObj(ptr+"/confirm", m["confirm"], false, 30)
	c.textObj(ptr+"/deny", m["deny"], false, 30)
}

// normalizeBlocks stores blocks as Slack does: a block_id for every block
// without one (markdown blocks: dropped), an action_id for interactive
// elements without one, emoji:true on plain_text and verbatim:false on
// mrkdwn text objects.
