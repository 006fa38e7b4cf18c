package schemacheck

import (
	"encoding/json"
	"maps"
	"slices"
)

// Example is a small value the schema accepts: an object's required
// properties only, null where null is allowed, an enum's first value,
// the first alternative of oneOf/anyOf that is not null, allOf's objects
// merged; strings by their format. A test puts what it means on top
// (Overlay) and checks the whole: the example is a start, not the oracle.
func (c *Checker) Example(schema any) any { return c.example(schema, 0) }

func (c *Checker) example(schema any, depth int) any {
	s, ok := schema.(map[string]any)
	if !ok || depth > maxDepth {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		target, err := c.Resolve(ref)
		if err != nil {
			return nil
		}
		return c.example(target, depth+1)
	}
	if v, ok := s["const"]; ok {
		return v
	}
	if enum, ok := s["enum"].([]any); ok {
		for _, e := range enum {
			if e != nil {
				return e
			}
		}
		return nil
	}
	if all, ok := s["allOf"].([]any); ok {
		return c.exampleAllOf(append([]any{ownPart(s)}, all...), depth)
	}
	for _, word := range []string{"oneOf", "anyOf"} {
		if subs, ok := s[word].([]any); ok {
			for _, sub := range subs {
				if v := c.example(sub, depth+1); v != nil {
					return v
				}
			}
			return nil
		}
	}
	if s["nullable"] == true {
		return nil
	}
	types := typeNames(s)
	if len(types) == 0 && (s["properties"] != nil || s["required"] != nil) {
		types = []string{"object"}
	}
	for _, t := range types {
		if t == "null" {
			return nil
		}
	}
	if len(types) == 0 {
		return nil
	}
	switch types[0] {
	case "object":
		return c.exampleObject(s, depth)
	case "array":
		return []any{}
	case "string":
		return exampleString(s)
	case "integer", "number":
		return json.Number("1")
	case "boolean":
		return false
	}
	return nil
}

// exampleAllOf is an example every one of members accepts: when any is
// an object's, an object with the required properties of all, each made
// from all the members' schemas of it; else the first member's.
func (c *Checker) exampleAllOf(members []any, depth int) any {
	var flat []map[string]any
	for _, m := range members {
		flat = append(flat, c.flatten(m, depth)...)
	}
	object := slices.ContainsFunc(flat, isObjectSchema)
	if !object {
		for _, m := range flat {
			if m["enum"] != nil || m["const"] != nil || m["type"] != nil {
				return c.example(m, depth+1)
			}
		}
		return nil
	}
	out := map[string]any{}
	for _, m := range flat {
		req, _ := m["required"].([]any)
		for _, r := range req {
			name, _ := r.(string)
			if _, done := out[name]; done || name == "" {
				continue
			}
			var subs []any
			for _, o := range flat {
				props, _ := o["properties"].(map[string]any)
				if ps, ok := props[name]; ok {
					subs = append(subs, ps)
				}
			}
			switch len(subs) {
			case 0:
				out[name] = nil
			case 1:
				out[name] = c.example(subs[0], depth+1)
			default:
				out[name] = c.exampleAllOf(subs, depth+1)
			}
		}
	}
	return out
}

// flatten is schema resolved, its allOf members in its place.
func (c *Checker) flatten(schema any, depth int) []map[string]any {
	s, ok := schema.(map[string]any)
	if !ok || depth > maxDepth {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		t, err := c.Resolve(ref)
		if err != nil {
			return nil
		}
		return c.flatten(t, depth+1)
	}
	all, ok := s["allOf"].([]any)
	if !ok {
		return []map[string]any{s}
	}
	out := []map[string]any{ownPart(s)}
	for _, m := range all {
		out = append(out, c.flatten(m, depth+1)...)
	}
	return out
}

// ownPart is s without its allOf.
func ownPart(s map[string]any) map[string]any {
	o := maps.Clone(s)
	delete(o, "allOf")
	return o
}

// exampleObject is an example object: s's required properties.
func (c *Checker) exampleObject(s map[string]any, depth int) map[string]any {
	out := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	for _, r := range req {
		if name, ok := r.(string); ok {
			out[name] = c.example(props[name], depth+1)
		}
	}
	return out
}

func typeNames(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, n := range t {
			if n, ok := n.(string); ok {
				out = append(out, n)
			}
		}
		return out
	}
	return nil
}

func exampleString(s map[string]any) string {
	switch s["format"] {
	case "date-time":
		return "2026-01-01T00:00:00Z"
	case "uri", "uri-template":
		return "https://example.com/"
	case "email":
		return "someone@example.com"
	}
	return "x"
}

// Overlay puts what over base: objects merged key by key, anything else
// replaced. It returns the result (base's objects are changed in place).
func Overlay(base, what any) any {
	bm, ok1 := base.(map[string]any)
	wm, ok2 := what.(map[string]any)
	if !ok1 || !ok2 {
		return what
	}
	for k, v := range wm {
		bm[k] = Overlay(bm[k], v)
	}
	return bm
}

// ExampleWith is Example with fields put over it: each field that is an
// object (or a list of them) made complete from its property's schema
// first, so that an optional object the example left out is whole.
func (c *Checker) ExampleWith(schema, fields any) any { return c.exampleWith(schema, fields, 0) }

func (c *Checker) exampleWith(schema, fields any, depth int) any {
	if depth > maxDepth {
		return fields
	}
	if list, ok := fields.([]any); ok {
		items := c.itemsOf(schema, depth)
		out := make([]any, len(list))
		for i, v := range list {
			out[i] = c.exampleWith(items, v, depth+1)
		}
		return out
	}
	fm, ok := fields.(map[string]any)
	if !ok {
		return fields
	}
	members := c.objectMembers(schema, depth)
	base, _ := c.exampleAllOf(members, depth).(map[string]any)
	if base == nil {
		base = map[string]any{}
	}
	for k, v := range fm {
		var subs []any
		for _, m := range members {
			mm, _ := m.(map[string]any)
			props, _ := mm["properties"].(map[string]any)
			if ps, ok := props[k]; ok {
				subs = append(subs, ps)
			}
		}
		var ps any
		switch len(subs) {
		case 0:
		case 1:
			ps = subs[0]
		default:
			ps = map[string]any{"allOf": subs}
		}
		base[k] = c.exampleWith(ps, v, depth+1)
	}
	return base
}

// objectMembers is schema flattened, each anyOf/oneOf replaced by its
// first alternative that describes an object.
func (c *Checker) objectMembers(schema any, depth int) []any {
	var out []any
	for _, m := range c.flatten(schema, depth) {
		alts, _ := m["anyOf"].([]any)
		if alts == nil {
			alts, _ = m["oneOf"].([]any)
		}
		out = append(out, m)
		for _, a := range alts {
			if flat := c.flatten(a, depth+1); slices.ContainsFunc(flat, isObjectSchema) {
				for _, f := range flat {
					out = append(out, f)
				}
				break
			}
		}
	}
	return out
}

func isObjectSchema(m map[string]any) bool {
	return m["properties"] != nil || m["required"] != nil || slices.Contains(typeNames(m), "object")
}

// itemsOf is the items schema of an array schema (through refs and allOf).
func (c *Checker) itemsOf(schema any, depth int) any {
	for _, m := range c.flatten(schema, depth) {
		if items, ok := m["items"]; ok {
			return items
		}
	}
	return nil
}
