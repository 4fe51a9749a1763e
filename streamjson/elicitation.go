package streamjson

import (
	"encoding/json"
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
