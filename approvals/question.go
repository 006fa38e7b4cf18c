package approvals

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Option is one choice of an AskUserQuestion question.
type Option struct {
	Label       string
	Description string
}

// Question is one question of an AskUserQuestion call.
type Question struct {
	Text    string // the key of its answer
	Header  string // a short tag (<= 12 chars by the CLI's schema)
	Options []Option
	Multi   bool
}

// ParseQuestions reads an AskUserQuestion input:
// {"questions":[{"question","header","options":[{"label","description"}],"multiSelect"}]}.
// Options given as plain strings are read as labels. It fails when there is
// no question, a question text is empty or repeated, or an option has no
// label.
func ParseQuestions(input json.RawMessage) ([]Question, error) {
	var in struct {
		Questions []struct {
			Question    string            `json:"question"`
			Header      string            `json:"header"`
			Options     []json.RawMessage `json:"options"`
			MultiSelect bool              `json:"multiSelect"`
		} `json:"questions"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Errorf("parse questions: %w", err)
	}
	if len(in.Questions) == 0 {
		return nil, errors.New("parse questions: no questions")
	}
	seen := make(map[string]bool, len(in.Questions))
	qs := make([]Question, 0, len(in.Questions))
	for i, raw := range in.Questions {
		if strings.TrimSpace(raw.Question) == "" {
			return nil, fmt.Errorf("parse questions: question %d has no text", i+1)
		}
		if seen[raw.Question] {
			return nil, fmt.Errorf("parse questions: question %q asked twice", raw.Question)
		}
		seen[raw.Question] = true
		q := Question{Text: raw.Question, Header: raw.Header, Multi: raw.MultiSelect}
		for j, ro := range raw.Options {
			var o Option
			var label string
			if err := json.Unmarshal(ro, &label); err == nil {
				o.Label = label
			} else {
				var obj struct {
					Label       string `json:"label"`
					Description string `json:"description"`
				}
				if err := json.Unmarshal(ro, &obj); err != nil {
					return nil, fmt.Errorf("parse questions: %q option %d: %w", raw.Question, j+1, err)
				}
				o = Option{Label: obj.Label, Description: obj.Description}
			}
			if strings.TrimSpace(o.Label) == "" {
				return nil, fmt.Errorf("parse questions: %q option %d has no label", raw.Question, j+1)
			}
			q.Options = append(q.Options, o)
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// ParseAnswer turns a typed reply into the answer for q. Option numbers are
// 1-based: "2" is the label of option 2; for a multi-select question "1,3",
// "1, 3" or "1 3" are labels 1 and 3 joined by ", " (repeats dropped, in
// option order). A number out of range, several numbers for a single-select
// question, or an empty reply is an error. Any other text is a free-text
// answer (the "Other" path), kept as typed, except that text equal to an
// option's label ignoring case gives that label. A question without options
// takes numbers as free text too.
func ParseAnswer(q Question, text string) (string, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return "", errors.New("empty answer")
	}
	nums, ok := numberList(t)
	if !ok || len(q.Options) == 0 {
		for _, o := range q.Options {
			if strings.EqualFold(o.Label, t) {
				return o.Label, nil
			}
		}
		return t, nil
	}
	if !q.Multi && len(nums) > 1 {
		return "", fmt.Errorf("pick one option (1-%d), not %d", len(q.Options), len(nums))
	}
	picked := make([]bool, len(q.Options))
	for _, f := range nums {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > len(q.Options) {
			return "", fmt.Errorf("no option %s: pick 1-%d", f, len(q.Options))
		}
		picked[n-1] = true
	}
	var labels []string
	for i, o := range q.Options {
		if picked[i] {
			labels = append(labels, o.Label)
		}
	}
	return strings.Join(labels, ", "), nil
}

// numberList splits "1", "1,3", "1, 3", "1 3" into its numbers; ok is false
// for anything but digits, commas and blanks.
func numberList(t string) ([]string, bool) {
	for i := 0; i < len(t); i++ {
		if c := t[i]; !isDigit(c) && c != ',' && c != ' ' && c != '\t' {
			return nil, false
		}
	}
	nums := strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	return nums, len(nums) > 0
}

// AnswerInput builds the updatedInput that answers an AskUserQuestion call
// (the control protocol's can_use_tool answer for AskUserQuestion, as the CLI reads it): {"questions":<the original questions, byte for byte>,
// "answers":{<question text>:<answer>,…}}. Keys of answers must be question
// texts; answers are written with sorted keys and without HTML escaping.
func AnswerInput(input json.RawMessage, answers map[string]string) (json.RawMessage, error) {
	fields, ok := decodeObject(input)
	if !ok {
		return nil, errors.New("answer input: input is not a JSON object")
	}
	raw, ok := fields["questions"]
	if !ok {
		return nil, errors.New("answer input: no questions")
	}
	qs, err := ParseQuestions(input)
	if err != nil {
		return nil, fmt.Errorf("answer input: %w", err)
	}
	texts := make(map[string]bool, len(qs))
	for _, q := range qs {
		texts[q.Text] = true
	}
	for k := range answers {
		if !texts[k] {
			return nil, fmt.Errorf("answer input: %q is not one of the questions", k)
		}
	}
	if answers == nil {
		answers = map[string]string{}
	}
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	e.SetEscapeHTML(false)
	if err := e.Encode(answers); err != nil {
		return nil, fmt.Errorf("answer input: %w", err)
	}
	var out bytes.Buffer
	out.WriteString(`{"questions":`)
	out.Write(raw)
	out.WriteString(`,"answers":`)
	out.Write(bytes.TrimSuffix(enc.Bytes(), []byte("\n")))
	out.WriteString("}")
	return out.Bytes(), nil
}
