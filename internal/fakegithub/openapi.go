package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/claudeops/claudeops/internal/schemacheck"
)

// DescriptionEnv names GitHub's published REST description (the
// api.github.com.json of the npm package @octokit/openapi, which
// scripts/test installs into .cache/); RequireEnv=1 makes its absence a
// failure rather than a skip.
const (
	DescriptionEnv = "CLAUDEOPS_TEST_GITHUB_OPENAPI"
	RequireEnv     = "CLAUDEOPS_REQUIRE_GITHUB_OPENAPI"
)

// Description is GitHub's REST description: its operations, and checks
// of a request or response against them.
type Description struct {
	Version string // the description's info.version
	check   *schemacheck.Checker
	strict  *schemacheck.Checker
	ops     []*Operation
}

// Operation is one operation of the description.
type Operation struct {
	ID     string // operationId, e.g. "pulls/create"
	Method string
	Path   string // the template, e.g. /repos/{owner}/{repo}/pulls
	segs   []string
	params map[string]any // query parameters' schemas, by name
	body   any            // the JSON request body's schema; nil: none
	needs  bool           // the request body is required
	resps  map[string]any // the JSON response's schema by status ("200", "default")
}

var (
	loadOnce sync.Once
	loaded   *Description
	loadErr  error
)

// Describe is the description named by DescriptionEnv, read once per test
// binary. Without it the test skips, saying why (fails under RequireEnv).
func Describe(t testing.TB) *Description {
	t.Helper()
	path := os.Getenv(DescriptionEnv)
	loadOnce.Do(func() {
		if path == "" {
			loadErr = fmt.Errorf("%s is not set (scripts/test installs @octokit/openapi and sets it)", DescriptionEnv)
			return
		}
		loaded, loadErr = Load(path)
	})
	if loadErr != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("GitHub's REST description: %v", loadErr)
		}
		t.Skipf("GitHub's REST description is not here: %v", loadErr)
	}
	return loaded
}

// Load reads an OpenAPI 3 description.
func Load(path string) (*Description, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the description: %w", err)
	}
	root, err := schemacheck.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("reading the description %s: %w", path, err)
	}
	doc, _ := root.(map[string]any)
	paths, _ := doc["paths"].(map[string]any)
	if len(paths) == 0 {
		return nil, fmt.Errorf("reading the description %s: no paths", path)
	}
	d := &Description{check: schemacheck.New(root), strict: schemacheck.New(root)}
	d.strict.Strict = true
	if info, ok := doc["info"].(map[string]any); ok {
		d.Version, _ = info["version"].(string)
	}
	for p, item := range paths {
		item, _ := item.(map[string]any)
		for _, m := range []string{"get", "post", "put", "patch", "delete"} {
			if raw, ok := item[m].(map[string]any); ok {
				d.ops = append(d.ops, d.operation(strings.ToUpper(m), p, item, raw))
			}
		}
	}
	return d, nil
}

func (d *Description) operation(method, path string, item, raw map[string]any) *Operation {
	op := &Operation{Method: method, Path: path, segs: strings.Split(strings.Trim(path, "/"), "/"),
		params: map[string]any{}, resps: map[string]any{}}
	op.ID, _ = raw["operationId"].(string)
	for _, list := range []any{item["parameters"], raw["parameters"]} {
		ps, _ := list.([]any)
		for _, p := range ps {
			p := d.deref(p)
			if p["in"] == "query" {
				name, _ := p["name"].(string)
				op.params[name] = p["schema"]
			}
		}
	}
	if rb := d.deref(raw["requestBody"]); rb != nil {
		op.body = jsonSchema(rb)
		op.needs = rb["required"] == true
	}
	resps, _ := raw["responses"].(map[string]any)
	for code, r := range resps {
		if s := jsonSchema(d.deref(r)); s != nil {
			op.resps[code] = s
		}
	}
	return op
}

// deref follows a $ref ("#/components/parameters/x"); nil when v is not
// an object.
func (d *Description) deref(v any) map[string]any {
	m, _ := v.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		t, err := d.check.Resolve(ref)
		if err != nil {
			return nil
		}
		m, _ = t.(map[string]any)
	}
	return nil
}

// jsonSchema is the application/json schema of a request body or response.
func jsonSchema(m map[string]any) any {
	content, _ := m["content"].(map[string]any)
	js, _ := content["application/json"].(map[string]any)
	if js == nil {
		return nil
	}
	return js["schema"]
}

// Find is the operation of method and path (below the API's base URL),
// a literal segment winning over a template's; false: the description has
// none.
func (d *Description) Find(method, path string) (*Operation, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best *Operation
	bestLit := -1
	for _, op := range d.ops {
		if op.Method != method || len(op.segs) != len(segs) {
			continue
		}
		lit, ok := 0, true
		for i, s := range op.segs {
			switch {
			case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
			case s == segs[i]:
				lit++
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok && lit > bestLit {
			best, bestLit = op, lit
		}
	}
	return best, best != nil
}

// CheckRequest says what is wrong with a request to op: a query parameter
// the operation does not declare or whose value its schema refuses, and a
// JSON body its schema refuses, strictly (a property the schema does not
// name is a problem: GitHub would ignore it).
func (d *Description) CheckRequest(op *Operation, query url.Values, body []byte) []string {
	var out []string
	names := make([]string, 0, len(query))
	for k := range query {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		schema, ok := op.params[k]
		if !ok {
			out = append(out, fmt.Sprintf("query parameter %q is not one of %s's", k, op.ID))
			continue
		}
		for _, v := range query[k] {
			for _, p := range d.check.Check(schema, queryValue(schema, v)) {
				out = append(out, fmt.Sprintf("query parameter %s: %s", k, p))
			}
		}
	}
	if len(body) == 0 {
		if op.needs {
			out = append(out, op.ID+": no request body, which it requires")
		}
		return out
	}
	if op.body == nil {
		return append(out, op.ID+" takes no JSON body")
	}
	v, err := schemacheck.Decode(body)
	if err != nil {
		return append(out, "request body: "+err.Error())
	}
	for _, p := range d.strict.Check(op.body, v) {
		out = append(out, "request body "+p)
	}
	return out
}

// queryValue is a query parameter's text as the JSON value its schema
// types (an integer's digits a number).
func queryValue(schema any, v string) any {
	s, _ := schema.(map[string]any)
	switch s["type"] {
	case "integer", "number":
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return json.Number(v)
		}
	case "boolean":
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return v
}

// CheckResponse says what is wrong with a JSON response of op with
// status: its body against the schema the description gives that status
// (or its "default"). A status it does not list is checked against
// basic-error, the shape of GitHub's every error.
func (d *Description) CheckResponse(op *Operation, status int, body []byte) []string {
	schema, ok := op.resps[strconv.Itoa(status)]
	if !ok {
		schema, ok = op.resps["default"]
	}
	if !ok {
		if status < 400 {
			return []string{fmt.Sprintf("%s does not answer %d", op.ID, status)}
		}
		schema = map[string]any{"$ref": "#/components/schemas/basic-error"}
	}
	v, err := schemacheck.Decode(body)
	if err != nil {
		return []string{"response body: " + err.Error()}
	}
	var out []string
	for _, p := range d.check.Check(schema, v) {
		out = append(out, fmt.Sprintf("response %d %s", status, p))
	}
	return out
}
