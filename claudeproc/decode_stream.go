package claudeproc

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Streamed content blocks (stream_event lines), reassembled by the decoder.

type blockKey struct {
	message string
	index   int
}

type blockState struct {
	block ContentBlock
	acc   []byte
}

// maxOpenBlocks bounds reassembly state: a stream cut off by an interrupt
// never sends content_block_stop, so stale entries must not pile up.
const maxOpenBlocks = 256

type wireStream struct {
	Meta
	APIMessageID string `json:"api_message_id"`
	Event        struct {
		Type         string        `json:"type"`
		Index        int           `json:"index"`
		ContentBlock *ContentBlock `json:"content_block"`
		Message      *struct {
			ID string `json:"id"`
		} `json:"message"`
		Delta struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			PartialJSON string `json:"partial_json"`
			Thinking    string `json:"thinking"`
			Signature   string `json:"signature"`
			StopReason  string `json:"stop_reason"`
		} `json:"delta"`
	} `json:"event"`
}

func (d *decoder) decodeStream(line []byte) (Event, error) {
	var w wireStream
	err := json.Unmarshal(line, &w)
	if err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return nil, err
		}
	}
	e := &w.Event
	ev := &StreamEvent{Meta: w.Meta, APIMessageID: w.APIMessageID, EventType: e.Type, Index: e.Index}
	msg := w.APIMessageID
	if msg == "" && e.Message != nil {
		msg = e.Message.ID
	}
	key := blockKey{message: w.ParentToolUseID + "\x00" + msg, index: e.Index}
	switch e.Type {
	case "content_block_start":
		if e.ContentBlock == nil {
			break
		}
		if len(d.blocks) >= maxOpenBlocks {
			clear(d.blocks)
		}
		st := &blockState{block: *e.ContentBlock}
		switch st.block.Type {
		case "text":
			st.acc = append(st.acc, st.block.Text...)
		case "thinking":
			st.acc = append(st.acc, st.block.Thinking...)
		case "tool_use":
			// The start carries "input": {} — the real input comes as deltas.
			st.block.Input = nil
		}
		d.blocks[key] = st
		b := *e.ContentBlock
		ev.Block = &b
	case "content_block_delta":
		ev.DeltaType = e.Delta.Type
		st := d.blocks[key]
		switch e.Delta.Type {
		case "text_delta":
			ev.Delta = e.Delta.Text
			if st != nil {
				st.acc = append(st.acc, e.Delta.Text...)
			}
		case "thinking_delta":
			ev.Delta = e.Delta.Thinking
			if st != nil {
				st.acc = append(st.acc, e.Delta.Thinking...)
			}
		case "input_json_delta":
			ev.Delta = e.Delta.PartialJSON
			if st != nil {
				st.acc = append(st.acc, e.Delta.PartialJSON...)
			}
		case "signature_delta":
			if st != nil {
				st.block.Signature += e.Delta.Signature
			}
		}
	case "content_block_stop":
		st := d.blocks[key]
		if st == nil {
			break
		}
		delete(d.blocks, key)
		b := st.block
		switch b.Type {
		case "text":
			b.Text = string(st.acc)
		case "thinking":
			b.Thinking = string(st.acc)
		case "tool_use":
			if len(bytes.TrimSpace(st.acc)) == 0 {
				b.Input = json.RawMessage("{}")
			} else {
				b.Input = json.RawMessage(st.acc)
			}
		}
		ev.Block = &b
	case "message_delta":
		ev.StopReason = e.Delta.StopReason
	case "message_stop":
		for k := range d.blocks {
			if k.message == key.message {
				delete(d.blocks, k)
			}
		}
	}
	return ev, err
}
