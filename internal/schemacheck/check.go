package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Checker checks values against schemas of one document (the target of
// its $refs).
type Checker struct {
	root any
	// Strict refuses properties a schema does not name (see the package's
	// comment).
	Strict bool
}

// New is a Checker for the schemas in root, a document decoded by Decode.
func New(root any) *Checker { return &Checker{root: root} }

// Decode decodes JSON keeping numbers as json.Number, so that 1 and 1.5
// tell integer from number.
func Decode(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("decoding JSON: %w", err)
	}
	if d.More() {
		return nil, fmt.Errorf("decoding JSON: data after the value")
	}
	return v, nil
}

// Resolve follows ref ("#/components/schemas/x") in the document.
func (c *Checker) Resolve(ref string) (any, error) {
	p, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("$ref %q: only references inside the document are supported", ref)
	}
	cur := c.root
	for _, part := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch n := cur.(type) {
		case map[string]any:
			v, ok := n[part]
			if !ok {
				return nil, fmt.Errorf("$ref %q: no %q", ref, part)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(n) {
				return nil, fmt.Errorf("$ref %q: no index %q", ref, part)
			}
			cur = n[i]
		default:
			return nil, fmt.Errorf("$ref %q: %q is inside a scalar", ref, part)
		}
	}
	return cur, nil
}

// Check returns what is wrong with value against schema, each problem
// with the JSON path ("$.head.repo.id") where it is; none: it conforms.
func (c *Checker) Check(schema, value any) []string {
	var out []string
	c.check(schema, value, "$", &out, 0, nil)
	return out
}

// maxDepth stops a schema that refers to itself forever.
const maxDepth = 64

// check checks v against schema; known are the property names the
// schemas beside this one (allOf's siblings, anyOf's parent) name for
// the same object, which Strict does not refuse here.
func (c *Checker) check(schema, v any, at string, out *[]string, depth int, known map[string]bool) {
	if depth > maxDepth {
		*out = append(*out, at+": the schema nests too deep")
		return
	}
	s, ok := schema.(map[string]any)
	if !ok {
		if b, isBool := schema.(bool); isBool && !b {
			*out = append(*out, at+": no value is allowed here")
		}
		return
	}
	if ref, ok := s["$ref"].(string); ok {
		target, err := c.Resolve(ref)
		if err != nil {
			*out = append(*out, at+": "+err.Error())
			return
		}
		c.check(target, v, at, out, depth+1, known)
		return
	}
	if v == nil && s["nullable"] == true {
		return
	}
	if !c.typeOK(s, v, at, out) {
		return
	}
	c.enumOK(s, v, at, out)
	c.formatOK(s, v, at, out)
	c.combined(s, v, at, out, depth, known)
	switch x := v.(type) {
	case map[string]any:
		c.object(s, x, at, out, depth, known)
	case []any:
		if items, ok := s["items"]; ok {
			for i, e := range x {
				c.check(items, e, fmt.Sprintf("%s[%d]", at, i), out, depth+1, nil)
			}
		}
	}
}

// typeOK checks "type" (a name or a list of names); false: the value's
// type is wrong, and what its type's words say is not checked.
func (c *Checker) typeOK(s map[string]any, v any, at string, out *[]string) bool {
	names := typeNames(s)
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if isType(n, v) {
			return true
		}
	}
	*out = append(*out, fmt.Sprintf("%s: %s where the schema wants %s", at, typeOf(v), strings.Join(names, " or ")))
	return false
}

func isType(name string, v any) bool {
	switch name {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := strconv.ParseInt(n.String(), 10, 64)
		return err == nil
	}
	return false
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case json.Number:
		if _, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return "an integer"
		}
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

func (c *Checker) enumOK(s map[string]any, v any, at string, out *[]string) {
	if cv, ok := s["const"]; ok && !same(cv, v) {
		*out = append(*out, fmt.Sprintf("%s: %s where the schema wants %s", at, show(v), show(cv)))
	}
	enum, ok := s["enum"].([]any)
	if !ok {
		return
	}
	for _, e := range enum {
		if same(e, v) {
			return
		}
	}
	*out = append(*out, fmt.Sprintf("%s: %s is not one of %s", at, show(v), show(enum)))
}

