// Package schemacheck (tests' helper) checks a JSON value against a schema
// of a published API description: the subset of JSON Schema that OpenAPI
// 3.0 descriptions and JSON Schema draft-07 webhook schemas use — type
// (one or a list, OpenAPI's nullable), required, properties,
// additionalProperties (false or a schema), items, enum, const, allOf,
// anyOf, oneOf, local $ref (a JSON pointer into the document), and the
// formats date-time and uri. Words it does not know (description,
// example, pattern, min/max …) are ignored: the checker may accept what a
// full validator refuses, never the other way round.
//
// Strict also refuses an object's properties its schema does not name,
// even where the schema leaves additionalProperties open: a client that
// sends a field the description does not have is sending something the
// server ignores. The names of allOf's members count for each other; a
// schema that names no property at all (a bare "type": "object") leaves
// the object's shape to the others.
//
// Example (and ExampleWith, with a test's fields) makes a small value a
// schema accepts: a start for a payload, never the oracle.
//
// Files: check.go (Checker), example.go (Example, ExampleWith).
package schemacheck
