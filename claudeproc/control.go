package claudeproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrTimeout is returned when a control request got no response in time.
var ErrTimeout = errors.New("control request timed out")

// ControlError is a control_response with subtype "error".
type ControlError struct {
	Subtype string // the request's subtype
	Message string
	Code    string // e.g. invalid_mode, bypass_not_launched, unsupported_request
}

func (e *ControlError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Subtype, e.Message, e.Code)
	}
	return fmt.Sprintf("%s: %s", e.Subtype, e.Message)
}

func (p *Process) newRequestID(kind string) string {
	p.mu.Lock()
	p.nextID++
	n := p.nextID
	p.mu.Unlock()
	return p.idPrefix + kind + "_" + strconv.FormatUint(n, 10)
}

// request sends one of our control requests and waits for its response.
func (p *Process) request(ctx context.Context, subtype string, body map[string]any) (json.RawMessage, error) {
	id := p.newRequestID(subtype)
	ch := make(chan *ControlResponse, 1)
	p.mu.Lock()
	if p.gone {
		p.mu.Unlock()
		return nil, fmt.Errorf("%s request: %w", subtype, ErrExited)
	}
	p.pending[id] = ch
	p.mu.Unlock()
	forget := func() {
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
	}

	req := map[string]any{"subtype": subtype}
	for k, v := range body {
		req[k] = v
	}
	if err := p.writeLine(map[string]any{"type": "control_request", "request_id": id, "request": req}); err != nil {
		forget()
		return nil, fmt.Errorf("send %s request: %w", subtype, err)
	}
	timer := time.NewTimer(p.opts.RequestTimeout)
	defer timer.Stop()
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s request: %w", subtype, ErrExited)
		}
		if resp.Subtype == "error" {
			return nil, &ControlError{Subtype: subtype, Message: resp.Error, Code: resp.ErrorCode}
		}
		return resp.Response, nil
	case <-timer.C:
		forget()
		return nil, fmt.Errorf("%s request %s: %w after %s", subtype, id, ErrTimeout, p.opts.RequestTimeout)
	case <-ctx.Done():
		forget()
		return nil, fmt.Errorf("%s request %s: %w", subtype, id, ctx.Err())
	}
}
