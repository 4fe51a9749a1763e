package streamjson

import (
	"errors"
	"fmt"
	"sync"

	"github.com/acpmux/acpmux/acp"
)

// ErrUnknownRequest is returned by [Confirmations.Answer] for a response to
// no pending can_use_tool request (answered, withdrawn, or never asked).
var ErrUnknownRequest = errors.New("no pending can_use_tool request with this request_id")

// Confirmations tracks the can_use_tool requests pending with one script.
// Safe for concurrent use.
type Confirmations struct {
	mu      sync.Mutex // guards pending, order
	pending map[string]PermissionAsk
	order   []string
}

// NewConfirmations returns an empty tracker.
func NewConfirmations() *Confirmations {
	return &Confirmations{pending: map[string]PermissionAsk{}}
}

// Ask records a as pending and returns its can_use_tool control request.
// a.RequestID must be unique among the pending requests; a duplicate is an
// error and nothing is recorded.
func (c *Confirmations) Ask(a PermissionAsk) (*ControlRequest, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.pending[a.RequestID]; dup || a.RequestID == "" {
		return nil, fmt.Errorf("can_use_tool request_id %q: empty or already pending", a.RequestID)
	}
	c.pending[a.RequestID] = a
	c.order = append(c.order, a.RequestID)
	return CanUseTool(a), nil
}

// Answer resolves the pending request that r answers and forgets it: the
// ask and the [AnswerPermission] verdict. A response to no pending request
// returns ErrUnknownRequest (ignore it: the request was withdrawn).
func (c *Confirmations) Answer(r ResponseBody) (PermissionAsk, Verdict, error) {
	a, ok := c.take(r.RequestID)
	if !ok {
		return PermissionAsk{}, Verdict{}, fmt.Errorf("%w: %q", ErrUnknownRequest, r.RequestID)
	}
	v, err := AnswerPermission(a, r)
	return a, v, err
}

// Withdraw forgets the pending request requestID (another host answered,
// the agent cancelled, it timed out) and returns the control_cancel_request
// to send to the script; ok is false when it was not pending.
func (c *Confirmations) Withdraw(requestID string) (*ControlCancelRequest, bool) {
	if _, ok := c.take(requestID); !ok {
		return nil, false
	}
	return &ControlCancelRequest{RequestID: requestID}, true
}

// Interrupt forgets every pending request, in the order asked, for an
// interrupt from the script: answer each permission request with
// [CancelledOutcome] and send the script a control_cancel_request for each.
func (c *Confirmations) Interrupt() []PermissionAsk {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]PermissionAsk, 0, len(c.order))
	for _, id := range c.order {
		out = append(out, c.pending[id])
	}
	c.pending, c.order = map[string]PermissionAsk{}, nil
	return out
}

// Len returns the number of pending requests.
func (c *Confirmations) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.order)
}

func (c *Confirmations) take(id string) (PermissionAsk, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.pending[id]
	if !ok {
		return a, false
	}
	delete(c.pending, id)
	for i, x := range c.order {
		if x == id {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	return a, true
}

// CancelledOutcome is the ACP outcome for a permission request cancelled
// because the prompt turn was interrupted (ACP "Prompt Turn", Cancellation).
func CancelledOutcome() acp.RequestPermissionResponse {
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Outcome: acp.OutcomeCancelled}}
}

// SelectedOutcome is the ACP outcome selecting v's option.
func SelectedOutcome(v Verdict) acp.RequestPermissionResponse {
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Outcome: acp.OutcomeSelected, OptionID: v.OptionID}}
}
