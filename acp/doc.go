// Package acp holds the few Agent Client Protocol (ACP) wire types that acpmux
// reads: the JSON-RPC 2.0 envelope, method names, error codes, and the
// permission request and response of "Tool Calls / Requesting Permission".
//
// It follows ACP protocol version 1 (https://agentclientprotocol.com/protocol/v1)
// as served by schema/v1/schema.json of @agentclientprotocol/sdk 2.4.0.
//
// Invariants: the package does no I/O and starts no goroutines. Envelope
// parsing never re-encodes a message: it reports byte spans into the original
// line so that callers forward payloads byte-for-byte and replace only the id.
package acp
