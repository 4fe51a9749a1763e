package acp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Error is a JSON-RPC 2.0 error object (JSON-RPC 2.0 §5.1). It is also a Go
// error whose Is method compares the Code only, so that
// errors.Is(err, acp.ErrInvalidParams) holds for any -32602 error, as
// x/tools' WireError does.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements the error interface.
func (e *Error) Error() string { return fmt.Sprintf("jsonrpc2 error %d: %s", e.Code, e.Message) }

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// The JSON-RPC and ACP error codes (ACP schema ErrorCode). Wrap them with
// fmt.Errorf("%w: ...") to add detail; AsError recovers the code.
var (
	ErrParse            = &Error{Code: -32700, Message: "parse error"}
	ErrInvalidRequest   = &Error{Code: -32600, Message: "invalid request"}
	ErrMethodNotFound   = &Error{Code: -32601, Message: "method not found"}
	ErrInvalidParams    = &Error{Code: -32602, Message: "invalid params"}
	ErrInternal         = &Error{Code: -32603, Message: "internal error"}
	ErrRequestCancelled = &Error{Code: -32800, Message: "request cancelled"}
	ErrAuthRequired     = &Error{Code: -32000, Message: "authentication required"}
	ErrResourceNotFound = &Error{Code: -32002, Message: "resource not found"}
)

// Codes acpmux adds, in the implementation-defined server range -32000 to
// -32099 (JSON-RPC 2.0 §5.1). Documented in docs/protocol.md.
var (
	// ErrAgentExited answers every request still pending when the agent
	// process ends or its stdout closes.
	ErrAgentExited = &Error{Code: -32090, Message: "agent exited"}
	// ErrMessageTooLarge answers a host message longer than the line cap.
	ErrMessageTooLarge = &Error{Code: -32091, Message: "message too large"}
	// ErrTurnInProgress answers a session/prompt sent while another host's
	// prompt turn of the same session is still running.
	ErrTurnInProgress = &Error{Code: -32092, Message: "prompt turn in progress"}
	// ErrNoHost answers an agent request that no connected host can serve.
	ErrNoHost = &Error{Code: -32093, Message: "no host can serve this request"}
	// ErrForbidden answers a request the host's person may not send: an
	// observer's or approver's session/prompt, session/new, mode change
	// (docs/tokens.md); and a mode selection that would leave a plan mode
	// --lock-mode holds (docs/plan-mode.md).
	ErrForbidden = &Error{Code: -32094, Message: "forbidden"}
)

// AsError turns err into a wire error: an *Error found with errors.As keeps
// its code and takes err's full text as message; anything else becomes
// ErrInternal with err's text. A nil err returns nil.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		if err.Error() == e.Error() {
			return e
		}
		return &Error{Code: e.Code, Message: trimCode(err.Error(), e), Data: e.Data}
	}
	return &Error{Code: ErrInternal.Code, Message: err.Error()}
}

// trimCode removes the "jsonrpc2 error N: " prefix that a wrapped *Error
// contributes, so the message reads "invalid params: optionId ..." .
func trimCode(s string, e *Error) string {
	p := fmt.Sprintf("jsonrpc2 error %d: ", e.Code)
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}
