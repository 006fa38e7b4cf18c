package fakeslack

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
)

// params are a call's arguments: form fields as strings, JSON bodies as
// decoded JSON values.
type params map[string]any

func (p params) has(k string) bool { _, ok := p[k]; return ok }

func (p params) str(k string) string {
	v, ok := p[k]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (p params) boolean(k string) bool {
	v := p[k]
	if b, ok := v.(bool); ok {
		return b
	}
	s := strings.ToLower(p.str(k))
	return s == "true" || s == "1"
}

// isFalse: the argument is present and false ("false" or "0" in a form,
// false in a JSON body).
func (p params) isFalse(k string) bool {
	v, ok := p[k]
	if !ok {
		return false
	}
	if b, ok := v.(bool); ok {
		return !b
	}
	s := strings.ToLower(p.str(k))
	return s == "false" || s == "0"
}

// jsonArg decodes a JSON argument: a JSON-encoded string (form) or an
// already decoded value (JSON body).
func (p params) jsonArg(k string) (any, error) {
	v := p[k]
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	var out any
	err := json.Unmarshal([]byte(s), &out)
	return out, err
}

// parseParams reads a Web API request's arguments: query string, then a
// urlencoded, multipart or JSON body.
func parseParams(r *http.Request) (params, bool, error) {
	p := params{}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			p[k] = v[0]
		}
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	isJSON := false
	switch {
	case r.Method == http.MethodGet:
	case ct == "application/json":
		isJSON = true
		body, err := io.ReadAll(io.LimitReader(r.Body, 10<<20))
		if err != nil {
			return p, isJSON, err
		}
		if len(strings.TrimSpace(string(body))) == 0 {
			break
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return p, isJSON, err
		}
		for k, v := range m {
			p[k] = v
		}
	case ct == "multipart/form-data":
		if err := r.ParseMultipartForm(10 << 20); err != nil {
			return p, isJSON, err
		}
		for k, v := range r.MultipartForm.Value {
			if len(v) > 0 {
				p[k] = v[0]
			}
		}
	default:
		if err := r.ParseForm(); err != nil {
			return p, isJSON, err
		}
		for k, v := range r.PostForm {
			if len(v) > 0 {
				p[k] = v[0]
			}
		}
	}
	return p, isJSON, nil
}

// result is a Web API answer.
type result struct {
	status     int
	body       map[string]any
	retryAfter int
}

func okRes(kv map[string]any) result {
	body := map[string]any{"ok": true}
	for k, v := range kv {
		body[k] = v
	}
	return result{status: http.StatusOK, body: body}
}

func errRes(code string) result {
	return result{status: http.StatusOK, body: map[string]any{"ok": false, "error": code}}
}

func errMsgs(code string, msgs ...string) result {
	r := errRes(code)
	r.body["response_metadata"] = map[string]any{"messages": msgs}
	return r
}

func (r result) errCode() string {
	if ok, _ := r.body["ok"].(bool); ok {
		return ""
	}
	s, _ := r.body["error"].(string)
	return s
}

func (r result) messages() []string {
	md, _ := r.body["response_metadata"].(map[string]any)
	msgs, _ := md["messages"].([]string)
	return msgs
}
