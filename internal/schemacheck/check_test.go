package schemacheck

import (
	"encoding/json"
	"strings"
	"testing"
)

// doc is a small description in OpenAPI's shape: the refs point into it.
const doc = `{
 "components": {"schemas": {
  "user": {"type": "object", "required": ["login", "id"], "properties": {
    "login": {"type": "string"}, "id": {"type": "integer", "format": "int64"},
    "url": {"type": "string", "format": "uri"}}},
  "nullable-user": {"type": "object", "nullable": true, "required": ["login"], "properties": {"login": {"type": "string"}}},
  "pull": {"type": "object", "required": ["number", "state", "user"], "properties": {
    "number": {"type": "integer"},
    "state": {"type": "string", "enum": ["open", "closed"]},
    "user": {"$ref": "#/components/schemas/user"},
    "merged_by": {"$ref": "#/components/schemas/nullable-user"},
    "labels": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": false}},
    "created_at": {"type": "string", "format": "date-time"},
    "meta": {"type": "object", "additionalProperties": {"type": "string"}},
    "head": {"oneOf": [{"type": "string"}, {"type": "object", "required": ["ref"], "properties": {"ref": {"type": "string"}}}]},
    "action": {"type": ["string", "null"], "const": "labeled"}}},
  "a~b/c": {"type": "boolean"},
  "member": {"allOf": [{"$ref": "#/components/schemas/user"}, {"type": "object", "properties": {"role": {"type": "string"}}}]},
  "private": {"type": "object", "required": ["login", "plan"], "properties": {"login": {"type": "string"}, "plan": {"type": "string"}}},
  "public": {"type": "object", "required": ["login"], "properties": {"login": {"type": "string"}}},
  "someone": {"oneOf": [{"$ref": "#/components/schemas/private"}, {"$ref": "#/components/schemas/public"}],
    "discriminator": {"propertyName": "view", "mapping": {"private": "#/components/schemas/private", "public": "#/components/schemas/public"}}}
 }}}`

