// Package question holds the pure core of a question: an agent's ACP
// elicitation/create request (form or URL mode) parsed and its requested
// schema compiled, the validation of a host's answer against exactly what
// was asked, and the response the agent receives. It does no I/O and starts
// no goroutines; the broker (package confirm) gives a question its life.
//
// It follows ACP protocol version 1, "Elicitation"
// (https://agentclientprotocol.com/protocol/v1/elicitation), as served by
// the schema of @agentclientprotocol/sdk 1.9.0 (CreateElicitationRequest,
// ElicitationSchema, CreateElicitationResponse, CompleteElicitationNotification).
// The HTTP API shape is documented for users in docs/decisions.md,
// "Questions".
//
// Invariants:
//
//   - A requested schema outside the supported subset (an unknown property
//     type or keyword, a contradiction such as minLength above maxLength, a
//     pattern RE2 cannot compile) is refused by [Compile] with an error
//     wrapping [ErrUnsupported]: such a question is declined at once, never
//     shown with checks acpmux cannot enforce.
//   - [Question.Validate] accepts an answer only if it matches exactly what
//     was asked; every refusal is a [*FieldError] wrapping
//     acp.ErrInvalidParams that names the field.
//   - The agent only ever receives [Response] of a validated answer: bytes
//     this package encodes from the values it checked, never a host's bytes.
package question
