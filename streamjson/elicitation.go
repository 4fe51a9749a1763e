package streamjson

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpmux/acpmux/acp"
)

// ElicitationParams are the params of ACP elicitation/create: a message,
// and either a form (Mode "form", RequestedSchema, a restricted JSON
// Schema) or a URL to open (Mode "url", URL, ElicitationID).
type ElicitationParams struct {
	SessionID       string          `json:"sessionId,omitempty"`
	Message         string          `json:"message"`
	Mode            string          `json:"mode,omitempty"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
}

// Elicitation returns the elicitation control request for the raw params
// of an ACP elicitation/create request. server names the asker in
// mcp_server_name. Malformed params return an error wrapping
// acp.ErrInvalidParams.
func Elicitation(requestID, server string, params json.RawMessage) (*ControlRequest, error) {
	var p ElicitationParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("%w: elicitation/create: %v", acp.ErrInvalidParams, err)
	}
	return &ControlRequest{RequestID: requestID, Request: &ElicitationRequest{MCPServerName: server, Message: p.Message,
		Mode: p.Mode, URL: p.URL, ElicitationID: p.ElicitationID, RequestedSchema: p.RequestedSchema}}, nil
}

// ElicitationResult is the answer to an elicitation (the result of ACP
// elicitation/create): Action is accept, decline or cancel; Content, only
// with accept, is the object the user filled in.
type ElicitationResult struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}

// ErrElicitationRefused wraps every error of [AnswerElicitation].
var ErrElicitationRefused = errors.New("elicitation answer refused")

// AnswerElicitation reads the script's control response to an elicitation
// request. An error response, a malformed result, an unknown action, or
// content that is not an object (or comes without accept) returns
// {Action: "cancel"} and an error wrapping ErrElicitationRefused.
func AnswerElicitation(r ResponseBody) (ElicitationResult, error) {
	cancel := ElicitationResult{Action: "cancel"}
	if r.Subtype != ResponseSuccess {
		return cancel, fmt.Errorf("%w: %s", ErrElicitationRefused, r.ErrorText())
	}
	var res ElicitationResult
	if len(r.Response) == 0 || acp.DuplicateKey(r.Response) != "" || json.Unmarshal(r.Response, &res) != nil ||
		caseVariant(r.Response, "action", "content") != "" {
		return cancel, fmt.Errorf("%w: malformed result", ErrElicitationRefused)
	}
	if string(res.Content) == "null" {
		res.Content = nil
	}
	switch res.Action {
	case "accept":
		if len(res.Content) > 0 && res.Content[0] != '{' {
			return cancel, fmt.Errorf("%w: content is not an object", ErrElicitationRefused)
		}
	case "decline", "cancel":
		if len(res.Content) > 0 {
			return cancel, fmt.Errorf("%w: content without accept", ErrElicitationRefused)
		}
	default:
		return cancel, fmt.Errorf("%w: action %q", ErrElicitationRefused, res.Action)
	}
	return res, nil
}