func TestCheck(t *testing.T) {
	root, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	pull := map[string]any{"$ref": "#/components/schemas/pull"}
	tests := []struct {
		name, schema, value string
		strict              bool
		want                []string // each a part of one problem; none: it conforms
	}{
		{"conforms", "", `{"number": 1, "state": "open", "user": {"login": "a", "id": 2, "url": "https://x.example/a"},
			"merged_by": null, "labels": [{"name": "bug"}], "created_at": "2026-11-29T21:00:00Z", "meta": {"a": "b"},
			"head": {"ref": "main"}, "action": "labeled", "extra": 1}`, false, nil},
		{"missing required", "", `{"number": 1, "state": "open"}`, false, []string{`$: lacks "user"`}},
		{"required inside a ref", "", `{"number": 1, "state": "open", "user": {"login": "a"}}`, false, []string{`$.user: lacks "id"`}},
		{"wrong type", "", `{"number": "1", "state": "open", "user": {"login": "a", "id": 1}}`, false, []string{"$.number: a string where the schema wants integer"}},
		{"a number is not an integer", "", `{"number": 1.5, "state": "open", "user": {"login": "a", "id": 1}}`, false, []string{"$.number: a number where"}},
		{"enum", "", `{"number": 1, "state": "merged", "user": {"login": "a", "id": 1}}`, false, []string{`$.state: "merged" is not one of ["open","closed"]`}},
		{"null where not nullable", "", `{"number": 1, "state": "open", "user": null}`, false, []string{"$.user: null where the schema wants object"}},
		{"additionalProperties false", "", `{"number": 1, "state": "open", "user": {"login": "a", "id": 1}, "labels": [{"name": "x", "colour": "red"}]}`, false,
			[]string{`$.labels[0]: "colour" is not allowed`}},
		{"additionalProperties schema", "", `{"number": 1, "state": "open", "user": {"login": "a", "id": 1}, "meta": {"a": 1}}`, false, []string{"$.meta.a: an integer where"}},
		{"formats", "", `{"number": 1, "state": "open", "user": {"login": "a", "id": 1, "url": "/relative"}, "created_at": "yesterday"}`, false,
			[]string{`$.created_at: "yesterday" is not a date-time`, `$.user.url: "/relative" is not an absolute URI`}},
		{"oneOf none", "", `{"number": 1, "state": "open", "user": {"login": "a", "id": 1}, "head": 3}`, false, []string{"$.head: matches none of oneOf's 2 schemas"}},
		{"type list and const", "", `{"number": 1, "state": "open", "user": {"login": "a", "id": 1}, "action": "opened"}`, false, []string{`$.action: "opened" where the schema wants "labeled"`}},
		{"strict refuses a name the schema lacks", "", `{"number": 1, "state": "open", "user": {"login": "a", "id": 1}, "draft": true}`, true,
			[]string{`$: "draft" is not a property the schema names`}},
		{"escaped pointer", "#/components/schemas/a~0b~1c", `"yes"`, false, []string{"$: a string where the schema wants boolean"}},
		{"dangling ref", "#/components/schemas/none", `{}`, false, []string{`no "none"`}},
		{"strict: allOf's siblings name it", "#/components/schemas/member", `{"login": "a", "id": 1, "role": "admin"}`, true, nil},
		{"strict: no allOf member names it", "#/components/schemas/member", `{"login": "a", "id": 1, "rank": 2}`, true,
			[]string{`"rank" is not a property`, `"rank" is not a property`}},
		{"oneOf matching two", "#/components/schemas/someone", `{"login": "a", "plan": "pro"}`, false, []string{"matches 2 of oneOf's schemas"}},
		{"the discriminator decides", "#/components/schemas/someone", `{"login": "a", "plan": "pro", "view": "private"}`, false, nil},
		{"the discriminator's schema is checked", "#/components/schemas/someone", `{"login": "a", "view": "private"}`, false, []string{`lacks "plan"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Decode([]byte(tt.value))
			if err != nil {
				t.Fatal(err)
			}
			c := New(root)
			c.Strict = tt.strict
			var schema any = pull
			if tt.schema != "" {
				schema = map[string]any{"$ref": tt.schema}
			}
			got := c.Check(schema, v)
			if len(got) != len(tt.want) {
				t.Fatalf("problems %q; want %d like %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d: %q; want one saying %q", i, got[i], w)
				}
			}
		})
	}
}

func TestDecodeRefusesTrailingData(t *testing.T) {
	if _, err := Decode([]byte(`{} {}`)); err == nil {
		t.Fatal("two values decoded as one")
	}
}

// TestExample: the example of each of the document's schemas is one the
// checker accepts, and an overlay in the wrong place is refused strictly.
func TestExample(t *testing.T) {
	root, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := New(root)
	c.Strict = true
	for _, name := range []string{"user", "pull", "nullable-user", "member", "someone"} {
		schema := map[string]any{"$ref": "#/components/schemas/" + name}
		ex := c.Example(schema)
		b, _ := json.Marshal(ex)
		v, _ := Decode(b)
		if p := c.Check(schema, v); len(p) > 0 {
			t.Errorf("%s's example %s: %q", name, b, p)
		}
	}
	pull := map[string]any{"$ref": "#/components/schemas/pull"}
	v := Overlay(c.Example(pull), map[string]any{"user": map[string]any{"login": "octocat", "name": "Mona"}})
	b, _ := json.Marshal(v)
	v, _ = Decode(b)
	if p := c.Check(pull, v); len(p) != 1 || !strings.Contains(p[0], `$.user: "name" is not a property`) {
		t.Errorf("overlay %s: %q", b, p)
	}
	// ExampleWith completes an optional object the test sets a field of.
	v = c.ExampleWith(pull, map[string]any{"merged_by": map[string]any{}, "labels": []any{map[string]any{"name": "bug"}}})
	b, _ = json.Marshal(v)
	v, _ = Decode(b)
	if p := c.Check(pull, v); len(p) > 0 || !strings.Contains(string(b), `"merged_by":{"login":"x"}`) {
		t.Errorf("ExampleWith %s: %q", b, p)
	}
}
