package approvals

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func TestParseQuestions(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    []Question
		wantErr string
	}{
		{
			name:  "objects",
			input: string(questionInput),
			want: []Question{{Text: "Which color?", Header: "Color", Options: []Option{
				{Label: "Red", Description: "warm"}, {Label: "Blue", Description: "calm"}}}},
		},
		{
			name:  "strings and multi",
			input: `{"questions":[{"question":"Which?","header":"H","options":["A","B"],"multiSelect":true},{"question":"Free?"}]}`,
			want: []Question{
				{Text: "Which?", Header: "H", Options: []Option{{Label: "A"}, {Label: "B"}}, Multi: true},
				{Text: "Free?"},
			},
		},
		{name: "not json", input: `{`, wantErr: "parse questions"},
		{name: "no questions", input: `{"questions":[]}`, wantErr: "no questions"},
		{name: "missing questions", input: `{}`, wantErr: "no questions"},
		{name: "empty text", input: `{"questions":[{"question":" "}]}`, wantErr: "no text"},
		{name: "repeated", input: `{"questions":[{"question":"Q"},{"question":"Q"}]}`, wantErr: "asked twice"},
		{name: "empty label", input: `{"questions":[{"question":"Q","options":[{"description":"d"}]}]}`, wantErr: "no label"},
		{name: "bad option", input: `{"questions":[{"question":"Q","options":[42]}]}`, wantErr: "option 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseQuestions(json.RawMessage(tt.input))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseQuestions = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestParseAnswer(t *testing.T) {
	single := Question{Text: "Color?", Options: []Option{{Label: "Red"}, {Label: "Blue"}, {Label: "Green"}}}
	multi := single
	multi.Multi = true
	free := Question{Text: "Name?"}
	tests := []struct {
		name    string
		q       Question
		text    string
		want    string
		wantErr string
	}{
		{"number", single, "2", "Blue", ""},
		{"number blanks", single, "  3 ", "Green", ""},
		{"leading zero", single, "01", "Red", ""},
		{"out of range high", single, "4", "", "no option 4"},
		{"out of range zero", single, "0", "", "no option 0"},
		{"huge number", single, "99999999999999999999", "", "no option"},
		{"several on single", single, "1,2", "", "pick one option"},
		{"multi", multi, "1,3", "Red, Green", ""},
		{"multi blank after comma", multi, "1, 3", "Red, Green", ""},
		{"multi blanks only", multi, "3 1", "Red, Green", ""},
		{"multi dedupe and order", multi, "3,1,3, 1", "Red, Green", ""},
		{"multi one", multi, "2", "Blue", ""},
		{"multi out of range", multi, "1,5", "", "no option 5"},
		{"multi trailing comma", multi, "1,2,", "Red, Blue", ""},
		{"free text", single, "Purple with dots", "Purple with dots", ""},
		{"free text keeps case", single, "  ultra Violet ", "ultra Violet", ""},
		{"label typed", single, "blue", "Blue", ""},
		{"number then words", single, "2 please", "2 please", ""},
		{"negative", single, "-1", "-1", ""},
		{"no options numbers are text", free, "3", "3", ""},
		{"empty", single, "", "", "empty answer"},
		{"blank", single, " \n ", "", "empty answer"},
		{"only commas", multi, ",,", ",,", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAnswer(tt.q, tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseAnswer(%q) = %q, %v; want error %q", tt.text, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseAnswer(%q) = %q, %v; want %q", tt.text, got, err, tt.want)
			}
		})
	}
}

func TestAnswerInput(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "ask_input.json"))
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{
		"Which color should the widget be?": "Blue",
		"Which extras?":                     "Logging, Tracing",
		"Anything else?":                    `Use <b> & "quotes"`,
	}
	got, err := AnswerInput(json.RawMessage(in), answers)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "answer_input.golden")
	if *update {
		if err := os.WriteFile(golden, append(bytes.Clone(got), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != strings.TrimSuffix(string(want), "\n") {
		t.Fatalf("AnswerInput:\n got %s\nwant %s", got, want)
	}

	// The shape: exactly two keys, questions byte-for-byte, answers as given.
	var out map[string]json.RawMessage
	if err := json.Unmarshal(got, &out); err != nil || len(out) != 2 {
		t.Fatalf("output %s: %v", got, err)
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(in, &fields)
	if !bytes.Equal(out["questions"], fields["questions"]) {
		t.Fatalf("questions not byte-for-byte:\n got %s\nwant %s", out["questions"], fields["questions"])
	}
	var back map[string]string
	if err := json.Unmarshal(out["answers"], &back); err != nil || !reflect.DeepEqual(back, answers) {
		t.Fatalf("answers = %v, %v", back, err)
	}
}

func TestAnswerInputErrors(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		answers map[string]string
		want    string // output, when no error
		wantErr string
	}{
		{"header as key", string(questionInput), map[string]string{"Color": "Blue"}, "", "not one of the questions"},
		{"unknown key", string(questionInput), map[string]string{"Which color?": "Blue", "Size?": "L"}, "", "not one of the questions"},
		{"not an object", `[1]`, nil, "", "not a JSON object"},
		{"no questions", `{"other":1}`, nil, "", "no questions"},
		{"empty questions", `{"questions":[]}`, nil, "", "no questions"},
		{"nil answers", string(questionInput), nil,
			`{"questions":[{"question":"Which color?","header":"Color","options":[{"label":"Red","description":"warm"},{"label":"Blue","description":"calm"}],"multiSelect":false}],"answers":{}}`, ""},
		{"other input fields dropped", `{"questions":[{"question":"Q?","options":["A","B"]}],"metadata":{"x":1}}`, map[string]string{"Q?": "A"},
			`{"questions":[{"question":"Q?","options":["A","B"]}],"answers":{"Q?":"A"}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AnswerInput(json.RawMessage(tt.input), tt.answers)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("AnswerInput = %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
}