// same compares decoded JSON values (numbers by their value).
func same(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		af, err1 := an.Float64()
		bf, err2 := bn.Float64()
		return err1 == nil && err2 == nil && af == bf
	}
	return reflect.DeepEqual(a, b)
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func (c *Checker) formatOK(s map[string]any, v any, at string, out *[]string) {
	str, ok := v.(string)
	if !ok {
		return
	}
	switch s["format"] {
	case "date-time":
		if _, err := time.Parse(time.RFC3339, str); err != nil {
			*out = append(*out, fmt.Sprintf("%s: %q is not a date-time (RFC 3339)", at, str))
		}
	case "uri":
		if u, err := url.Parse(str); err != nil || u.Scheme == "" {
			*out = append(*out, fmt.Sprintf("%s: %q is not an absolute URI", at, str))
		}
	}
}

// combined checks allOf (every one), anyOf (at least one) and oneOf
// (exactly one).
func (c *Checker) combined(s map[string]any, v any, at string, out *[]string, depth int, known map[string]bool) {
	if !combines(s) {
		return
	}
	names := c.names(s, depth, known)
	if all, ok := s["allOf"].([]any); ok {
		for _, sub := range all {
			c.check(sub, v, at, out, depth+1, names)
		}
	}
	if target, ok := c.discriminated(s, v); ok {
		// OpenAPI's discriminator names the one schema of oneOf/anyOf
		// that applies (others may match too: it decides, not they).
		c.check(target, v, at, out, depth+1, names)
		return
	}
	for _, word := range []string{"anyOf", "oneOf"} {
		subs, ok := s[word].([]any)
		if !ok {
			continue
		}
		matched, first := 0, []string(nil)
		for _, sub := range subs {
			var probs []string
			c.check(sub, v, at, &probs, depth+1, names)
			if len(probs) == 0 {
				matched++
			} else if first == nil {
				first = probs
			}
		}
		switch {
		case matched == 0:
			*out = append(*out, fmt.Sprintf("%s: matches none of %s's %d schemas (the first: %s)", at, word, len(subs), strings.Join(first, "; ")))
		case word == "oneOf" && matched > 1:
			*out = append(*out, fmt.Sprintf("%s: matches %d of oneOf's schemas, not exactly one", at, matched))
		}
	}
}

// discriminated is the schema s's discriminator maps v's value of its
// property to; false: s has none, or v does not say.
func (c *Checker) discriminated(s map[string]any, v any) (any, bool) {
	d, ok := s["discriminator"].(map[string]any)
	obj, isObj := v.(map[string]any)
	if !ok || !isObj {
		return nil, false
	}
	name, _ := d["propertyName"].(string)
	val, ok := obj[name].(string)
	if !ok {
		return nil, false
	}
	mapping, _ := d["mapping"].(map[string]any)
	if ref, ok := mapping[val].(string); ok {
		return map[string]any{"$ref": ref}, true
	}
	return nil, false
}

func (c *Checker) object(s map[string]any, obj map[string]any, at string, out *[]string, depth int, known map[string]bool) {
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				if _, has := obj[name]; !has {
					*out = append(*out, fmt.Sprintf("%s: lacks %q, which the schema requires", at, name))
				}
			}
		}
	}
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	additional, hasAdditional := s["additionalProperties"]
	for _, k := range names {
		if ps, ok := props[k]; ok {
			c.check(ps, obj[k], at+"."+k, out, depth+1, nil)
			continue
		}
		switch {
		case additional == false:
			*out = append(*out, fmt.Sprintf("%s: %q is not allowed (additionalProperties is false)", at, k))
		case hasAdditional:
			c.check(additional, obj[k], at+"."+k, out, depth+1, nil)
		case c.Strict && props != nil && !combines(s) && !known[k]:
			*out = append(*out, fmt.Sprintf("%s: %q is not a property the schema names", at, k))
		}
	}
}

// names are the property names s and its allOf members name, and known.
func (c *Checker) names(s map[string]any, depth int, known map[string]bool) map[string]bool {
	out := maps.Clone(known)
	if out == nil {
		out = map[string]bool{}
	}
	var add func(schema any, d int)
	add = func(schema any, d int) {
		m, ok := schema.(map[string]any)
		if !ok || d > maxDepth {
			return
		}
		if ref, ok := m["$ref"].(string); ok {
			if t, err := c.Resolve(ref); err == nil {
				add(t, d+1)
			}
			return
		}
		props, _ := m["properties"].(map[string]any)
		for k := range props {
			out[k] = true
		}
		all, _ := m["allOf"].([]any)
		for _, sub := range all {
			add(sub, d+1)
		}
	}
	add(s, depth)
	return out
}

// combines: s leaves its properties to allOf/anyOf/oneOf, so that a name
// it lacks may be one of theirs.
func combines(s map[string]any) bool {
	for _, w := range []string{"allOf", "anyOf", "oneOf"} {
		if _, ok := s[w]; ok {
			return true
		}
	}
	return false
}
