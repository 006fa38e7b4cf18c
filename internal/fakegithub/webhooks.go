package fakegithub

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/claudeops/claudeops/internal/schemacheck"
)

// WebhooksEnv names GitHub's published webhook description (the
// api.github.com.json of the npm package @octokit/openapi-webhooks, which
// scripts/test installs); RequireEnv makes its absence a failure too.
const WebhooksEnv = "CLAUDEOPS_TEST_GITHUB_WEBHOOKS"

// Webhooks is GitHub's webhook description: each event's payload schema.
type Webhooks struct {
	check *schemacheck.Checker // strict: a field the schema does not name is wrong
	hooks map[string]any       // payload schemas by "<event>-<action>", e.g. issues-labeled
}

var (
	hooksOnce sync.Once
	hooks     *Webhooks
	hooksErr  error
)

// DescribeWebhooks is the description named by WebhooksEnv, read once per
// test binary; without it the test skips saying why (fails under
// RequireEnv).
func DescribeWebhooks(t testing.TB) *Webhooks {
	t.Helper()
	path := os.Getenv(WebhooksEnv)
	hooksOnce.Do(func() {
		if path == "" {
			hooksErr = fmt.Errorf("%s is not set (scripts/test installs @octokit/openapi-webhooks and sets it)", WebhooksEnv)
			return
		}
		hooks, hooksErr = LoadWebhooks(path)
	})
	if hooksErr != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("GitHub's webhook description: %v", hooksErr)
		}
		t.Skipf("GitHub's webhook description is not here: %v", hooksErr)
	}
	return hooks
}

// LoadWebhooks reads an OpenAPI 3.1 description's webhooks.
func LoadWebhooks(path string) (*Webhooks, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the webhook description: %w", err)
	}
	root, err := schemacheck.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("reading the webhook description %s: %w", path, err)
	}
	doc, _ := root.(map[string]any)
	list, _ := doc["webhooks"].(map[string]any)
	if len(list) == 0 {
		return nil, fmt.Errorf("reading the webhook description %s: no webhooks", path)
	}
	w := &Webhooks{check: schemacheck.New(root), hooks: map[string]any{}}
	w.check.Strict = true
	d := &Description{check: w.check}
	for name, item := range list {
		post, _ := item.(map[string]any)["post"].(map[string]any)
		if s := jsonSchema(d.deref(post["requestBody"])); s != nil {
			w.hooks[name] = s
		}
	}
	return w, nil
}

// name is the description's name of an event's action: check_run and
// completed are check-run-completed.
func name(event, action string) string {
	return strings.ReplaceAll(event, "_", "-") + "-" + action
}

// Check says what is wrong with a payload of event (X-GitHub-Event) and
// action, strictly.
func (w *Webhooks) Check(event, action string, body []byte) []string {
	schema, ok := w.hooks[name(event, action)]
	if !ok {
		return []string{fmt.Sprintf("GitHub's description has no webhook %s", name(event, action))}
	}
	v, err := schemacheck.Decode(body)
	if err != nil {
		return []string{err.Error()}
	}
	return w.check.Check(schema, v)
}

// Payload is a payload of event and action as GitHub's description has
// it — every field it requires, with placeholder values — with fields put
// over it (an object among them completed from its schema) (the test's: a label's name, a check's conclusion, the
// repository's full_name …). It fails the test when the result is not a
// payload the description allows.
func (w *Webhooks) Payload(t testing.TB, event, action string, fields map[string]any) []byte {
	t.Helper()
	schema, ok := w.hooks[name(event, action)]
	if !ok {
		t.Fatalf("GitHub's description has no webhook %s", name(event, action))
	}
	v := w.check.ExampleWith(schema, fields)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if p := w.Check(event, action, b); len(p) > 0 {
		t.Fatalf("a %s payload GitHub's description refuses:\n%s\n%s", name(event, action), strings.Join(p, "\n"), b)
	}
	return b
}
