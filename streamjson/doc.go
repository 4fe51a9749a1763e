// Package streamjson speaks the stream-json protocol of Claude Code and Qwen
// Code (newline-delimited JSON on a CLI's stdin and stdout, as the Claude
// Agent SDK and the Qwen Code SDK drive it) and maps it to and from the Agent
// Client Protocol (https://agentclientprotocol.com, protocol version 1).
//
// It provides the message types of both directions ([User], [Assistant],
// [SystemInit], [SystemStatus], [Result], [StreamEvent], [ControlRequest],
// [ControlResponse], [ControlCancelRequest], [KeepAlive] and [Unknown]), a
// line [Decoder] and [Encoder], a [Mapper] from ACP session/update
// notifications and prompt responses to stream-json messages, [Prompt] from
// a user message to the prompt of session/prompt, and the confirmation
// mapping ([CanUseTool], [AnswerPermission], [Confirmations]) between ACP
// permission requests and can_use_tool control requests. The protocol as
// acpmux speaks it is described in docs/stream-json.md.
//
// Invariants: the package does no I/O beyond the reader and writer it is
// given and starts no goroutines. Raw JSON taken from the agent (a tool
// call's rawInput) is written byte for byte, never re-encoded. A
// confirmation answer that is malformed, stale, mismatched or an error is
// never an approval.
package streamjson
